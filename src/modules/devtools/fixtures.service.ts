/**
 * Fixtures: `loadFixture` creates a file's customers, balances and external accounts through the
 * same services as POST /customers, /sandbox/internal-accounts/{id}/fund and
 * /customers/external-accounts, in the caller's one unit of work (all or nothing);
 * `exportFixture` writes a platform's current state in the same format, so an export loads into
 * a fresh platform as the same state.
 */
import type { Kysely } from 'kysely';
import { ApiError, errors, type FieldError } from '../../http/errors.ts';
import type { CustomerRow, Database, PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import type { CustomerCreate } from '../customers/customers.schemas.ts';
import { createCustomer, customerCurrencies, parseCustomerData } from '../customers/customers.service.ts';
import type { AccountInfo } from '../external-accounts/account-info.ts';
import { createExternalAccount } from '../external-accounts/external-accounts.service.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { fundInternalAccount } from '../sandbox/sandbox.service.ts';
import { allInternalAccounts, firstAccountIn, liveCustomers, liveExternalAccounts } from './fixtures.repo.ts';
import { fixtureEntries, MAX_FIXTURE_ENTRIES } from './fixtures.limits.ts';
import type { Fixture, FixtureBalance, FixtureExternalAccount, FixtureLoadResult } from './fixtures.schemas.ts';

/** Runs `fn`; an input error it raises names its fields under `path` (`customers.2.customer.fullName`). */
async function at<T>(path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const fieldErrors = (err.details?.errors as FieldError[] | undefined) ?? [{ field: path, message: err.message }];
    const prefixed = fieldErrors.map((e) => ({ ...e, field: e.field === path ? path : `${path}.${e.field}` }));
    throw errors.coded(err.status, err.code, `${path}: ${err.message}`, { ...err.details, errors: prefixed });
  }
}

function duplicateRefs(refs: (string | undefined)[], path: string, field: string): FieldError[] {
  const seen = new Set<string>();
  const problems: FieldError[] = [];
  refs.forEach((ref, i) => {
    if (ref === undefined) return;
    if (seen.has(ref)) problems.push({ field: `${path}.${i}.${field}`, message: `duplicate ref "${ref}"` });
    seen.add(ref);
  });
  return problems;
}

/**
 * A UMA address lives on its platform's umaDomain: an address from another platform's export keeps
 * its username and moves to this platform's domain.
 */
function rehome(body: CustomerCreate, umaDomain: string): CustomerCreate {
  if (body.umaAddress === undefined) return body;
  const at = body.umaAddress.lastIndexOf('@');
  return at < 0 ? body : { ...body, umaAddress: `${body.umaAddress.slice(0, at)}@${umaDomain}` };
}

async function fund(u: Unit, customerId: string | null, balances: FixtureBalance[], path: string): Promise<void> {
  for (const [j, b] of balances.entries()) {
    const account = await firstAccountIn(u.trx, u.platform.id, customerId, b.currency);
    if (!account) throw errors.invalidField(`${path}.${j}.currency`, `no internal account in ${b.currency} to fund`);
    await fundInternalAccount(u, account.id, b.amount);
  }
}

/** Whether loading the file moves money (a balance is a sandbox funding: TRANSACT). */
export function fixtureFunds(f: Fixture): boolean {
  return (f.platformBalances?.length ?? 0) > 0 || (f.customers ?? []).some((c) => (c.balances?.length ?? 0) > 0);
}

export async function loadFixture(u: Unit, f: Fixture): Promise<FixtureLoadResult> {
  const customers = f.customers ?? [];
  const externals = f.externalAccounts ?? [];
  const entries = fixtureEntries(f);
  if (entries > MAX_FIXTURE_ENTRIES) {
    const message = `${entries} entries (customers, external accounts and balances); one load takes at most ${MAX_FIXTURE_ENTRIES}: split the file`;
    throw errors.invalidInput(`Invalid fixture: ${message}`, [{ field: '(body)', message }]);
  }
  const problems = [
    ...duplicateRefs(
      customers.map((c) => c.ref),
      'customers',
      'ref',
    ),
    ...duplicateRefs(
      externals.map((e) => e.ref),
      'externalAccounts',
      'ref',
    ),
    ...externals.flatMap((e, i) =>
      e.customerRef !== undefined && !customers.some((c) => c.ref === e.customerRef)
        ? [{ field: `externalAccounts.${i}.customerRef`, message: `no customer with ref "${e.customerRef}" in this file` }]
        : [],
    ),
  ];
  if (problems.length > 0) throw errors.invalidInput(`Invalid fixture: ${problems[0]!.field}: ${problems[0]!.message}`, problems);

  const umaDomain = settingsOf(u.platform).umaDomain;
  const ids = new Map<string, string>();
  const result: FixtureLoadResult = { customers: [], externalAccounts: [] };
  for (const [i, c] of customers.entries()) {
    const created = await at(`customers.${i}.customer`, () => createCustomer(u, rehome(c.customer, umaDomain)));
    ids.set(c.ref, created.id);
    result.customers.push({ ref: c.ref, id: created.id });
    await fund(u, created.id, c.balances ?? [], `customers.${i}.balances`);
  }
  for (const [i, e] of externals.entries()) {
    const { ref, customerRef, ...input } = e;
    const customerId = customerRef === undefined ? undefined : ids.get(customerRef);
    const created = await at(`externalAccounts.${i}`, () => createExternalAccount(u, { ...input, customerId }));
    result.externalAccounts.push({ ...(ref !== undefined ? { ref } : {}), id: created.id });
  }
  await fund(u, null, f.platformBalances ?? [], 'platformBalances');
  return result;
}

/** The POST /customers body that creates this customer again. */
function customerBody(row: CustomerRow): CustomerCreate {
  return {
    customerType: row.customer_type,
    platformCustomerId: row.platform_customer_id,
    umaAddress: row.uma_address,
    currencies: customerCurrencies(row),
    ...(row.region !== null ? { region: row.region } : {}),
    ...parseCustomerData(row),
  } as CustomerCreate;
}

/** Available balances by currency (in-flight amounts are not state a fixture declares). */
function balancesOf(accounts: { currency: string; available: number | string | bigint }[]): FixtureBalance[] {
  const by = new Map<string, number>();
  for (const a of accounts) by.set(a.currency, (by.get(a.currency) ?? 0) + Number(a.available));
  return [...by].filter(([, amount]) => amount > 0).map(([currency, amount]) => ({ currency, amount }));
}

export async function exportFixture(db: Kysely<Database>, platform: PlatformRow): Promise<Fixture> {
  const [customers, accounts, externals] = await Promise.all([
    liveCustomers(db, platform.id),
    allInternalAccounts(db, platform.id),
    liveExternalAccounts(db, platform.id),
  ]);
  // A customer's ref is its platformCustomerId: unique among live customers, and the same after a load.
  const refOf = new Map(customers.map((c) => [c.id, c.platform_customer_id]));
  const externalAccounts: FixtureExternalAccount[] = [];
  for (const e of externals) {
    // An account of a deleted customer goes with it.
    if (e.customer_id !== null && !refOf.has(e.customer_id)) continue;
    const { paymentRails: _derived, ...accountInfo } = JSON.parse(e.account_info) as AccountInfo;
    externalAccounts.push({
      ref: `external-${externalAccounts.length + 1}`,
      ...(e.customer_id !== null ? { customerRef: refOf.get(e.customer_id)! } : {}),
      currency: e.currency,
      ...(e.platform_account_id !== null ? { platformAccountId: e.platform_account_id } : {}),
      ...(e.ownership_type !== null ? { ownershipType: e.ownership_type as 'FIRST_PARTY' | 'THIRD_PARTY' } : {}),
      ...(e.default_uma_deposit !== null && Number(e.default_uma_deposit) === 1 ? { defaultUmaDepositAccount: true } : {}),
      accountInfo: accountInfo as AccountInfo,
    });
  }
  const platformBalances = balancesOf(accounts.filter((a) => a.customer_id === null));
  return {
    version: 1,
    customers: customers.map((c) => {
      const balances = balancesOf(accounts.filter((a) => a.customer_id === c.id));
      return { ref: c.platform_customer_id, customer: customerBody(c), ...(balances.length ? { balances } : {}) };
    }),
    externalAccounts,
    ...(platformBalances.length ? { platformBalances } : {}),
  };
}
