/**
 * Fair shares of webhook delivery (defect: two platforms whose receivers hang stalled everyone's
 * webhooks). Receivers that accept a request and never answer hold each attempt until the 10 s
 * timeout; a drain allowed 20 such attempts per platform and 40 in all, so two hanging platforms with
 * a backlog took every slot and a healthy platform's events waited 9–11 s. Now a platform holds at
 * most its share (20 of 80) and a platform with nothing in flight always gets a slot.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SLOTS, Slots } from '../../src/webhook-delivery/in-flight.ts';
import { closeServer, listenLoopback } from '../helpers/loopback.ts';
import { laneStore, startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';

/** A receiver that takes each request and never answers; counts the requests it holds. */
interface Hanging {
  url: string;
  /** Requests held now (their connection still open). */
  open: number;
  /** The most held at once. */
  maxOpen: number;
  close(): Promise<void>;
}

async function startHanging(): Promise<Hanging> {
  const h: Hanging = { url: '', open: 0, maxOpen: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    h.open++;
    h.maxOpen = Math.max(h.maxOpen, h.open);
    req.resume();
    res.on('close', () => h.open--);
  });
  h.url = await listenLoopback(server);
  h.close = () => closeServer(server);
  return h;
}

let srv: TestServer;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  for (const c of closers) await c();
  await srv.close();
});

let customerSeq = 0;
async function createCustomer(p: PlatformHandle): Promise<string> {
  const n = ++customerSeq;
  const res = await p.api.post('/customers', {
    customerType: 'INDIVIDUAL',
    platformCustomerId: `fair-${n}-${Date.now()}`,
    fullName: `Fair Customer ${n}`,
    birthDate: '1990-01-15',
    nationality: 'US',
    address: { line1: '1 Main St', city: 'Austin', state: 'TX', postalCode: '73301', country: 'US' },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

/** A platform with `n` undelivered events, each about its own resource (a new customer's KYC_APPROVED). */
async function platformWithBacklog(n: number): Promise<PlatformHandle> {
  const p = await srv.newPlatform();
  for (let i = 0; i < n; i += 10) await Promise.all(Array.from({ length: Math.min(10, n - i) }, () => createCustomer(p)));
  return p;
}

describe('fair shares of delivery', () => {
  it('a platform holds at most its share; one with nothing in flight always gets a slot, up to the ceiling', () => {
    const s = new Slots({ total: 8, perPlatform: 3, ceiling: 10 });
    expect(s.room('A')).toBe(3);
    for (let i = 0; i < 3; i++) s.take('A');
    expect(s.room('A')).toBe(0);
    for (let i = 0; i < 3; i++) s.take('B');
    expect(s.room('C')).toBe(2); // what is left of the total
    s.take('C');
    s.take('C');
    expect([s.size, s.room('C'), s.room('D')]).toEqual([8, 0, 1]); // total taken: D has none in flight
    s.take('D');
    s.take('E');
    expect([s.size, s.room('D'), s.room('F')]).toEqual([10, 0, 0]); // the ceiling
    s.release('A');
    expect([s.room('A'), s.room('F')]).toEqual([0, 1]); // A is over the total; F has none, and 9 < 10
    for (const p of ['A', 'A', 'B', 'B', 'B', 'C', 'C', 'D', 'E']) s.release(p);
    expect([s.size, s.room('A')]).toEqual([0, 3]);
    s.take('G', 3); // a claim holds its room while it runs
    expect([s.of('G'), s.room('G'), s.size]).toEqual([3, 0, 3]);
    s.release('G', 3);
    expect([s.size, s.of('G')]).toEqual([0, 0]);
    expect(DEFAULT_SLOTS.perPlatform * 2).toBeLessThan(DEFAULT_SLOTS.total);
  });

  it("a healthy platform's webhooks arrive within 1 s while two other platforms' receivers hang with 50 events queued each", {
    timeout: 120_000,
  }, async () => {
    const healthyReceiver: Receiver = await startReceiver();
    closers.push(() => healthyReceiver.close());
    const healthy = await srv.newPlatform();
    expect((await healthy.api.patch('/config', { webhookEndpoint: healthyReceiver.url })).status).toBe(200);
    await waitFor(() => healthyReceiver.received.some((x) => x.body?.type === 'TEST'));

    // Two platforms, 50 events each on 50 resources, then endpoints that never answer.
    const [a, b] = [await platformWithBacklog(50), await platformWithBacklog(50)];
    const [hangA, hangB] = [await startHanging(), await startHanging()];
    closers.push(
      () => hangA.close(),
      () => hangB.close(),
    );
    expect((await a.api.patch('/config', { webhookEndpoint: hangA.url })).status).toBe(200);
    expect((await b.api.patch('/config', { webhookEndpoint: hangB.url })).status).toBe(200);
    // Both hold as many attempts as they may (their answers 10 s away).
    await waitFor(() => hangA.open >= DEFAULT_SLOTS.perPlatform && hangB.open >= DEFAULT_SLOTS.perPlatform, 15_000);
    await new Promise((r) => setTimeout(r, 600)); // a few more claim rounds

    const took: number[] = [];
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const customerId = await createCustomer(healthy);
      await waitFor(() => healthyReceiver.received.some((x) => x.body?.data?.id === customerId), 15_000);
      took.push(Date.now() - started);
    }
    console.log(
      `[fairness.test ${laneStore()}] healthy deliveries took ${took.join(', ')} ms; hanging attempts held: ${hangA.maxOpen} and ${hangB.maxOpen}`,
    );
    expect(hangA.open + hangB.open).toBeGreaterThanOrEqual(2 * DEFAULT_SLOTS.perPlatform); // still hanging meanwhile
    expect(
      took.every((ms) => ms < 1_000),
      `healthy deliveries took ${took.join(', ')} ms`,
    ).toBe(true);
    // No platform held more than its share.
    expect(hangA.maxOpen).toBeLessThanOrEqual(DEFAULT_SLOTS.perPlatform);
    expect(hangB.maxOpen).toBeLessThanOrEqual(DEFAULT_SLOTS.perPlatform);

    // Once the hanging receivers go away their attempts end as failures, retried later.
    await hangA.close();
    await hangB.close();
    await waitFor(async () => {
      const r = await srv.app.ctx.db
        .selectFrom('outbox_events')
        .select('id')
        .where('platform_id', 'in', [a.id, b.id])
        .where('status', '=', 'DELIVERING')
        .execute();
      return r.length === 0;
    }, 15_000);
    const failed = await srv.app.ctx.db.selectFrom('webhook_attempts').select(['error']).where('platform_id', 'in', [a.id, b.id]).execute();
    expect(failed.length).toBeGreaterThanOrEqual(2 * DEFAULT_SLOTS.perPlatform);
    expect(failed.every((x) => x.error !== null)).toBe(true);
  });
});
