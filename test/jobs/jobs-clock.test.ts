import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleJob, type JobHandler } from '../../src/jobs/jobs.ts';
import { iso } from '../../src/lib/time.ts';
import { expectError } from '../helpers/http.ts';
import { scheduleTestJob } from '../helpers/jobs.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
const ran: { id: string; platformNow: number }[] = [];
/** What the TEST_FAILS job does (set by the test that schedules it). */
let failing: JobHandler = async () => {};

beforeAll(async () => {
  srv = await startServer({
    jobHandlers: new Map<string, JobHandler>([
      // A probe job kind: records when (on the platform clock) it ran.
      ['TEST_PROBE', async (u, job) => void ran.push({ id: job.id, platformNow: u.nowMs })],
      ['TEST_FAILS', (u, job, batch) => failing(u, job, batch)],
    ]),
  });
});
afterAll(async () => srv.close());

function schedule(platformId: string, delayMs: number): Promise<string> {
  return scheduleTestJob(srv, platformId, 'TEST_PROBE', delayMs);
}

describe('sandbox clock and durable jobs', () => {
  it('reports the platform clock and moves it forward', async () => {
    const p = await srv.newPlatform();
    const before = await p.api.get('/sandbox/clock');
    expect(before.status).toBe(200);
    expect(before.body.offsetMs).toBe(0);
    const adv = await p.api.post('/sandbox/clock/advance', { seconds: 3600 });
    expect(adv.status).toBe(200);
    expect(adv.body.offsetMs).toBe(3_600_000);
    expect(Date.parse(adv.body.now) - Date.parse(before.body.now)).toBeGreaterThanOrEqual(3_600_000);
    // Timestamps written afterwards follow the platform clock.
    const token = await p.api.post('/tokens', { name: 'later', permissions: ['VIEW'] });
    expect(Date.parse(token.body.createdAt)).toBeGreaterThanOrEqual(Date.parse(adv.body.now));
    // Another platform's clock is untouched.
    const other = await srv.newPlatform();
    expect((await other.api.get('/sandbox/clock')).body.offsetMs).toBe(0);
  });

  it('runs a delayed job exactly when the platform clock reaches it, in due order', async () => {
    const p = await srv.newPlatform();
    const late = await schedule(p.id, 360_000);
    const early = await schedule(p.id, 30_000);
    await p.api.post('/sandbox/clock/advance', { seconds: 29 });
    expect(ran.map((r) => r.id)).not.toContain(early);
    await p.api.post('/sandbox/clock/advance', { seconds: 1 });
    expect(ran.map((r) => r.id)).toContain(early);
    expect(ran.map((r) => r.id)).not.toContain(late);
    await p.api.post('/sandbox/clock/advance', { seconds: 330 });
    const ids = ran.map((r) => r.id);
    expect(ids.indexOf(early)).toBeLessThan(ids.indexOf(late));
    const rows = await srv.app.ctx.db.selectFrom('jobs').select(['id', 'status', 'attempts']).where('platform_id', '=', p.id).execute();
    expect(rows.every((r) => r.status === 'DONE' && r.attempts === 1)).toBe(true);
  });

  it("does not run another platform's jobs when one platform's clock moves", async () => {
    const a = await srv.newPlatform();
    const b = await srv.newPlatform();
    const jobB = await schedule(b.id, 60_000);
    await a.api.post('/sandbox/clock/advance', { seconds: 120 });
    expect(ran.map((r) => r.id)).not.toContain(jobB);
    const row = await srv.app.ctx.db.selectFrom('jobs').select('status').where('id', '=', jobB).executeTakeFirstOrThrow();
    expect(row.status).toBe('PENDING');
  });

  it('retries a failing job later and leaves no partial effect', async () => {
    const p = await srv.newPlatform();
    const { db, deps } = srv.app.ctx;
    failing = async ({ trx }) => {
      await trx
        .insertInto('idempotency_keys')
        .values({
          platform_id: p.id,
          key: 'partial',
          request_hash: 'x',
          response_status: 200,
          response_body: '{}',
          created_at: iso(deps.clock.nowMs()),
        })
        .execute();
      throw new Error('boom');
    };
    const id = deps.ids.next('Job');
    await db
      .transaction()
      .execute((trx) =>
        scheduleJob(trx, deps.clock, { id, platformId: p.id, kind: 'TEST_FAILS', payload: {}, delayMs: 0, at: iso(deps.clock.nowMs()) }),
      );
    await srv.app.ctx.jobs.drain(p.id);
    const row = await db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.status).toBe('PENDING');
    expect(row.attempts).toBe(1);
    expect(row.last_error).toBe('boom');
    expect(Number(row.due_at_ms)).toBeGreaterThan(deps.clock.nowMs());
    const partial = await db.selectFrom('idempotency_keys').select('key').where('platform_id', '=', p.id).execute();
    expect(partial).toHaveLength(0);
  });

  it('validates the advance body and refuses production platforms', async () => {
    const p = await srv.newPlatform();
    expectError(await p.api.post('/sandbox/clock/advance', { seconds: 0 }), 400, 'INVALID_INPUT');
    expectError(await p.api.post('/sandbox/clock/advance', { seconds: '10' }), 400, 'INVALID_INPUT');
    expectError(await p.api.post('/sandbox/clock/advance', { seconds: 10, extra: true }), 400, 'INVALID_INPUT');
    expectError(await srv.anon.post('/sandbox/clock/advance', { seconds: 10 }), 401, 'UNAUTHORIZED');
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    expectError(await prod.api.get('/sandbox/clock'), 403, 'FORBIDDEN');
    expectError(await prod.api.post('/sandbox/clock/advance', { seconds: 10 }), 403, 'FORBIDDEN');
  });
});
