/** Builders shared by the payment tests: accounts, external accounts with sandbox suffixes, funding, events. */
import { expect } from 'vitest';
import type { Client } from './http.ts';
import type { PlatformHandle, TestServer } from './server.ts';
import { uniqueAccountNumber } from './random.ts';

/**
 * `any`: response bodies are read field by field; the assertions are the type check.
 */
// biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
export type Wire = any;

export const ADDRESS = { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' };

/** A US bank account number ending in `suffix` (the sandbox scenario selector). */
export function usAccountInfo(suffix: string) {
  return {
    accountType: 'US_ACCOUNT',
    accountNumber: `4455667${suffix}`,
    routingNumber: '021000021',
    bankName: 'Chase Bank',
    bankAccountType: 'CHECKING',
    beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'John Doe', birthDate: '1990-01-15', nationality: 'US', address: ADDRESS },
  };
}

export function eurAccountInfo(): Record<string, unknown> {
  return {
    accountType: 'EUR_ACCOUNT',
    iban: 'DE89370400440532013000',
    swiftCode: 'DEUTDEFF',
    beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Hans Müller', countryOfResidence: 'DE' },
  };
}

/** The platform's USD internal account id. */
export async function platformUsdAccount(p: PlatformHandle): Promise<string> {
  const res = await p.api.get('/platform/internal-accounts', { query: { currency: 'USD' } });
  expect(res.status).toBe(200);
  return res.body.data[0].id as string;
}

export async function platformExternal(
  p: PlatformHandle,
  suffix: string,
  currency = 'USD',
  accountInfo?: Record<string, unknown>,
): Promise<string> {
  // Each account needs a distinct identity: vary the digits before the suffix.
  const info = accountInfo ?? { ...usAccountInfo(suffix), accountNumber: uniqueAccountNumber(suffix) };
  const res = await p.api.post('/platform/external-accounts', { currency, accountInfo: info });
  if (res.status !== 201) throw new Error(`external account: ${res.status} ${res.text}`);
  return res.body.id as string;
}

export async function fund(p: PlatformHandle, accountId: string, amount: number): Promise<void> {
  const res = await p.api.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount });
  expect(res.status).toBe(200);
}

export async function balances(p: PlatformHandle, accountId: string): Promise<{ balance: number; total: number }> {
  const res = await p.api.get('/platform/internal-accounts');
  let acct = res.body.data.find((a: Wire) => a.id === accountId);
  if (!acct) {
    const c = await p.api.get('/customers/internal-accounts', { query: { limit: 100 } });
    acct = c.body.data.find((a: Wire) => a.id === accountId);
  }
  return { balance: acct.balance.amount, total: acct.totalBalance.amount };
}

/** Moves the platform clock forward; everything that became due has run when it returns. */
export async function advance(p: PlatformHandle, seconds: number): Promise<void> {
  const res = await p.api.post('/sandbox/clock/advance', { seconds });
  expect(res.status).toBe(200);
}

/** Event types written for one resource, in order. */
export async function eventsFor(srv: TestServer, resourceId: string): Promise<string[]> {
  const rows = await srv.app.ctx.db
    .selectFrom('outbox_events')
    .select(['type', 'id'])
    .where('resource_id', '=', resourceId)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.type);
}

export async function tx(api: Client, id: string): Promise<Wire> {
  const res = await api.get(`/transactions/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

export async function expectLedgerClean(srv: TestServer, platformId?: string): Promise<void> {
  const report = await srv.ledger(platformId);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
}
