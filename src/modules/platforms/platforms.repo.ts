/** SQL for platforms. */
import type { Kysely } from 'kysely';
import { bumpAuthEpoch } from '../../http/auth-cache.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import type { StoreKind } from '../../store/db.ts';

export async function insertPlatform(db: Kysely<Database>, row: PlatformRow): Promise<void> {
  await db.insertInto('platforms').values(row).execute();
}

/** Reads a platform; on PostgreSQL inside a transaction, `lock` holds its row until commit. */
export async function getPlatform(db: Kysely<Database>, id: string, lock?: StoreKind): Promise<PlatformRow | undefined> {
  let q = db.selectFrom('platforms').selectAll().where('id', '=', id);
  if (lock === 'postgres') q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function updatePlatform(db: Kysely<Database>, id: string, patch: Partial<Pick<PlatformRow, 'config' | 'clock_offset_ms' | 'updated_at' | 'name'>>): Promise<void> {
  await db.updateTable('platforms').set(patch).where('id', '=', id).execute();
  bumpAuthEpoch();
}

/** The platform created at first boot (the one holding the bootstrap token). */
export async function findBootstrapPlatform(db: Kysely<Database>): Promise<PlatformRow | undefined> {
  return db
    .selectFrom('platforms')
    .innerJoin('api_tokens', 'api_tokens.platform_id', 'platforms.id')
    .selectAll('platforms')
    .where('api_tokens.is_bootstrap', '=', 1)
    .orderBy('platforms.created_at', 'asc')
    .executeTakeFirst();
}
