/**
 * GET /auth/delegated-keys, GET and DELETE /auth/delegated-keys/{id} over HTTP: the list's filters
 * (at least one; both together), get, revoke (ACTIVE only, no wallet signature, the key material
 * destroyed), another platform's ids, permissions and unknown query parameters
 * (facts-delegated-keys §2, §5, §6).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Client } from '../helpers/http.ts';
import { controlledIds } from '../cards/helpers.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { walletSetup, walletWithSession, type Session } from '../helpers/wallet-auth.ts';
import { activeKey, createBody, expectChallenge, listKeys, PATH, pendingKey } from './keys.ts';

let srv: TestServer;
let p: PlatformHandle;
let w: { accountId: string; customerId: string; credentialId: string; session: Session };

beforeAll(async () => {
  srv = await startServer({ deps: { ids: controlledIds() } });
  p = await srv.newPlatform({ name: 'Delegated keys management' });
  await walletSetup(p);
  w = await walletWithSession(p.api);
});
afterAll(async () => srv?.close());

async function tokenClient(perms: string[]): Promise<Client> {
  const t = await p.api.post('/tokens', { name: `dk ${perms.join('+')}`, permissions: perms });
  expect(t.status, t.text).toBe(201);
  return p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
}

describe('GET /auth/delegated-keys', () => {
  it('by account, by funding source, by both (keys matching both); newest first; PENDING and REVOKED included', async () => {
    const v = await walletWithSession(p.api);
    const cardA = await createBody(p.api, v, 'card A');
    const cardB = await createBody(p.api, v, 'card B');
    const a1 = await activeKey(p.api, cardA, v.session.key);
    await pendingKey(p.api, cardB, v.session.key);
    const b2 = await activeKey(p.api, cardB, v.session.key);
    expect((await p.api.delete(`${PATH}/${a1.id}`)).status).toBe(204);
    const a2 = await activeKey(p.api, cardA, v.session.key);

    const all = await listKeys(p.api, { accountId: v.accountId });
    expect(all.map((k) => [k.nickname, k.status])).toEqual([
      ['card A', 'ACTIVE'],
      ['card B', 'ACTIVE'],
      ['card B', 'PENDING'],
      ['card A', 'REVOKED'],
    ]);
    expect(all.map((k) => k.id)).toEqual([...all.map((k) => k.id)].sort().reverse());
    const bySource = await listKeys(p.api, { fundingSourceId: a2.fundingSourceId });
    expect(bySource.map((k) => k.id)).toEqual([a2.id, a1.id]);
    expect(await listKeys(p.api, { accountId: v.accountId, fundingSourceId: b2.fundingSourceId })).toEqual(
      all.filter((k) => k.fundingSourceId === b2.fundingSourceId),
    );
    // Filters that match nothing together, or at all: an empty list.
    expect(await listKeys(p.api, { accountId: w.accountId, fundingSourceId: b2.fundingSourceId })).toEqual([]);
    expect(await listKeys(p.api, { accountId: 'InternalAccount:00000000-0000-4000-8000-000000000000' })).toEqual([]);
    expect(await listKeys(p.api, { fundingSourceId: 'not-an-id' })).toEqual([]);
  });

  it('400 naming both filters when neither is given; 400 for an empty or unknown parameter', async () => {
    const res = expectError(await p.api.get(PATH), 400, 'INVALID_INPUT');
    expect(res.body.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(['accountId', 'fundingSourceId']);
    expectError(await p.api.get(PATH, { query: { accountId: '' } }), 400, 'INVALID_INPUT');
    const unknown = expectError(
      await p.api.get(PATH, { query: { accountId: w.accountId, cardId: 'Card:00000000-0000-7000-8000-000000000000' } }),
      400,
      'INVALID_INPUT',
    );
    expect(JSON.stringify(unknown.body.details)).toContain('cardId');
  });

  it('another platform sees none of them; 401 without credentials; a VIEW token may list', async () => {
    const key = await activeKey(p.api, await createBody(p.api, w), w.session.key);
    const q = await srv.newPlatform({ name: 'Delegated keys other' });
    expect(await listKeys(q.api, { accountId: w.accountId })).toEqual([]);
    expect(await listKeys(q.api, { fundingSourceId: key.fundingSourceId })).toEqual([]);
    expectError(await srv.anon.get(PATH, { query: { accountId: w.accountId } }), 401, 'UNAUTHORIZED');
    const view = await tokenClient(['VIEW']);
    expect((await view.get(PATH, { query: { accountId: w.accountId } })).status).toBe(200);
    expectError(await (await tokenClient(['TRANSACT', 'MANAGE'])).get(PATH, { query: { accountId: w.accountId } }), 403, 'FORBIDDEN');
  });
});

describe('GET /auth/delegated-keys/{id}', () => {
  it('the key in every state; 404 for an unknown id and for another platform’s key, alike; percent-encoded ids', async () => {
    const body = await createBody(p.api, w);
    const { leg2 } = await pendingKey(p.api, body, w.session.key);
    const [pending] = await listKeys(p.api, { accountId: w.accountId });
    expect(pending!.status).toBe('PENDING');
    expect((await p.api.get(`${PATH}/${pending!.id}`)).body).toEqual(pending);
    expect((await p.api.get(`${PATH}/${encodeURIComponent(pending!.id)}`)).body).toEqual(pending);
    expectChallenge(leg2);

    const q = await srv.newPlatform({ name: 'Delegated keys stranger' });
    const unknown = expectError(await q.api.get(`${PATH}/DelegatedKey:00000000-0000-4000-8000-000000000000`), 404, 'REFERENCE_NOT_FOUND');
    const foreign = expectError(await q.api.get(`${PATH}/${pending!.id}`), 404, 'REFERENCE_NOT_FOUND');
    expect(foreign.body.message.replace(pending!.id, 'X')).toBe(unknown.body.message.replace(/DelegatedKey:\S+/, 'X'));
    expectError(await srv.anon.get(`${PATH}/${pending!.id}`), 401, 'UNAUTHORIZED');
    expectError(await p.api.get(`${PATH}/${pending!.id}`, { query: { extra: '1' } }), 400, 'INVALID_INPUT');
  });
});

describe('DELETE /auth/delegated-keys/{id}', () => {
  it('ACTIVE → REVOKED (204), its private key destroyed; again → 400; a new key may then be made for the same source', async () => {
    const v = await walletWithSession(p.api);
    const body = await createBody(p.api, v);
    const key = await activeKey(p.api, body, v.session.key);
    const stored = () => srv.app.ctx.db.selectFrom('delegated_keys').selectAll().where('id', '=', key.id).executeTakeFirstOrThrow();
    expect((await stored()).private_key).toEqual(expect.any(String));

    const res = await p.api.delete(`${PATH}/${key.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const revoked = (await p.api.get(`${PATH}/${key.id}`)).body;
    expect(revoked).toEqual({ ...key, status: 'REVOKED', updatedAt: expect.any(String) });
    expect(Date.parse(revoked.updatedAt)).toBeGreaterThanOrEqual(Date.parse(key.updatedAt));
    expect((await stored()).private_key).toBeNull();

    const again = expectError(await p.api.delete(`${PATH}/${key.id}`), 400, 'INVALID_INPUT');
    expect(again.body.details).toEqual({ id: key.id, status: 'REVOKED' });
    const next = await activeKey(p.api, body, v.session.key);
    expect(next.fundingSourceId).toBe(key.fundingSourceId);
    expect(next.publicKey).not.toBe(key.publicKey);
  });

  it('a PENDING key cannot be revoked (400, unchanged)', async () => {
    const v = await walletWithSession(p.api);
    await pendingKey(p.api, await createBody(p.api, v), v.session.key);
    const [pending] = await listKeys(p.api, { accountId: v.accountId });
    const res = expectError(await p.api.delete(`${PATH}/${pending!.id}`), 400, 'INVALID_INPUT');
    expect(res.body.details).toEqual({ id: pending!.id, status: 'PENDING' });
    expect((await p.api.get(`${PATH}/${pending!.id}`)).body).toEqual(pending);
  });

  it('404 for an unknown id and another platform’s key (unchanged); 401 without credentials; MANAGE only', async () => {
    const key = await activeKey(p.api, await createBody(p.api, w), w.session.key);
    const q = await srv.newPlatform({ name: 'Delegated keys intruder' });
    expectError(await q.api.delete(`${PATH}/DelegatedKey:00000000-0000-4000-8000-000000000000`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await q.api.delete(`${PATH}/${key.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.delete(`${PATH}/${key.id}`), 401, 'UNAUTHORIZED');
    expectError(await (await tokenClient(['VIEW', 'TRANSACT'])).delete(`${PATH}/${key.id}`), 403, 'FORBIDDEN');
    expect((await p.api.get(`${PATH}/${key.id}`)).body.status).toBe('ACTIVE');
    expect((await (await tokenClient(['MANAGE'])).delete(`${PATH}/${key.id}`)).status).toBe(204);
  });
});

describe('key material at rest', () => {
  it('the first leg’s keypair leaves the pending request once the key holds it', async () => {
    const v = await walletWithSession(p.api);
    const { leg1 } = await pendingKey(p.api, await createBody(p.api, v), v.session.key);
    const request = await srv.app.ctx.db
      .selectFrom('auth_requests')
      .selectAll()
      .where('id', '=', leg1.body.requestId)
      .executeTakeFirstOrThrow();
    expect(request.consumed_at).not.toBeNull();
    expect(request.data).toBeNull();
    const fresh = await p.api.post(PATH, await createBody(p.api, v));
    const open = await srv.app.ctx.db
      .selectFrom('auth_requests')
      .select('data')
      .where('id', '=', fresh.body.requestId)
      .executeTakeFirstOrThrow();
    expect(open.data).toEqual(expect.any(String));
  });
});
