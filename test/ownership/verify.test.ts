/**
 * Ownership verification by wallet signature (POST /customers|platform/external-accounts/{id}/verify),
 * with real key pairs of every chain: the valid signature in each accepted encoding makes the account
 * ACTIVE; a signature by another key, over another message or after expiresAt leaves it UNVERIFIED
 * with a 400 (committed, with its event); a signature not in the wallet's encoding changes nothing;
 * and the 404/409/400/401/403 refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, expectError } from '../helpers/http.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advance } from '../helpers/payments.ts';
import { newCustomer, usAccount } from '../external-accounts/util.ts';
import {
  challenge,
  expectRejected,
  getAccount,
  messageFor,
  OWNERSHIP_JOBS,
  signedStatusWebhook,
  statusEvents,
  verify,
  walletAccount,
} from './util.ts';
import { EvmWallet, SolanaWallet, SparkWallet, TronWallet } from './wallets.ts';

let srv: TestServer;
let rec: Receiver;
let p: PlatformHandle;
let other: PlatformHandle;
let customerId: string;
let viewer: Client;

beforeAll(async () => {
  srv = await startServer({ jobHandlers: OWNERSHIP_JOBS });
  rec = await startReceiver();
  p = await srv.newPlatform();
  other = await srv.newPlatform();
  const set = await p.api.patch('/config', { webhookEndpoint: rec.url });
  expect(set.status, set.text).toBe(200);
  customerId = await newCustomer(p.api);
  const tok = await p.api.post('/tokens', { name: 'read only', permissions: ['VIEW'] });
  expect(tok.status, tok.text).toBe(201);
  viewer = new Client(srv.baseUrl, { basic: { id: tok.body.clientId, secret: tok.body.clientSecret } });
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

interface Signer {
  accountType: string;
  currency: string;
  address: string;
}

/** Creates the account, takes a challenge, signs it with `sign`, verifies: expects ACTIVE and its signed event. */
async function verifiesWith(w: Signer, sign: (message: string) => string, extra: Record<string, unknown> = {}) {
  const a = await walletAccount(p.api, w, { customerId });
  const message = await messageFor(p.api, a);
  const res = await verify(p.api, a, { signature: sign(message), ...extra });
  expect(res.status, `${w.accountType}: ${res.text}`).toBe(200);
  expect(res.body).toMatchObject({ id: a.id, customerId, status: 'ACTIVE', ownershipType: 'FIRST_PARTY' });
  expect(res.body.accountInfo).toEqual(a.accountInfo);
  expect(res.body).toEqual(await getAccount(p.api, a));
  expect(await statusEvents(srv, p.id, a.id)).toEqual(['ACTIVE']);
  return { a, res };
}

describe('a valid signature makes the account ACTIVE', () => {
  it('EIP-191 personal_sign for every EVM wallet type, with a signed EXTERNAL_ACCOUNT.STATUS_UPDATED', async () => {
    for (const [type, ccy] of [
      ['ETHEREUM_WALLET', 'USDC'],
      ['BASE_WALLET', 'USDC'],
      ['POLYGON_WALLET', 'USDT'],
      ['PLASMA_WALLET', 'USDT'],
    ] as const) {
      const w = new EvmWallet(type, ccy);
      const { a, res } = await verifiesWith(w, (m) => w.sign(m));
      expect((await signedStatusWebhook(p, rec, a.id, 'ACTIVE')).data).toEqual(res.body);
    }
  });

  it('EVM signatures with a 0/1 recovery byte, without the 0x prefix, and against an address registered in lower case', async () => {
    const w = new EvmWallet();
    await verifiesWith(w, (m) => w.sign(m, 0));
    const bare = new EvmWallet();
    await verifiesWith(bare, (m) => bare.sign(m).slice(2));
    const lower = new EvmWallet();
    await verifiesWith({ ...lower, address: lower.address.toLowerCase(), accountType: lower.accountType, currency: lower.currency }, (m) =>
      lower.sign(m),
    );
  });

  it('Tron (TronWeb signMessageV2) and Solana (base58 Ed25519)', async () => {
    const tron = new TronWallet();
    await verifiesWith(tron, (m) => tron.sign(m));
    const sol = new SolanaWallet();
    await verifiesWith(sol, (m) => sol.sign(m));
  });

  it('Spark: the identity-key signature in DER or compact hex, or a Bitcoin message signature in base64', async () => {
    for (const format of ['der', 'compact', 'bip137', 'bip137-segwit'] as const) {
      const w = new SparkWallet();
      await verifiesWith(w, (m) => w.sign(m, format));
    }
    const electrum = new SparkWallet();
    await verifiesWith(electrum, (m) => electrum.sign(m, 'bip137'), { signatureScheme: 'electrum' });
  });
});

describe('a failed verification leaves the account UNVERIFIED', () => {
  it('another key’s signature: 400, UNVERIFIED with its event; the challenge is spent; a new one can still succeed', async () => {
    const w = new EvmWallet();
    const a = await walletAccount(p.api, w, { customerId });
    const message = await messageFor(p.api, a);
    const res = await verify(p.api, a, { signature: new EvmWallet().sign(message) });
    expectRejected(res, 'SIGNATURE_INVALID');
    expect(res.body.details.errors).toEqual([{ field: 'signature', message: expect.any(String) }]);
    const failed = await getAccount(p.api, a);
    expect(failed.status).toBe('UNVERIFIED');
    expect((await signedStatusWebhook(p, rec, a.id, 'UNVERIFIED')).data).toEqual(failed);

    const spent = expectError(await verify(p.api, a, { signature: w.sign(message) }), 409, 'CONFLICT');
    expect(spent.body.details.reason).toBe('NO_CHALLENGE_OUTSTANDING');
    expect((await getAccount(p.api, a)).status).toBe('UNVERIFIED');

    const retry = await messageFor(p.api, a);
    expect((await getAccount(p.api, a)).status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    expect((await verify(p.api, a, { signature: w.sign(retry) })).body.status).toBe('ACTIVE');
    expect(await statusEvents(srv, p.id, a.id)).toEqual(['UNVERIFIED', 'PENDING_OWNERSHIP_VERIFICATION', 'ACTIVE']);
  });

  it('in every chain’s encoding: a signature by another key, and the wallet’s own over another text', async () => {
    const wallets = [() => new EvmWallet(), () => new TronWallet(), () => new SolanaWallet(), () => new SparkWallet()];
    for (const make of wallets) {
      const w = make();
      const a = await walletAccount(p.api, w, { customerId });
      const message = await messageFor(p.api, a);
      expectRejected(await verify(p.api, a, { signature: make().sign(message) }), 'SIGNATURE_INVALID');

      const v = make();
      const b = await walletAccount(p.api, v, { customerId });
      const own = await messageFor(p.api, b);
      expectRejected(await verify(p.api, b, { signature: v.sign(`${own} `) }), 'SIGNATURE_INVALID');
    }
    const spark = new SparkWallet();
    const c = await walletAccount(p.api, spark, { customerId });
    expectRejected(
      await verify(p.api, c, { signature: new SparkWallet().sign(await messageFor(p.api, c), 'bip137') }),
      'SIGNATURE_INVALID',
    );
  });

  it('after expiresAt (15 minutes): 400 CHALLENGE_EXPIRED and UNVERIFIED, even for the right signature', async () => {
    const q = await srv.newPlatform();
    const c = await newCustomer(q.api);
    const w = new EvmWallet();
    const a = await walletAccount(q.api, w, { customerId: c });
    const inTime = new EvmWallet();
    const b = await walletAccount(q.api, inTime, { customerId: c });
    const late = await messageFor(q.api, a);
    const early = await messageFor(q.api, b);
    await advance(q, 15 * 60 - 1);
    expect((await verify(q.api, b, { signature: inTime.sign(early) })).body.status).toBe('ACTIVE');
    await advance(q, 1);
    const res = await verify(q.api, a, { signature: w.sign(late) });
    expectRejected(res, 'CHALLENGE_EXPIRED');
    expect(res.body.details.errors).toBeUndefined();
    expect((await getAccount(q.api, a)).status).toBe('UNVERIFIED');
    expect(await statusEvents(srv, q.id, a.id)).toEqual(['UNVERIFIED']);
  });
});

describe('a signature not in the wallet’s encoding changes nothing', () => {
  it('400 SIGNATURE_MALFORMED on the field signature, the account and its challenge untouched', async () => {
    const cases: [() => Signer, string | ((w: SparkWallet) => string), Record<string, unknown>?][] = [
      [() => new EvmWallet(), 'not-hex'],
      [() => new EvmWallet(), `0x${'ab'.repeat(64)}`],
      [() => new EvmWallet(), `0x${'ab'.repeat(64)}1d`],
      [() => new TronWallet(), 'dGVzdA=='],
      [() => new SolanaWallet(), '0OIl'],
      [() => new SolanaWallet(), '3mJr7AoUXx2Wqd'],
      [() => new SparkWallet(), '%%%'],
      [() => new SparkWallet(), Buffer.alloc(64, 1).toString('base64')],
      [() => new SparkWallet(), 'ab'.repeat(20)],
      [() => new SparkWallet(), (w) => w.sign('x', 'bip137-segwit'), { signatureScheme: 'electrum' }],
    ];
    for (const [make, signature, extra] of cases) {
      const w = make();
      const a = await walletAccount(p.api, w, { customerId });
      await messageFor(p.api, a);
      const text = typeof signature === 'string' ? signature : signature(w as SparkWallet);
      const res = expectError(await verify(p.api, a, { signature: text, ...extra }), 400, 'INVALID_INPUT');
      expect(res.body.details.reason, `${w.accountType} ${text}: ${res.text}`).toBe('SIGNATURE_MALFORMED');
      expect(res.body.details.errors[0].field).toBe('signature');
      expect((await getAccount(p.api, a)).status).toBe('PENDING_OWNERSHIP_VERIFICATION');
      expect(await statusEvents(srv, p.id, a.id)).toEqual([]);
    }
  });

  it('the same challenge still verifies after a malformed attempt', async () => {
    const w = new EvmWallet();
    const a = await walletAccount(p.api, w, { customerId });
    const message = await messageFor(p.api, a);
    expectError(await verify(p.api, a, { signature: 'zz' }), 400, 'INVALID_INPUT');
    expect((await verify(p.api, a, { signature: w.sign(message) })).body.status).toBe('ACTIVE');
  });
});

describe('concurrent requests on one account', () => {
  it('two verifies of one challenge: one ACTIVE, the other finds it spent; five challenges leave one outstanding', async () => {
    const w = new EvmWallet();
    const a = await walletAccount(p.api, w, { customerId });
    const message = await messageFor(p.api, a);
    const both = await Promise.all([0, 1].map(() => verify(p.api, a, { signature: w.sign(message) })));
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(await statusEvents(srv, p.id, a.id)).toEqual(['ACTIVE']);

    const b = await walletAccount(p.api, new SolanaWallet(), { customerId });
    const issued = await Promise.all([0, 1, 2, 3, 4].map(() => challenge(p.api, b, 'WALLET_SIGNATURE')));
    expect(issued.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const rows = await srv.app.ctx.db
      .selectFrom('ownership_challenges')
      .select(['status', 'message_to_sign'])
      .where('external_account_id', '=', b.id)
      .execute();
    expect(rows.map((r) => r.status).sort()).toEqual(['ABANDONED', 'ABANDONED', 'ABANDONED', 'ABANDONED', 'PENDING']);
    expect(issued.map((r) => r.body.messageToSign)).toContain(rows.find((r) => r.status === 'PENDING')!.message_to_sign);
  });
});

describe('refusals', () => {
  it('409 with no WALLET_SIGNATURE challenge outstanding: none issued, a LIVENESS one, an account it does not apply to', async () => {
    const a = await walletAccount(p.api, new EvmWallet(), { customerId });
    const none = expectError(await verify(p.api, a, { signature: `0x${'11'.repeat(65)}` }), 409, 'CONFLICT');
    expect(none.body.details.reason).toBe('NO_CHALLENGE_OUTSTANDING');
    expect((await challenge(p.api, a, 'LIVENESS')).status).toBe(201);
    const live = expectError(await verify(p.api, a, { signature: `0x${'11'.repeat(65)}` }), 409, 'CONFLICT');
    expect(live.body.details.reason).toBe('LIVENESS_CHALLENGE_OUTSTANDING');
    const bank = (await p.api.post('/customers/external-accounts', usAccount(customerId, '60606060'))).body;
    expectError(await verify(p.api, bank, { signature: 'abc' }), 409, 'CONFLICT');
    expect(await statusEvents(srv, p.id, a.id)).toEqual([]);
  });

  it('404 for an unknown id, another platform’s account and the other route’s accounts', async () => {
    const w = new EvmWallet();
    const theirs = await walletAccount(other.api, w);
    const message = await messageFor(other.api, theirs);
    const mine = await walletAccount(p.api, new EvmWallet(), { customerId });
    await messageFor(p.api, mine);
    const paths = [
      '/platform/external-accounts/ExternalAccount:019542f5-b3e7-7d02-8000-000000000001/verify',
      `/platform/external-accounts/${theirs.id}/verify`,
      `/customers/external-accounts/${theirs.id}/verify`,
      `/platform/external-accounts/${mine.id}/verify`,
    ];
    for (const path of paths) expectError(await p.api.post(path, { signature: w.sign(message) }), 404, 'REFERENCE_NOT_FOUND');
    // The other platform's challenge is untouched and still verifies there.
    expect((await verify(other.api, theirs, { signature: w.sign(message) })).body.status).toBe('ACTIVE');
  });

  it('400 for a bad body (missing, empty or too long signature, unknown scheme, unknown field); nothing changes', async () => {
    const w = new EvmWallet();
    const a = await walletAccount(p.api, w, { customerId });
    const message = await messageFor(p.api, a);
    const bodies: [unknown, string][] = [
      [{}, 'signature'],
      [{ signature: '' }, 'signature'],
      [{ signature: 'a'.repeat(1025) }, 'signature'],
      [{ signature: 42 }, 'signature'],
      [{ signature: w.sign(message), signatureScheme: 'bip322' }, 'signatureScheme'],
      [{ signature: w.sign(message), message }, 'message'],
    ];
    for (const [body, field] of bodies) {
      const res = expectError(await verify(p.api, a, body as Record<string, unknown>), 400, 'INVALID_INPUT');
      expect(JSON.stringify(res.body.details.errors), res.text).toContain(field);
    }
    expect((await getAccount(p.api, a)).status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    expect((await verify(p.api, a, { signature: w.sign(message) })).body.status).toBe('ACTIVE');
  });

  it('401 without or with wrong credentials, 403 with a VIEW token; the challenge survives them', async () => {
    const w = new EvmWallet();
    const a = await walletAccount(p.api, w, { customerId });
    const message = await messageFor(p.api, a);
    const body = { signature: w.sign(message) };
    const url = `/customers/external-accounts/${a.id}/verify`;
    expectError(await srv.anon.post(url, body), 401, 'UNAUTHORIZED');
    expectError(await new Client(srv.baseUrl, { basic: { id: p.creds.id, secret: 'wrong' } }).post(url, body), 401, 'UNAUTHORIZED');
    expectError(await viewer.post(url, body), 403, 'FORBIDDEN');
    expect((await verify(p.api, a, body)).body.status).toBe('ACTIVE');
  });
});
