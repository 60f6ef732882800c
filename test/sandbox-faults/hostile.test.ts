/**
 * Hostile review of sandbox fault injection (issue #25), over real HTTP on the lane's store. Added
 * latency must not be charged to the client's upload: the server's request timeout
 * (CORRIDOR_REQUEST_TIMEOUT_MS, 30 s by default, the same as the longest latency a rule may add)
 * covers receiving the request, so a delay taken while a large body still sits unread in the socket
 * turned the request into a 400 "Request timed out" instead of the fault the rule describes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { individual } from '../helpers/customers.ts';
import { expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

const REQUEST_TIMEOUT_MS = 1_500;
const LATENCY_MS = 3_000;

let srv: TestServer;

beforeAll(async () => {
  srv = await startServer({ env: { CORRIDOR_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS), CORRIDOR_HEADERS_TIMEOUT_MS: '1000' } });
});
afterAll(async () => srv?.close());

async function setFaults(p: PlatformHandle, rules: unknown[]): Promise<Res> {
  const res = await p.api.post('/sandbox/faults', { rules });
  expect(res.status, res.text).toBe(200);
  return res;
}

async function timed(fn: () => Promise<Res>): Promise<{ res: Res; ms: number }> {
  const start = performance.now();
  const res = await fn();
  return { res, ms: performance.now() - start };
}

/** A body far larger than what Node buffers ahead of a paused request (~16 KiB). */
const bulky = { ...individual(), note: 'x'.repeat(256 * 1024) };

describe('added latency and the request timeout', () => {
  it('a delayed request with a large body gets the injected answer, not a timeout blamed on the client', async () => {
    const p = await srv.newPlatform();
    await setFaults(p, [{ route: 'POST /customers', latencyMs: LATENCY_MS, errorRate: 1 }]);
    const { res, ms } = await timed(() => p.api.post('/customers', bulky));
    expectError(res, 503, 'SERVICE_UNAVAILABLE');
    expect(res.body.details).toEqual({ injectedFault: { route: 'POST /customers' } });
    expect(ms).toBeGreaterThanOrEqual(LATENCY_MS - 50);
  });

  it('a delayed request with a large body is then handled as usual (here: its unknown field named)', async () => {
    const p = await srv.newPlatform();
    await setFaults(p, [{ route: 'POST /customers', latencyMs: LATENCY_MS }]);
    const { res, ms } = await timed(() => p.api.post('/customers', bulky));
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors).toEqual([{ field: 'note', message: 'is not a known field' }]);
    expect(ms).toBeGreaterThanOrEqual(LATENCY_MS - 50);
    // A valid request on the delayed route is created after the delay; nothing else was.
    const ok = await timed(() => p.api.post('/customers', individual()));
    expect(ok.res.status, ok.res.text).toBe(201);
    expect(ok.ms).toBeGreaterThanOrEqual(LATENCY_MS - 50);
    expect((await p.api.get('/customers', { query: { limit: 1 } })).body.totalCount).toBe(1);
  });

  it('an injected error still comes before validation: a schema-invalid body is answered 503', async () => {
    const p = await srv.newPlatform();
    await setFaults(p, [{ route: 'POST /customers', errorRate: 1 }]);
    expectError(await p.api.post('/customers', { nonsense: true }), 503, 'SERVICE_UNAVAILABLE');
    expectError(await p.api.post('/customers', bulky), 503, 'SERVICE_UNAVAILABLE');
    expect((await p.api.get('/customers', { query: { limit: 1 } })).body.totalCount).toBe(0);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});
