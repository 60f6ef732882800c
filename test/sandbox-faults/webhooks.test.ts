/**
 * Dropped webhook deliveries (POST /sandbox/faults eventType rules) with a real receiver: a dropped
 * attempt sends nothing, is logged as a failed attempt and retried on the usual schedule; once the
 * rule is removed the retry delivers the event, signature intact. Other event types and other
 * platforms are unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { advance, fund, platformUsdAccount, type Wire } from '../helpers/payments.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
const receivers: Receiver[] = [];

beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.close();
  for (const r of receivers) await r.close();
});

/** A platform whose webhooks go to a fresh receiver, the TEST event from setting it delivered. */
async function platformWithReceiver(): Promise<{ p: PlatformHandle; r: Receiver }> {
  const r = await startReceiver();
  receivers.push(r);
  const p = await srv.newPlatform();
  expect((await p.api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
  await waitFor(
    async () => (await p.api.get('/webhooks/deliveries', { query: { type: 'TEST', status: 'DELIVERED' } })).body.totalCount === 1,
  );
  return { p, r };
}

async function delivery(p: PlatformHandle, id: string): Promise<Wire> {
  const res = await p.api.get(`/webhooks/deliveries/${id}`);
  expect(res.status).toBe(200);
  return res.body;
}

/** The newest BALANCE_UPDATED delivery of the platform. */
async function latestBalanceEvent(p: PlatformHandle): Promise<Wire> {
  const res = await p.api.get('/webhooks/deliveries', { query: { type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED', limit: 1 } });
  expect(res.status).toBe(200);
  return res.body.data[0];
}

describe('dropped webhook deliveries', () => {
  it('are logged as failed attempts, retried on schedule, and delivered once the rule is removed', async () => {
    const { p, r } = await platformWithReceiver();
    const { p: other, r: otherReceiver } = await platformWithReceiver();
    const rules = [{ eventType: 'INTERNAL_ACCOUNT.BALANCE_UPDATED', dropRate: 1 }];
    expect((await p.api.post('/sandbox/faults', { rules })).status).toBe(200);

    await fund(p, await platformUsdAccount(p), 1_000);
    await fund(other, await platformUsdAccount(other), 1_000);
    const event = await waitFor(() => latestBalanceEvent(p));
    const dropped = await waitFor(async () => {
      const d = await delivery(p, event.id);
      return d.attempts.length >= 1 && d.status === 'PENDING' ? d : undefined;
    });
    expect(dropped.attempts[0]).toMatchObject({ attempt: 1, error: 'dropped by fault injection', latencyMs: 0 });
    expect(dropped.attempts[0].responseStatus).toBeUndefined();
    expect(dropped.lastError).toBe('dropped by fault injection');
    // Retried on the usual schedule: 30 s after the first failed attempt (platform clock).
    const wait = Date.parse(dropped.nextAttemptAt) - Date.parse(dropped.attempts[0].at);
    expect(wait).toBeGreaterThanOrEqual(30_000);
    expect(wait).toBeLessThan(31_000);
    // Nothing was sent.
    expect(r.received.some((x) => x.body?.id === event.id)).toBe(false);

    // The other platform's event went out meanwhile.
    const otherEvent = await latestBalanceEvent(other);
    await waitFor(async () => (await delivery(other, otherEvent.id)).status === 'DELIVERED');
    expect(otherReceiver.received.some((x) => x.body?.id === otherEvent.id)).toBe(true);

    // The retry, while the rule holds, is dropped again.
    await advance(p, 31);
    const twice = await waitFor(async () => {
      const d = await delivery(p, event.id);
      return d.attempts.length >= 2 && d.status === 'PENDING' ? d : undefined;
    });
    expect(twice.attempts.map((a: Wire) => a.error)).toEqual(['dropped by fault injection', 'dropped by fault injection']);
    expect(r.received.some((x) => x.body?.id === event.id)).toBe(false);

    // Rule removed: the next scheduled retry (60 s later) delivers it, signed.
    expect((await p.api.delete('/sandbox/faults')).status).toBe(204);
    await advance(p, 61);
    const done = await waitFor(async () => {
      const d = await delivery(p, event.id);
      return d.status === 'DELIVERED' ? d : undefined;
    });
    expect(done.attempts).toHaveLength(3);
    expect(done.attempts[2]).toMatchObject({ attempt: 3, responseStatus: 200 });
    const got = r.received.filter((x) => x.body?.id === event.id);
    expect(got).toHaveLength(1);
    const key = (await p.api.get('/webhooks/signing-key')).body.publicKey as string;
    expect(verifyWebhook(got[0]!.raw, String(got[0]!.headers['x-service-signature']), key)).toBe(true);
  });

  it('drop only the named event type; a TEST event goes out', async () => {
    const { p, r } = await platformWithReceiver();
    expect((await p.api.post('/sandbox/faults', { rules: [{ eventType: 'OUTGOING_PAYMENT.COMPLETED', dropRate: 1 }] })).status).toBe(200);
    const sent = await p.api.post('/sandbox/webhooks/test');
    expect(sent.status).toBe(200);
    expect(r.received.filter((x) => x.body?.type === 'TEST')).toHaveLength(2);

    // With a catch-all drop the TEST event (never retried) fails, and says why.
    expect((await p.api.post('/sandbox/faults', { rules: [{ eventType: '*', dropRate: 1 }] })).status).toBe(200);
    const refused = await p.api.post('/sandbox/webhooks/test');
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('WEBHOOK_DELIVERY_ERROR');
    expect(refused.body.message).toContain('dropped by fault injection');
    expect(r.received.filter((x) => x.body?.type === 'TEST')).toHaveLength(2);
  });
});
