/**
 * What a mint or burn refuses, over HTTP (docs/stablecoins.md): the amount rule, reserved source
 * types, the referenced accounts (another platform's is a 404), the stablecoin's issuance status
 * and link, the required Idempotency-Key (replays answer the first response and move nothing
 * twice), permissions and malformed bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../helpers/customers.ts';
import { expectError, type Client, type Res } from '../helpers/http.ts';
import { eurAccountInfo } from '../helpers/payments.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advance,
  bank,
  burnPath,
  clientId,
  expectLedgerOk,
  key,
  link,
  mintPath,
  ok,
  operation,
  pibBurn,
  provisioned,
  register,
  send,
  sparkAddress,
  stored,
  token,
  wallet,
  wireMint,
  type Wire,
} from './helpers.ts';

const clock = manualClock();
let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let viewer: Client;
let coin: Wire;
let w: string;
let b: string;

beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
  p = await srv.newPlatform({ name: 'Stablecoin checks' });
  other = await srv.newPlatform({ name: 'Someone else' });
  const t = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
  viewer = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
  ({ coin } = await provisioned(p));
  w = await wallet(p.api);
  b = await bank(p.api);
  // Some supply to burn.
  ok(await send(p.api, mintPath(coin.id), wireMint('100000000', w)));
  await advance(p, 20);
});
afterAll(async () => srv?.close());

function expectField(res: Res, field: string, code = 'INVALID_INPUT'): Res {
  expectError(res, 400, code);
  expect(res.body.details.errors.map((e: { field: string }) => e.field).join(' '), res.text).toContain(field);
  return res;
}

describe('the amount rule', () => {
  it('amounts must be > 0, whole cents (multiples of 10000 with 6 decimals) and at most 2^53−1', async () => {
    for (const amount of ['0', '00', '5000', '10001', '9007199254740992', '99999999999999999999']) {
      expectField(await send(p.api, mintPath(coin.id), wireMint(amount, w)), 'amount');
      expectField(await send(p.api, burnPath(coin.id), pibBurn(amount, b)), 'amount');
    }
    for (const amount of ['-10000', '1.5', '1e6', '', ' 10000', 'x'.repeat(41)]) {
      expectField(await send(p.api, mintPath(coin.id), wireMint(amount, w)), 'amount');
    }
    expectField(await send(p.api, mintPath(coin.id), { ...wireMint('10000', w), amount: 10000 }), 'amount');
    // Leading zeros are the same number.
    const op = ok(await send(p.api, mintPath(coin.id), wireMint('0010000', w)));
    expect(op.amount).toBe('10000');
  });

  it('a mint that would take the supply with the mints in flight beyond 2^53−1 is refused on amount', async () => {
    const q = await srv.newPlatform({ name: 'Huge' });
    const { coin: c } = await provisioned(q);
    const qw = await wallet(q.api);
    const max = 9007199254740000;
    ok(await send(q.api, mintPath(c.id), wireMint(String(max), qw)));
    const res = expectField(await send(q.api, mintPath(c.id), wireMint('10000', qw)), 'amount');
    expect(res.body.message).toContain('supply');
    await advance(q, 20);
    expect((await stored(srv, c.id)).supply).toBe(max);
    await expectLedgerOk(srv, q.id);
  });
});

describe('source and destination', () => {
  it('reserved types are a 400 naming fundingSource.type / source.type', async () => {
    expectField(
      await send(p.api, mintPath(coin.id), {
        amount: '10000',
        fundingSource: { type: 'GRID_INTERNAL_ACCOUNT', accountId: 'InternalAccount:x' },
        destination: { accountId: w },
      }),
      'fundingSource.type',
    );
    expectField(
      await send(p.api, mintPath(coin.id), {
        amount: '10000',
        fundingSource: { type: 'PROVIDER_INTERNAL_BALANCE', sourceTokenIdentifier: 'USDC', cryptoNetwork: 'SOLANA' },
        destination: { accountId: w },
      }),
      'fundingSource.type',
    );
    expectField(
      await send(p.api, burnPath(coin.id), {
        amount: '10000',
        source: { type: 'GRID_INTERNAL_ACCOUNT', accountId: 'InternalAccount:x' },
        destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: b, rail: 'WIRE' },
      }),
      'source.type',
    );
  });

  it('another platform’s accounts, and unknown ones, are 404', async () => {
    const theirWallet = await wallet(other.api);
    const theirBank = await bank(other.api);
    const theirInternal = (await other.api.get('/platform/internal-accounts')).body.data[0].id;
    expectError(await send(p.api, mintPath(coin.id), wireMint('10000', theirWallet)), 404, 'REFERENCE_NOT_FOUND');
    expectError(await send(p.api, mintPath(coin.id), wireMint('10000', theirInternal)), 404, 'REFERENCE_NOT_FOUND');
    expectError(
      await send(p.api, mintPath(coin.id), {
        amount: '10000',
        fundingSource: { type: 'ACH_DEBIT', externalAccountId: theirBank },
        destination: { accountId: w },
      }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(await send(p.api, burnPath(coin.id), pibBurn('10000', theirBank)), 404, 'REFERENCE_NOT_FOUND');
    expectError(await send(p.api, mintPath(coin.id), wireMint('10000', 'ExternalAccount:nope')), 404, 'REFERENCE_NOT_FOUND');
  });

  it('unsuitable accounts are a 400 naming the field', async () => {
    const internal = (await p.api.get('/platform/internal-accounts')).body.data[0].id;
    const eur = ok(await p.api.post('/platform/external-accounts', { currency: 'EUR', accountInfo: eurAccountInfo() })).id;
    const pending = ok(
      await p.api.post('/platform/external-accounts', {
        currency: 'USDB',
        ownershipType: 'FIRST_PARTY',
        accountInfo: { accountType: 'LAYER2_WALLET', address: sparkAddress() },
      }),
    );
    expect(pending.status).toBe('PENDING_OWNERSHIP_VERIFICATION');
    const mint = (to: string) => send(p.api, mintPath(coin.id), wireMint('10000', to));
    const debit = (from: string) =>
      send(p.api, mintPath(coin.id), {
        amount: '10000',
        fundingSource: { type: 'ACH_DEBIT', externalAccountId: from },
        destination: { accountId: w },
      });
    // An internal account cannot hold the stablecoin while gridOperationsStatus is NOT_ENABLED.
    const res = expectField(await mint(internal), 'destination.accountId');
    expect(res.body.message).toContain('NOT_ENABLED');
    expectField(await mint(b), 'destination.accountId');
    expectField(await mint(pending.id), 'destination.accountId');
    expectField(await mint(`Customer:${internal.split(':')[1]}`), 'destination.accountId');
    expectField(await debit(w), 'fundingSource.externalAccountId');
    expectField(await debit(eur), 'fundingSource.externalAccountId');
    expectField(await send(p.api, burnPath(coin.id), pibBurn('10000', w)), 'destination.externalAccountId');
    expectField(await send(p.api, burnPath(coin.id), pibBurn('10000', eur, 'WIRE')), 'destination.externalAccountId');
    // A deleted account is gone.
    const gone = await bank(p.api);
    expect((await p.api.delete(`/platform/external-accounts/${gone}`)).status).toBe(204);
    expectError(await send(p.api, burnPath(coin.id), pibBurn('10000', gone)), 404, 'REFERENCE_NOT_FOUND');
  });
});

describe('the stablecoin and its link', () => {
  it('mints and burns need issuanceStatus PROVISIONED: 409 CONFLICT otherwise', async () => {
    const provisioning = await register(p.api);
    const rejected = await register(p.api, { providerTokenIdentifier: token('002') });
    await advance(p, 60);
    const pending = await register(p.api);
    expect((await p.api.get(`/stablecoins/${rejected.id}`)).body.issuanceStatus).toBe('REJECTED');
    for (const id of [pending.id, rejected.id]) {
      const res = expectError(await send(p.api, mintPath(id), wireMint('10000', w)), 409, 'CONFLICT');
      expect(res.body.details.reason).toBe('STABLECOIN_NOT_PROVISIONED');
      expectError(await send(p.api, burnPath(id), pibBurn('10000', b)), 409, 'CONFLICT');
    }
    expect(provisioning.id).toBeDefined();
  });

  it('a REVOKED or INVALID link refuses mints and burns with its 400 code', async () => {
    for (const [suffix, code] of [
      ['003', 'STABLECOIN_PROVIDER_ACCOUNT_REVOKED'],
      ['004', 'STABLECOIN_PROVIDER_ACCOUNT_INVALID'],
    ] as const) {
      const q = await srv.newPlatform({ name: `Lapsing ${suffix}` });
      const l = await link(q.api, { apiClientId: clientId(suffix) });
      const c = await register(q.api, { stablecoinProviderAccountId: l.id });
      const qw = await wallet(q.api);
      const qb = await bank(q.api);
      await advance(q, 5);
      const mint = ok(await send(q.api, mintPath(c.id), wireMint('10000', qw)));
      await advance(q, 55);
      expectError(await send(q.api, mintPath(c.id), wireMint('10000', qw)), 400, code);
      expectError(await send(q.api, burnPath(c.id), pibBurn('10000', qb)), 400, code);
      // What the provider accepted before goes on.
      expect((await operation(q.api, mint.id)).status).toBe('COMPLETED');
      await expectLedgerOk(srv, q.id);
    }
  });

  it('another platform’s stablecoin, or an unknown one, is a 404', async () => {
    expectError(await send(other.api, mintPath(coin.id), wireMint('10000', await wallet(other.api))), 404, 'REFERENCE_NOT_FOUND');
    expectError(await send(other.api, burnPath(coin.id), pibBurn('10000', await bank(other.api))), 404, 'REFERENCE_NOT_FOUND');
    expectError(await send(p.api, mintPath('Stablecoin:nope'), wireMint('10000', w)), 404, 'REFERENCE_NOT_FOUND');
  });
});

describe('Idempotency-Key', () => {
  it('is required on mints and burns (400)', async () => {
    expectField(await p.api.post(mintPath(coin.id), wireMint('10000', w)), 'idempotency-key');
    expectField(await p.api.post(burnPath(coin.id), pibBurn('10000', b)), 'idempotency-key');
  });

  it('a replay answers the first response and mints / burns once; another body under the key is a 409', async () => {
    const before = await stored(srv, coin.id);
    const mk = key();
    const bk = key();
    const mint = await send(p.api, mintPath(coin.id), wireMint('3000000', w), mk);
    const burn = await send(p.api, burnPath(coin.id), pibBurn('1000000', b), bk);
    await advance(p, 20);
    const mintAgain = await send(p.api, mintPath(coin.id), wireMint('3000000', w), mk);
    const burnAgain = await send(p.api, burnPath(coin.id), pibBurn('1000000', b), bk);
    expect([mintAgain.status, burnAgain.status]).toEqual([201, 201]);
    expect(mintAgain.body).toEqual(mint.body);
    expect(burnAgain.body).toEqual(burn.body);
    expect(mintAgain.headers.get('idempotency-hit')).toBe('true');
    await advance(p, 20);
    expect(await stored(srv, coin.id)).toEqual({ ...before, supply: before.supply + 2_000_000 });
    const listed = ok(await p.api.get(`/stablecoins/${coin.id}/operations`, { query: { limit: 100 } }), 200);
    expect(listed.data.filter((o: Wire) => o.id === mint.body.id || o.id === burn.body.id)).toHaveLength(2);
    expectError(await send(p.api, mintPath(coin.id), wireMint('4000000', w), mk), 409, 'CONFLICT');
    expectError(await send(p.api, burnPath(coin.id), pibBurn('1000000', b, 'WIRE'), bk), 409, 'CONFLICT');
    // The key is the request's: the same key on another stablecoin's path is a different request.
    expectError(await send(p.api, mintPath('Stablecoin:other'), wireMint('3000000', w), mk), 409, 'CONFLICT');
    await expectLedgerOk(srv, p.id);
  });
});

describe('permissions and malformed requests', () => {
  it('401 without credentials; 403 for a VIEW-only token, which reads', async () => {
    expectError(
      await srv.anon.post(mintPath(coin.id), wireMint('10000', w), { headers: { 'idempotency-key': key() } }),
      401,
      'UNAUTHORIZED',
    );
    expectError(await send(viewer, mintPath(coin.id), wireMint('10000', w)), 403, 'FORBIDDEN');
    expectError(await send(viewer, burnPath(coin.id), pibBurn('10000', b)), 403, 'FORBIDDEN');
    expect((await viewer.get(`/stablecoins/${coin.id}/operations`)).status).toBe(200);
  });

  it('malformed bodies are a 400 naming the field', async () => {
    const mint = (body: unknown) => send(p.api, mintPath(coin.id), body);
    const burn = (body: unknown) => send(p.api, burnPath(coin.id), body);
    expectField(await mint({ amount: '10000', fundingSource: { type: 'CASH' }, destination: { accountId: w } }), 'fundingSource');
    expectField(await mint({ amount: '10000', fundingSource: { type: 'ACH_DEBIT' }, destination: { accountId: w } }), 'fundingSource');
    expectField(await mint({ amount: '10000', fundingSource: { type: 'WIRE', extra: 1 }, destination: { accountId: w } }), 'fundingSource');
    expectField(await mint({ amount: '10000', fundingSource: { type: 'WIRE' } }), 'destination');
    expectField(await mint({ ...wireMint('10000', w), description: 'x'.repeat(1025) }), 'description');
    expectField(await mint({ ...wireMint('10000', w), memo: 'x' }), 'memo');
    expectField(
      await burn({
        amount: '10000',
        source: { type: 'EXTERNAL_ACCOUNT' },
        destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: b, rail: 'SEPA' },
      }),
      'destination.rail',
    );
    expectField(
      await burn({
        amount: '10000',
        source: { type: 'EXTERNAL_ACCOUNT' },
        destination: { type: 'INTERNAL_ACCOUNT', externalAccountId: b, rail: 'WIRE' },
      }),
      'destination.type',
    );
    expectField(
      await burn({ amount: '10000', source: {}, destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: b, rail: 'WIRE' } }),
      'source',
    );
    expectField(
      await burn({
        amount: '10000',
        source: { type: 'EXTERNAL_ACCOUNT', externalAccountId: b },
        destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: b, rail: 'WIRE' },
      }),
      'source',
    );
    await expectLedgerOk(srv, p.id);
  });
});
