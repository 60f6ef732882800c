/**
 * How `corridor start` begins a seeded run (CORRIDOR_SEED): where its clock starts, read from the
 * store it opens, or why it must not run seeded at all.
 */
import type { Kysely } from 'kysely';
import type { Deps } from '../deps.ts';
import type { Database } from '../store/schema.ts';
import { SEED_EPOCH_MS, seededDeps } from './seeded-deps.ts';

export class SeedRefused extends Error {
  override name = 'SeedRefused';
}

/**
 * The seeded dependencies for this store. A store without platforms (a fresh one) starts at
 * SEED_EPOCH_MS: that is the reproducible run. A store that already holds platforms starts at the
 * real time `nowMs` (and so draws from other streams: lib/seeded-random.ts), so that ids and account
 * numbers never repeat stored ones; it is not byte-reproducible, and says so. A store holding a
 * PRODUCTION platform is refused: its time would stand still (nothing would expire, nothing delayed
 * would happen) and its ids and account details would be predictable.
 */
export async function seededStart(db: Kysely<Database>, seed: number, nowMs: number): Promise<{ deps: Deps; fresh: boolean }> {
  const production = await db.selectFrom('platforms').select('id').where('environment', '=', 'PRODUCTION').limit(1).executeTakeFirst();
  if (production)
    throw new SeedRefused(
      `CORRIDOR_SEED is for sandbox runs, but this store holds the PRODUCTION platform ${production.id}: unset CORRIDOR_SEED or use another store`,
    );
  const any = await db.selectFrom('platforms').select('id').limit(1).executeTakeFirst();
  const fresh = any === undefined;
  return { deps: seededDeps(seed, fresh ? SEED_EPOCH_MS : Math.max(nowMs, SEED_EPOCH_MS + 1)), fresh };
}
