/**
 * Opens the store: PostgreSQL when a database URL is given, otherwise the embedded SQLite file in
 * the data directory. Both are reached through one Kysely instance so repositories are dialect-free.
 */
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect, type Driver } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.ts';
import { FALLBACK_AUTOCHECKPOINT_PAGES, startCheckpointer } from './sqlite-checkpointer.ts';
import { preparingPool } from './pg-prepared.ts';
import { GroupCommitDriver } from './sqlite-group-commit.ts';

export type StoreKind = 'sqlite' | 'postgres';

export interface Store {
  kind: StoreKind;
  db: Kysely<Database>;
  /** Human-readable location, for start-up output (no password). */
  location: string;
  close(): Promise<void>;
}

export interface StoreOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
}

// int8 (bigint) and numeric COUNT(*) results arrive as strings from `pg`; money columns never
// exceed 2^53−1 (inputs above it are rejected), so they are safe to read as JS numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function openStore(opts: StoreOptions): Store {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.poolSize ?? 10);
  return openSqlite(path.join(opts.dataDir, 'corridor.sqlite'));
}

function openPostgres(url: string, max: number): Store {
  const pool = new pg.Pool({ connectionString: url, max });
  // An idle client that errors (server restart) must not crash the process; the pool drops it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
  return { kind: 'postgres', db, location: redactUrl(url), close: () => db.destroy() };
}

function openSqlite(file: string): Store {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const database = new SQLite(file);
  // WAL lets readers run beside the writer; NORMAL syncs at checkpoints, so a commit survives a
  // process crash (SIGKILL) though not a power cut — the trade documented in docs/decisions.md.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('busy_timeout = 5000');
  database.pragma('foreign_keys = ON');
  // Statement and savepoint journals in memory rather than temporary files: a multi-row statement
  // inside a transaction (and every savepoint) journals the pages it touches, and on disk that was
  // two write system calls per page — more than the WAL commit itself.
  database.pragma('temp_store = MEMORY');
  database.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
  const driver = new GroupCommitDriver(database, statementCache(database));
  // Checkpoints run on a worker thread (see sqlite-checkpointer.ts); the main thread only appends.
  const checkpointer = startCheckpointer(database, file, (fn) => driver.exclusive(fn));
  const db = new Kysely<Database>({ dialect: new GroupCommitSqliteDialect(driver) });
  return {
    kind: 'sqlite',
    db,
    location: file,
    close: async () => {
      await checkpointer.close();
      await db.destroy();
    },
  };
}

/** Kysely's SQLite dialect (compiler, adapter, introspector) over the group-commit driver. */
class GroupCommitSqliteDialect extends SqliteDialect {
  constructor(private readonly driver: GroupCommitDriver) {
    super({ database: driver.database });
  }
  override createDriver(): Driver {
    return this.driver;
  }
}

/** Distinct SQL texts kept prepared; queries with long IN lists vary, so the cache is bounded. */
const STATEMENT_CACHE_SIZE = 1000;

/**
 * Preparing a statement is a large share of a simple query's CPU, and Kysely's SQLite driver
 * prepared every statement on every query. This keeps prepared statements by SQL text (oldest
 * dropped first), and prepares a fresh one when the cached statement is still being iterated.
 */
function statementCache(database: SQLite.Database): (sql: string) => SQLite.Statement {
  const cache = new Map<string, SQLite.Statement>();
  return (sql: string) => {
    const hit = cache.get(sql);
    if (hit && !hit.busy) return hit;
    const stmt = database.prepare(sql);
    if (!hit) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(sql, stmt);
    }
    return stmt;
  };
}

function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres';
  }
}
