/**
 * Quote execution from an EMBEDDED_WALLET source over HTTP: no immediate execution, and
 * `POST /quotes/{id}/execute` needs a wallet session's signature (spec §4.2, §4.9; facts-auth §1.5):
 * without one it is a signed-retry challenge (202), whose retry with `Request-Id` executes the quote
 * once; a stamp over the quote's own EMBEDDED_WALLET `payloadToSign` without `Request-Id` executes it too.
 * Quotes from other sources execute without any signature header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Client, type Res } from '../helpers/http.ts';
import { fund, platformUsdAccount } from '../helpers/payments.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advanceClock, keyPair, passkeyLogin, signed, signedCall, stamp, walletSetup, walletWithSession } from '../helpers/wallet-auth.ts';

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
async function walletQuote(
  api: Client,
  walletId: string,
  amount: number,
): Promise<{ id: string; payload: string; totalSendingAmount: number }> {
  const res = await api.post('/quotes', quoteBody(walletId, await usdbDestination(api), amount));
  expect(res.status, res.text).toBe(201);
  expect(res.body.status).toBe('PENDING');
  expect(res.body.paymentInstructions).toEqual([
    { accountOrWalletInfo: { accountType: 'EMBEDDED_WALLET', payloadToSign: expect.any(String) } },
  ]);
  return {
    id: res.body.id,
    payload: res.body.paymentInstructions[0].accountOrWalletInfo.payloadToSign,
    totalSendingAmount: res.body.totalSendingAmount,
  };
}

async function fundWallet(api: Client, walletId: string, amount: number): Promise<void> {
  const res = await api.post(`/sandbox/internal-accounts/${walletId}/fund`, { amount });
  expect(res.status, res.text).toBe(200);
}

async function balance(api: Client, customerId: string, walletId: string): Promise<number> {
  const res = await api.get('/customers/internal-accounts', { query: { customerId } });
  return res.body.data.find((a: { id: string }) => a.id === walletId).balance.amount;
}

const execute = (api: Client, quoteId: string, stampValue?: string) =>
  api.post(`/quotes/${quoteId}/execute`, undefined, stampValue === undefined ? {} : signed(stampValue));

describe('POST /quotes/{id}/execute from an embedded wallet', () => {
  it('refuses immediatelyExecute; executes with a stamp by an active session over this quote’s payload, without Request-Id', async () => {
    const w = await walletWithSession(p.api);
    await fundWallet(p.api, w.accountId, FUNDED);
    const dest = await usdbDestination(p.api);
    const immediate = expectError(
      await p.api.post('/quotes', quoteBody(w.accountId, dest, 1_000_000, { immediatelyExecute: true })),
      400,
      'INVALID_INPUT',
    );
    expect(immediate.body.details.errors[0].field).toBe('immediatelyExecute');

    const q = await walletQuote(p.api, w.accountId, 1_000_000);
    const other = await walletQuote(p.api, w.accountId, 2_000);
    const otherWallet = await walletWithSession(p.api);

    expect((await execute(p.api, q.id)).status).toBe(202); // a challenge (below); nothing moves
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

/** The challenge of an unsigned execute (202): exactly the SignedRequestChallenge fields. */
function expectChallenge(res: Res): { payloadToSign: string; requestId: string; expiresAt: string } {
  expect(res.status, res.text).toBe(202);
  expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId']);
  expect(res.body.requestId).toMatch(/^Request:[0-9a-f-]{36}$/);
  expect(typeof res.body.payloadToSign).toBe('string');
  expect(Number.isNaN(Date.parse(res.body.expiresAt))).toBe(false);
  return res.body;
}

describe('POST /quotes/{id}/execute from an embedded wallet: the signed retry (202 → 200)', () => {
  it('answers 202 without headers; the retry stamped by an active session executes the quote once', async () => {
    const w = await walletWithSession(p.api);
    await fundWallet(p.api, w.accountId, FUNDED);
    const q = await walletQuote(p.api, w.accountId, 40_000);
    const quoteExpiresAt = (await p.api.get(`/quotes/${q.id}`)).body.expiresAt;

    const ch = expectChallenge(await execute(p.api, q.id));
    expect(Date.parse(ch.expiresAt)).toBeLessThanOrEqual(Date.parse(quoteExpiresAt));
    // The payload names this challenge and carries the quote's own payload (hex) for the wallet.
    const activity = JSON.parse(ch.payloadToSign);
    expect(activity).toMatchObject({ requestId: ch.requestId, parameters: { signWith: w.accountId } });
    expect(Buffer.from(activity.parameters.payload, 'hex').toString()).toBe(q.payload);
    // A second unsigned call is a fresh challenge; neither moved anything.
    const ch2 = expectChallenge(await execute(p.api, q.id));
    expect(ch2.requestId).not.toBe(ch.requestId);
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('PENDING');
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED);

    const retry = signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId);
    const res = await p.api.post(`/quotes/${q.id}/execute`, undefined, retry);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: q.id, status: 'PROCESSING' });
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED - q.totalSendingAmount);
    expect((await srv.ledger(p.id)).ok).toBe(true);

    // Replaying the retry, or using the other challenge: refused, nothing moves again.
    expectError(await p.api.post(`/quotes/${q.id}/execute`, undefined, retry), 409, 'CONFLICT');
    const other = signed(await stamp(w.session.key, ch2.payloadToSign), ch2.requestId);
    expectError(await p.api.post(`/quotes/${q.id}/execute`, undefined, other), 409, 'CONFLICT');
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED - q.totalSendingAmount);
    await advanceClock(p.api, 1);
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('COMPLETED');
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('refuses a retry by a key that is no active session of this wallet, or not bound to this quote and body', async () => {
    const w = await walletWithSession(p.api);
    const otherWallet = await walletWithSession(p.api);
    await fundWallet(p.api, w.accountId, FUNDED);
    const q = await walletQuote(p.api, w.accountId, 30_000);
    const q2 = await walletQuote(p.api, w.accountId, 20_000);
    const ch = expectChallenge(await execute(p.api, q.id));
    const retry = async (quoteId: string, key: typeof w.session.key, payload = ch.payloadToSign, body?: unknown) =>
      p.api.post(`/quotes/${quoteId}/execute`, body, signed(await stamp(key, payload), ch.requestId));

    // Wrong signer: a fresh key, and another wallet's active session.
    expectError(await retry(q.id, keyPair()), 401, 'WALLET_SIGNATURE_INVALID');
    expectError(await retry(q.id, otherWallet.session.key), 401, 'WALLET_SIGNATURE_INVALID');
    // The right key over the wrong payload (the quote's own, with a Request-Id): the challenge's payload is what counts.
    expectError(await retry(q.id, w.session.key, q.payload), 401, 'WALLET_SIGNATURE_INVALID');
    // The challenge is bound to its quote and to the request body.
    expectError(await retry(q2.id, w.session.key), 401, 'UNAUTHORIZED');
    expectError(await retry(q.id, w.session.key, ch.payloadToSign, { scaFactor: 'TOTP' }), 401, 'WALLET_SIGNATURE_BODY_MISMATCH');
    // Request-Id without a stamp; an unknown Request-Id.
    expectError(
      await p.api.post(`/quotes/${q.id}/execute`, undefined, { headers: { 'request-id': ch.requestId } }),
      401,
      'WALLET_SIGNATURE_MISSING',
    );
    const unknown = signed(await stamp(w.session.key, ch.payloadToSign), 'Request:019542f5-b3e7-7d02-8000-000000000001');
    expectError(await p.api.post(`/quotes/${q.id}/execute`, undefined, unknown), 401, 'UNAUTHORIZED');
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('PENDING');
    expect((await p.api.get(`/quotes/${q2.id}`)).body.status).toBe('PENDING');
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED);

    // None of the failures used the challenge up; with the alias header and a body the retry also works.
    const withBody = expectChallenge(await p.api.post(`/quotes/${q2.id}/execute`, { scaFactor: 'TOTP' }));
    const aliased = await p.api.post(
      `/quotes/${q2.id}/execute`,
      { scaFactor: 'TOTP' },
      { headers: { 'grid-wallet-signature': await stamp(w.session.key, withBody.payloadToSign), 'request-id': withBody.requestId } },
    );
    expect(aliased.status, aliased.text).toBe(200);
    const ok = await retry(q.id, w.session.key);
    expect(ok.status, ok.text).toBe(200);
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED - q.totalSendingAmount - q2.totalSendingAmount);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('refuses the retry once the signing session is revoked', async () => {
    const w = await walletWithSession(p.api);
    await fundWallet(p.api, w.accountId, FUNDED);
    const q = await walletQuote(p.api, w.accountId, 10_000);
    const ch = expectChallenge(await execute(p.api, q.id));
    const logout = await signedCall((o) => p.api.delete(`/auth/sessions/${w.session.id}`, o), w.session.key);
    expect(logout.result.status).toBe(204);
    const res = await p.api.post(`/quotes/${q.id}/execute`, undefined, signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId));
    expectError(res, 401, 'WALLET_SIGNATURE_INVALID');
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED);
  });

  it('accepts sandbox-valid-signature on the retry on a sandbox platform, not on a production one', async () => {
    const w = await walletWithSession(p.api);
    await fundWallet(p.api, w.accountId, FUNDED);
    const q = await walletQuote(p.api, w.accountId, 15_000);
    const ch = expectChallenge(await execute(p.api, q.id));
    const res = await p.api.post(`/quotes/${q.id}/execute`, undefined, signed(SANDBOX_SIGNATURE, ch.requestId));
    expect(res.status, res.text).toBe(200);
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED - q.totalSendingAmount);

    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const { accountId } = await walletSetup(prod);
    await passkeyLogin(prod.api, accountId);
    const pq = await prod.api.post('/quotes', quoteBody(accountId, await usdbDestination(prod.api), 25_000));
    expect(pq.status, pq.text).toBe(201);
    const pch = expectChallenge(await execute(prod.api, pq.body.id));
    const refused = await prod.api.post(`/quotes/${pq.body.id}/execute`, undefined, signed(SANDBOX_SIGNATURE, pch.requestId));
    expectError(refused, 401, 'WALLET_SIGNATURE_MALFORMED');
    expect((await prod.api.get(`/quotes/${pq.body.id}`)).body.status).toBe('PENDING');
  });

  it('Idempotency-Key: a key replays its own leg (the same challenge, or the execution); the retry takes its own key', async () => {
    const w = await walletWithSession(p.api);
    await fundWallet(p.api, w.accountId, FUNDED);
    const q = await walletQuote(p.api, w.accountId, 12_000);
    const key = (name: string) => ({ 'idempotency-key': `execute-${q.id}-${name}` });

    const first = await p.api.post(`/quotes/${q.id}/execute`, undefined, { headers: key('challenge') });
    const ch = expectChallenge(first);
    const again = await p.api.post(`/quotes/${q.id}/execute`, undefined, { headers: key('challenge') });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotency-hit')).toBe('true');
    expect(again.body).toEqual(ch);

    const retry = signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId);
    // The challenge leg's key answers its stored 202 even with signature headers: nothing executes.
    const sameKey = await p.api.post(`/quotes/${q.id}/execute`, undefined, { headers: { ...retry.headers, ...key('challenge') } });
    expect(sameKey.status).toBe(202);
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED);

    const done = await p.api.post(`/quotes/${q.id}/execute`, undefined, { headers: { ...retry.headers, ...key('retry') } });
    expect(done.status, done.text).toBe(200);
    expect(done.body.status).toBe('PROCESSING');
    const replay = await p.api.post(`/quotes/${q.id}/execute`, undefined, { headers: { ...retry.headers, ...key('retry') } });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotency-hit')).toBe('true');
    expect(replay.body).toEqual(done.body);
    expect(await balance(p.api, w.customerId, w.accountId)).toBe(FUNDED - q.totalSendingAmount);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});

describe('POST /quotes/{id}/execute from a non-wallet account', () => {
  it('executes without signature headers (200) and ignores them when sent', async () => {
    const usd = await platformUsdAccount(p);
    await fund(p, usd, FUNDED);
    const stray: Record<string, string>[] = [{}, { 'request-id': 'Request:019542f5-b3e7-7d02-8000-000000000001' }];
    for (const headers of stray) {
      const res = await p.api.post('/quotes', quoteBody(usd, await usdbDestination(p.api), 10_000));
      expect(res.status, res.text).toBe(201);
      expect(res.body.paymentInstructions).toBeUndefined();
      const exec = await p.api.post(`/quotes/${res.body.id}/execute`, undefined, { headers });
      expect(exec.status, exec.text).toBe(200);
      expect(exec.body).toMatchObject({ id: res.body.id, status: 'PROCESSING' });
    }
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});
