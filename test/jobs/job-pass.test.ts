/**
 * When a background pass of the job runner looks again (src/jobs/jobs.ts, `drain`): after a batch
 * that was not full it stops — an empty look is a transaction — unless the batch's jobs scheduled
 * work due at once, a chain that must not wait for the next poll. The runner here is the test's
 * own and never started, so no poller takes its jobs; the app's runner does not know their kinds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobHandler, JobRunner } from '../../src/jobs/jobs.ts';
import { openUnit } from '../../src/unit.ts';
import { scheduleTestJob } from '../helpers/jobs.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let runner: JobRunner;
/** The write of PASS_ARRIVES's job, awaited by the test once the pass is over. */
let arrival: Promise<string> | undefined;

beforeAll(async () => {
  srv = await startServer();
  const ctx = srv.app.ctx;
  const handlers = new Map<string, JobHandler>([
    // A chain: the first step schedules the second in its own unit, due at once.
    [
      'PASS_CHAIN_1',
      async (u, job) => {
        await u.schedule('PASS_CHAIN_2', { after: job.id }, 0);
      },
    ],
    ['PASS_CHAIN_2', async () => {}],
    // Work that arrives from elsewhere while a batch runs: written outside the batch's unit. On
    // PostgreSQL it commits before the batch does; SQLite's one writer commits it after the batch.
    [
      'PASS_ARRIVES',
      async (_u, job) => {
        arrival = schedule(job.platform_id, 'PASS_CHAIN_2');
        if (ctx.store.kind === 'postgres') await arrival;
      },
    ],
  ]);
  runner = new JobRunner({
    db: ctx.db,
    kind: ctx.store.kind,
    clock: ctx.deps.clock,
    handlers,
    openUnit: (trx, platform) => openUnit(trx, ctx, platform),
  });
});
afterAll(async () => srv.close());

function schedule(platformId: string, kind: string): Promise<string> {
  return scheduleTestJob(srv, platformId, kind, 0);
}

async function statusOf(platformId: string): Promise<Record<string, string>> {
  const rows = await srv.app.ctx.db.selectFrom('jobs').select(['kind', 'status']).where('platform_id', '=', platformId).execute();
  return Object.fromEntries(rows.map((r) => [r.kind, r.status]));
}

describe('a background pass of the job runner', () => {
  it('follows a chain of jobs due at once within the pass', async () => {
    const p = await srv.newPlatform();
    await schedule(p.id, 'PASS_CHAIN_1');
    expect(await runner.drain()).toBe(2);
    expect(await statusOf(p.id)).toEqual({ PASS_CHAIN_1: 'DONE', PASS_CHAIN_2: 'DONE' });
  });

  it('stops after a batch that was not full when its jobs scheduled nothing due at once', async () => {
    const p = await srv.newPlatform();
    await schedule(p.id, 'PASS_ARRIVES');
    // The job that arrived while the batch ran is left for the next poll.
    expect(await runner.drain()).toBe(1);
    await arrival;
    expect(await statusOf(p.id)).toEqual({ PASS_ARRIVES: 'DONE', PASS_CHAIN_2: 'PENDING' });
    expect(await runner.drain()).toBe(1);
    expect(await statusOf(p.id)).toEqual({ PASS_ARRIVES: 'DONE', PASS_CHAIN_2: 'DONE' });
  });

  it("drains one platform's due work entirely, arrivals included (a sandbox clock advance)", async () => {
    const p = await srv.newPlatform();
    await schedule(p.id, 'PASS_ARRIVES');
    expect(await runner.drain(p.id)).toBe(2);
    await arrival;
    expect(await statusOf(p.id)).toEqual({ PASS_ARRIVES: 'DONE', PASS_CHAIN_2: 'DONE' });
  });
});
