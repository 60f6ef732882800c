/**
 * Registered stablecoins over HTTP: POST/GET /stablecoins and GET /stablecoins/{id}
 * (facts-stablecoins §3; docs/stablecoins.md): provider metadata, the issuance path and its
 * sandbox suffixes (001 review, 002 rejected, 003 failed), link selection and its errors
 * (SELECTION_REQUIRED, NOT_FOUND, INVALID, REVOKED), duplicates, the required Idempotency-Key,
 * lists, and the refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manualClock } from '../helpers/customers.ts';
import { expectError, type Client } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advance, clientId, key, link, networkToken, ok, register, send, token } from './helpers.ts';

const clock = manualClock();
let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let viewer: Client;
let mainLink: string;

beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
  p = await srv.newPlatform({ name: 'Stablecoins' });
  other = await srv.newPlatform({ name: 'Someone else' });
  const t = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
  viewer = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
  mainLink = (await link(p.api)).id;
});
afterAll(async () => srv?.close());

const get = async (api: Client, id: string) => ok(await api.get(`/stablecoins/${id}`), 200);

describe('POST /stablecoins', () => {
  it('registers with the provider’s metadata, PROVISIONING, then PROVISIONED 5 s later; gridOperationsStatus stays NOT_ENABLED', async () => {
    const tk = token();
    const nt = networkToken();
    const coin = await register(p.api, { providerTokenIdentifier: tk, networkTokenIdentifier: nt });
    expect(coin.id).toMatch(/^Stablecoin:[0-9a-f-]{36}$/);
    expect(coin).toMatchObject({
      name: `${tk} Stablecoin`,
      symbol: tk,
      baseCurrency: 'USD',
      network: 'SPARK',
      decimals: 6,
      issuanceStatus: 'PROVISIONING',
      gridOperationsStatus: 'NOT_ENABLED',
      networkTokenIdentifier: nt,
      provider: 'BRALE',
      stablecoinProviderAccountId: mainLink,
      providerEnvironment: 'SANDBOX',
      providerTokenIdentifier: tk,
    });
    expect(coin).not.toHaveProperty('currency');
    await advance(p, 4);
    expect((await get(p.api, coin.id)).issuanceStatus).toBe('PROVISIONING');
    await advance(p, 1);
    const now = await get(p.api, coin.id);
    expect(now.issuanceStatus).toBe('PROVISIONED');
    expect(now.gridOperationsStatus).toBe('NOT_ENABLED');
    expect(now.updatedAt > now.createdAt).toBe(true);
  });

  it('sandbox suffixes: 001 reviewed then provisioned, 002 rejected in review, 003 fails to provision', async () => {
    const reviewed = await register(p.api, { providerTokenIdentifier: token('001') });
    const rejected = await register(p.api, { providerTokenIdentifier: token('002') });
    const failed = await register(p.api, { providerTokenIdentifier: token('003') });
    expect([reviewed.issuanceStatus, rejected.issuanceStatus, failed.issuanceStatus]).toEqual([
      'PENDING_REVIEW',
      'PENDING_REVIEW',
      'PROVISIONING',
    ]);
    await advance(p, 5);
    expect((await get(p.api, failed.id)).issuanceStatus).toBe('FAILED');
    expect((await get(p.api, reviewed.id)).issuanceStatus).toBe('PENDING_REVIEW');
    await advance(p, 55);
    expect((await get(p.api, reviewed.id)).issuanceStatus).toBe('PROVISIONING');
    expect((await get(p.api, rejected.id)).issuanceStatus).toBe('REJECTED');
    await advance(p, 5);
    expect((await get(p.api, reviewed.id)).issuanceStatus).toBe('PROVISIONED');
    expect((await get(p.api, rejected.id)).issuanceStatus).toBe('REJECTED');
  });

  it('the same token twice (by either identifier) is a 409 CONFLICT', async () => {
    const tk = token();
    const nt = networkToken();
    const first = await register(p.api, { providerTokenIdentifier: tk, networkTokenIdentifier: nt });
    const byToken = expectError(
      await send(p.api, '/stablecoins', { providerTokenIdentifier: tk, networkTokenIdentifier: networkToken(), network: 'SPARK' }),
      409,
      'CONFLICT',
    );
    expect(byToken.body.details.stablecoinId).toBe(first.id);
    expectError(
      await send(p.api, '/stablecoins', { providerTokenIdentifier: token(), networkTokenIdentifier: nt, network: 'SPARK' }),
      409,
      'CONFLICT',
    );
    // Another platform registers its own.
    await link(other.api);
    expect((await register(other.api, { providerTokenIdentifier: tk, networkTokenIdentifier: nt })).id).not.toBe(first.id);
  });

  it('a token identifier that is a currency Corridor moves is refused (it would be the ledger currency)', async () => {
    for (const tk of ['USD', 'usdc', 'BTC']) {
      const res = expectError(
        await send(p.api, '/stablecoins', { providerTokenIdentifier: tk, networkTokenIdentifier: networkToken(), network: 'SPARK' }),
        400,
        'INVALID_INPUT',
      );
      expect(res.body.details.errors[0].field).toBe('providerTokenIdentifier');
    }
  });

  describe('link selection', () => {
    it('none linked: 404 STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND', async () => {
      const q = await srv.newPlatform({ name: 'No links' });
      expectError(
        await send(q.api, '/stablecoins', { providerTokenIdentifier: token(), networkTokenIdentifier: networkToken(), network: 'SPARK' }),
        404,
        'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND',
      );
    });

    it('several ACTIVE links: 400 SELECTION_REQUIRED unless one is named; a lapsed link no longer counts', async () => {
      const q = await srv.newPlatform({ name: 'Two links' });
      const a = await link(q.api);
      const b = await link(q.api, { apiClientId: clientId('003') });
      const body = () => ({ providerTokenIdentifier: token(), networkTokenIdentifier: networkToken(), network: 'SPARK' });
      const res = expectError(await send(q.api, '/stablecoins', body()), 400, 'STABLECOIN_PROVIDER_ACCOUNT_SELECTION_REQUIRED');
      expect(res.body.details.stablecoinProviderAccountIds.sort()).toEqual([a.id, b.id].sort());
      expect((await register(q.api, { stablecoinProviderAccountId: b.id })).stablecoinProviderAccountId).toBe(b.id);
      await advance(q, 60);
      // b is REVOKED now: a is the one ACTIVE link.
      expect((await register(q.api)).stablecoinProviderAccountId).toBe(a.id);
      expectError(
        await send(q.api, '/stablecoins', { ...body(), stablecoinProviderAccountId: b.id }),
        400,
        'STABLECOIN_PROVIDER_ACCOUNT_REVOKED',
      );
    });

    it('a named link that is INVALID / REVOKED: 400 with its code; only lapsed links and none named: the newest one’s code', async () => {
      const q = await srv.newPlatform({ name: 'Lapsed links' });
      const inv = await link(q.api, { apiClientId: clientId('004') });
      await advance(q, 60);
      const body = () => ({ providerTokenIdentifier: token(), networkTokenIdentifier: networkToken(), network: 'SPARK' });
      const named = expectError(
        await send(q.api, '/stablecoins', { ...body(), stablecoinProviderAccountId: inv.id }),
        400,
        'STABLECOIN_PROVIDER_ACCOUNT_INVALID',
      );
      expect(named.body.details.stablecoinProviderAccountId).toBe(inv.id);
      expectError(await send(q.api, '/stablecoins', body()), 400, 'STABLECOIN_PROVIDER_ACCOUNT_INVALID');
      await link(q.api, { apiClientId: clientId('003') });
      await advance(q, 60);
      expectError(await send(q.api, '/stablecoins', body()), 400, 'STABLECOIN_PROVIDER_ACCOUNT_REVOKED');
    });

    it('an unknown or another platform’s link: 404 STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND', async () => {
      const theirs = await link(other.api);
      const body = { providerTokenIdentifier: token(), networkTokenIdentifier: networkToken(), network: 'SPARK' };
      expectError(
        await send(p.api, '/stablecoins', { ...body, stablecoinProviderAccountId: theirs.id }),
        404,
        'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND',
      );
      expectError(
        await send(p.api, '/stablecoins', { ...body, stablecoinProviderAccountId: 'StablecoinProviderAccount:nope' }),
        404,
        'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND',
      );
    });
  });

  it('Idempotency-Key: required; a replay answers the first response and registers once; another body is a 409', async () => {
    const body = { providerTokenIdentifier: token(), networkTokenIdentifier: networkToken(), network: 'SPARK' };
    expectError(await p.api.post('/stablecoins', body), 400, 'INVALID_INPUT');
    const k = key();
    const first = ok(await send(p.api, '/stablecoins', body, k));
    await advance(p, 5);
    const replay = await send(p.api, '/stablecoins', body, k);
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first);
    expect(replay.headers.get('idempotency-hit')).toBe('true');
    const listed = ok(await p.api.get('/stablecoins', { query: { limit: 100 } }), 200);
    expect(
      listed.data.filter((c: { providerTokenIdentifier: string }) => c.providerTokenIdentifier === body.providerTokenIdentifier),
    ).toHaveLength(1);
    expectError(await send(p.api, '/stablecoins', { ...body, networkTokenIdentifier: networkToken() }, k), 409, 'CONFLICT');
  });

  it('bad input is a 400 naming the field', async () => {
    const base = { providerTokenIdentifier: token(), networkTokenIdentifier: networkToken(), network: 'SPARK' };
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = expectError(await send(p.api, '/stablecoins', body), 400, 'INVALID_INPUT');
      expect(res.body.details.errors.map((e: { field: string }) => e.field).join(' ')).toContain(field);
    };
    await bad({ ...base, network: 'SOLANA' }, 'network');
    await bad({ ...base, providerTokenIdentifier: 'has space' }, 'providerTokenIdentifier');
    await bad({ ...base, providerTokenIdentifier: '' }, 'providerTokenIdentifier');
    await bad({ network: 'SPARK', providerTokenIdentifier: token() }, 'networkTokenIdentifier');
    await bad({ ...base, name: 'Mine' }, 'name');
  });

  it('401 without credentials; 403 for a VIEW-only token', async () => {
    expectError(await srv.anon.get('/stablecoins'), 401, 'UNAUTHORIZED');
    expectError(
      await send(viewer, '/stablecoins', { providerTokenIdentifier: token(), networkTokenIdentifier: networkToken(), network: 'SPARK' }),
      403,
      'FORBIDDEN',
    );
  });
});

describe('GET /stablecoins[/{id}]', () => {
  it('another platform’s stablecoin, or an unknown id, is a 404', async () => {
    const mine = await register(p.api);
    expectError(await other.api.get(`/stablecoins/${mine.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get('/stablecoins/Stablecoin:nope'), 404, 'REFERENCE_NOT_FOUND');
    expect((await get(viewer, mine.id)).id).toBe(mine.id);
  });

  it('lists newest first with filters and cursor pages', async () => {
    const q = await srv.newPlatform({ name: 'Lister' });
    await link(q.api);
    const made = [await register(q.api), await register(q.api), await register(q.api, { providerTokenIdentifier: token('003') })];
    await advance(q, 5);
    const all = ok(await q.api.get('/stablecoins'), 200);
    expect(all.totalCount).toBe(3);
    expect(all.data.map((c: { id: string }) => c.id)).toEqual(made.map((c) => c.id).reverse());
    const page1 = ok(await q.api.get('/stablecoins', { query: { limit: 2 } }), 200);
    const page2 = ok(await q.api.get('/stablecoins', { query: { limit: 2, cursor: page1.nextCursor } }), 200);
    expect([page1.hasMore, page2.hasMore]).toEqual([true, false]);
    expect([...page1.data, ...page2.data].map((c: { id: string }) => c.id)).toEqual(all.data.map((c: { id: string }) => c.id));
    expect(ok(await q.api.get('/stablecoins', { query: { issuanceStatus: 'FAILED' } }), 200).data.map((c: { id: string }) => c.id)).toEqual(
      [made[2].id],
    );
    expect(ok(await q.api.get('/stablecoins', { query: { issuanceStatus: 'PROVISIONED', provider: 'BRALE' } }), 200).totalCount).toBe(2);
    expect(ok(await q.api.get('/stablecoins', { query: { gridOperationsStatus: 'ENABLED' } }), 200).totalCount).toBe(0);
    expectError(await q.api.get('/stablecoins', { query: { issuanceStatus: 'DONE' } }), 400, 'INVALID_INPUT');
  });
});
