/**
 * The delegated key at work: while ACTIVE, its stamp executes quotes funded from its wallet — the
 * stamp over the quote's own payloadToSign, or over the signed retry's challenge — in place of a
 * session's (live `DelegatedKeyStatus`: "the key may stamp quote executions"). A PENDING or REVOKED
 * key does not; nor does it sign for another wallet or any other wallet action. Corridor custodies
 * the key (sealed with CORRIDOR_SECRET_KEY here) and signs with it through `delegatedKeyStamp`; the
 * tests also read it from the store and stamp with @turnkey/api-key-stamper, as a client would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delegatedKeyStamp } from '../../src/modules/delegated-keys/delegated-keys.service.ts';
import { runUnit } from '../../src/unit.ts';
import { installAgent, policy } from '../agents/util.ts';
import { expectError, type Client } from '../helpers/http.ts';
import { controlledIds } from '../cards/helpers.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { keyFromPrivate, keyPair, signed, stamp, walletSetup, walletWithSession, type KeyPair } from '../helpers/wallet-auth.ts';
import { activeKey, createBody, expectChallenge, listKeys, PATH, pendingKey } from './keys.ts';

const SECRET_KEY = 'delegated-keys-test-secret-key-0123456789abcdef';
const FUNDED = 5_000_000;

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer({ deps: { ids: controlledIds() }, env: { CORRIDOR_SECRET_KEY: SECRET_KEY } });
  p = await srv.newPlatform({ name: 'Delegated keys at work' });
  await walletSetup(p);
});
afterAll(async () => srv?.close());

let destinations = 0;

/** A locked quote paying from the wallet to a fresh USDB address (suffix 001: it completes); its EMBEDDED_WALLET payload. */
async function walletQuote(api: Client, walletId: string, amount: number): Promise<{ id: string; payload: string; total: number }> {
  destinations += 1;
  const address = `spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6d${String(destinations).padStart(4, '0')}001`;
  const dest = await api.post('/platform/external-accounts', { currency: 'USDB', accountInfo: { accountType: 'LAYER2_WALLET', address } });
  expect(dest.status, dest.text).toBe(201);
  const res = await api.post('/quotes', {
    source: { sourceType: 'ACCOUNT', accountId: walletId },
    destination: { destinationType: 'ACCOUNT', accountId: dest.body.id },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: amount,
  });
  expect(res.status, res.text).toBe(201);
  return {
    id: res.body.id,
    payload: res.body.paymentInstructions[0].accountOrWalletInfo.payloadToSign,
    total: res.body.totalSendingAmount,
  };
}

/** A wallet with a session, funded. */
async function fundedWallet(): Promise<Awaited<ReturnType<typeof walletWithSession>>> {
  const w = await walletWithSession(p.api);
  const res = await p.api.post(`/sandbox/internal-accounts/${w.accountId}/fund`, { amount: FUNDED });
  expect(res.status, res.text).toBe(200);
  return w;
}

async function balance(customerId: string, walletId: string): Promise<number> {
  const res = await p.api.get('/customers/internal-accounts', { query: { customerId } });
  return res.body.data.find((a: { id: string }) => a.id === walletId).balance.amount;
}

/** The stored row of a key. */
function storedKey(id: string) {
  return srv.app.ctx.db.selectFrom('delegated_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** The custodied key pair of a delegated key, opened from the store (as only the server can). */
async function custodied(id: string): Promise<KeyPair> {
  const row = await storedKey(id);
  expect(row.private_key).toMatch(/^enc:v1:/);
  return keyFromPrivate(srv.app.ctx.secrets.open(row.private_key!, { table: 'delegated_keys', column: 'private_key', row: id }));
}

/** Corridor's own stamp with the ACTIVE key of `fundingSourceId` (what card payments will use). */
function serverStamp(fundingSourceId: string, payload: string): Promise<string | undefined> {
  return runUnit(srv.app.ctx, p.id, (u) => delegatedKeyStamp(u, fundingSourceId, payload));
}

const execute = (quoteId: string, o?: { headers: Record<string, string> }) => p.api.post(`/quotes/${quoteId}/execute`, undefined, o);

describe('an ACTIVE delegated key signs quote executions from its wallet', () => {
  it('Corridor’s stamp over the quote’s payload executes it; the stamp carries the key’s public key', async () => {
    const w = await fundedWallet();
    const key = await activeKey(p.api, await createBody(p.api, w), w.session.key);
    const q = await walletQuote(p.api, w.accountId, 25_000);
    const s = await serverStamp(key.fundingSourceId, q.payload);
    expect(JSON.parse(Buffer.from(s!, 'base64url').toString()).publicKey).toBe(key.publicKey);
    const res = await execute(q.id, signed(s!));
    expect(res.status, res.text).toBe(200);
    expect(await balance(w.customerId, w.accountId)).toBe(FUNDED - q.total);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('the signed retry of an execute, stamped with the custodied key by @turnkey/api-key-stamper', async () => {
    const w = await fundedWallet();
    const key = await activeKey(p.api, await createBody(p.api, w), w.session.key);
    const pair = await custodied(key.id);
    expect(pair.publicKey).toBe(key.publicKey);
    const q = await walletQuote(p.api, w.accountId, 30_000);
    const ch = expectChallenge(await execute(q.id));
    const res = await execute(q.id, signed(await stamp(pair, ch.payloadToSign), ch.requestId));
    expect(res.status, res.text).toBe(200);
    expect(await balance(w.customerId, w.accountId)).toBe(FUNDED - q.total);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('an agent’s execute of a quote from the wallet takes the key’s stamp too', async () => {
    const w = await fundedWallet();
    const key = await activeKey(p.api, await createBody(p.api, w), w.session.key);
    const agent = await installAgent(srv, p, w.customerId, policy());
    destinations += 1;
    const address = `spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6d${String(destinations).padStart(4, '0')}001`;
    // An agent pays to its customer's own external accounts.
    const dest = await p.api.post('/customers/external-accounts', {
      customerId: w.customerId,
      currency: 'USDB',
      accountInfo: { accountType: 'LAYER2_WALLET', address },
    });
    expect(dest.status, dest.text).toBe(201);
    const q = await agent.api.post('/agents/me/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: w.accountId },
      destination: { destinationType: 'ACCOUNT', accountId: dest.body.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 20_000,
    });
    expect(q.status, q.text).toBe(201);
    const payload = q.body.paymentInstructions[0].accountOrWalletInfo.payloadToSign;
    const res = await agent.api.post(`/agents/me/quotes/${q.body.id}/execute`, undefined, {
      headers: { 'Grid-Wallet-Signature': (await serverStamp(key.fundingSourceId, payload))! },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ status: 'APPROVED', quote: { status: 'PROCESSING' } });
    expect(await balance(w.customerId, w.accountId)).toBe(FUNDED - q.body.totalSendingAmount);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('and nothing else: not another wallet’s quotes, not the wallet’s other signed actions', async () => {
    const w = await fundedWallet();
    const v = await fundedWallet();
    const key = await activeKey(p.api, await createBody(p.api, w), w.session.key);
    const pair = await custodied(key.id);
    const theirs = await walletQuote(p.api, v.accountId, 10_000);
    expectError(await execute(theirs.id, signed(await stamp(pair, theirs.payload))), 401, 'WALLET_SIGNATURE_INVALID');
    expect(await serverStamp('CardFundingSource:00000000-0000-4000-8000-000000000000', theirs.payload)).toBeUndefined();

    const client = keyPair();
    const exportCh = expectChallenge(
      await p.api.post(`/internal-accounts/${w.accountId}/export`, { clientPublicKey: client.publicKeyUncompressed }),
    );
    const exported = await p.api.post(
      `/internal-accounts/${w.accountId}/export`,
      { clientPublicKey: client.publicKeyUncompressed },
      signed(await stamp(pair, exportCh.payloadToSign), exportCh.requestId),
    );
    expectError(exported, 401, 'WALLET_SIGNATURE_INVALID');
    // Nor another delegated-key create (its legs need a session of the wallet).
    const body = await createBody(p.api, w);
    const leg1 = await p.api.post(PATH, body);
    expectError(
      await p.api.post(PATH, body, signed(await stamp(pair, leg1.body.payloadToSign), leg1.body.requestId)),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    expect(await balance(v.customerId, v.accountId)).toBe(FUNDED);
  });
});

describe('a key that is not ACTIVE signs nothing', () => {
  it('PENDING: its stamp is refused and Corridor has no ACTIVE key to sign with', async () => {
    const w = await fundedWallet();
    await pendingKey(p.api, await createBody(p.api, w), w.session.key);
    const [pending] = await listKeys(p.api, { accountId: w.accountId });
    const q = await walletQuote(p.api, w.accountId, 10_000);
    expect(await serverStamp(pending!.fundingSourceId, q.payload)).toBeUndefined();
    expectError(await execute(q.id, signed(await stamp(await custodied(pending!.id), q.payload))), 401, 'WALLET_SIGNATURE_INVALID');
    expect(await balance(w.customerId, w.accountId)).toBe(FUNDED);
  });

  it('REVOKED: a stamp made before the revoke no longer executes, and the key material is gone', async () => {
    const w = await fundedWallet();
    const key = await activeKey(p.api, await createBody(p.api, w), w.session.key);
    const q = await walletQuote(p.api, w.accountId, 10_000);
    const before = await serverStamp(key.fundingSourceId, q.payload);
    expect((await p.api.delete(`${PATH}/${key.id}`)).status).toBe(204);
    expectError(await execute(q.id, signed(before!)), 401, 'WALLET_SIGNATURE_INVALID');
    expect(await serverStamp(key.fundingSourceId, q.payload)).toBeUndefined();
    expect((await storedKey(key.id)).private_key).toBeNull();
    // A session still signs the same quote.
    expect((await execute(q.id, signed(await stamp(w.session.key, q.payload)))).status).toBe(200);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});

describe('secrets at rest', () => {
  it('the pending first leg’s keypair and the key’s private half are sealed under CORRIDOR_SECRET_KEY', async () => {
    const w = await walletWithSession(p.api);
    const body = await createBody(p.api, w);
    const leg1 = await p.api.post(PATH, body);
    const request = await srv.app.ctx.db
      .selectFrom('auth_requests')
      .select('data')
      .where('id', '=', leg1.body.requestId)
      .executeTakeFirstOrThrow();
    expect(request.data).toMatch(/^enc:v1:/);
    const key = await activeKey(p.api, body, w.session.key);
    const row = await storedKey(key.id);
    expect(row.private_key).toMatch(/^enc:v1:/);
    // Bound to its row: the sealed value does not open as another key's.
    expect(() =>
      srv.app.ctx.secrets.open(row.private_key!, { table: 'delegated_keys', column: 'private_key', row: leg1.body.requestId }),
    ).toThrow();
  });
});
