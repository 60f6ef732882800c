/**
 * The unit of work: every write of a platform's data — a route, a job, a webhook reply — runs in one
 * of these. A unit is one database transaction on one platform's data, holding the platform write
 * lock shared (store/platform-lock.ts: a sandbox reset waits for it), retried as a whole when
 * PostgreSQL reports a deadlock or serialisation failure (store/retry.ts). It carries what a service
 * needs besides its input — the platform, its clock, the app's configuration and dependencies — and
 * collects the outbox events the write emits, written in the same transaction before it commits.
 *
 * On PostgreSQL a unit whose caller allows it (`shareTransaction`) may share its transaction with
 * the units running beside it (group commit, store/pg-group-commit.ts): it then commits with them,
 * and runs again alone if any of them fails after writing.
 *
 * Routes open units through src/http/write.ts (which adds Idempotency-Key handling), the job runner
 * opens one per platform of its batch, a sandbox reset opens the one exclusive kind. Services take
 * `(unit, input)` and never open a transaction themselves.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from './context.ts';
import type { Deps } from './deps.ts';
import { scheduleJob } from './jobs/jobs.ts';
import { iso, platformNowMs } from './lib/time.ts';
import { getPlatform } from './modules/platforms/platforms.repo.ts';
import { enqueueEvents, type EventInput } from './outbox/outbox.ts';
import { lockPlatformExclusive, lockPlatformShared } from './store/platform-lock.ts';
import { retryOnConflict } from './store/retry.ts';
import type { Database, PlatformRow } from './store/schema.ts';
import type { WebhookType } from './webhook-delivery/catalogue.ts';

export interface Unit {
  /** The database transaction; repositories take it. */
  readonly trx: Kysely<Database>;
  /** The platform whose data this unit writes (its row as read when the unit opened). */
  readonly platform: PlatformRow;
  /** The platform's clock when the unit opened (its sandbox offset included), and as ISO-8601 text. */
  readonly nowMs: number;
  readonly at: string;
  /** Configuration, secrets, the job runner and the webhook deliverer. */
  readonly app: AppContext;
  /** Clock, ids and randomness (`app.deps`). */
  readonly deps: Deps;
  /** An outbox event of this platform; written with the unit's other events before it commits. */
  emit(type: WebhookType, resourceId: string, data: unknown): void;
  /** Writes the events emitted so far, now (all are written when the unit ends anyway). */
  flush(): Promise<void>;
  /**
   * Called just before a write that locks a row other units wait for (a balance UPDATE): where
   * such a lock is held until COMMIT (PostgreSQL), the events emitted so far are written ahead of
   * it (deferred, in its round trip), so the lock is held over as little work as possible.
   */
  beforeRowLock(): Promise<void>;
  /** Durable delayed work of this platform, `delayMs` after now, written in this transaction. */
  schedule(kind: string, payload: unknown, delayMs: number): Promise<void>;
  /** Whether this unit scheduled work due at once (`delayMs` ≤ 0): the job runner then looks again without waiting for its next poll. */
  scheduledDueNow(): boolean;
}

/**
 * A unit over a transaction the caller holds (the job runner's batch, the deliverer's outcome). The
 * caller must `flush` it before its transaction commits; `runUnit` does both for everyone else.
 */
export function openUnit(trx: Kysely<Database>, app: AppContext, platform: PlatformRow): Unit {
  const nowMs = platformNowMs(app.deps.clock, platform);
  const at = iso(nowMs);
  let events: EventInput[] = [];
  let dueNow = false;
  const flush = async () => {
    if (events.length === 0) return;
    const pending = events;
    events = [];
    await enqueueEvents(trx, pending);
  };
  return {
    trx,
    platform,
    nowMs,
    at,
    app,
    deps: app.deps,
    emit(type, resourceId, data) {
      events.push({ id: app.deps.ids.next('Webhook'), platformId: platform.id, type, resourceId, data, at });
    },
    flush,
    beforeRowLock: () => (app.store.kind === 'postgres' ? flush() : Promise.resolve()),
    schedule(kind, payload, delayMs) {
      if (delayMs <= 0) dueNow = true;
      return scheduleJob(trx, app.deps.clock, { id: app.deps.ids.next('Job'), platformId: platform.id, kind, payload, delayMs, at });
    },
    scheduledDueNow: () => dueNow,
  };
}

/** Where a unit's platform comes from: a row already read (a route's caller), or an id (read inside). */
type PlatformRef = PlatformRow | string;

/**
 * Runs `fn` in a unit of work on `platform`: one transaction holding the platform write lock shared,
 * its events written before it commits, retried as a whole on a PostgreSQL deadlock or
 * serialisation failure (so `fn` must do nothing outside the database that it cannot repeat).
 * Given an id, the platform row is read inside the transaction; a platform that no longer exists
 * throws PlatformGoneError.
 */
export function runUnit<T>(app: AppContext, platform: PlatformRef, fn: (u: Unit) => Promise<T>, opts?: UnitOptions): Promise<T> {
  return inTransaction(app, platform, opts?.shareTransaction ? 'grouped' : 'shared', fn);
}

export interface UnitOptions {
  /**
   * On PostgreSQL with group commit, the unit may share its transaction with concurrent units,
   * running beside them (store/pg-group-commit.ts). Only for units that stay correct when another
   * unit's statements interleave with theirs in one transaction: they must not rely on a row lock
   * (SELECT … FOR UPDATE does not make units of one transaction wait for each other) or on a read
   * staying true, only on conditional writes — as a payment does, whose balance UPDATE is its guard.
   */
  shareTransaction?: boolean;
}

/**
 * A unit that replaces the platform's data wholesale (`POST /sandbox/reset`): it holds the platform
 * write lock exclusively, so the platform's writes in flight finish first and new ones wait for it.
 */
export function runExclusiveUnit<T>(app: AppContext, platform: PlatformRef, fn: (u: Unit) => Promise<T>): Promise<T> {
  return inTransaction(app, platform, 'exclusive', fn);
}

/** Raised when a unit is opened for a platform id that no longer exists. */
export class PlatformGoneError extends Error {
  constructor(readonly platformId: string) {
    super(`platform ${platformId} does not exist`);
  }
}

function inTransaction<T>(
  app: AppContext,
  platform: PlatformRef,
  mode: 'shared' | 'grouped' | 'exclusive',
  fn: (u: Unit) => Promise<T>,
): Promise<T> {
  const platformId = typeof platform === 'string' ? platform : platform.id;
  const body = async (trx: Kysely<Database>) => {
    if (mode === 'exclusive') await lockPlatformExclusive(trx, platformId);
    else await lockPlatformShared(trx, platformId);
    const row = typeof platform === 'string' ? await readPlatform(trx, platformId) : platform;
    const unit = openUnit(trx, app, row);
    const result = await fn(unit);
    await unit.flush();
    return result;
  };
  // On PostgreSQL, units that may share transactions and COMMITs with the units beside them do
  // (group commit, store/pg-group-commit.ts); every other unit, and a reset, runs alone.
  const group = mode === 'grouped' ? app.store.groupCommit : undefined;
  return retryOnConflict(() => (group ? group.run(body) : app.db.transaction().execute(body)));
}

async function readPlatform(trx: Kysely<Database>, id: string): Promise<PlatformRow> {
  const row = await getPlatform(trx, id);
  if (!row) throw new PlatformGoneError(id);
  return row;
}
