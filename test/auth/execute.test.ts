/**
 * Quote execution from an EMBEDDED_WALLET source over HTTP: no immediate execution, and
 * `POST /quotes/{id}/execute` needs a stamp over the quote's EMBEDDED_WALLET `payloadToSign` by an
 * active session of the wallet (spec §4.2, §4.9; facts-auth §1.5).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Client } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advanceClock, keyPair, passkeyLogin, signed, signedCall, stamp, walletSetup, walletWithSession } from './util.ts';

const FUNDED = 5_000_000;
const SANDBOX_SIGNATURE = 'sandbox-valid-signature';

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  await walletSetup(p);
});
afterAll(async () => srv?.close());

let destinations = 0;

/**
 * A USDB (Spark) external account of the platform to pay to. The last 3 digits of the address pick
 * the sandbox outcome: `001` succeeds; the digits before it keep each address distinct.
 */
async function usdbDestination(api: Client): Promise<string> {
  destinations += 1;
  const address = `spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6d${String(destinations).padStart(4, '0')}001`;
  const res = await api.post('/platform/external-accounts', { currency: 'USDB', accountInfo: { accountType: 'LAYER2_WALLET', address } });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

const quoteBody = (walletId: string, destination: string, amount: number, extra: Record<string, unknown> = {}) => ({
  source: { sourceType: 'ACCOUNT', accountId: walletId },
  destination: { destinationType: 'ACCOUNT', accountId: destination },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: amount,
  description: 'wallet payment',
  ...extra,
});

/** A locked quote from the wallet; returns it with its EMBEDDED_WALLET payloadToSign. */
async function walletQuote(api: Client, walletId: string, amount: number): Promise<{ id: string; payload: string; totalSendingAmount: number }> {
  const res = await api.post('/quotes', quoteBody(walletId, await usdbDestination(api), amount));
  expect(res.status, res.text).toBe(201);
  expect(res.body.status).toBe('PENDING');
  expect(res.body.paymentInstructions).toEqual([{ accountOrWalletInfo: { accountType: 'EMBEDDED_WALLET', payloadToSign: expect.any(String) } }]);
  return { id: res.body.id, payload: res.body.paymentInstructions[0].accountOrWalletInfo.payloadToSign, totalSendingAmount: res.body.totalSendingAmount };
}

async function fundWallet(api: Client, walletId: string, amount: number): Promise<void> {
  const res = await api.post(`/sandbox/internal-accounts/${walletId}/fund`, { amount });
  expect(res.status, res.text).toBe(200);
}

async function balance(api: Client, customerId: string, walletId: string): Promise<number> {
  const res = await api.get('/customers/internal-accounts', { query: { customerId } });
  return res.body.data.find((a: { id: string }) => a.id === walletId).balance.amount;
}

const execute = (api: Client, quoteId: string, stampValue?: string) => api.post(`/quotes/${quoteId}/execute`, undefined, stampValue === undefined ? {} : signed(stampValue));

describe('POST /quotes/{id}/execute from an embedded wallet', () => {
  it('refuses immediatelyExecute; executes only with a stamp by an active session over this quote’s payload', async () => {
    const w = await walletWithSession(p.api);
    await fundWallet(p.api, w.accountId, FUNDED);
    const dest = await usdbDestination(p.api);
    const immediate = expectError(await p.api.post('/quotes', quoteBody(w.accountId, dest, 1_000_000, { immediatelyExecute: true })), 400, 'INVALID_INPUT');
    expect(immediate.body.details.errors[0].field).toBe('immediatelyExecute');

    const q = await walletQuote(p.api, w.accountId, 1_000_000);
    const other = await walletQuote(p.api, w.accountId, 2_000);
    const otherWallet = await walletWithSession(p.api);

    expectError(await execute(p.api, q.id), 401, 'WALLET_SIGNATURE_MISSING');
    expectError(await execute(p.api, q.id, await stamp(keyPair(), q.payload)), 401, 'WALLET_SIGNATURE_INVALID');
    expectError(await execute(p.api, q.id, await stamp(w.session.key, other.payload)), 401, 'WALLET_SIGNATURE_INVALID');
    expectError(await execute(p.api, q.id, await stamp(otherWallet.session.key, q.payload)), 401, 'WALLET_SIGNATURE_INVALID');
    expectError(await execute(p.api, q.id, 'not-a-stamp'), 401, 'WALLET_SIGNATURE_MALFORMED');
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('PENDING');
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED);

    const good = await stamp(w.session.key, q.payload);
    const res = await execute(p.api, q.id, good);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: q.id, status: 'PROCESSING' });
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED - q.totalSendingAmount);
    expect((await srv.ledger(p.id)).ok).toBe(true);
    expectError(await execute(p.api, q.id, good), 409, 'CONFLICT');

    await advanceClock(p.api, 1);
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('COMPLETED');
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED - q.totalSendingAmount);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('refuses the stamp of a revoked session, and of a session that expired', async () => {
    const q = await srv.newPlatform();
    await walletSetup(q);
    const w = await walletWithSession(q.api);
    await fundWallet(q.api, w.accountId, FUNDED);
    await advanceClock(q.api, 800);
    const fresh = await walletWithSession(q.api);
    await fundWallet(q.api, fresh.accountId, FUNDED);
    const quote = await walletQuote(q.api, w.accountId, 10_000);
    await advanceClock(q.api, 101); // w's session is 901 s old; the quote (5 min) is still open
    expectError(await execute(q.api, quote.id, await stamp(w.session.key, quote.payload)), 401, 'WALLET_SIGNATURE_INVALID');

    const logout = await signedCall((o) => q.api.delete(`/auth/sessions/${fresh.session.id}`, o), fresh.session.key);
    expect(logout.result.status).toBe(204);
    const q2 = await walletQuote(q.api, fresh.accountId, 10_000);
    expectError(await execute(q.api, q2.id, await stamp(fresh.session.key, q2.payload)), 401, 'WALLET_SIGNATURE_INVALID');
    expect(await balance(q.api, w.customerId, w.accountId)).toBe(FUNDED);
    expect(await balance(q.api, fresh.customerId, fresh.accountId)).toBe(FUNDED);
  });

  it('accepts sandbox-valid-signature on a sandbox platform and refuses it on a production one', async () => {
    const w = await walletWithSession(p.api);
    await fundWallet(p.api, w.accountId, FUNDED);
    const q = await walletQuote(p.api, w.accountId, 25_000);
    const res = await execute(p.api, q.id, SANDBOX_SIGNATURE);
    expect(res.status, res.text).toBe(200);
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED - q.totalSendingAmount);
    expect((await srv.ledger(p.id)).ok).toBe(true);

    // Production: no sandbox funding, but the stamp is checked before the money is.
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const { accountId } = await walletSetup(prod);
    await passkeyLogin(prod.api, accountId);
    const pq = await prod.api.post('/quotes', quoteBody(accountId, await usdbDestination(prod.api), 25_000));
    expect(pq.status, pq.text).toBe(201);
    expectError(await execute(prod.api, pq.body.id, SANDBOX_SIGNATURE), 401, 'WALLET_SIGNATURE_MALFORMED');
    expect((await prod.api.get(`/quotes/${pq.body.id}`)).body.status).toBe('PENDING');
  });

  it('refuses transfer-out from an embedded wallet (it has no signed step): 400, nothing moves', async () => {
    const w = await walletWithSession(p.api);
    await fundWallet(p.api, w.accountId, FUNDED);
    const dest = await usdbDestination(p.api);
    const res = await p.api.post('/transfer-out', { source: { accountId: w.accountId }, destination: { accountId: dest }, amount: 10_000 });
    expectError(res, 400, 'INVALID_INPUT');
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});
