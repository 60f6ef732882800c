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
import { concurrentTransaction } from '../store/pg-group-commit.ts';
import { prepared, type Prepared } from '../store/prepared.ts';
import { tryLockPlatformShared } from '../store/platform-lock.ts';
import { isPostgres } from '../store/row-lock.ts';
import { isTransientConflict } from '../store/retry.ts';
import { PARKED_MS } from '../outbox/outbox.ts';
import type { Database, JobsTable, PlatformRow } from '../store/schema.ts';
import type { Unit } from '../unit.ts';

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
  await insertJob.defer(trx, {
    id: j.id,
    platformId: j.platformId,
    kind: j.kind,
    payload: JSON.stringify(j.payload),
    dueAtMs: clock.nowMs() + j.delayMs,
    at: j.at,
  });
}

// Payments schedule one job each: the INSERT is compiled once (see store/prepared.ts).
const insertJob = prepared((db, a: { id: string; platformId: string; kind: string; payload: string; dueAtMs: number; at: string }) =>
  db.insertInto('jobs').values({
    id: a.id,
    platform_id: a.platformId,
    kind: a.kind,
    payload: a.payload,
    due_at_ms: a.dueAtMs,
    status: 'PENDING',
    attempts: 0,
    last_error: null,
    created_at: a.at,
    updated_at: a.at,
  }),
);

/**
 * Moves a platform's pending jobs (and webhook retries) earlier by `ms`: its clock moved later.
 * Rows a runner holds right now are due already (runners only take due work), so on PostgreSQL they
 * are skipped rather than waited for: waiting on them could deadlock with that runner.
 */
export async function shiftPlatformSchedule(trx: Kysely<Database>, platformId: string, ms: number): Promise<void> {
  const skipLocked = isPostgres(trx);
  let jobs = trx.selectFrom('jobs').select('id').where('platform_id', '=', platformId).where('status', '=', 'PENDING');
  if (skipLocked) jobs = jobs.forUpdate().skipLocked();
  await trx
    .updateTable('jobs')
    .set({ due_at_ms: sql`due_at_ms - ${ms}` })
    .where('id', 'in', jobs)
    .execute();
  // Parked events (waiting behind an older one of their resource, see webhook-delivery/deliverer.ts) have
  // no due time to move.
  let events = trx
    .selectFrom('outbox_events')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('status', '=', 'PENDING')
    .where('next_attempt_ms', '<', PARKED_MS);
  if (skipLocked) events = events.forUpdate().skipLocked();
  await trx
    .updateTable('outbox_events')
    .set({ next_attempt_ms: sql`next_attempt_ms - ${ms}` })
    .where('id', 'in', events)
    .execute();
}

/**
 * A job kind's effect: a write of the job's platform, in a unit of work (src/unit.ts) over the
 * transaction that marks the job done, together with the other jobs of its batch.
 */
export type JobHandler = (u: Unit, job: JobRow, batch: JobBatch) => Promise<void>;

/** Work a batch's jobs share and finish together: its `finish` runs after the last job, before the commit. */
export interface BatchPart {
  finish(trx: Kysely<Database>): Promise<void>;
}

/** The jobs run in one transaction. Handlers keep shared work here (see `part`). */
export class JobBatch {
  private readonly parts = new Map<string, BatchPart>();

  /** The batch's part under `key`, made by `make` when the first job asks for it. */
  part<T extends BatchPart>(key: string, make: () => T): T {
    let p = this.parts.get(key);
    if (!p) {
      p = make();
      this.parts.set(key, p);
    }
    return p as T;
  }

  async finish(trx: Kysely<Database>): Promise<void> {
    for (const p of this.parts.values()) await p.finish(trx);
  }
}

export interface JobRunnerOptions {
  db: Kysely<Database>;
  kind: StoreKind;
  clock: Clock;
  handlers: ReadonlyMap<string, JobHandler>;
  /** A unit of work of `platform` over the batch's transaction (the runner flushes it before commit). */
  openUnit: (trx: Kysely<Database>, platform: PlatformRow) => Unit;
  /**
   * Job kinds whose jobs of one batch may run side by side (on PostgreSQL, their statements share
   * round trips): kinds whose handlers touch only their own job's rows, or move other rows only by
   * conditional statements and the batch's balance moves (a payment's settlement).
   */
  concurrentKinds?: ReadonlySet<string>;
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
/**
 * How often an idle runner looks for due work. Short, so that under load settlements run in many
 * small batches spread over time rather than bursts that hold up the requests around them; an
 * empty look is one indexed SELECT.
 */
const POLL_INTERVAL_MS = 25;
/**
 * An idle runner looks less and less often, down to once per this (an empty look on PostgreSQL is a
 * transaction: on an idle process the 25 ms looks of two loops were 8 % of a core). Due work found
 * brings it back to POLL_INTERVAL_MS; a sandbox clock advance drains at once, whatever the poll.
 */
const IDLE_POLL_MAX_MS = 200;
/**
 * Background loops per process on PostgreSQL: each claims its own batch (SKIP LOCKED), so while one
 * waits on the database another runs; a batch that deadlocks with another is run again job by job.
 * SQLite has one writer, so one loop.
 */
const POSTGRES_LOOPS = 2;
/** How long draining one platform waits for its due jobs that another process holds. */
const DRAIN_WAIT_MS = 10_000;

/** Polls for due jobs and runs them one transaction each. */
export class JobRunner {
  private readonly pollers: Poller[];

  /** Whether jobs of a batch can run side by side: PostgreSQL (one SQLite connection runs one statement at a time anyway). */
  private readonly concurrent: boolean;

  constructor(private readonly o: JobRunnerOptions) {
    this.concurrent = o.kind === 'postgres';
    const loops = o.kind === 'postgres' ? POSTGRES_LOOPS : 1;
    this.pollers = Array.from(
      { length: loops },
      () =>
        new Poller(
          () => this.drain(),
          o.pollIntervalMs ?? POLL_INTERVAL_MS,
          (err) => o.onPollError?.(err),
          Math.max(o.pollIntervalMs ?? POLL_INTERVAL_MS, IDLE_POLL_MAX_MS),
        ),
    );
  }

  start(): void {
    for (const p of this.pollers) p.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.pollers.map((p) => p.stop()));
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
      const { ran, chained } = await this.runBatch(platformId, BATCH_SIZE);
      n += ran;
      // A background pass stops after a batch that was not full, unless its jobs scheduled work due
      // at once (a chain: provisioning, then activation): nothing else was due when it was
      // claimed, and looking again at once would cost an empty transaction (two round trips on
      // PostgreSQL) on every poll; what arrives meanwhile runs at the next poll, POLL_INTERVAL_MS away.
      if (ran >= BATCH_SIZE || chained || (ran > 0 && platformId)) continue;
      if (ran > 0) return n;
      if (!platformId || !(await this.hasDueJobs(platformId)) || performance.now() > deadline) return n;
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  /**
   * The batch's transaction as its jobs use it: on PostgreSQL one whose statements are not queued
   * one behind the other, so jobs running side by side share round trips (store/pg-group-commit.ts).
   */
  private withBatchTransaction<T>(outer: Kysely<Database>, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    if (!this.concurrent) return fn(outer);
    return outer.getExecutor().provideConnection((connection) => fn(concurrentTransaction(outer, connection)));
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
   * Runs up to `limit` due jobs in one transaction (one commit for many jobs). If any of them (or
   * the work they finish together) fails, the whole batch rolls back and its jobs are run one at a
   * time, so one failing job neither blocks nor undoes the others.
   */
  private async runBatch(platformId: string | undefined, limit: number, onlyId?: string): Promise<BatchResult> {
    const now = this.o.clock.nowMs();
    // Only kinds this process can run: another process (a newer version, or a test's probe) may
    // know kinds this one does not, and must get them.
    const kinds = [...this.o.handlers.keys()];
    if (kinds.length === 0) return { ran: 0, chained: false };
    let claimed: JobRow[] = [];
    try {
      return await this.o.db.transaction().execute((outer) =>
        this.withBatchTransaction(outer, async (trx) => {
          const args: Record<string, unknown> = { now, limit, platformId, onlyId };
          kinds.forEach((k, i) => {
            args[`kind${i}`] = k;
          });
          claimed = await claimStatement(this.o.kind, kinds.length, platformId !== undefined, onlyId !== undefined).all(trx, args);
          // Per platform: its unit of work, 'gone', or 'busy' while a reset holds (or awaits) its
          // write lock. The claimed job rows are locked already, so the platform lock is only tried,
          // never waited for (a reset waiting for these rows would deadlock with us); a busy
          // platform's jobs stay PENDING and run in a later pass, after the reset (which deletes them).
          const units = new Map<string, Unit | 'gone' | 'busy'>();
          const done: string[] = [];
          const batch = new JobBatch();
          let ran = 0;
          // Consecutive jobs of kinds that may run side by side (`concurrentKinds`) run together;
          // any other job runs after them, alone, so jobs keep their due order otherwise.
          let together: Promise<void>[] = [];
          const awaitTogether = async () => {
            const outcomes = await Promise.allSettled(together);
            together = [];
            const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
            if (failed) throw failed.reason;
          };
          for (const job of claimed) {
            let unit = units.get(job.platform_id);
            if (unit === undefined) {
              await awaitTogether();
              // Both at once (one round trip on PostgreSQL): reading the row takes no lock.
              const [free, row] = await Promise.all([
                tryLockPlatformShared(trx, job.platform_id),
                selectPlatform.first(trx, { id: job.platform_id }),
              ]);
              const platform = free ? row : undefined;
              unit = !free ? 'busy' : platform ? this.o.openUnit(trx, platform) : 'gone';
              units.set(job.platform_id, unit);
            }
            if (unit === 'busy') continue;
            ran += 1;
            if (unit === 'gone') {
              await awaitTogether();
              await markFailed(trx, job, 'platform is gone', now);
              continue;
            }
            const handler = this.o.handlers.get(job.kind)!;
            if (this.concurrent && this.o.concurrentKinds?.has(job.kind)) {
              const run = handler(unit, job, batch);
              // Its failure is taken up by awaitTogether; until then it must not count as unhandled.
              run.catch(() => undefined);
              together.push(run);
            } else {
              await awaitTogether();
              await handler(unit, job, batch);
            }
            done.push(job.id);
          }
          await awaitTogether();
          // The jobs' events and the mark-done go ahead of the balance moves (deferred on
          // PostgreSQL: in their round trip), which lock account rows until COMMIT.
          const flushUnits = async () => {
            for (const unit of units.values()) if (typeof unit === 'object') await unit.flush();
          };
          await flushUnits();
          await finishDone(trx, done, now);
          await batch.finish(trx);
          await flushUnits();
          const chained = [...units.values()].some((u) => typeof u === 'object' && u.scheduledDueNow());
          return { ran, chained };
        }),
      );
    } catch (err) {
      if (claimed.length === 0) throw err;
      if (claimed.length > 1) {
        for (const job of claimed) await this.runBatch(platformId, 1, job.id);
        // Whatever those scheduled, the pass looks again at once (as after any failure).
        return { ran: claimed.length, chained: true };
      }
      // The job's transaction rolled back (its effect did not happen): retry later, or give up.
      const job = claimed[0]!;
      // A deadlock or serialisation failure on PostgreSQL is another writer's timing, not the
      // job's fault: it runs again at once.
      if (isTransientConflict(err)) return { ran: 1, chained: true };
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
      return { ran: 1, chained: true };
    }
  }
}

/** What one batch did: how many jobs it ran, and whether they scheduled work due at once. */
interface BatchResult {
  ran: number;
  chained: boolean;
}

async function markFailed(trx: Kysely<Database>, job: JobRow, error: string, nowMs: number): Promise<void> {
  await updateFailed.run(trx, { id: job.id, attempts: job.attempts + 1, error, at: new Date(nowMs).toISOString() });
}

/** Marks jobs that ran DONE, one statement for the whole batch. */
async function finishDone(trx: Kysely<Database>, ids: string[], nowMs: number): Promise<void> {
  if (ids.length === 0) return;
  const args: Record<string, unknown> = { at: new Date(nowMs).toISOString() };
  ids.forEach((id, i) => {
    args[`id${i}`] = id;
  });
  // Deferred (store/pg-pipeline.ts): it goes with the batch's next statement, or its COMMIT.
  await markDone(ids.length).defer(trx, args);
}

// ---- the runner's statements, compiled once per shape (see store/prepared.ts)

const markDoneStatements = new Map<number, Prepared<Record<string, unknown>, unknown>>();

/** DONE for `n` jobs (arguments `id0`…); each counts one more attempt. */
function markDone(n: number): Prepared<Record<string, unknown>, unknown> {
  let stmt = markDoneStatements.get(n);
  if (!stmt) {
    stmt = prepared((db, a: Record<string, unknown>) =>
      db
        .updateTable('jobs')
        .set({ status: 'DONE', attempts: sql<number>`attempts + 1`, last_error: null, updated_at: a.at as string })
        .where(
          'id',
          'in',
          Array.from({ length: n }, (_, i) => a[`id${i}`] as string),
        ),
    );
    markDoneStatements.set(n, stmt);
  }
  return stmt;
}

const claimStatements = new Map<string, Prepared<Record<string, unknown>, JobRow>>();

/**
 * Due jobs of the given kinds (arguments `kind0`…), in due order, at most `limit`; optionally of one
 * platform and/or one job. On PostgreSQL each runner takes jobs no other holds (never waiting on a
 * row lock, so two runners cannot deadlock on each other's jobs).
 */
function claimStatement(store: StoreKind, kinds: number, byPlatform: boolean, byId: boolean): Prepared<Record<string, unknown>, JobRow> {
  const key = `${store}|${kinds}|${byPlatform}|${byId}`;
  let stmt = claimStatements.get(key);
  if (!stmt) {
    stmt = prepared((db, a: Record<string, unknown>) => {
      let q = db
        .selectFrom('jobs')
        .selectAll()
        .where('status', '=', 'PENDING')
        .where('due_at_ms', '<=', a.now as number)
        .where(
          'kind',
          'in',
          Array.from({ length: kinds }, (_, i) => a[`kind${i}`] as string),
        )
        .orderBy('due_at_ms')
        .orderBy('id')
        .limit(a.limit as number);
      if (byPlatform) q = q.where('platform_id', '=', a.platformId as string);
      if (byId) q = q.where('id', '=', a.onlyId as string);
      if (store === 'postgres') q = q.forUpdate().skipLocked();
      return q;
    });
    claimStatements.set(key, stmt);
  }
  return stmt;
}

const selectPlatform = prepared((db, a: { id: string }) => db.selectFrom('platforms').selectAll().where('id', '=', a.id));

const updateFailed = prepared((db, a: { id: string; attempts: number; error: string; at: string }) =>
  db.updateTable('jobs').set({ status: 'FAILED', attempts: a.attempts, last_error: a.error, updated_at: a.at }).where('id', '=', a.id),
);
