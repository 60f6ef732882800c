/**
 * A server with CORRIDOR_WEBHOOK_ALLOW_PRIVATE=true: PRODUCTION platforms may reach loopback targets,
 * and still never see the receiver's answer — attempts of PRODUCTION platforms are stored and shown
 * without the response body or a redirect's location; reply hooks still get the body in memory.
 * (A file of its own: on PostgreSQL each file has one schema, and every server on it serves every
 * platform in it.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDeliverer, type ReplyHook } from '../../src/webhook-delivery/deliverer.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';

let srv: TestServer;
const receivers: Receiver[] = [];
const deliverers: WebhookDeliverer[] = [];

beforeAll(async () => {
  srv = await startServer({ env: { CORRIDOR_WEBHOOK_ALLOW_PRIVATE: 'true' } });
});
afterAll(async () => {
  for (const d of deliverers) await d.stop();
  await srv.close();
  for (const r of receivers) await r.close();
});

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

async function attemptsOf(eventId: string) {
  return srv.app.ctx.db.selectFrom('webhook_attempts').selectAll().where('event_id', '=', eventId).orderBy('attempt').execute();
}

describe('CORRIDOR_WEBHOOK_ALLOW_PRIVATE=true', () => {
  it('a PRODUCTION platform may set and reach a loopback target', async () => {
    const p = await srv.newPlatform({ environment: 'PRODUCTION' });
    const r = await receiver();
    const url = `http://[::ffff:127.0.0.1]:${new URL(r.url).port}/hooks`;
    expect((await p.api.patch('/config', { webhookEndpoint: url })).status).toBe(200);
    await waitFor(() => r.received.some((x) => x.body?.type === 'TEST'));
  });
});

describe('response bodies of PRODUCTION platforms', () => {
  it('are neither stored nor shown, nor is a redirect target; a reply hook still reads the body', async () => {
    const r = await receiver();
    r.respond = () => ({ status: 200, body: 'internal-secret-from-the-target' });
    const p = await srv.newPlatform({ environment: 'PRODUCTION' });
    expect((await p.api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
    const test = await waitFor(async () => {
      const e = await srv.app.ctx.db
        .selectFrom('outbox_events')
        .selectAll()
        .where('platform_id', '=', p.id)
        .where('type', '=', 'TEST')
        .executeTakeFirst();
      return e?.status === 'DELIVERED' ? e : undefined;
    });
    expect(await attemptsOf(test.id)).toMatchObject([{ response_status: 200, response_body: null }]);
    const detail = await p.api.get(`/webhooks/deliveries/${test.id}`);
    expect(detail.body.attempts).toEqual([
      { attempt: 1, at: expect.any(String), url: r.url, responseStatus: 200, latencyMs: expect.any(Number) },
    ]);
    expect(detail.text).not.toContain('internal-secret');
    const replay = await p.api.post(`/webhooks/deliveries/${test.id}/replay`);
    expect(replay.status).toBe(200);
    expect(replay.body.attempts.at(-1)).toMatchObject({ attempt: 2, responseStatus: 200 });
    expect(replay.text).not.toContain('internal-secret');

    // A redirect: its location is part of the answer, so it is not logged either.
    r.respond = () => ({ status: 302, body: 'internal-secret-from-the-target', headers: { location: 'http://10.1.2.3/internal-secret' } });
    const redirected = await p.api.post(`/webhooks/deliveries/${test.id}/replay`);
    expect(redirected.body.attempts.at(-1)).toMatchObject({ attempt: 3, responseStatus: 302, error: 'redirect not followed' });
    expect(redirected.text).not.toContain('internal-secret');
    expect((await p.api.get('/webhooks/deliveries')).text).not.toContain('internal-secret');
    expect(JSON.stringify(await attemptsOf(test.id))).not.toContain('internal-secret');

    // An attempt stored with a body before this rule is not shown either.
    await srv.app.ctx.db
      .updateTable('webhook_attempts')
      .set({ response_body: 'internal-secret-old' })
      .where('event_id', '=', test.id)
      .execute();
    expect((await p.api.get(`/webhooks/deliveries/${test.id}`)).text).not.toContain('internal-secret');

    // Reply hooks (INCOMING_PAYMENT.PENDING's approval reads the answer) get the body in memory.
    r.respond = () => ({ status: 200, body: '{"approved":"internal-secret-in-memory"}' });
    const ctx = srv.app.ctx;
    const d = new WebhookDeliverer({
      db: ctx.db,
      kind: ctx.store.kind,
      clock: ctx.deps.clock,
      ids: ctx.deps.ids,
      secrets: ctx.secrets,
      allowPrivate: true,
    });
    deliverers.push(d);
    const seen: (string | null)[] = [];
    const hook: ReplyHook = async (_trx, reply) => {
      seen.push(reply.body);
      return undefined;
    };
    d.onReply('TEST', hook);
    const platform = await ctx.db.selectFrom('platforms').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    const eventId = ctx.deps.ids.next('Webhook');
    expect(await d.deliver(await ctx.db.transaction().execute((trx) => d.claimTest(trx, platform, eventId)))).toMatchObject({
      status: 200,
      body: null,
    });
    expect(seen).toEqual(['{"approved":"internal-secret-in-memory"}']);
    expect(await attemptsOf(eventId)).toMatchObject([{ response_status: 200, response_body: null }]);
  });
});
