/**
 * Ownership challenges (POST /customers|platform/external-accounts/{id}/challenge): which accounts
 * are created awaiting verification, both methods on both routes, the sandbox liveness outcomes
 * with their signed webhooks, restarts, and every refusal (400, 401, 403, 404, 409, 501).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, expectError } from '../helpers/http.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advance } from '../helpers/payments.ts';
import { newCustomer, usAccount } from '../external-accounts/util.ts';
import { challenge, getAccount, messageFor, OWNERSHIP_JOBS, signedStatusWebhook, statusEvents, verify, walletAccount } from './util.ts';
import { EvmWallet, keylessEvmAddress, SparkWallet, SolanaWallet, type TestWallet } from './wallets.ts';

let srv: TestServer;
let rec: Receiver;
let p: PlatformHandle;
let other: PlatformHandle;
let customerId: string;
let viewer: Client;

/**
 * A platform with a customer (a fresh sandbox clock for each test that moves it); a sandbox one
 * sends its webhooks to the receiver (a PRODUCTION one may not send them to loopback).
 */
async function platform(environment: 'SANDBOX' | 'PRODUCTION' = 'SANDBOX') {
  const q = await srv.newPlatform({ environment });
  if (environment === 'SANDBOX') {
    const set = await q.api.patch('/config', { webhookEndpoint: rec.url });
    expect(set.status, set.text).toBe(200);
  }
  return { q, customerId: await newCustomer(q.api) };
}

const keyless = (suffix: string): TestWallet => ({ accountType: 'BASE_WALLET', currency: 'USDC', address: keylessEvmAddress(suffix) });

beforeAll(async () => {
  srv = await startServer({ jobHandlers: OWNERSHIP_JOBS });
  rec = await startReceiver();
  ({ q: p, customerId } = await platform());
  other = await srv.newPlatform();
  const tok = await p.api.post('/tokens', { name: 'read only', permissions: ['VIEW'] });
  expect(tok.status, tok.text).toBe(201);
  viewer = new Client(srv.baseUrl, { basic: { id: tok.body.clientId, secret: tok.body.clientSecret } });
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

describe('accounts awaiting verification', () => {
  it('a FIRST_PARTY self-custody wallet is created PENDING_OWNERSHIP_VERIFICATION, with no event; every other account ACTIVE', async () => {
    const pending = await walletAccount(p.api, new EvmWallet(), { customerId });
    expect(pending).toMatchObject({ status: 'PENDING_OWNERSHIP_VERIFICATION', ownershipType: 'FIRST_PARTY', customerId });
    expect(await getAccount(p.api, pending)).toEqual(pending);
    expect(await statusEvents(srv, p.id, pending.id)).toEqual([]);
    const platformOwned = await walletAccount(p.api, new SolanaWallet());
    expect(platformOwned.status).toBe('PENDING_OWNERSHIP_VERIFICATION');

    const active = [
      await walletAccount(p.api, new EvmWallet(), { customerId, ownershipType: 'THIRD_PARTY' }),
      await walletAccount(p.api, new EvmWallet(), { customerId, ownershipType: null }),
      await walletAccount(p.api, new EvmWallet(), { customerId, vaspName: 'Kraken' }),
    ];
    const bank = await p.api.post('/customers/external-accounts', { ...usAccount(customerId, '40404040'), ownershipType: 'FIRST_PARTY' });
    expect(bank.status, bank.text).toBe(201);
    for (const a of [...active, bank.body]) expect(a.status, JSON.stringify(a)).toBe('ACTIVE');
  });
});

describe('WALLET_SIGNATURE challenges', () => {
  it('answers 201 with the message to sign, bound to the address, valid 15 minutes; the status stays', async () => {
    const w = new EvmWallet();
    const a = await walletAccount(p.api, w, { customerId });
    const res = await challenge(p.api, a, 'WALLET_SIGNATURE');
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'messageToSign', 'method']);
    expect(res.body.method).toBe('WALLET_SIGNATURE');
    expect(res.body.messageToSign).toMatch(new RegExp(`^I verify that I control the wallet ${w.address}\\. Nonce: [0-9a-f]{32}$`));
    const ttl = Date.parse(res.body.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    expect((await getAccount(p.api, a)).status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    expect(await statusEvents(srv, p.id, a.id)).toEqual([]);
  });

  it('a new challenge abandons the outstanding one: a signature of the old message no longer proves anything', async () => {
    const w = new EvmWallet();
    const a = await walletAccount(p.api, w, { customerId });
    const first = await messageFor(p.api, a);
    const second = await messageFor(p.api, a);
    expect(second).not.toBe(first);
    const stale = await verify(p.api, a, { signature: w.sign(first) });
    expect(stale.status, stale.text).toBe(400);
    expect(stale.body.details.reason).toBe('SIGNATURE_INVALID');
    expect((await getAccount(p.api, a)).status).toBe('UNVERIFIED');
  });

  it('works on the platform route for platform-owned wallets', async () => {
    const w = new SolanaWallet();
    const a = await walletAccount(p.api, w);
    const message = await messageFor(p.api, a);
    const done = await verify(p.api, a, { signature: w.sign(message) });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ id: a.id, status: 'ACTIVE' });
    expect(done.body).not.toHaveProperty('customerId');
  });

  it('refuses a Spark address that carries no identity key (409), where LIVENESS still works', async () => {
    const spark = { accountType: 'LAYER2_WALLET', currency: 'BTC', address: `sparkrt1${'q'.repeat(58)}` };
    const a = await walletAccount(p.api, spark, { customerId });
    const res = expectError(await challenge(p.api, a, 'WALLET_SIGNATURE'), 409, 'CONFLICT');
    expect(res.body.details.reason).toBe('ADDRESS_NOT_VERIFIABLE');
    expect((await challenge(p.api, a, 'LIVENESS')).status).toBe(201);
    // A real Spark address of the same kind is accepted.
    expect((await challenge(p.api, await walletAccount(p.api, new SparkWallet(), { customerId }), 'WALLET_SIGNATURE')).status).toBe(201);
  });
});

describe('LIVENESS challenges (sandbox outcomes by the address suffix)', () => {
  it('passes 30 seconds later: ACTIVE, with a signed EXTERNAL_ACCOUNT.STATUS_UPDATED carrying the account', async () => {
    const { q, customerId: c } = await platform();
    const a = await walletAccount(q.api, keyless('101'), { customerId: c });
    const res = await challenge(q.api, a, 'LIVENESS');
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'method', 'verificationLink']);
    expect(res.body.method).toBe('LIVENESS');
    expect(res.body.verificationLink).toMatch(/^https:\/\/liveness\.sandbox\.corridor\.invalid\/session\/[0-9a-f-]{36}$/);
    expect(Date.parse(res.body.expiresAt) - Date.now()).toBeGreaterThan(59 * 60_000);

    await advance(q, 29);
    expect((await getAccount(q.api, a)).status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    // A verify has nothing to check while a LIVENESS challenge is outstanding.
    const early = expectError(await verify(q.api, a, { signature: `0x${'11'.repeat(65)}` }), 409, 'CONFLICT');
    expect(early.body.details.reason).toBe('LIVENESS_CHALLENGE_OUTSTANDING');
    await advance(q, 1);
    const now = await getAccount(q.api, a);
    expect(now.status).toBe('ACTIVE');
    expect(await statusEvents(srv, q.id, a.id)).toEqual(['ACTIVE']);
    const hook = await signedStatusWebhook(q, rec, a.id, 'ACTIVE');
    expect(hook.data).toEqual(now);
    // Verified: a further challenge is refused.
    expect(expectError(await challenge(q.api, a, 'LIVENESS'), 409, 'CONFLICT').body.details.reason).toBe('ALREADY_VERIFIED');
  });

  it('222 fails: UNVERIFIED with its webhook; a new challenge returns the account to PENDING_OWNERSHIP_VERIFICATION', async () => {
    const { q, customerId: c } = await platform();
    const a = await walletAccount(q.api, keyless('222'), { customerId: c });
    expect((await challenge(q.api, a, 'LIVENESS')).status).toBe(201);
    await advance(q, 30);
    const failed = await getAccount(q.api, a);
    expect(failed.status).toBe('UNVERIFIED');
    expect((await signedStatusWebhook(q, rec, a.id, 'UNVERIFIED')).data).toEqual(failed);

    expect((await challenge(q.api, a, 'LIVENESS')).status).toBe(201);
    const again = await getAccount(q.api, a);
    expect(again.status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    expect((await signedStatusWebhook(q, rec, a.id, 'PENDING_OWNERSHIP_VERIFICATION')).data).toEqual(again);
    await advance(q, 30);
    expect(await statusEvents(srv, q.id, a.id)).toEqual(['UNVERIFIED', 'PENDING_OWNERSHIP_VERIFICATION', 'UNVERIFIED']);
  });

  it('333 never completes: the challenge lapses and the account stays PENDING_OWNERSHIP_VERIFICATION', async () => {
    const { q, customerId: c } = await platform();
    const a = await walletAccount(q.api, keyless('333'), { customerId: c });
    expect((await challenge(q.api, a, 'LIVENESS')).status).toBe(201);
    await advance(q, 2 * 3600);
    expect((await getAccount(q.api, a)).status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    expect(await statusEvents(srv, q.id, a.id)).toEqual([]);
  });

  it('switching to WALLET_SIGNATURE abandons the liveness check: its outcome never arrives', async () => {
    const { q, customerId: c } = await platform();
    const w = new EvmWallet('POLYGON_WALLET', 'USDC');
    const a = await walletAccount(q.api, w, { customerId: c });
    expect((await challenge(q.api, a, 'LIVENESS')).status).toBe(201);
    const message = await messageFor(q.api, a);
    await advance(q, 60);
    expect((await getAccount(q.api, a)).status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    expect((await verify(q.api, a, { signature: w.sign(message) })).status).toBe(200);
    expect(await statusEvents(srv, q.id, a.id)).toEqual(['ACTIVE']);
  });

  it('a PRODUCTION platform has no liveness provider (501); signatures work there as in the sandbox', async () => {
    const { q, customerId: c } = await platform('PRODUCTION');
    const w = new EvmWallet();
    const a = await walletAccount(q.api, w, { customerId: c });
    expect(a.status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    expectError(await challenge(q.api, a, 'LIVENESS'), 501, 'NOT_IMPLEMENTED');
    const message = await messageFor(q.api, a);
    expect((await verify(q.api, a, { signature: w.sign(message) })).body.status).toBe('ACTIVE');
  });
});

describe('refusals', () => {
  it('409 where verification does not apply, naming why', async () => {
    const cases: [unknown, string][] = [
      [(await p.api.post('/customers/external-accounts', usAccount(customerId, '50505050'))).body, 'NOT_A_CRYPTO_WALLET'],
      [await walletAccount(p.api, new EvmWallet(), { customerId, ownershipType: 'THIRD_PARTY' }), 'NOT_FIRST_PARTY'],
      [await walletAccount(p.api, new EvmWallet(), { customerId, ownershipType: null }), 'NOT_FIRST_PARTY'],
      [await walletAccount(p.api, new EvmWallet(), { customerId, vaspName: 'Kraken' }), 'CUSTODIAL_WALLET'],
    ];
    for (const [account, reason] of cases) {
      for (const method of ['WALLET_SIGNATURE', 'LIVENESS']) {
        const res = expectError(await challenge(p.api, account as { id: string; customerId: string }, method), 409, 'CONFLICT');
        expect(res.body.details.reason, res.text).toBe(reason);
      }
    }
  });

  it('404 for an unknown id, another platform’s account, the other route’s accounts and a deleted account', async () => {
    const mine = await walletAccount(p.api, new EvmWallet(), { customerId });
    const platformOwned = await walletAccount(p.api, new EvmWallet());
    const theirs = await walletAccount(other.api, new EvmWallet());
    const gone = await walletAccount(p.api, new EvmWallet(), { customerId });
    expect((await p.api.delete(`/customers/external-accounts/${gone.id}`)).status).toBe(204);
    const paths = [
      '/customers/external-accounts/ExternalAccount:019542f5-b3e7-7d02-8000-000000000001/challenge',
      `/platform/external-accounts/${theirs.id}/challenge`,
      `/customers/external-accounts/${theirs.id}/challenge`,
      `/platform/external-accounts/${mine.id}/challenge`,
      `/customers/external-accounts/${platformOwned.id}/challenge`,
      `/customers/external-accounts/${gone.id}/challenge`,
    ];
    for (const path of paths) expectError(await p.api.post(path, { method: 'WALLET_SIGNATURE' }), 404, 'REFERENCE_NOT_FOUND');
    // Nothing changed for the owner of the other platform's account.
    expect((await getAccount(other.api, theirs)).status).toBe('PENDING_OWNERSHIP_VERIFICATION');
  });

  it('400 for a bad body, naming the field; unknown fields included', async () => {
    const a = await walletAccount(p.api, new EvmWallet(), { customerId });
    const url = `/customers/external-accounts/${a.id}/challenge`;
    const bodies: [unknown, string][] = [
      [{ method: 'MICRO_DEPOSIT' }, 'method'],
      [{ method: 7 }, 'method'],
      [{}, 'method'],
      [{ method: 'LIVENESS', redirectUrl: 'https://example.com' }, 'redirectUrl'],
    ];
    for (const [body, field] of bodies) {
      const res = expectError(await p.api.post(url, body), 400, 'INVALID_INPUT');
      expect(JSON.stringify(res.body.details.errors), res.text).toContain(field);
    }
    expectError(
      await p.api.post(url, undefined, { raw: '{"method":', headers: { 'content-type': 'application/json' } }),
      400,
      'INVALID_INPUT',
    );
    expectError(await p.api.post(url), 400, 'INVALID_INPUT');
    expect(await statusEvents(srv, p.id, a.id)).toEqual([]);
  });

  it('401 without or with wrong credentials, 403 with a VIEW token', async () => {
    const a = await walletAccount(p.api, new EvmWallet(), { customerId });
    const url = `/customers/external-accounts/${a.id}/challenge`;
    expectError(await srv.anon.post(url, { method: 'LIVENESS' }), 401, 'UNAUTHORIZED');
    const wrong = new Client(srv.baseUrl, { basic: { id: p.creds.id, secret: 'not-the-secret' } });
    expectError(await wrong.post(url, { method: 'LIVENESS' }), 401, 'UNAUTHORIZED');
    expectError(await viewer.post(url, { method: 'LIVENESS' }), 403, 'FORBIDDEN');
    expectError(await viewer.post(`/platform/external-accounts/${a.id}/challenge`, { method: 'LIVENESS' }), 403, 'FORBIDDEN');
    expect(await statusEvents(srv, p.id, a.id)).toEqual([]);
  });
});
