/**
 * Durable delayed work. A job is a row with a due time, written in the same transaction as the
 * change that needs it, so a restart loses none. The runner executes each due job, in due-time
 * order, inside one transaction together with marking it done: a job's effect commits exactly
 * once even if the process dies mid-way (the transaction rolls back and the job runs again).
 *
 * Due times are kept on the system clock (`deps.clock`, without a platform's sandbox offset).
 * Advancing a platform's sandbox clock by X moves its pending jobs X earlier, which is the same as
 * moving the platform's time X later.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Clock } from '../deps.ts';
import { Poller } from '../lib/poller.ts';
import type { StoreKind } from '../store/db.ts';
import { isTransientConflict } from '../store/retry.ts';
import type { Database, JobsTable, PlatformRow } from '../store/schema.ts';

export type JobRow = Selectable<JobsTable>;

export interface JobInput {
  id: string;
  platformId: string;
  kind: string;
  payload: unknown;
  /** Delay from the platform's now. */
  delayMs: number;
  /** Creation timestamp (platform clock), for the record. */
  at: string;
}

export async function scheduleJob(trx: Kysely<Database>, clock: Clock, j: JobInput): Promise<void> {
  await trx
    .insertInto('jobs')
    .values({
      id: j.id,
      platform_id: j.platformId,
      kind: j.kind,
      payload: JSON.stringify(j.payload),
      due_at_ms: clock.nowMs() + j.delayMs,
      status: 'PENDING',
      attempts: 0,
      last_error: null,
      created_at: j.at,
      updated_at: j.at,
    })
    .execute();
}

/**
 * Moves a platform's pending jobs (and webhook retries) earlier by `ms`: its clock moved later.
 * Rows a runner holds right now are due already (runners only take due work), so on PostgreSQL they
 * are skipped rather than waited for: waiting on them could deadlock with that runner.
 */
export async function shiftPlatformSchedule(trx: Kysely<Database>, kind: StoreKind, platformId: string, ms: number): Promise<void> {
  let jobs = trx.selectFrom('jobs').select('id').where('platform_id', '=', platformId).where('status', '=', 'PENDING');
  if (kind === 'postgres') jobs = jobs.forUpdate().skipLocked();
  await trx.updateTable('jobs').set({ due_at_ms: sql`due_at_ms - ${ms}` }).where('id', 'in', jobs).execute();
  let events = trx.selectFrom('outbox_events').select('id').where('platform_id', '=', platformId).where('status', '=', 'PENDING');
  if (kind === 'postgres') events = events.forUpdate().skipLocked();
  await trx.updateTable('outbox_events').set({ next_attempt_ms: sql`next_attempt_ms - ${ms}` }).where('id', 'in', events).execute();
}

/** A job kind's effect; runs inside the transaction that marks the job done. */
export type JobHandler = (trx: Kysely<Database>, job: JobRow, platform: PlatformRow) => Promise<void>;

export interface JobRunnerOptions {
  db: Kysely<Database>;
  kind: StoreKind;
  clock: Clock;
  handlers: Map<string, JobHandler>;
  /** Poll interval when idle. */
  pollIntervalMs?: number;
  onError?: (err: unknown, job: JobRow) => void;
  /** A background pass failed outside any job (e.g. the store is unreachable). */
  onPollError?: (err: unknown) => void;
}

/** A failing job is retried this many times (with backoff) before it is marked FAILED. */
const MAX_ATTEMPTS = 5;
/** First retry delay; doubles per attempt. */
const RETRY_BASE_MS = 1000;
/** Due jobs run per transaction: one commit for many settlements under load. */
const BATCH_SIZE = 50;
/** How long draining one platform waits for its due jobs that another process holds. */
const DRAIN_WAIT_MS = 10_000;



/** Polls for due jobs and runs them one transaction each. */
export class JobRunner {
  private readonly poller: Poller;

  constructor(private readonly o: JobRunnerOptions) {
    this.poller = new Poller(() => this.drain(), o.pollIntervalMs ?? 100, (err) => o.onPollError?.(err));
  }

  start(): void {
    this.poller.start();
  }

  async stop(): Promise<void> {
    await this.poller.stop();
  }

  /**
   * Runs every job due now (optionally only one platform's), in due order; returns how many ran.
   * For one platform (a sandbox clock advance) it also waits, briefly, for due jobs another
   * process is running, so that everything due has happened when it returns.
   */
  async drain(platformId?: string): Promise<number> {
    let n = 0;
    // A wall-clock bound on waiting for other processes' locks (not business time).
    const deadline = performance.now() + DRAIN_WAIT_MS;
    for (;;) {
      const ran = await this.runBatch(platformId, BATCH_SIZE);
      n += ran;
      if (ran > 0) continue;
      if (!platformId || !(await this.hasDueJobs(platformId)) || performance.now() > deadline) return n;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  private async hasDueJobs(platformId: string): Promise<boolean> {
    const row = await this.o.db
      .selectFrom('jobs')
      .select('id')
      .where('platform_id', '=', platformId)
      .where('status', '=', 'PENDING')
      .where('due_at_ms', '<=', this.o.clock.nowMs())
      .where('kind', 'in', [...this.o.handlers.keys()])
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Runs up to `limit` due jobs in one transaction (one commit for many jobs). If any of them
   * fails, the whole batch rolls back and its jobs are run one at a time, so one failing job
   * neither blocks nor undoes the others.
   */
  private async runBatch(platformId: string | undefined, limit: number, onlyId?: string): Promise<number> {
    const now = this.o.clock.nowMs();
    // Only kinds this process can run: another process (a newer version, or a test's probe) may
    // know kinds this one does not, and must get them.
    const kinds = [...this.o.handlers.keys()];
    if (kinds.length === 0) return 0;
    let claimed: JobRow[] = [];
    try {
      return await this.o.db.transaction().execute(async (trx) => {
        let q = trx
          .selectFrom('jobs')
          .selectAll()
          .where('status', '=', 'PENDING')
          .where('due_at_ms', '<=', now)
          .where('kind', 'in', kinds)
          .orderBy('due_at_ms')
          .orderBy('id')
          .limit(limit);
        if (platformId) q = q.where('platform_id', '=', platformId);
        if (onlyId) q = q.where('id', '=', onlyId);
        // Several processes on one PostgreSQL: each takes jobs no one else holds (never waiting on
        // a row lock, so two runners cannot deadlock on each other's jobs).
        if (this.o.kind === 'postgres') q = q.forUpdate().skipLocked();
        claimed = await q.execute();
        const platforms = new Map<string, PlatformRow | undefined>();
        for (const job of claimed) {
          if (!platforms.has(job.platform_id)) {
            platforms.set(job.platform_id, await trx.selectFrom('platforms').selectAll().where('id', '=', job.platform_id).executeTakeFirst());
          }
          const platform = platforms.get(job.platform_id);
          if (platform) await this.o.handlers.get(job.kind)!(trx, job, platform);
          await finishJob(trx, job, platform ? 'DONE' : 'FAILED', platform ? null : 'platform is gone', now);
        }
        return claimed.length;
      });
    } catch (err) {
      if (claimed.length === 0) throw err;
      if (claimed.length > 1) {
        for (const job of claimed) await this.runBatch(platformId, 1, job.id);
        return claimed.length;
      }
      // The job's transaction rolled back (its effect did not happen): retry later, or give up.
      const job = claimed[0]!;
      // A deadlock or serialisation failure on PostgreSQL is another writer's timing, not the
      // job's fault: it runs again at once.
      if (isTransientConflict(err)) return 1;
      this.o.onError?.(err, job);
      const attempts = job.attempts + 1;
      await this.o.db
        .updateTable('jobs')
        .set({
          attempts,
          status: attempts >= MAX_ATTEMPTS ? 'FAILED' : 'PENDING',
          due_at_ms: now + RETRY_BASE_MS * 2 ** attempts,
          last_error: err instanceof Error ? err.message : String(err),
          updated_at: new Date(now).toISOString(),
        })
        .where('id', '=', job.id)
        .execute();
      return 1;
    }
  }
}

async function finishJob(trx: Kysely<Database>, job: JobRow, status: 'DONE' | 'FAILED', error: string | null, nowMs: number): Promise<void> {
  await trx
    .updateTable('jobs')
    .set({ status, attempts: job.attempts + 1, last_error: error, updated_at: new Date(nowMs).toISOString() })
    .where('id', '=', job.id)
    .execute();
}
