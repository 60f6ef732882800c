/**
 * Applies the schema migrations in order, once. Safe to run from several processes at once:
 * on PostgreSQL all of them run in one transaction behind a transaction-scoped advisory lock
 * (DDL is transactional there); on SQLite `BEGIN IMMEDIATE` takes the write lock up front.
 *
 * A run that lasts over MIGRATION_PROGRESS_AFTER_MS shows which migration it is applying (n/total)
 * on stderr when stderr is a terminal, then how long the run took; otherwise it writes nothing
 * (`corridor start` and `corridor migrate` print what they printed before, and tests parse it).
 */
import { sql, type Kysely } from 'kysely';
import { Progress, type ProgressOptions } from '../lib/progress.ts';
import type { Store } from './db.ts';
import type { Database } from './schema.ts';
import { migrations } from './migrations/index.ts';

/** Arbitrary constant naming Corridor's migration lock in pg_advisory_xact_lock. */
const PG_MIGRATION_LOCK_KEY = 7_240_513;

/** How long a migration run goes before it shows its progress (on a terminal only). */
export const MIGRATION_PROGRESS_AFTER_MS = 2_000;

export interface MigrateOptions {
  /** Where and how progress shows (default: stderr, prefixed `corridor: `); it is shown on a terminal only. */
  progress?: Pick<ProgressOptions, 'output' | 'tty' | 'now' | 'prefix' | 'line'>;
}

/** Returns the names of the migrations this call applied. */
export async function migrate(store: Store, o: MigrateOptions = {}): Promise<string[]> {
  return store.db.connection().execute(async (conn) => {
    await sql.raw(store.kind === 'postgres' ? 'begin' : 'begin immediate').execute(conn);
    try {
      if (store.kind === 'postgres') {
        await sql`select pg_advisory_xact_lock(${PG_MIGRATION_LOCK_KEY})`.execute(conn);
      }
      const applied = await applyPending(conn, o);
      await sql`commit`.execute(conn);
      return applied;
    } catch (err) {
      await sql`rollback`.execute(conn);
      throw err;
    }
  });
}

// `any`: the migration table is not part of the typed Database, and migrations build the schema
// itself, so they run on an untyped handle.
// biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
async function applyPending(conn: Kysely<any>, o: MigrateOptions): Promise<string[]> {
  await conn.schema
    .createTable('corridor_migrations')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();
  const done = new Set((await conn.selectFrom('corridor_migrations').select('name').execute()).map((r: { name: string }) => r.name));
  const pending = migrations.filter((m) => !done.has(m.name));
  if (pending.length === 0) return [];
  const progress = new Progress('migrations', pending.length, {
    prefix: 'corridor: ',
    ...o.progress,
    ttyOnly: true,
    showAfterMs: MIGRATION_PROGRESS_AFTER_MS,
    rate: false,
  }).refreshEvery(500);
  const applied: string[] = [];
  try {
    for (const m of pending) {
      progress.update(applied.length, `applying ${m.name}`);
      await m.up(conn);
      await conn.insertInto('corridor_migrations').values({ name: m.name, applied_at: new Date().toISOString() }).execute();
      applied.push(m.name);
    }
  } catch (err) {
    progress.abandon();
    throw err;
  }
  progress.update(applied.length, '');
  progress.finish();
  return applied;
}

/** Arbitrary constant naming the start-up (bootstrap) lock. */
const PG_STARTUP_LOCK_KEY = 7_240_514;

/**
 * Runs `fn` in a transaction that no other Corridor process runs at the same time (used for the
 * first-boot bootstrap, which two processes starting together must not both perform).
 */
export async function exclusiveTransaction<T>(store: Store, fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return store.db.transaction().execute(async (trx) => {
    if (store.kind === 'postgres') await sql`select pg_advisory_xact_lock(${PG_STARTUP_LOCK_KEY})`.execute(trx);
    return fn(trx);
  });
}
