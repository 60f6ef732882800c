/**
 * Token permissions (VIEW reads, MANAGE configures, TRANSACT moves money) for every platform
 * operation of the served document, derived from the permission each one publishes
 * (`x-required-permission`, from its route's `config.permission`); secrets shown only at creation;
 * the token list's filters and cursor pagination.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS, REQUIRED_PERMISSION, type Permission } from '../../src/http/auth.ts';
import { type Client, expectError, type Res } from '../helpers/http.ts';
import { operationsOf, type Operation } from '../helpers/api/operations.ts';
import { sendOperation } from '../helpers/api/request.ts';
import { diff, snapshot } from '../helpers/api/state.ts';
import { buildWorld, quiesce, type World } from '../helpers/api/world.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { checkEnvelope, expectFieldError, manualClock } from './util.ts';

type Perm = Permission;

const clock = manualClock();
// Started here rather than in beforeAll: the matrix below has a test per operation of its document.
const srv: TestServer = await startServer({ deps: { clock } });
afterAll(async () => srv.close());
let p: PlatformHandle;
let accountId: string;
const clients = {} as Record<Perm, Client>;

async function createToken(api: Client, name: string, permissions: Perm[]): Promise<Res> {
  const res = await api.post('/tokens', { name, permissions });
  expect(res.status, res.text).toBe(201);
  return res;
}

beforeAll(async () => {
  p = await srv.newPlatform({ name: 'Permissions' });
  accountId = (await p.api.get('/platform/internal-accounts')).body.data[0].id;
  for (const perm of PERMISSIONS) {
    const t = await createToken(p.api, `only-${perm}`, [perm]);
    expect(t.body.permissions).toEqual([perm]);
    clients[perm] = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
  }
});

// ---- the matrix: every platform operation, from the permission it publishes

const doc = (await srv.anon.get('/openapi.json')).body as { paths: Record<string, Record<string, Record<string, unknown>>> };
/** Reads first, then writes, deletions, and the sandbox reset last (it empties the platform). */
const rank = (o: Operation) => (o.operationId === 'sandboxReset' ? 3 : o.method === 'DELETE' ? 2 : o.method === 'GET' ? 0 : 1);
const platformOps = operationsOf(doc)
  .filter((o) => o.auth === 'basic')
  .sort((a, b) => rank(a) - rank(b));
const required = (o: Operation) => doc.paths[o.path]![o.method.toLowerCase()]![REQUIRED_PERMISSION] as Perm | undefined;

describe('the permission matrix of every platform operation', () => {
  let w: World;
  /** The world as a token holding only the operation's permission sees it (see beforeAll). */
  let wOnly: World;
  /** Per permission: a token holding every other permission, and one holding only it. */
  const allBut = {} as Record<Perm, { id: string; secret: string }>;
  const only = {} as Record<Perm, { id: string; secret: string }>;

  beforeAll(async () => {
    const q = await srv.newPlatform({ name: 'Permission matrix' });
    w = await buildWorld(srv, q, true);
    await quiesce(srv, [q.id], clock.nowMs());
    for (const perm of PERMISSIONS) {
      const others = PERMISSIONS.filter((x) => x !== perm);
      const a = await createToken(q.api, `all-but-${perm}`, others);
      allBut[perm] = { id: a.body.clientId, secret: a.body.clientSecret };
      const o = await createToken(q.api, `matrix-only-${perm}`, [perm]);
      only[perm] = { id: o.body.clientId, secret: o.body.clientSecret };
    }
    // Two rules beyond the route's permission have tests of their own (below, and test/agents):
    // a token mints only permissions it holds (the body of createToken is fitted to the caller),
    // and hands out an agent that moves money only with TRANSACT as well — so the agent the
    // agent-management operations name here has a policy that moves none.
    const viewer = await q.api.post('/agents', {
      name: 'Matrix viewer agent',
      customerId: w.ids.customer,
      policy: {
        permissions: ['VIEW_TRANSACTIONS'],
        defaultExecutionMode: 'AUTO',
        spendingLimits: { currency: 'USD', perTransactionLimit: 1 },
      },
    });
    expect(viewer.status, viewer.text).toBe(201);
    wOnly = { ...w, ids: { ...w.ids, agent: viewer.body.agent.id } };
  });

  it('every platform operation publishes the permission it needs', () => {
    expect(platformOps.length).toBeGreaterThan(50);
    const without = platformOps.filter((o) => !PERMISSIONS.includes(required(o)!)).map((o) => o.key);
    expect(without, 'platform operations without x-required-permission (declare config.permission)').toEqual([]);
  });

  describe('a token holding every permission but the one needed: 403 FORBIDDEN, decided before the request is validated', () => {
    let before: Awaited<ReturnType<typeof snapshot>>;
    beforeAll(async () => {
      before = await snapshot(srv, w.platform.id);
    });

    for (const op of platformOps) {
      it(`${op.key} (${required(op)})`, async () => {
        const need = required(op)!;
        // An unknown query parameter and, where a body is taken, an unknown field: both are 400s, after the 403.
        const res = await sendOperation(
          srv.origin,
          op,
          w,
          { basic: allBut[need] },
          {
            query: '?notAParameter=1',
            ...(op.body ? { body: { notAField: true } } : {}),
          },
        );
        checkEnvelope(res);
        expectError(res, 403, 'FORBIDDEN');
        expect(res.body.message).toContain(need);
      });
    }

    it('none of them changed anything', async () => {
      expect(diff(before, await snapshot(srv, w.platform.id))).toEqual([]);
    });
  });

  describe('a token holding only the permission needed is not refused', () => {
    for (const op of platformOps) {
      it(`${op.key} (${required(op)})`, async () => {
        const need = required(op)!;
        const body = op.operationId === 'createToken' ? { name: `made by the matrix (${need})`, permissions: [need] } : undefined;
        const res = await sendOperation(srv.origin, op, wOnly, { basic: only[need] }, { body });
        checkEnvelope(res);
        const what = `${op.key}: ${res.status} ${res.text}`;
        expect(res.status, what).not.toBe(403);
        expect(res.status, what).toBeLessThan(500);
        // The token is accepted: a 401 here can only be the embedded wallet's own check (it names its reason).
        if (res.status === 401) expect(res.body.reason, what).toEqual(expect.any(String));
      });
    }
  });
});

describe('permissions', () => {
  it('403 is decided before the body is validated', async () => {
    expectError(await clients.VIEW.post('/tokens', { bogus: true }), 403, 'FORBIDDEN');
    expectError(await clients.VIEW.patch('/config', { embeddedWalletConfig: { nope: 1 } }), 403, 'FORBIDDEN');
    expectError(await clients.MANAGE.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: -1 }), 403, 'FORBIDDEN');
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

describe('a token cannot grant more than it holds (hostile review, defect 2)', () => {
  it('mints only a subset of its own permissions', async () => {
    const manage = clients.MANAGE;
    const tooMuch = expectError(await manage.post('/tokens', { name: 'escalate', permissions: ['TRANSACT'] }), 403, 'FORBIDDEN');
    expect(tooMuch.body.details.missing).toEqual(['TRANSACT']);
    expectError(await manage.post('/tokens', { name: 'escalate', permissions: ['MANAGE', 'VIEW'] }), 403, 'FORBIDDEN');
    expectError(await manage.post('/tokens', { name: 'escalate', permissions: ['VIEW', 'TRANSACT', 'MANAGE'] }), 403, 'FORBIDDEN');
    expect((await p.api.get('/tokens', { query: { name: 'escalate' } })).body.totalCount).toBe(0);
    // Its own permission it may pass on; a token holding all three may mint any subset.
    const same = await manage.post('/tokens', { name: 'manage-twin', permissions: ['MANAGE'] });
    expect(same.status, same.text).toBe(201);
    const twin = p.api.with({ basic: { id: same.body.clientId, secret: same.body.clientSecret } });
    expectError(await twin.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: 1 }), 403, 'FORBIDDEN');
    const mt = await createToken(p.api, 'manage+transact', ['MANAGE', 'TRANSACT']);
    const both = p.api.with({ basic: { id: mt.body.clientId, secret: mt.body.clientSecret } });
    expect((await both.post('/tokens', { name: 'mover', permissions: ['TRANSACT'] })).status).toBe(201);
    expectError(await both.post('/tokens', { name: 'reader', permissions: ['VIEW'] }), 403, 'FORBIDDEN');
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
