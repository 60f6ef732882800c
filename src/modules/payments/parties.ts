/**
 * Resolving the two sides of a payment from a request: which accounts, currencies, customers,
 * rails and sandbox outcome. Unknown ids and another platform's ids are 404.
 */
import { errors } from '../../http/errors.ts';
import { findCurrency } from '../../lib/currencies.ts';
import type { ExternalAccountRow, InternalAccountRow } from '../../store/schema.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { isScaCustomerRow } from '../sca/sca.customer.ts';
import { payoutRailFor } from '../exchange-rates/exchange-rates.service.ts';
import { externalAccountToWire, sandboxSuffix } from '../external-accounts/external-accounts.service.ts';
import { fundingInstructions } from '../internal-accounts/funding.ts';
import { findInternalAccount } from '../internal-accounts/internal-accounts.repo.ts';
import type { Env } from './payment-ledger.ts';
import type { RailSelectionMode } from './payments.schemas.ts';
import { findLiveExternalAccount } from './payments.repo.ts';
import { quoteScenario, sandboxUmaParty, type Scenario } from './sandbox-outcomes.ts';

export interface ResolvedSource {
  currency: string;
  /** The account money leaves from (internal or external), for the transaction filters. */
  accountId: string | null;
  /** Set when the money is held on an internal account. */
  internalAccountId: string | null;
  /** That internal account, as read in this unit (its balance answers a shortfall early). */
  internalAccount: InternalAccountRow | null;
  customerId: string | null;
  platformCustomerId: string | null;
  /** Whether strong customer authentication applies to that customer (from the row read with it). */
  scaCustomer: boolean;
  realtime: boolean;
  walletAccount: boolean;
  wire: Record<string, unknown> & { sourceType: string };
  /** Deposit coordinates for a real-time funded quote, given its memo reference. */
  fundingInfo: (reference: string) => Record<string, unknown> & { accountType: string };
}

export interface ResolvedDestination {
  currency: string;
  accountId: string | null;
  paymentRail: string | null;
  /** MANUAL when the request named the rail, AUTO when Corridor chose it, null without a rail. */
  railSelectionMode: RailSelectionMode | null;
  scenario: Scenario;
  wire: Record<string, unknown> & { destinationType: string };
}

/** External accounts Corridor can pull from (ACH debit): US bank accounts. */
export const PULLABLE_ACCOUNT_TYPES: ReadonlySet<string> = new Set(['US_ACCOUNT']);

export async function activeInternalAccount(env: Env, id: string, field: string): Promise<InternalAccountRow> {
  const row = await findInternalAccount(env.u.trx, env.u.platform.id, id);
  if (!row) throw errors.notFound('Internal account', id);
  if (row.status !== 'ACTIVE') throw errors.invalidField(field, `internal account ${id} is ${row.status}`);
  return row;
}

export async function liveExternalAccount(env: Env, id: string): Promise<ExternalAccountRow> {
  const row = await findLiveExternalAccount(env.u.trx, env.u.platform.id, id);
  if (!row) throw errors.notFound('External account', id);
  return row;
}

async function customerRef(
  env: Env,
  customerId: string | null,
): Promise<{ customerId: string | null; platformCustomerId: string | null; scaCustomer: boolean }> {
  if (!customerId) return { customerId: null, platformCustomerId: null, scaCustomer: false };
  const c = await findCustomer(env.u.trx, env.u.platform.id, customerId);
  if (!c) throw errors.customerNotFound(customerId);
  if (c.deleted_at) throw errors.payerDeleted(customerId);
  return { customerId: c.id, platformCustomerId: c.platform_customer_id, scaCustomer: isScaCustomerRow(c) };
}

type SourceBody =
  | { sourceType: 'ACCOUNT'; accountId: string; customerId?: string | undefined }
  | { sourceType: 'REALTIME_FUNDING'; currency: string; customerId?: string | undefined; cryptoNetwork?: string | undefined };

export async function resolveSource(env: Env, s: SourceBody): Promise<ResolvedSource> {
  if (s.sourceType === 'REALTIME_FUNDING') {
    if (!findCurrency(s.currency)) throw errors.invalidCurrency(s.currency, 'source.currency');
    const who = await customerRef(env, s.customerId ?? null);
    const holder = env.u.platform.name;
    return {
      currency: s.currency,
      accountId: null,
      internalAccountId: null,
      internalAccount: null,
      ...who,
      realtime: true,
      walletAccount: false,
      wire: { sourceType: 'REALTIME_FUNDING', currency: s.currency, ...(who.customerId ? { customerId: who.customerId } : {}) },
      fundingInfo: (reference) =>
        fundingInstructions({ id: `Quote:${reference}`, currency: s.currency, funding_reference: reference }, holder, !who.customerId)[0]!
          .accountOrWalletInfo,
    };
  }
  if (s.accountId.startsWith('ExternalAccount:')) {
    const ext = await liveExternalAccount(env, s.accountId);
    if (!PULLABLE_ACCOUNT_TYPES.has(ext.account_type)) {
      throw errors.invalidField(
        'source.accountId',
        `external account ${ext.id} (${ext.account_type}) cannot be pulled from; only US_ACCOUNT supports pulls`,
      );
    }
    const who = await customerRef(env, s.customerId ?? ext.customer_id);
    return {
      currency: ext.currency,
      accountId: ext.id,
      internalAccountId: null,
      internalAccount: null,
      ...who,
      realtime: false,
      walletAccount: false,
      wire: { sourceType: 'ACCOUNT', accountId: ext.id, currency: ext.currency },
      fundingInfo: () => ({ accountType: ext.account_type }),
    };
  }
  const acct = await activeInternalAccount(env, s.accountId, 'source.accountId');
  if (s.customerId && acct.customer_id && s.customerId !== acct.customer_id) {
    throw errors.invalidField('source.customerId', 'does not own the source account');
  }
  const who = await customerRef(env, acct.customer_id ?? s.customerId ?? null);
  return {
    currency: acct.currency,
    accountId: acct.id,
    internalAccountId: acct.id,
    internalAccount: acct,
    ...who,
    realtime: false,
    walletAccount: acct.type === 'EMBEDDED_WALLET',
    wire: { sourceType: 'ACCOUNT', accountId: acct.id, currency: acct.currency },
    fundingInfo: () => ({ accountType: acct.type }),
  };
}

type DestinationBody =
  | { destinationType: 'ACCOUNT'; accountId: string; paymentRail?: string | undefined }
  | { destinationType: 'UMA_ADDRESS'; umaAddress: string; currency?: string | undefined };

export async function resolveDestination(env: Env, d: DestinationBody): Promise<ResolvedDestination> {
  if (d.destinationType === 'UMA_ADDRESS') {
    const receiver = sandboxUmaParty(d.umaAddress, env.u.app.config.sandboxUmaDomain, 'destination.umaAddress');
    if (d.currency && d.currency !== receiver.currency) throw errors.umaReceiverCurrency(d.umaAddress, receiver.currency);
    return {
      currency: receiver.currency,
      accountId: d.umaAddress.toLowerCase(),
      paymentRail: null,
      railSelectionMode: null,
      scenario: receiver.scenario,
      wire: { destinationType: 'UMA_ADDRESS', umaAddress: d.umaAddress, currency: receiver.currency },
    };
  }
  if (d.accountId.startsWith('InternalAccount:')) {
    const acct = await activeInternalAccount(env, d.accountId, 'destination.accountId');
    if (d.paymentRail) throw errors.invalidField('destination.paymentRail', 'does not apply to an internal account');
    return {
      currency: acct.currency,
      accountId: acct.id,
      paymentRail: null,
      railSelectionMode: null,
      scenario: { kind: 'SUCCESS', delayMs: 0 },
      wire: { destinationType: 'ACCOUNT', accountId: acct.id, currency: acct.currency },
    };
  }
  const ext = await liveExternalAccount(env, d.accountId);
  const paymentRail = chooseRail(ext, d.paymentRail, 'destination.paymentRail');
  return {
    currency: ext.currency,
    accountId: ext.id,
    paymentRail,
    railSelectionMode: railSelectionMode(paymentRail, d.paymentRail),
    scenario: quoteScenario(sandboxSuffix(ext)),
    wire: { destinationType: 'ACCOUNT', accountId: ext.id, currency: ext.currency },
  };
}

/** The rail to pay an external account over: the requested one if the account supports it, else its first. */
export function chooseRail(ext: ExternalAccountRow, requested: string | undefined, field: string): string | null {
  const rails = (externalAccountToWire(ext).accountInfo as { paymentRails?: string[] }).paymentRails ?? [];
  if (requested) {
    if (!rails.includes(requested))
      throw errors.invalidField(field, `${requested} is not a rail of ${ext.id} (${rails.join(', ') || 'none'})`);
    return requested;
  }
  return rails[0] ?? payoutRailFor(ext.currency) ?? null;
}

/** How `rail` was chosen: MANUAL when the request named it (`requested`), AUTO when Corridor did; null without a rail. */
export function railSelectionMode(rail: string | null, requested: string | undefined): RailSelectionMode | null {
  if (rail === null) return null;
  return requested ? 'MANUAL' : 'AUTO';
}
