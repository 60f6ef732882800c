/** SQL for platforms. */
import type { Kysely } from 'kysely';
import { bumpAuthEpoch } from '../../http/auth-cache.ts';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';

export async function insertPlatform(db: Kysely<Database>, row: PlatformRow): Promise<void> {
  await db.insertInto('platforms').values(row).execute();
}

/** Reads a platform; `{ forUpdate: true }` holds its row until the transaction ends. */
export async function getPlatform(db: Kysely<Database>, id: string, opts?: LockOptions): Promise<PlatformRow | undefined> {
  return lockRows(db, db.selectFrom('platforms').selectAll().where('id', '=', id), opts).executeTakeFirst();
}

export async function updatePlatform(
  db: Kysely<Database>,
  id: string,
  patch: Partial<Pick<PlatformRow, 'config' | 'clock_offset_ms' | 'updated_at' | 'name'>>,
): Promise<void> {
  await db.updateTable('platforms').set(patch).where('id', '=', id).execute();
  bumpAuthEpoch();
}

/**
 * `bootstrap_platform` (migration 0012): the one row naming the store's bootstrap sandbox platform.
 * Only this module reads or writes it, so its type lives here rather than in the shared schema.
 */
interface BootstrapPlatformTable {
  singleton: number;
  platform_id: string;
  created_at: string;
}

/**
 * The sandbox platform `corridor start` created at first boot, found by the store's own record of
 * it — not through its token, so it stays found whatever happens to its tokens.
 */
export async function findBootstrapPlatform(db: Kysely<Database>): Promise<PlatformRow | undefined> {
  return db
    .withTables<{ bootstrap_platform: BootstrapPlatformTable }>()
    .selectFrom('bootstrap_platform as b')
    .innerJoin('platforms as p', 'p.id', 'b.platform_id')
    .selectAll('p')
    .where('b.singleton', '=', 1)
    .executeTakeFirst();
}

/** Records `platformId` as the store's bootstrap platform (once: a second record is a key conflict). */
export async function recordBootstrapPlatform(db: Kysely<Database>, platformId: string, at: string): Promise<void> {
  await db
    .withTables<{ bootstrap_platform: BootstrapPlatformTable }>()
    .insertInto('bootstrap_platform')
    .values({ singleton: 1, platform_id: platformId, created_at: at })
    .execute();
}
