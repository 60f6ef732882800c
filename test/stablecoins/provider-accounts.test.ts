/**
 * Stablecoin provider account links over HTTP: POST/GET /stablecoin-provider-accounts and GET
 * /stablecoin-provider-accounts/{id} (facts-stablecoins §2; docs/stablecoins.md): the link, the
 * sealed secret, the sandbox credential outcomes (002 refused, 003 revoked and 004 invalid after
 * 60 s, 007 several accounts), re-linking, the required Idempotency-Key, lists, and the refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SECRET_COLUMNS, SecretBox, secretRef } from '../../src/store/secret-box.ts';
import { manualClock } from '../helpers/customers.ts';
import { expectError, type Client } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advance, clientId, key, link, ok, send } from './helpers.ts';

const SECRET_KEY = 'stablecoin-links-test-secret-key-0123456789';
const clock = manualClock();
let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let viewer: Client;

beforeAll(async () => {
  srv = await startServer({ deps: { clock }, env: { CORRIDOR_SECRET_KEY: SECRET_KEY } });
  p = await srv.newPlatform({ name: 'Stablecoin links' });
  other = await srv.newPlatform({ name: 'Someone else' });
  const t = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
  viewer = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
});
afterAll(async () => srv?.close());

const PATH = '/stablecoin-provider-accounts';

async function storedRow(id: string) {
  return srv.app.ctx.db.selectFrom('stablecoin_provider_accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

describe('POST /stablecoin-provider-accounts', () => {
  it('links ACTIVE, derives providerAccountId and the environment, and never returns or stores the secret in clear', async () => {
    const secret = 'brale-secret-that-must-not-leak';
    const cid = clientId();
    const res = await send(p.api, PATH, { provider: 'BRALE', apiClientId: cid, apiClientSecret: secret });
    const body = ok(res);
    expect(body.id).toMatch(/^StablecoinProviderAccount:[0-9a-f-]{36}$/);
    expect(body).toMatchObject({ provider: 'BRALE', providerEnvironment: 'SANDBOX', status: 'ACTIVE' });
    expect(body.providerAccountId).toMatch(/^[0-9A-Za-z]{27}$/);
    expect(body.lastVerifiedAt).toBe(body.createdAt);
    expect(Object.keys(body).sort()).toEqual(
      ['createdAt', 'id', 'lastVerifiedAt', 'provider', 'providerAccountId', 'providerEnvironment', 'status', 'updatedAt'].sort(),
    );
    expect(res.text).not.toContain(secret);
    expect(res.text).not.toContain(cid);

    const row = (await storedRow(body.id))!;
    expect(row.api_client_secret.startsWith('enc:v1:')).toBe(true);
    expect(row.api_client_secret).not.toContain(secret);
    const box = new SecretBox({ secretKey: SECRET_KEY });
    expect(box.open(row.api_client_secret, secretRef(SECRET_COLUMNS.stablecoinProviderSecret, body.id))).toBe(secret);

    const again = ok(await p.api.get(`${PATH}/${body.id}`), 200);
    expect(again).toEqual(body);
    // The same credentials expose the same account: a second link of it is a 409.
    const dup = expectError(await send(p.api, PATH, { provider: 'BRALE', apiClientId: cid, apiClientSecret: 'other' }), 409, 'CONFLICT');
    expect(dup.body.details.stablecoinProviderAccountId).toBe(body.id);
  });

  it('takes a given providerAccountId; the same account linked twice is a 409', async () => {
    const a = await link(p.api, { providerAccountId: 'acct_given_1' });
    expect(a.providerAccountId).toBe('acct_given_1');
    expectError(
      await send(p.api, PATH, { provider: 'BRALE', apiClientId: clientId(), apiClientSecret: 's', providerAccountId: 'acct_given_1' }),
      409,
      'CONFLICT',
    );
    // Another platform may link an account of the same id: links are the platform's own.
    const b = await link(other.api, { providerAccountId: 'acct_given_1' });
    expect(b.id).not.toBe(a.id);
  });

  it('sandbox 002: the provider refuses the credentials (400 STABLECOIN_PROVIDER_ACCOUNT_INVALID), nothing stored', async () => {
    const before = ok(await p.api.get(PATH), 200).totalCount;
    const res = expectError(
      await send(p.api, PATH, { provider: 'BRALE', apiClientId: clientId('002'), apiClientSecret: 's' }),
      400,
      'STABLECOIN_PROVIDER_ACCOUNT_INVALID',
    );
    expect(res.body.details.errors[0].field).toBe('apiClientId');
    expect(ok(await p.api.get(PATH), 200).totalCount).toBe(before);
  });

  it('sandbox 003 / 004: ACTIVE, then REVOKED / INVALID 60 s later on the platform clock', async () => {
    const revoked = await link(p.api, { apiClientId: clientId('003') });
    const invalid = await link(p.api, { apiClientId: clientId('004') });
    expect([revoked.status, invalid.status]).toEqual(['ACTIVE', 'ACTIVE']);
    await advance(p, 59);
    expect(ok(await p.api.get(`${PATH}/${revoked.id}`), 200).status).toBe('ACTIVE');
    await advance(p, 1);
    const r = ok(await p.api.get(`${PATH}/${revoked.id}`), 200);
    expect(r.status).toBe('REVOKED');
    expect(r.updatedAt > r.createdAt).toBe(true);
    expect(ok(await p.api.get(`${PATH}/${invalid.id}`), 200).status).toBe('INVALID');
  });

  it('a REVOKED link linked again with new credentials is ACTIVE again under its id (the old lapse does not touch it)', async () => {
    const first = await link(p.api, { apiClientId: clientId('003'), providerAccountId: 'acct_relink' });
    await advance(p, 60);
    expect(ok(await p.api.get(`${PATH}/${first.id}`), 200).status).toBe('REVOKED');
    const again = await link(p.api, { apiClientId: clientId(), apiClientSecret: 'new-secret', providerAccountId: 'acct_relink' });
    expect(again.id).toBe(first.id);
    expect(again.status).toBe('ACTIVE');
    expect(again.lastVerifiedAt > first.lastVerifiedAt).toBe(true);
    await advance(p, 120);
    expect(ok(await p.api.get(`${PATH}/${first.id}`), 200).status).toBe('ACTIVE');
  });

  it('sandbox 007: credentials exposing several accounts need providerAccountId', async () => {
    const cid = clientId('007');
    const res = expectError(await send(p.api, PATH, { provider: 'BRALE', apiClientId: cid, apiClientSecret: 's' }), 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0].field).toBe('providerAccountId');
    expect((await link(p.api, { apiClientId: cid, providerAccountId: 'acct_of_many' })).providerAccountId).toBe('acct_of_many');
  });

  it('a PRODUCTION platform links PRODUCTION accounts; the sandbox suffixes do nothing there', async () => {
    const prod = await srv.newPlatform({ name: 'Production', environment: 'PRODUCTION' });
    const l = await link(prod.api, { apiClientId: clientId('002') });
    expect(l).toMatchObject({ providerEnvironment: 'PRODUCTION', status: 'ACTIVE' });
  });

  it('Idempotency-Key: required; a replay answers the first response and links once; another body under the key is a 409', async () => {
    const body = { provider: 'BRALE', apiClientId: clientId(), apiClientSecret: 'idem-secret' };
    const missing = expectError(await p.api.post(PATH, body), 400, 'INVALID_INPUT');
    expect(JSON.stringify(missing.body.details.errors)).toContain('idempotency-key');
    const k = key();
    const first = await send(p.api, PATH, body, k);
    const replay = await send(p.api, PATH, body, k);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-hit')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const rows = await srv.app.ctx.db
      .selectFrom('stablecoin_provider_accounts')
      .select('id')
      .where('api_client_id', '=', body.apiClientId)
      .execute();
    expect(rows).toHaveLength(1);
    expectError(await send(p.api, PATH, { ...body, apiClientSecret: 'another' }, k), 409, 'CONFLICT');
    expectError(await p.api.post(PATH, body, { headers: { 'idempotency-key': 'x'.repeat(256) } }), 400, 'INVALID_INPUT');
  });

  it('bad input is a 400 naming the field', async () => {
    const bad = async (body: Record<string, unknown>, field: string) => {
      const res = expectError(await send(p.api, PATH, body), 400, 'INVALID_INPUT');
      expect(res.body.details.errors.map((e: { field: string }) => e.field).join(' ')).toContain(field);
    };
    await bad({ provider: 'CIRCLE', apiClientId: 'a', apiClientSecret: 's' }, 'provider');
    await bad({ provider: 'BRALE', apiClientId: 'a' }, 'apiClientSecret');
    await bad({ provider: 'BRALE', apiClientId: '', apiClientSecret: 's' }, 'apiClientId');
    await bad({ provider: 'BRALE', apiClientId: 'a', apiClientSecret: 's', providerAccountId: 'has space' }, 'providerAccountId');
    await bad({ provider: 'BRALE', apiClientId: 'a', apiClientSecret: 's', extra: 1 }, 'extra');
  });

  it('401 without credentials; 403 for a VIEW-only token (which can read)', async () => {
    expectError(await srv.anon.get(PATH), 401, 'UNAUTHORIZED');
    expectError(await send(viewer, PATH, { provider: 'BRALE', apiClientId: clientId(), apiClientSecret: 's' }), 403, 'FORBIDDEN');
    expect((await viewer.get(PATH)).status).toBe(200);
  });
});

describe('GET /stablecoin-provider-accounts[/{id}]', () => {
  it('another platform’s link is a 404 STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND, as is an unknown id', async () => {
    const mine = await link(p.api);
    expectError(await other.api.get(`${PATH}/${mine.id}`), 404, 'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND');
    expectError(await p.api.get(`${PATH}/StablecoinProviderAccount:nope`), 404, 'STABLECOIN_PROVIDER_ACCOUNT_NOT_FOUND');
  });

  it('lists newest first with filters and cursor pages; another platform’s links are not listed', async () => {
    const q = await srv.newPlatform({ name: 'Lister' });
    const made = [await link(q.api), await link(q.api), await link(q.api, { apiClientId: clientId('003') })];
    await advance(q, 60);
    const all = ok(await q.api.get(PATH), 200);
    expect(all.totalCount).toBe(3);
    expect(all.data.map((l: { id: string }) => l.id)).toEqual(made.map((l) => l.id).reverse());
    const page1 = ok(await q.api.get(PATH, { query: { limit: 2 } }), 200);
    expect(page1.hasMore).toBe(true);
    const page2 = ok(await q.api.get(PATH, { query: { limit: 2, cursor: page1.nextCursor } }), 200);
    expect([...page1.data, ...page2.data].map((l: { id: string }) => l.id)).toEqual(all.data.map((l: { id: string }) => l.id));
    expect(page2.hasMore).toBe(false);
    const revoked = ok(await q.api.get(PATH, { query: { status: 'REVOKED' } }), 200);
    expect(revoked.data.map((l: { id: string }) => l.id)).toEqual([made[2].id]);
    expect(ok(await q.api.get(PATH, { query: { provider: 'BRALE', status: 'ACTIVE' } }), 200).totalCount).toBe(2);
    expectError(await q.api.get(PATH, { query: { status: 'GONE' } }), 400, 'INVALID_INPUT');
    expectError(await q.api.get(PATH, { query: { cursor: 'not-a-cursor' } }), 400, 'INVALID_INPUT');
  });
});
