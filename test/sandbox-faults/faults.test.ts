/**
 * Fault injection for sandbox platforms over real HTTP (issue #25): the /sandbox/faults routes
 * (strict validation, PRODUCTION refused, permissions), added latency on the named route and
 * platform only (without blocking the event loop), injected 503/500 answers with the error body and
 * no write, a rate's mix, expiry on the platform clock, the reset clearing the rules, and the cache
 * of another process picking rules up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultCache, RELOAD_MS } from '../../src/modules/sandbox/faults.cache.ts';
import { expectError, type Res } from '../helpers/http.ts';
import { individual } from '../helpers/customers.ts';
import { balances, expectLedgerClean, platformUsdAccount } from '../helpers/payments.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.close();
});

async function setFaults(p: PlatformHandle, rules: unknown[]): Promise<Res> {
  const res = await p.api.post('/sandbox/faults', { rules });
  expect(res.status, res.text).toBe(200);
  return res;
}

async function customerCount(p: PlatformHandle): Promise<number> {
  const res = await p.api.get('/customers', { query: { limit: 1 } });
  expect(res.status).toBe(200);
  return res.body.totalCount as number;
}

/** Runs `fn` and returns its result with how long it took. */
async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number; doneAt: number }> {
  const start = performance.now();
  const value = await fn();
  const doneAt = performance.now();
  return { value, ms: doneAt - start, doneAt };
}

/** The fields named by a 400's details.errors. */
const fields = (res: Res): string[] => (res.body?.details?.errors ?? []).map((e: { field: string }) => e.field);

describe('/sandbox/faults', () => {
  it('is off by default; POST replaces the rules (normalised), GET shows them, DELETE clears them', async () => {
    const p = await srv.newPlatform();
    expect((await p.api.get('/sandbox/faults')).body).toEqual({ rules: [] });

    const set = await setFaults(p, [
      { route: 'POST /quotes', latencyMs: 10, errorRate: 0 },
      { route: 'GET /customers/:customerId', errorRate: 0, errorStatus: 500, expiresAt: '2099-01-01T00:00:00Z' },
      { eventType: 'OUTGOING_PAYMENT.COMPLETED', dropRate: 0.25 },
    ]);
    expect(set.body.rules).toEqual([
      { route: 'POST /quotes', latencyMs: 10, errorRate: 0, errorStatus: 503 },
      { route: 'GET /customers/:customerId', errorRate: 0, errorStatus: 500, expiresAt: '2099-01-01T00:00:00.000Z' },
      { eventType: 'OUTGOING_PAYMENT.COMPLETED', dropRate: 0.25 },
    ]);
    expect(typeof set.body.updatedAt).toBe('string');
    expect((await p.api.get('/sandbox/faults')).body).toEqual(set.body);

    // Replacing is wholesale; an empty list clears.
    expect((await setFaults(p, [{ eventType: '*', dropRate: 0 }])).body.rules).toEqual([{ eventType: '*', dropRate: 0 }]);
    expect((await setFaults(p, [])).body).toEqual({ rules: [] });

    await setFaults(p, [{ route: '*', latencyMs: 1 }]);
    const del = await p.api.delete('/sandbox/faults');
    expect(del.status).toBe(204);
    expect((await p.api.get('/sandbox/faults')).body).toEqual({ rules: [] });
  });

  it('validates strictly, naming each bad field', async () => {
    const p = await srv.newPlatform();
    const bad = async (rules: unknown, field: string) => {
      const res = await p.api.post('/sandbox/faults', { rules });
      expectError(res, 400, 'INVALID_INPUT');
      expect(fields(res), res.text).toContain(field);
    };
    await bad([{ route: 'POST /quotes', errorRate: 1, bogus: true }], 'rules.0.bogus');
    await bad([{ route: 'POST /quotes', errorRate: 1.5 }], 'rules.0.errorRate');
    await bad([{ route: 'POST /quotes', errorRate: -0.1 }], 'rules.0.errorRate');
    await bad([{ route: 'POST /quotes', latencyMs: 30_001 }], 'rules.0.latencyMs');
    await bad([{ route: 'POST /quotes', latencyMs: 1.5 }], 'rules.0.latencyMs');
    await bad([{ route: 'POST /quotes', errorRate: 1, errorStatus: 502 }], 'rules.0.errorStatus');
    await bad([{ eventType: 'TEST', dropRate: 2 }], 'rules.0.dropRate');
    await bad([{ route: 'POST /quotes', errorRate: 1, expiresAt: 'tomorrow' }], 'rules.0.expiresAt');
    await bad(
      Array.from({ length: 21 }, () => ({ route: '*', latencyMs: 1 })),
      'rules',
    );
    // Beyond the schema: the service's own checks.
    await bad([{ latencyMs: 5 }], 'rules.0');
    await bad([{ route: 'POST /quotes', eventType: 'TEST', latencyMs: 5 }], 'rules.0');
    await bad([{ route: 'POST /nowhere', errorRate: 1 }], 'rules.0.route');
    await bad([{ route: 'quotes', errorRate: 1 }], 'rules.0.route');
    await bad([{ route: 'POST /sandbox/faults', errorRate: 1 }], 'rules.0.route');
    await bad([{ route: 'POST /quotes' }], 'rules.0.route');
    await bad([{ route: 'POST /quotes', dropRate: 1 }], 'rules.0.dropRate');
    await bad([{ route: 'POST /quotes', errorStatus: 500, latencyMs: 1 }], 'rules.0.errorStatus');
    await bad([{ eventType: 'NOT.A_TYPE', dropRate: 1 }], 'rules.0.eventType');
    await bad([{ eventType: 'TEST', latencyMs: 5, dropRate: 1 }], 'rules.0.latencyMs');
    await bad([{ eventType: 'TEST' }], 'rules.0.dropRate');
    await bad([{ route: 'POST /quotes', errorRate: 1, expiresAt: '2000-01-01T00:00:00Z' }], 'rules.0.expiresAt');
    await bad(
      [
        { route: 'GET /customers/{customerId}', errorRate: 1 },
        { route: 'get /customers/:id/', latencyMs: 5 },
      ],
      'rules.1',
    );
    await bad({ route: '*', latencyMs: 1 }, 'rules');
    const missing = await p.api.post('/sandbox/faults', {});
    expectError(missing, 400, 'INVALID_INPUT');
    expect(fields(missing)).toContain('rules');
    // Nothing was stored by any of them.
    expect((await p.api.get('/sandbox/faults')).body).toEqual({ rules: [] });
  });

  it('is refused to PRODUCTION platforms, needs MANAGE to change and VIEW to read, and credentials', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    expectError(await prod.api.get('/sandbox/faults'), 403, 'FORBIDDEN');
    expectError(await prod.api.post('/sandbox/faults', { rules: [{ route: '*', errorRate: 1 }] }), 403, 'FORBIDDEN');
    expectError(await prod.api.post('/sandbox/faults', { rules: 'garbage' }), 403, 'FORBIDDEN');
    expectError(await prod.api.delete('/sandbox/faults'), 403, 'FORBIDDEN');
    expect((await prod.api.get('/customers')).status).toBe(200);

    const p = await srv.newPlatform();
    const t = (await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] })).body;
    const viewer = p.api.with({ basic: { id: t.clientId, secret: t.clientSecret } });
    expect((await viewer.get('/sandbox/faults')).status).toBe(200);
    expectError(await viewer.post('/sandbox/faults', { rules: [] }), 403, 'FORBIDDEN');
    expectError(await viewer.delete('/sandbox/faults'), 403, 'FORBIDDEN');
    expectError(await srv.anon.get('/sandbox/faults'), 401, 'UNAUTHORIZED');
    expectError(await srv.anon.post('/sandbox/faults', { rules: [] }), 401, 'UNAUTHORIZED');
  });
});

describe('added latency', () => {
  it('delays only the named route of the platform that set it, without holding the event loop', async () => {
    const a = await srv.newPlatform();
    const b = await srv.newPlatform();
    // Warm: each route's first request compiles its validators and serializers.
    expect((await a.api.get('/platform/internal-accounts')).status).toBe(200);
    expect((await b.api.get('/customers')).status).toBe(200);
    await setFaults(a, [{ route: 'GET /customers', latencyMs: 2_000 }]);

    // Started first, answered last: requests to another route and of another platform, sent while
    // the delayed one waits on its timer, are answered before it (a delay of theirs would put them
    // after it, and a blocked event loop would hold them all).
    const slow = timed(() => a.api.get('/customers'));
    const otherRoute = await timed(() => a.api.get('/platform/internal-accounts'));
    const otherPlatform = await timed(() => b.api.get('/customers'));
    const delayed = await slow;

    expect(delayed.value.status).toBe(200);
    expect(delayed.ms).toBeGreaterThanOrEqual(1_950);
    expect(otherRoute.value.status).toBe(200);
    expect(otherPlatform.value.status).toBe(200);
    expect(otherRoute.doneAt).toBeLessThan(delayed.doneAt);
    expect(otherPlatform.doneAt).toBeLessThan(delayed.doneAt);

    // The fault-injection routes themselves are never delayed, even by a catch-all rule.
    await setFaults(a, [{ route: '*', latencyMs: 2_000 }]);
    const slowAgain = timed(() => a.api.get('/platform/internal-accounts'));
    const own = await timed(() => a.api.get('/sandbox/faults'));
    const delayedAgain = await slowAgain;
    expect(own.value.status).toBe(200);
    expect(delayedAgain.ms).toBeGreaterThanOrEqual(1_950);
    expect(own.doneAt).toBeLessThan(delayedAgain.doneAt);
    expect((await a.api.delete('/sandbox/faults')).status).toBe(204);
  });
});

describe('injected errors', () => {
  it('errorRate 1 answers 503 with the error body and runs nothing: no customer is created', async () => {
    const a = await srv.newPlatform();
    const b = await srv.newPlatform();
    const before = await customerCount(a);
    await setFaults(a, [{ route: 'POST /customers', errorRate: 1 }]);

    const res = await a.api.post('/customers', individual());
    expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.body.message).toContain('fault injection');
    expect(res.body.details).toEqual({ injectedFault: { route: 'POST /customers' } });
    expect(res.headers.get('x-request-id')).toBeTruthy();
    // Even an invalid body is answered 503: the request never reaches validation or the handler.
    expectError(await a.api.post('/customers', { nonsense: true }), 503, 'SERVICE_UNAVAILABLE');
    expect(await customerCount(a)).toBe(before);

    // Another platform is unaffected.
    expect((await b.api.post('/customers', individual())).status).toBe(201);
    // Once cleared, the same request works.
    expect((await a.api.delete('/sandbox/faults')).status).toBe(204);
    expect((await a.api.post('/customers', individual())).status).toBe(201);
    expect(await customerCount(a)).toBe(before + 1);
  });

  it('errorStatus 500 on a money route: INTERNAL_ERROR, no posting, the ledger clean', async () => {
    const a = await srv.newPlatform();
    const account = await platformUsdAccount(a);
    await setFaults(a, [{ route: 'POST /sandbox/internal-accounts/{accountId}/fund', errorRate: 1, errorStatus: 500 }]);
    const res = await a.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 5_000 });
    expectError(res, 500, 'INTERNAL_ERROR');
    expect((await balances(a, account)).balance).toBe(0);
    await expectLedgerClean(srv, a.id);
  });

  it('errorRate 0.5 gives a mix of 503s and answers', async () => {
    const a = await srv.newPlatform();
    await setFaults(a, [{ route: 'GET /customers', errorRate: 0.5 }]);
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) statuses.push((await a.api.get('/customers')).status);
    // Each outcome has probability 2^-40 of never occurring.
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200 || s === 503)).toBe(true);
  });

  it('an exact rule wins over the catch-all; the catch-all spares /sandbox/faults', async () => {
    const a = await srv.newPlatform();
    await setFaults(a, [
      { route: '*', errorRate: 1 },
      { route: 'GET /customers', latencyMs: 0 },
    ]);
    expect((await a.api.get('/customers')).status).toBe(200);
    expectError(await a.api.get('/platform/internal-accounts'), 503, 'SERVICE_UNAVAILABLE');
    expect((await a.api.get('/sandbox/faults')).status).toBe(200);
    expect((await a.api.delete('/sandbox/faults')).status).toBe(204);
    expect((await a.api.get('/platform/internal-accounts')).status).toBe(200);
  });

  it('a rule stops at its expiresAt on the platform clock', async () => {
    const a = await srv.newPlatform();
    const now = Date.parse((await a.api.get('/sandbox/clock')).body.now);
    await setFaults(a, [{ route: 'GET /platform/internal-accounts', errorRate: 1, expiresAt: new Date(now + 60_000).toISOString() }]);
    expectError(await a.api.get('/platform/internal-accounts'), 503, 'SERVICE_UNAVAILABLE');
    expect((await a.api.post('/sandbox/clock/advance', { seconds: 120 })).status).toBe(200);
    expect((await a.api.get('/platform/internal-accounts')).status).toBe(200);
  });

  it('a sandbox reset clears the rules', async () => {
    const a = await srv.newPlatform();
    await setFaults(a, [{ route: 'GET /customers', errorRate: 1 }]);
    expectError(await a.api.get('/customers'), 503, 'SERVICE_UNAVAILABLE');
    expect((await a.api.post('/sandbox/reset')).status).toBe(204);
    expect((await a.api.get('/sandbox/faults')).body).toEqual({ rules: [] });
    expect((await a.api.get('/customers')).status).toBe(200);
  });
});

describe('the rules cache', () => {
  it("another process's cache (its own handle) applies rules set here within a reload interval", async () => {
    const a = await srv.newPlatform();
    const other = new FaultCache(srv.app.ctx.db);
    expect((await other.current()).has(a.id)).toBe(false);
    await setFaults(a, [{ route: 'GET /customers', errorRate: 1 }]);
    // Still its snapshot from before (no query per request)...
    expect(other.fresh()?.has(a.id)).toBe(false);
    // ...and the rule once the snapshot is older than the reload interval.
    await new Promise((r) => setTimeout(r, RELOAD_MS + 50));
    expect(other.fresh()).toBeUndefined();
    expect((await other.current()).get(a.id)?.routes.has('GET /customers')).toBe(true);
    // A PRODUCTION platform's rules would never be loaded (the API refuses them; the loader skips them).
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    await srv.app.ctx.db
      .insertInto('sandbox_faults')
      .values({
        platform_id: prod.id,
        rules: JSON.stringify([{ route: '*', errorRate: 1, errorStatus: 503 }]),
        updated_at: '2030-01-01T00:00:00.000Z',
      })
      .execute();
    other.invalidate();
    expect((await other.current()).has(prod.id)).toBe(false);
    expect((await prod.api.get('/customers')).status).toBe(200);
  });
});
