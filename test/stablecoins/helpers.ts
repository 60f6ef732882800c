/** Builders shared by the stablecoin tests: links, registered stablecoins, wallets and bank accounts, operations. */
import { expect } from 'vitest';
import type { Client, Res } from '../helpers/http.ts';
import { usAccountInfo } from '../helpers/payments.ts';
import { unique, uniqueAccountNumber, uniqueId } from '../helpers/random.ts';
import type { PlatformHandle, TestServer } from '../helpers/server.ts';

/** `any`: response bodies are read field by field; the assertions are the type check. */
// biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
export type Wire = any;

export const key = () => uniqueId('key');

/** A POST with a fresh (or the given) Idempotency-Key. */
export function send(api: Client, path: string, body: unknown, idempotencyKey: string = key()): Promise<Res> {
  return api.post(path, body, { headers: { 'idempotency-key': idempotencyKey } });
}

export function ok(res: Res, status = 201): Wire {
  expect(res.status, res.text).toBe(status);
  return res.body;
}

/** A client id that ends in `suffix` (the sandbox selector) and is new to this file. */
export function clientId(suffix = '100'): string {
  return `${uniqueId('client')}${suffix}`;
}

export async function link(api: Client, overrides: Record<string, unknown> = {}): Promise<Wire> {
  return ok(
    await send(api, '/stablecoin-provider-accounts', {
      provider: 'BRALE',
      apiClientId: clientId(),
      apiClientSecret: 'secret-1',
      ...overrides,
    }),
  );
}

/** A token identifier ending in `suffix` (the sandbox selector; '' for none) new to this file. */
export function token(suffix = ''): string {
  return `TK${unique('token', (r) => r.hex(3).toUpperCase().replace(/[0-9]/g, 'X'))}${suffix}`;
}

export function networkToken(): string {
  return `btknrt1${unique('btkn', (r) => r.hex(16))}`;
}

export async function register(api: Client, overrides: Record<string, unknown> = {}): Promise<Wire> {
  return ok(
    await send(api, '/stablecoins', {
      providerTokenIdentifier: token(),
      networkTokenIdentifier: networkToken(),
      network: 'SPARK',
      ...overrides,
    }),
  );
}

/** Moves the platform clock forward; everything due has run when it returns. */
export async function advance(p: PlatformHandle, seconds: number): Promise<void> {
  const res = await p.api.post('/sandbox/clock/advance', { seconds });
  expect(res.status, res.text).toBe(200);
}

/** A link and a PROVISIONED stablecoin on it. */
export async function provisioned(p: PlatformHandle): Promise<{ link: Wire; coin: Wire }> {
  const l = await link(p.api);
  const coin = await register(p.api, { stablecoinProviderAccountId: l.id });
  await advance(p, 5);
  const now = ok(await p.api.get(`/stablecoins/${coin.id}`), 200);
  expect(now.issuanceStatus).toBe('PROVISIONED');
  return { link: l, coin: now };
}

export function sparkAddress(): string {
  return `spark1pgssyuuuhnrrdjswal5c3s${unique('spark', (r) => r.hex(8))}`;
}

/** An ACTIVE LAYER2_WALLET external account (the platform's, or the customer's). */
export async function wallet(api: Client, customerId?: string): Promise<string> {
  const body = { currency: 'USDB', accountInfo: { accountType: 'LAYER2_WALLET', address: sparkAddress() } };
  const res = customerId
    ? await api.post('/customers/external-accounts', { ...body, customerId })
    : await api.post('/platform/external-accounts', body);
  return ok(res).id;
}

/** An ACTIVE US_ACCOUNT external account in USD (the platform's, or the customer's). */
export async function bank(api: Client, customerId?: string, info: Record<string, unknown> = {}): Promise<string> {
  const body = { currency: 'USD', accountInfo: { ...usAccountInfo('100'), accountNumber: uniqueAccountNumber('100'), ...info } };
  const res = customerId
    ? await api.post('/customers/external-accounts', { ...body, customerId })
    : await api.post('/platform/external-accounts', body);
  return ok(res).id;
}

export const mintPath = (coinId: string) => `/stablecoins/${coinId}/mints`;
export const burnPath = (coinId: string) => `/stablecoins/${coinId}/burns`;

export function wireMint(amount: string, destination: string): Record<string, unknown> {
  return { amount, fundingSource: { type: 'WIRE' }, destination: { accountId: destination } };
}

export function pibBurn(amount: string, bankId: string, rail = 'ACH_CREDIT'): Record<string, unknown> {
  return {
    amount,
    source: { type: 'PROVIDER_INTERNAL_BALANCE' },
    destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: bankId, rail },
  };
}

export async function operation(api: Client, id: string): Promise<Wire> {
  return ok(await api.get(`/stablecoin-operations/${id}`), 200);
}

/** The stablecoin's row as stored (its supply and reservations are not on the wire). */
export async function stored(srv: TestServer, coinId: string): Promise<{ supply: number; mints: number; burns: number }> {
  const row = await srv.app.ctx.db
    .selectFrom('stablecoins')
    .select(['supply', 'mints_in_flight', 'burns_in_flight'])
    .where('id', '=', coinId)
    .executeTakeFirstOrThrow();
  return { supply: Number(row.supply), mints: Number(row.mints_in_flight), burns: Number(row.burns_in_flight) };
}

/** Postings of the platform's stablecoin system accounts, summed per account role and currency. */
export async function systemTotals(srv: TestServer, platformId: string): Promise<Record<string, number>> {
  const rows = await srv.app.ctx.db
    .selectFrom('ledger_postings')
    .select(['account_id', 'currency', (eb) => eb.fn.sum<number>('amount').as('total')])
    .where('platform_id', '=', platformId)
    .where('account_id', 'like', 'System:%')
    .groupBy(['account_id', 'currency'])
    .execute();
  const out: Record<string, number> = {};
  for (const r of rows) out[`${r.account_id.split(':').pop()}/${r.currency}`] = Number(r.total);
  return out;
}

export async function expectLedgerOk(srv: TestServer, platformId: string): Promise<void> {
  const report = await srv.ledger(platformId);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
}
