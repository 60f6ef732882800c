/** Durable jobs for tests: one scheduled in a transaction of its own, as a unit would write it. */
import { scheduleJob } from '../../src/jobs/jobs.ts';
import { iso } from '../../src/lib/time.ts';
import type { TestServer } from './server.ts';

/** Schedules a job of `kind` for the platform, `delayMs` after now, and answers its id. */
export async function scheduleTestJob(srv: TestServer, platformId: string, kind: string, delayMs: number): Promise<string> {
  const { db, deps } = srv.app.ctx;
  const id = deps.ids.next('Job');
  await db
    .transaction()
    .execute((trx) => scheduleJob(trx, deps.clock, { id, platformId, kind, payload: {}, delayMs, at: iso(deps.clock.nowMs()) }));
  return id;
}
