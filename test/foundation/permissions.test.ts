/**
 * Token permissions per route (VIEW reads, MANAGE configures, TRANSACT moves money), secrets shown
 * only at creation, and the token list's filters and cursor pagination.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { checkEnvelope, expectFieldError, manualClock } from './util.ts';

type Perm = 'VIEW' | 'TRANSACT' | 'MANAGE';

const clock = manualClock();
let srv: TestServer;
let p: PlatformHandle;
let accountId: string;
const clients = {} as Record<Perm, Client>;

async function createToken(api: Client, name: string, permissions: Perm[]): Promise<Res> {
  const res = await api.post('/tokens', { name, permissions });
  expect(res.status, res.text).toBe(201);
  return res;
}

beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
  p = await srv.newPlatform({ name: 'Permissions' });
  accountId = (await p.api.get('/platform/internal-accounts')).body.data[0].id;
  for (const perm of ['VIEW', 'TRANSACT', 'MANAGE'] as const) {
    const t = await createToken(p.api, `only-${perm}`, [perm]);
    expect(t.body.permissions).toEqual([perm]);
    clients[perm] = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
  }
});
afterAll(async () => srv.close());

interface RouteCase {
  name: string;
  need: Perm;
  call: (c: Client) => Promise<Res>;
  ok: number;
}

const routes: RouteCase[] = [
  { name: 'GET /config', need: 'VIEW', ok: 200, call: (c) => c.get('/config') },
  { name: 'PATCH /config', need: 'MANAGE', ok: 200, call: (c) => c.patch('/config', { embeddedWalletConfig: { appName: 'Perm test' } }) },
  { name: 'POST /tokens', need: 'MANAGE', ok: 201, call: (c) => c.post('/tokens', { name: 'made-by-matrix', permissions: ['VIEW'] }) },
  { name: 'GET /tokens', need: 'VIEW', ok: 200, call: (c) => c.get('/tokens') },
  {
    name: 'GET /tokens/{id}',
    need: 'VIEW',
    ok: 200,
    call: async (c) => {
      const victim = await createToken(p.api, 'read-me', ['VIEW']);
      return c.get(`/tokens/${victim.body.id}`);
    },
  },
  {
    name: 'DELETE /tokens/{id}',
    need: 'MANAGE',
    ok: 204,
    call: async (c) => {
      const victim = await createToken(p.api, 'delete-me', ['VIEW']);
      return c.delete(`/tokens/${victim.body.id}`);
    },
  },
  { name: 'GET /platform/internal-accounts', need: 'VIEW', ok: 200, call: (c) => c.get('/platform/internal-accounts') },
  {
    name: 'POST /sandbox/internal-accounts/{id}/fund',
    need: 'TRANSACT',
    ok: 200,
    call: (c) => c.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: 10 }),
  },
];

describe('permissions per route', () => {
  for (const r of routes) {
    for (const perm of ['VIEW', 'TRANSACT', 'MANAGE'] as const) {
      const allowed = perm === r.need;
      it(`${r.name} with only ${perm} → ${allowed ? r.ok : '403 FORBIDDEN'}`, async () => {
        const res = await r.call(clients[perm]);
        checkEnvelope(res);
        if (allowed) expect(res.status, res.text).toBe(r.ok);
        else {
          expectError(res, 403, 'FORBIDDEN');
          expect(res.body.message).toContain(r.need);
        }
      });
    }
  }

  it('403 is decided before the body is validated', async () => {
    expectError(await clients.VIEW.post('/tokens', { bogus: true }), 403, 'FORBIDDEN');
    expectError(await clients.VIEW.patch('/config', { embeddedWalletConfig: { nope: 1 } }), 403, 'FORBIDDEN');
    expectError(await clients.MANAGE.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: -1 }), 403, 'FORBIDDEN');
  });

  it('the forbidden writes changed nothing; the allowed fund moved money once', async () => {
    const accounts = await p.api.get('/platform/internal-accounts');
    // Only the TRANSACT token's fund (10) went through.
    expect(accounts.body.data[0].balance.amount).toBe(10);
    const tokens = await p.api.get('/tokens', { query: { name: 'made-by-matrix' } });
    expect(tokens.body.totalCount).toBe(1);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('a token with several permissions has each of them', async () => {
    const t = await createToken(p.api, 'view+transact', ['VIEW', 'TRANSACT']);
    const c = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    expect((await c.get('/config')).status).toBe(200);
    expect((await c.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: 1 })).status).toBe(200);
    expectError(await c.patch('/config', { umaDomain: 'example.com' }), 403, 'FORBIDDEN');
  });

  it('rejects bad permission sets', async () => {
    expectFieldError(await p.api.post('/tokens', { name: 'x', permissions: [] }), 'permissions');
    expectFieldError(await p.api.post('/tokens', { name: 'x', permissions: ['ADMIN'] }), 'permissions.0');
    expectFieldError(await p.api.post('/tokens', { name: 'x', permissions: ['VIEW', 'VIEW'] }), 'permissions');
    expectFieldError(await p.api.post('/tokens', { name: '', permissions: ['VIEW'] }), 'name');
  });
});

describe('secrets', () => {
  it('clientSecret appears only in the create response', async () => {
    const created = await createToken(p.api, 'secret-holder', ['VIEW']);
    const { id, clientId, clientSecret } = created.body;
    expect(id).toMatch(/^Token:[0-9a-f-]{36}$/);
    expect(clientId).toMatch(/^[0-9a-f]{32}$/);
    expect(typeof clientSecret).toBe('string');
    expect(clientSecret.length).toBeGreaterThanOrEqual(32);
    expect(Object.keys(created.body).sort()).toEqual(['clientId', 'clientSecret', 'createdAt', 'id', 'name', 'permissions', 'updatedAt']);

    const one = await p.api.get(`/tokens/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).not.toHaveProperty('clientSecret');
    expect(one.text).not.toContain(clientSecret);
    const { clientSecret: _omit, ...rest } = created.body;
    expect(one.body).toEqual(rest);

    const list = await p.api.get('/tokens', { query: { limit: 100 } });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(clientSecret);
    expect(list.text).not.toContain(p.creds.secret);
    for (const t of list.body.data) expect(t).not.toHaveProperty('clientSecret');

    // The secret authenticates, and no other read returns it.
    const c = p.api.with({ basic: { id: clientId, secret: clientSecret } });
    const cfg = await c.get('/config');
    expect(cfg.status).toBe(200);
    expect(cfg.text).not.toContain(clientSecret);
  });

  it('stores only a hash of the secret', async () => {
    const created = await createToken(p.api, 'hash-check', ['VIEW']);
    const row = await srv.app.ctx.db.selectFrom('api_tokens').selectAll().where('id', '=', created.body.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(created.body.clientSecret);
  });
});

describe('token list: filters and pagination', () => {
  let q: PlatformHandle;
  // Tokens created one second apart: [bootstrap(t0), t1, t2, t3, t4, t5].
  const made: { id: string; name: string; createdAt: string }[] = [];

  beforeAll(async () => {
    clock.advance(60_000);
    q = await srv.newPlatform({ name: 'Token lists' });
    const own = (await q.api.get('/tokens')).body.data[0];
    made.push({ id: own.id, name: own.name, createdAt: own.createdAt });
    for (let i = 1; i <= 5; i++) {
      clock.advance(1000);
      const t = await createToken(q.api, `list-${i}`, ['VIEW']);
      expect(t.body.createdAt).toBe(clock.iso());
      made.push({ id: t.body.id, name: t.body.name, createdAt: t.body.createdAt });
    }
  });

  const ids = (res: Res): string[] => res.body.data.map((t: { id: string }) => t.id);
  const newestFirst = (xs: typeof made) => xs.map((t) => t.id).reverse();

  it('lists newest first with totalCount', async () => {
    const res = await q.api.get('/tokens');
    expect(res.status).toBe(200);
    expect(ids(res)).toEqual(newestFirst(made));
    expect(res.body.totalCount).toBe(6);
    expect(res.body.hasMore).toBe(false);
    expect(res.body).not.toHaveProperty('nextCursor');
  });

  it('filters by name', async () => {
    const res = await q.api.get('/tokens', { query: { name: 'list-3' } });
    expect(ids(res)).toEqual([made[3]!.id]);
    expect(res.body.totalCount).toBe(1);
    const none = await q.api.get('/tokens', { query: { name: 'nobody' } });
    expect(none.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
  });

  it('createdAfter / createdBefore are inclusive', async () => {
    const t2 = made[2]!.createdAt;
    const after = await q.api.get('/tokens', { query: { createdAfter: t2 } });
    expect(ids(after)).toEqual(newestFirst(made.slice(2)));
    expect(after.body.totalCount).toBe(4);
    const before = await q.api.get('/tokens', { query: { createdBefore: t2 } });
    expect(ids(before)).toEqual(newestFirst(made.slice(0, 3)));
    const exact = await q.api.get('/tokens', { query: { createdAfter: t2, createdBefore: t2 } });
    expect(ids(exact)).toEqual([made[2]!.id]);
    const range = await q.api.get('/tokens', { query: { createdAfter: made[1]!.createdAt, createdBefore: made[3]!.createdAt } });
    expect(ids(range)).toEqual(newestFirst(made.slice(1, 4)));
    expect(range.body.totalCount).toBe(3);
  });

  it('accepts equivalent RFC 3339 forms of the same instant', async () => {
    const t2ms = Date.parse(made[2]!.createdAt);
    const plusOne = new Date(t2ms + 3600_000).toISOString().replace('Z', '+01:00');
    const noMillis = new Date(t2ms).toISOString().replace('.000Z', 'Z');
    for (const v of [plusOne, noMillis]) {
      const res = await q.api.get('/tokens', { query: { createdAfter: v, createdBefore: v } });
      expect(ids(res), v).toEqual([made[2]!.id]);
    }
  });

  it('updatedAfter / updatedBefore filter too', async () => {
    const res = await q.api.get('/tokens', { query: { updatedAfter: made[4]!.createdAt } });
    expect(ids(res)).toEqual(newestFirst(made.slice(4)));
    const res2 = await q.api.get('/tokens', { query: { updatedBefore: made[0]!.createdAt } });
    expect(ids(res2)).toEqual([made[0]!.id]);
  });

  it('rejects bad filter values', async () => {
    expectFieldError(await q.api.get('/tokens', { query: { createdAfter: 'yesterday' } }), 'createdAfter');
    expectFieldError(await q.api.get('/tokens', { query: { updatedBefore: '2030-13-01T00:00:00Z' } }), 'updatedBefore');
  });

  it('walks every page with limit=1', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const res = await q.api.get('/tokens', { query: { limit: 1, cursor } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.totalCount).toBe(6);
      seen.push(res.body.data[0].id);
      if (!res.body.hasMore) {
        expect(res.body).not.toHaveProperty('nextCursor');
        break;
      }
      expect(typeof res.body.nextCursor).toBe('string');
      cursor = res.body.nextCursor;
    }
    expect(seen).toEqual(newestFirst(made));
  });

  it('pages combine with filters', async () => {
    const first = await q.api.get('/tokens', { query: { limit: 2, createdAfter: made[1]!.createdAt } });
    expect(ids(first)).toEqual([made[5]!.id, made[4]!.id]);
    expect(first.body).toMatchObject({ hasMore: true, totalCount: 5 });
    const second = await q.api.get('/tokens', { query: { limit: 2, createdAfter: made[1]!.createdAt, cursor: first.body.nextCursor } });
    expect(ids(second)).toEqual([made[3]!.id, made[2]!.id]);
    const third = await q.api.get('/tokens', { query: { limit: 2, createdAfter: made[1]!.createdAt, cursor: second.body.nextCursor } });
    expect(ids(third)).toEqual([made[1]!.id]);
    expect(third.body.hasMore).toBe(false);
  });

  it('rejects a bad cursor and an out-of-range limit', async () => {
    expectFieldError(await q.api.get('/tokens', { query: { cursor: 'not-a-cursor' } }), 'cursor');
    expectFieldError(await q.api.get('/tokens', { query: { cursor: Buffer.from('{"nope":1}').toString('base64url') } }), 'cursor');
    expectFieldError(await q.api.get('/tokens', { query: { limit: 0 } }), 'limit');
    expectFieldError(await q.api.get('/tokens', { query: { limit: 101 } }), 'limit');
    expectFieldError(await q.api.get('/tokens', { query: { limit: 'ten' } }), 'limit');
    const max = await q.api.get('/tokens', { query: { limit: 100 } });
    expect(max.status).toBe(200);
  });
});
