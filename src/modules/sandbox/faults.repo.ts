/** SQL of the fault rules (table sandbox_faults, migration 0026). */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import './faults.tables.ts';

/** Every SANDBOX platform's rules (a platform without faults has no row): what the cache loads. */
export async function loadSandboxFaults(db: Kysely<Database>): Promise<{ platform_id: string; rules: string }[]> {
  // Joined on the environment as a second line of defence: a PRODUCTION platform never gets a rule
  // through the API, and one found here anyway is not applied.
  return db
    .selectFrom('sandbox_faults as f')
    .innerJoin('platforms as p', 'p.id', 'f.platform_id')
    .select(['f.platform_id', 'f.rules'])
    .where('p.environment', '=', 'SANDBOX')
    .execute();
}

export async function findFaults(db: Kysely<Database>, platformId: string): Promise<{ rules: string; updated_at: string } | undefined> {
  return db.selectFrom('sandbox_faults').select(['rules', 'updated_at']).where('platform_id', '=', platformId).executeTakeFirst();
}

export async function putFaults(db: Kysely<Database>, platformId: string, rules: string, at: string): Promise<void> {
  await db
    .insertInto('sandbox_faults')
    .values({ platform_id: platformId, rules, updated_at: at })
    .onConflict((oc) => oc.column('platform_id').doUpdateSet({ rules, updated_at: at }))
    .execute();
}

export async function deleteFaults(db: Kysely<Database>, platformId: string): Promise<void> {
  await db.deleteFrom('sandbox_faults').where('platform_id', '=', platformId).execute();
}
