/** The store as the health check sees it. */
import type { Kysely } from 'kysely';
import { isPostgres } from '../../store/row-lock.ts';
import type { Database } from '../../store/schema.ts';

/** Runs one small query (throws when the store cannot answer) and names the store that answered. */
export async function pingStore(db: Kysely<Database>): Promise<'sqlite' | 'postgres'> {
  await db.selectFrom('platforms').select('id').limit(1).execute();
  return isPostgres(db) ? 'postgres' : 'sqlite';
}
