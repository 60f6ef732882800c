/**
 * The webhook delivery log over real HTTP with a real receiver: GET /webhooks/deliveries (filters,
 * pagination, isolation), GET /webhooks/deliveries/{id} (data and every attempt), POST
 * /webhooks/deliveries/{id}/replay (same envelope id, valid signature, fresh retry schedule,
 * 409 while an attempt is in flight) and POST /webhooks/recover (exactly the FAILED events since a
 * time, in order).
 */
import { createServer, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { expectError } from '../helpers/http.ts';
import { closeServer, listenLoopback } from '../helpers/loopback.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advance, fund, platformUsdAccount, type Wire } from '../helpers/payments.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';

let srv: TestServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.close();
  for (const r of receivers) await r.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

/** A platform whose webhook endpoint is `r`, with the TEST event from setting it already delivered. */
async function platformWithEndpoint(r: Receiver): Promise<PlatformHandle> {
  const p = await srv.newPlatform();
  expect((await p.api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
  await waitFor(
    async () => (await p.api.get('/webhooks/deliveries', { query: { type: 'TEST', status: 'DELIVERED' } })).body.totalCount === 1,
  );
  return p;
}

async function signingKey(p: PlatformHandle): Promise<string> {
  return (await p.api.get('/webhooks/signing-key')).body.publicKey as string;
}

async function delivery(p: PlatformHandle, id: string): Promise<Wire> {
  const res = await p.api.get(`/webhooks/deliveries/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** Waits until the delivery is in one of `statuses` (no attempt in flight). */
async function settled(p: PlatformHandle, id: string, statuses = ['DELIVERED', 'FAILED']): Promise<Wire> {
  return waitFor(async () => {
    const d = await delivery(p, id);
    return statuses.includes(d.status) ? d : undefined;
  });
}

/** The platform's BALANCE_UPDATED deliveries, oldest first. */
async function balanceEvents(p: PlatformHandle): Promise<Wire[]> {
  const res = await p.api.get('/webhooks/deliveries', { query: { type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED', limit: 100 } });
  expect(res.status).toBe(200);
  return [...res.body.data].reverse();
}

/** The platform's outbox event ids, newest first, read from the store (the list's oracle). */
async function storedIds(platformId: string): Promise<string[]> {
  const rows = await srv.app.ctx.db
    .selectFrom('outbox_events')
    .select('id')
    .where('platform_id', '=', platformId)
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => r.id);
}

async function viewer(p: PlatformHandle) {
  const t = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
  expect(t.status).toBe(201);
  return p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
}

describe('GET /webhooks/deliveries', () => {
  it('lists newest first with filters, cursor pagination, the last attempt and the next one', async () => {
    const r = await receiver();
    const p = await platformWithEndpoint(r);
    const account = await platformUsdAccount(p);
    // The balance event that reports 600 fails once: it waits PENDING for its retry.
    r.respond = (x, n) => (x.body?.data?.balance?.amount === 600 && n === 0 ? { status: 500, body: 'later' } : { status: 200, body: 'ok' });
    await fund(p, account, 100);
    await fund(p, account, 200);
    await fund(p, account, 300);
    const events = await waitFor(async () => {
      const e = await balanceEvents(p);
      return e.length === 3 && e.every((d: Wire) => d.attemptCount === 1 && d.status !== 'DELIVERING') ? e : undefined;
    });
    const [first, second, pending] = events as [Wire, Wire, Wire];

    const all = await p.api.get('/webhooks/deliveries', { query: { limit: 100 } });
    expect(all.status).toBe(200);
    const ids = await storedIds(p.id);
    expect(all.body.data.map((d: Wire) => d.id)).toEqual(ids);
    expect(all.body.totalCount).toBe(ids.length);
    expect(all.body.hasMore).toBe(false);
    expect(all.body.nextCursor).toBeUndefined();

    expect(Object.keys(pending).sort()).toEqual([
      'attemptCount',
      'createdAt',
      'id',
      'lastAttemptAt',
      'lastResponseStatus',
      'nextAttemptAt',
      'resourceId',
      'status',
      'type',
    ]);
    expect(pending).toMatchObject({
      type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      resourceId: account,
      status: 'PENDING',
      attemptCount: 1,
      lastResponseStatus: 500,
    });
    const wait = Date.parse(pending.nextAttemptAt) - Date.parse(pending.lastAttemptAt);
    expect(wait).toBeGreaterThanOrEqual(30_000);
    expect(wait).toBeLessThan(35_000);
    expect(first).toMatchObject({ status: 'DELIVERED', attemptCount: 1, lastResponseStatus: 200 });
    expect(first.nextAttemptAt).toBeUndefined();
    expect(first.lastError).toBeUndefined();
    expect(Date.parse(first.createdAt)).toBeLessThanOrEqual(Date.parse(second.createdAt));

    const list = async (query: Record<string, string | number>) => {
      const res = await p.api.get('/webhooks/deliveries', { query });
      expect(res.status).toBe(200);
      return res.body.data.map((d: Wire) => d.id) as string[];
    };
    expect(await list({ type: 'TEST' })).toHaveLength(1);
    expect(await list({ status: 'PENDING' })).toEqual([pending.id]);
    expect(await list({ resourceId: account })).toEqual([pending.id, second.id, first.id]);
    expect(await list({ resourceId: account, status: 'DELIVERED' })).toEqual([second.id, first.id]);
    expect(await list({ type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED', status: 'FAILED' })).toEqual([]);
    expect(await list({ resourceId: 'InternalAccount:nope' })).toEqual([]);

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const page = await p.api.get('/webhooks/deliveries', { query: { limit: 2, ...(cursor ? { cursor } : {}) } });
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      expect(page.body.totalCount).toBe(ids.length);
      seen.push(...page.body.data.map((d: Wire) => d.id));
      if (!page.body.hasMore) break;
      cursor = page.body.nextCursor;
    }
    expect(seen).toEqual(ids);

    // Once the retry is due it is delivered and the list says so.
    await advance(p, 30);
    expect(await delivery(p, pending.id)).toMatchObject({ status: 'DELIVERED', attemptCount: 2, lastResponseStatus: 200 });
  });

  it('rejects bad filters; another platform sees none of it; 401 without credentials', async () => {
    const r = await receiver();
    const p = await platformWithEndpoint(r);
    for (const query of [{ status: 'DONE' }, { type: 'not a type' }, { limit: 0 }, { limit: 101 }, { cursor: 'garbage' }, { nope: 1 }]) {
      const res = expectError(await p.api.get('/webhooks/deliveries', { query }), 400, 'INVALID_INPUT');
      expect(JSON.stringify(res.body.details), JSON.stringify(query)).toContain(Object.keys(query)[0]!);
    }
    const [test] = await storedIds(p.id);
    const other = await srv.newPlatform();
    const theirs = await other.api.get('/webhooks/deliveries');
    expect(theirs.body.data.map((d: Wire) => d.id)).not.toContain(test);
    expectError(await other.api.get(`/webhooks/deliveries/${test}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get('/webhooks/deliveries/Webhook:nope'), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.get('/webhooks/deliveries'), 401, 'UNAUTHORIZED');
    expectError(await srv.anon.get(`/webhooks/deliveries/${test}`), 401, 'UNAUTHORIZED');
    // Reads need VIEW only.
    expect((await (await viewer(p)).get(`/webhooks/deliveries/${test}`)).status).toBe(200);
  });
});

describe('GET /webhooks/deliveries/{id}', () => {
  it("has the event's data and every attempt", async () => {
    const r = await receiver();
    const p = await platformWithEndpoint(r);
    const account = await platformUsdAccount(p);
    r.respond = (x, n) =>
      x.body?.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' && n === 0 ? { status: 503, body: 'busy' } : { status: 200, body: '{"ok":true}' };
    await fund(p, account, 250);
    const [ev] = await waitFor(async () => {
      const e = await balanceEvents(p);
      return e.length === 1 && e[0].attemptCount === 1 && e[0].status === 'PENDING' ? e : undefined;
    });
    await advance(p, 30);
    const d = await settled(p, ev.id);
    expect(Object.keys(d).sort()).toEqual([
      'attemptCount',
      'attempts',
      'createdAt',
      'data',
      'id',
      'lastAttemptAt',
      'lastResponseStatus',
      'resourceId',
      'status',
      'type',
    ]);
    expect(d).toMatchObject({
      id: ev.id,
      type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      resourceId: account,
      status: 'DELIVERED',
      attemptCount: 2,
      lastResponseStatus: 200,
    });
    // The data is what the receiver got in the envelope.
    const got = r.received.filter((x) => x.body?.id === ev.id);
    expect(got).toHaveLength(2);
    expect(d.data).toEqual(got[1]!.body.data);
    expect(d.data).toMatchObject({ id: account, balance: { amount: 250 } });
    expect(d.attempts).toHaveLength(2);
    expect(Object.keys(d.attempts[0]).sort()).toEqual(['at', 'attempt', 'latencyMs', 'responseBody', 'responseStatus', 'url']);
    expect(d.attempts[0]).toMatchObject({ attempt: 1, url: r.url, responseStatus: 503, responseBody: 'busy' });
    expect(d.attempts[1]).toMatchObject({ attempt: 2, url: r.url, responseStatus: 200, responseBody: '{"ok":true}' });
    expect(d.attempts[1].latencyMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(d.attempts[1].at) - Date.parse(d.attempts[0].at)).toBeGreaterThanOrEqual(30_000);
    expect(d.lastAttemptAt).toBe(d.attempts[1].at);
  });
});

describe('POST /webhooks/deliveries/{id}/replay', () => {
  it('resends a DELIVERED event now: same id, same data, a valid signature, the next attempt number', async () => {
    const r = await receiver();
    const p = await platformWithEndpoint(r);
    await fund(p, await platformUsdAccount(p), 100);
    const [ev] = await waitFor(async () => {
      const e = await balanceEvents(p);
      return e.length === 1 && e[0].status === 'DELIVERED' ? e : undefined;
    });
    r.respond = () => ({ status: 200, body: 'again' });
    const res = await p.api.post(`/webhooks/deliveries/${ev.id}/replay`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ev.id, status: 'DELIVERED', attemptCount: 2, lastResponseStatus: 200 });
    expect(res.body.attempts.map((a: Wire) => [a.attempt, a.responseStatus, a.responseBody])).toEqual([
      [1, 200, 'ok'],
      [2, 200, 'again'],
    ]);
    const got = r.received.filter((x) => x.body?.id === ev.id);
    expect(got).toHaveLength(2);
    expect(got[1]!.body.type).toBe(got[0]!.body.type);
    expect(got[1]!.body.data).toEqual(got[0]!.body.data);
    const key = await signingKey(p);
    for (const x of got) expect(verifyWebhook(x.raw, x.headers['x-grid-signature'] as string, key)).toBe(true);
    // An empty JSON body is fine; unknown fields are not.
    expect((await p.api.post(`/webhooks/deliveries/${ev.id}/replay`, {})).body.attemptCount).toBe(3);
    expectError(await p.api.post(`/webhooks/deliveries/${ev.id}/replay`, { force: true }), 400, 'INVALID_INPUT');
  });

  it('resends a FAILED event (409 from the receiver) and delivers it', async () => {
    const r = await receiver();
    const p = await platformWithEndpoint(r);
    r.respond = (x) => (x.body?.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' ? { status: 409, body: 'seen it' } : { status: 200 });
    await fund(p, await platformUsdAccount(p), 100);
    const [ev] = await waitFor(async () => {
      const e = await balanceEvents(p);
      return e.length === 1 && e[0].status === 'FAILED' ? e : undefined;
    });
    r.respond = () => ({ status: 200, body: 'fixed' });
    const res = await p.api.post(`/webhooks/deliveries/${ev.id}/replay`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
    expect(res.body.attempts.map((a: Wire) => a.responseStatus)).toEqual([409, 200]);
    const got = r.received.filter((x) => x.body?.id === ev.id);
    expect(got).toHaveLength(2);
    expect(verifyWebhook(got[1]!.raw, got[1]!.headers['x-grid-signature'] as string, await signingKey(p))).toBe(true);
  });

  it('a failed replay retries on a fresh schedule (30 s) while attempt numbers keep counting', async () => {
    const r = await receiver();
    const p = await platformWithEndpoint(r);
    let down = true;
    r.respond = (x) => (x.body?.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' && down ? { status: 500 } : { status: 200 });
    await fund(p, await platformUsdAccount(p), 100);
    const [ev] = await waitFor(async () => {
      const e = await balanceEvents(p);
      return e.length === 1 && e[0].attemptCount === 1 && e[0].status === 'PENDING' ? e : undefined;
    });
    await advance(p, 30); // attempt 2
    await advance(p, 60); // attempt 3; the next would be 120 s later
    expect(await delivery(p, ev.id)).toMatchObject({ status: 'PENDING', attemptCount: 3 });

    const res = await p.api.post(`/webhooks/deliveries/${ev.id}/replay`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'PENDING', attemptCount: 4, lastResponseStatus: 500 });
    const wait = Date.parse(res.body.nextAttemptAt) - Date.parse(res.body.lastAttemptAt);
    expect(wait).toBeGreaterThanOrEqual(30_000);
    expect(wait).toBeLessThan(35_000);

    down = false;
    await advance(p, 30);
    const d = await settled(p, ev.id);
    expect(d).toMatchObject({ status: 'DELIVERED', attemptCount: 5 });
    expect(d.attempts.map((a: Wire) => [a.attempt, a.responseStatus])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 500],
      [5, 200],
    ]);
    expect(r.received.filter((x) => x.body?.id === ev.id)).toHaveLength(5);
  });

  it('409 while an attempt is in flight', async () => {
    // A receiver that holds requests while `hold` is set, until released.
    let hold = false;
    const held: ServerResponse[] = [];
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (hold) held.push(res);
        else res.writeHead(200).end('ok');
      });
    });
    const url = await listenLoopback(server);
    try {
      const p = await srv.newPlatform();
      expect((await p.api.patch('/config', { webhookEndpoint: url })).status).toBe(200);
      await fund(p, await platformUsdAccount(p), 100);
      const [ev] = await waitFor(async () => {
        const e = await balanceEvents(p);
        return e.length === 1 && e[0].status === 'DELIVERED' ? e : undefined;
      });
      hold = true;
      const first = p.api.post(`/webhooks/deliveries/${ev.id}/replay`);
      await waitFor(() => held.length === 1);
      expect((await delivery(p, ev.id)).status).toBe('DELIVERING');
      expectError(await p.api.post(`/webhooks/deliveries/${ev.id}/replay`), 409, 'CONFLICT');
      held[0]!.writeHead(200).end('late');
      const res = await first;
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
      expect(res.body.attempts.at(-1)).toMatchObject({ attempt: 2, responseStatus: 200, responseBody: 'late' });
    } finally {
      await closeServer(server);
    }
  });

  it("404 for unknown and another platform's ids; 400 WEBHOOK_ENDPOINT_NOT_SET; 401; 403 without MANAGE", async () => {
    const r = await receiver();
    const p = await platformWithEndpoint(r);
    const [test] = await storedIds(p.id);
    const other = await srv.newPlatform();
    expectError(await other.api.post(`/webhooks/deliveries/${test}/replay`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.post('/webhooks/deliveries/Webhook:nope/replay'), 404, 'REFERENCE_NOT_FOUND');
    // A platform without an endpoint: its events wait, untried; a replay has nowhere to go.
    await fund(other, await platformUsdAccount(other), 100);
    const [waiting] = await storedIds(other.id);
    const d = await delivery(other, waiting!);
    expect(d).toMatchObject({ status: 'PENDING', attemptCount: 0, attempts: [] });
    expect(d.nextAttemptAt).toBeUndefined();
    expectError(await other.api.post(`/webhooks/deliveries/${waiting}/replay`), 400, 'WEBHOOK_ENDPOINT_NOT_SET');
    expectError(await srv.anon.post(`/webhooks/deliveries/${test}/replay`), 401, 'UNAUTHORIZED');
    expectError(await (await viewer(p)).post(`/webhooks/deliveries/${test}/replay`), 403, 'FORBIDDEN');
    expect(r.received.filter((x) => x.body?.id === test)).toHaveLength(1);
  });
});

describe('POST /webhooks/recover', () => {
  it('requeues exactly the FAILED events created since the time, and delivers them in order', async () => {
    const r = await receiver();
    const p = await platformWithEndpoint(r);
    const account = await platformUsdAccount(p);
    r.respond = (x) => (x.body?.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' ? { status: 409 } : { status: 200 });
    const failedCount = async (n: number) =>
      waitFor(async () => {
        const e = await balanceEvents(p);
        return e.length === n && e.every((d: Wire) => d.status === 'FAILED') ? e : undefined;
      });
    await fund(p, account, 100);
    const [before] = await failedCount(1);
    const clock = await p.api.post('/sandbox/clock/advance', { seconds: 60 });
    expect(clock.status).toBe(200);
    const since = clock.body.now as string;
    await fund(p, account, 200);
    await fund(p, account, 300);
    const [, b, c] = await failedCount(3);
    // A delivered event after `since` is not resent.
    expect((await p.api.post('/sandbox/webhooks/test')).status).toBe(200);

    r.respond = () => ({ status: 200, body: 'ok now' });
    const mark = r.received.length;
    const res = await p.api.post('/webhooks/recover', { since });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 2, ids: [b.id, c.id] });
    await waitFor(async () => (await settled(p, c.id)).status === 'DELIVERED');
    await advance(p, 1);
    // Exactly those two, oldest first (one resource: per-resource order), signed as ever.
    const resent = r.received.slice(mark);
    expect(resent.map((x) => x.body.id)).toEqual([b.id, c.id]);
    const key = await signingKey(p);
    expect(resent.every((x) => verifyWebhook(x.raw, x.headers['x-grid-signature'] as string, key))).toBe(true);
    expect(await delivery(p, b.id)).toMatchObject({ status: 'DELIVERED', attemptCount: 2 });
    expect((await delivery(p, b.id)).attempts.map((a: Wire) => [a.attempt, a.responseStatus])).toEqual([
      [1, 409],
      [2, 200],
    ]);
    expect(await delivery(p, before.id)).toMatchObject({ status: 'FAILED', attemptCount: 1 });

    // Nothing left to recover; a time in the future matches nothing.
    expect((await p.api.post('/webhooks/recover', { since })).body).toEqual({ count: 0, ids: [] });
    expect((await p.api.post('/webhooks/recover', { since: '2000-01-01T00:00:00Z' })).body).toEqual({ count: 1, ids: [before.id] });
    await settled(p, before.id);
    expect((await p.api.post('/webhooks/recover', { since: '2999-01-01T00:00:00Z' })).body).toEqual({ count: 0, ids: [] });
  });

  it('rejects bad input; 400 WEBHOOK_ENDPOINT_NOT_SET; 401; 403 without MANAGE', async () => {
    const r = await receiver();
    const p = await platformWithEndpoint(r);
    for (const body of [{}, { since: 'yesterday' }, { since: '2025-01-01T00:00:00Z', extra: 1 }]) {
      const res = expectError(await p.api.post('/webhooks/recover', body), 400, 'INVALID_INPUT');
      expect(JSON.stringify(res.body.details)).toMatch(/since|extra/);
    }
    const bare = await srv.newPlatform();
    expectError(await bare.api.post('/webhooks/recover', { since: '2025-01-01T00:00:00Z' }), 400, 'WEBHOOK_ENDPOINT_NOT_SET');
    expectError(await srv.anon.post('/webhooks/recover', { since: '2025-01-01T00:00:00Z' }), 401, 'UNAUTHORIZED');
    expectError(await (await viewer(p)).post('/webhooks/recover', { since: '2025-01-01T00:00:00Z' }), 403, 'FORBIDDEN');
  });
});
