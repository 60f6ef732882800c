/**
 * What every `POST /sandbox/trigger` recipe shares: the recipe's shape, the steps it may take (units
 * of work, and running what became due between them), and the sandbox customer and bank account
 * most recipes start from. The recipes themselves are in trigger.recipes.<area>.ts.
 */
import type { AppContext } from '../../context.ts';
import type { PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import type { CustomerCreate, IndividualCustomerCreate } from '../customers/customers.schemas.ts';
import { createCustomer } from '../customers/customers.service.ts';
import type { AccountInfo } from '../external-accounts/account-info.ts';
import { createExternalAccount } from '../external-accounts/external-accounts.service.ts';
import { findCustomerHoldingAccountIn } from '../internal-accounts/internal-accounts.repo.ts';

/** The ids of what a recipe created (each present when that recipe made one). */
export interface Created {
  customerId?: string;
  internalAccountId?: string;
  externalAccountId?: string;
  quoteId?: string;
  transactionId?: string;
  verificationId?: string;
  cardId?: string;
  cardTransactionId?: string;
  agentId?: string;
  agentActionId?: string;
  invitationCode?: string;
  bulkUploadJobId?: string;
}

export interface RecipeResult {
  created: Created;
  /** The resource whose event the caller waits for (the outbox's resource_id). */
  resourceId: string;
}

/** What a recipe may do with the platform: the same entry points a request or a job has. */
export interface Steps {
  ctx: AppContext;
  platform: PlatformRow;
  /** Runs `fn` in one unit of work of the platform: one transaction, all or nothing. */
  unit<T>(fn: (u: Unit) => Promise<T>): Promise<T>;
  /** Runs the platform's due jobs, then sends its webhooks (what a sandbox clock advance does). */
  settle(): Promise<void>;
}

export interface Recipe {
  /** What the recipe does, for the error that lists the recipes and the docs. */
  how: string;
  /**
   * How far the platform's sandbox clock must move for the event to happen (an unexecuted quote
   * expiring); 0 when it happens in the request or on the job runner's next turn.
   */
  clockMs: number;
  run(s: Steps): Promise<RecipeResult>;
}

/** A recipe that is one unit of work: everything it creates is committed together or not at all. */
export function oneUnit(how: string, fn: (u: Unit) => Promise<RecipeResult>, clockMs = 0): Recipe {
  return { how, clockMs, run: (s) => s.unit(fn) };
}

/** The currency every recipe works in: the sandbox's US bank account magic values are USD accounts. */
export const CURRENCY = 'USD';
/** What a payment recipe sends or pulls, in cents; the customer is funded with ten times that. */
export const AMOUNT = 10_000;

export const ADDRESS = { line1: '1 Trigger Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' };

export interface TriggerCustomer {
  customerId: string;
  internalAccountId: string;
  umaAddress: string;
}

/** Fields of the sandbox individual that a recipe changes (an EEA address makes it an SCA customer). */
export type CustomerOverrides = Partial<Pick<IndividualCustomerCreate, 'address' | 'nationality' | 'phoneNumber'>>;

/**
 * A sandbox individual with a USD account; the last three characters of `fullName` pick the KYC
 * status at creation (001 PENDING, 002 REJECTED, 003 UNVERIFIED, anything else APPROVED).
 */
export async function customer(u: Unit, nameSuffix = '', overrides: CustomerOverrides = {}): Promise<TriggerCustomer> {
  const body = {
    customerType: 'INDIVIDUAL',
    fullName: `Trigger Customer${nameSuffix}`,
    birthDate: '1990-01-15',
    nationality: 'US',
    address: ADDRESS,
    currencies: [CURRENCY],
    ...overrides,
  } as CustomerCreate;
  const created = await createCustomer(u, body);
  const account = await findCustomerHoldingAccountIn(u.trx, u.platform.id, created.id, CURRENCY);
  if (!account) throw new Error(`customer ${created.id} got no ${CURRENCY} account`);
  return { customerId: created.id, internalAccountId: account.id, umaAddress: created.umaAddress };
}

/** A customer's US bank account whose number ends in `suffix`: the sandbox's payment outcome selector. */
export async function usAccount(u: Unit, customerId: string, suffix: string): Promise<string> {
  const accountInfo = {
    accountType: 'US_ACCOUNT',
    accountNumber: `4455667${suffix}`,
    routingNumber: '021000021',
    bankName: 'Sandbox Bank',
    bankAccountType: 'CHECKING',
    beneficiary: {
      beneficiaryType: 'INDIVIDUAL',
      fullName: 'Trigger Customer',
      birthDate: '1990-01-15',
      nationality: 'US',
      address: ADDRESS,
    },
  } as AccountInfo;
  return (await createExternalAccount(u, { customerId, currency: CURRENCY, accountInfo })).id;
}

/** The `TriggerCustomer` fields that belong in `created` (the UMA address is not an id). */
export function ids(c: TriggerCustomer): Pick<Created, 'customerId' | 'internalAccountId'> {
  return { customerId: c.customerId, internalAccountId: c.internalAccountId };
}
