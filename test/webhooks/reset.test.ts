/**
 * POST /sandbox/reset against webhook deliveries: an attempt in flight when the reset deletes its
 * event leaves no `webhook_attempts` row behind (its outcome is recorded only if the event still
 * exists, under the platform's write lock), and delivery goes on normally after the reset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { fund, platformUsdAccount } from '../helpers/payments.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';

let srv: TestServer;
let r: Receiver;

beforeAll(async () => {
  srv = await startServer();
  r = await startReceiver();
});
afterAll(async () => {
  await srv.close();
  await r.close();
});

describe('reset while an attempt is in flight', () => {
  it('the attempt of a deleted event is not logged; later events are delivered as usual', async () => {
    const p = await srv.newPlatform();
    expect((await p.api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
    await waitFor(() => r.received.some((x) => x.body?.type === 'TEST'));
    const SLOW_MS = 1_500;
    let answered = 0;
    r.respond = (x) => {
      if (x.body?.type !== 'INTERNAL_ACCOUNT.BALANCE_UPDATED') return { status: 200 };
      setTimeout(() => answered++, SLOW_MS);
      return { status: 200, delayMs: SLOW_MS };
    };
    await fund(p, await platformUsdAccount(p), 100);
    const inFlight = await waitFor(() => r.received.find((x) => x.body?.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED'));
    const eventId = inFlight.body.id as string;

    expect((await p.api.post('/sandbox/reset')).status).toBe(204);
    expect(answered).toBe(0); // the reset went first; the attempt is still waiting for its answer
    await waitFor(() => answered === 1);
    // Its outcome would have been recorded by now (the chain records, then the drain moves on).
    await new Promise((res) => setTimeout(res, 500));
    const db = srv.app.ctx.db;
    expect(await db.selectFrom('outbox_events').select('id').where('id', '=', eventId).execute()).toEqual([]);
    expect(await db.selectFrom('webhook_attempts').select('id').where('event_id', '=', eventId).execute()).toEqual([]);
    expect(await db.selectFrom('webhook_attempts').select('id').where('platform_id', '=', p.id).execute()).toEqual([]);

    r.respond = () => ({ status: 200 });
    await fund(p, await platformUsdAccount(p), 200);
    const after = await waitFor(async () => {
      const e = await db
        .selectFrom('outbox_events')
        .selectAll()
        .where('platform_id', '=', p.id)
        .where('type', '=', 'INTERNAL_ACCOUNT.BALANCE_UPDATED')
        .executeTakeFirst();
      return e?.status === 'DELIVERED' ? e : undefined;
    });
    expect(
      await db.selectFrom('webhook_attempts').select(['event_id', 'response_status']).where('platform_id', '=', p.id).execute(),
    ).toEqual([{ event_id: after.id, response_status: 200 }]);
  });
});
