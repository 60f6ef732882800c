/** SQL of receiver lookups. Every query filters on platform_id. */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import type { LookupRow } from './lookups.tables.ts';
import { guard } from '../../store/guard.ts';

/**
 * Expired lookups deleted per lookup written: more than the one row each lookup adds, so a
 * platform's table shrinks back to its live lookups, and few enough that no request does much more
 * work than its own (a backlog after a quiet spell goes a batch per lookup).
 */
export const PRUNE_BATCH = 50;

export async function insertLookup(db: Kysely<Database>, row: LookupRow): Promise<void> {
  await db.insertInto('lookups').values(row).execute();
}

/** Deletes up to `PRUNE_BATCH` of the platform's lookups that expired at or before `at`. */
export async function pruneExpiredLookups(db: Kysely<Database>, platformId: string, at: string): Promise<void> {
  await db
    .deleteFrom('lookups')
    .where(
      'id',
      'in',
      db
        .selectFrom('lookups')
        .select('id')
        .where('platform_id', '=', platformId)
        .where('expires_at', '<=', at)
        .orderBy('expires_at')
        .limit(PRUNE_BATCH),
    )
    .execute();
}

/** The platform's lookup with this id (expired or not: the caller tells the two apart). */
export async function findLookup(db: Kysely<Database>, platformId: string, id: string): Promise<LookupRow | undefined> {
  return db.selectFrom('lookups').selectAll().where('id', '=', id).where(guard('platform_id', platformId)).executeTakeFirst();
}
