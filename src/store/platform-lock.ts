/**
 * The platform write lock: every write transaction on a platform's data holds it shared, and
 * `POST /sandbox/reset` (which deletes that data) holds it exclusively, so a reset never interleaves
 * with a payment, a job, a webhook outcome or any other write of the same platform: it waits for
 * the writes in flight to commit, and writes that start meanwhile wait for it.
 *
 * PostgreSQL: a transaction-scoped advisory lock (in the server's lock table, no row is written). The
 * shared lock is a deferred statement (store/pg-pipeline.ts): it travels with the transaction's first
 * statement, and is held before that statement runs. SQLite: a no-op — there one transaction runs at a time, so a
 * reset is already serialised with every other write.
 *
 * A writer that already holds row locks must not wait for the lock (a reset holding the exclusive
 * lock could be waiting for those rows): such writers use `tryLockPlatformShared` and back off.
 */
import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { DEFERRED } from './pg-deferred.ts';
import { isPostgres } from './row-lock.ts';
import { retryOnConflict } from './retry.ts';
import type { Database } from './schema.ts';

/** The first key of Corridor's platform locks ("corr"); the second is a hash of the platform id. */
const LOCK_CLASS = 0x636f7272;

/** A 32-bit signed key for the platform (a collision only makes two platforms' resets wait for each other). */
function platformKey(platformId: string): number {
  return createHash('sha256').update(platformId).digest().readInt32BE(0);
}

/** Holds the platform's write lock shared until the transaction ends (waits while a reset runs). */
export async function lockPlatformShared(trx: Kysely<Database>, platformId: string): Promise<void> {
  if (!isPostgres(trx)) return;
  await sql`${sql.raw(DEFERRED)}select pg_advisory_xact_lock_shared(${LOCK_CLASS}::int4, ${platformKey(platformId)}::int4)`.execute(trx);
}

/**
 * Takes the platform's write lock shared if no reset holds or awaits it; false when one does (the
 * caller then leaves the platform's work for later rather than waiting with locks held).
 */
export async function tryLockPlatformShared(trx: Kysely<Database>, platformId: string): Promise<boolean> {
  if (!isPostgres(trx)) return true;
  const r = await sql<{
    ok: boolean;
  }>`select pg_try_advisory_xact_lock_shared(${LOCK_CLASS}::int4, ${platformKey(platformId)}::int4) as ok`.execute(trx);
  return r.rows[0]?.ok === true;
}

/** Holds the platform's write lock exclusively until the transaction ends: waits for every write in flight. */
export async function lockPlatformExclusive(trx: Kysely<Database>, platformId: string): Promise<void> {
  if (!isPostgres(trx)) return;
  await sql`select pg_advisory_xact_lock(${LOCK_CLASS}::int4, ${platformKey(platformId)}::int4)`.execute(trx);
}

/**
 * A write transaction on one platform's data: the platform write lock held shared, retried as a
 * whole on a PostgreSQL deadlock or serialisation failure (store/retry.ts). Every write of a
 * platform's data runs in one of these (or in `platformReset`).
 */
export function platformWrite<T>(db: Kysely<Database>, platformId: string, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return retryOnConflict(() =>
    db.transaction().execute(async (trx) => {
      await lockPlatformShared(trx, platformId);
      return fn(trx);
    }),
  );
}

/** A transaction that replaces a platform's data wholesale: it holds the write lock exclusively. */
export function platformReset<T>(db: Kysely<Database>, platformId: string, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return retryOnConflict(() =>
    db.transaction().execute(async (trx) => {
      await lockPlatformExclusive(trx, platformId);
      return fn(trx);
    }),
  );
}
