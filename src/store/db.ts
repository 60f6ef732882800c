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
import { GroupProfile, type GroupProfileSnapshot } from './group-profile.ts';
import { PgGroupCommit } from './pg-group-commit.ts';
import { preparingPool } from './pg-prepared.ts';
import { GroupCommitDriver } from './sqlite-group-commit.ts';
import { profileStatements, type StatementTiming } from './sql-profile.ts';

export type StoreKind = 'sqlite' | 'postgres';

export interface Store {
  kind: StoreKind;
  db: Kysely<Database>;
  /** Human-readable location, for start-up output (no password). */
  location: string;
  close(): Promise<void>;
  /** PostgreSQL with group commit on: runs a unit of work's transaction in a group (pg-group-commit.ts). */
  groupCommit?: PgGroupCommit;
  /** The statement timings so far, when the store was opened with `profileStatements` (SQLite only; sql-profile.ts). */
  statementProfile?: () => StatementTiming[];
  /** The commit groups' timings so far, when opened with `profileGroups` (PostgreSQL group commit; group-profile.ts). */
  groupProfile?: () => GroupProfileSnapshot;
}

export interface StoreOptions {
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
  /** PostgreSQL: concurrent commit groups (0 or unset: no group commit; pg-group-commit.ts). */
  pgGroups?: number;
  /** Told (once, one line) when an existing SQLite store's modes had to be tightened; see secureDataDir. */
  onModesTightened?: (message: string) => void;
  /** Time every statement (a development tool: CORRIDOR_SQL_PROFILE; SQLite only). */
  profileStatements?: boolean;
  /** Time every commit group's phases (a development tool: CORRIDOR_GROUP_PROFILE; PostgreSQL with group commit). */
  profileGroups?: boolean;
}

// int8 (bigint) and numeric COUNT(*) results arrive as strings from `pg`; money columns never
// exceed 2^53−1 (inputs above it are rejected), so they are safe to read as JS numbers.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));

export function openStore(opts: StoreOptions): Store {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, opts.poolSize ?? 10, opts.pgGroups ?? 0, opts.profileGroups ?? false);
  const tightened = secureDataDir(opts.dataDir);
  if (tightened) opts.onModesTightened?.(tightened);
  const file = path.join(opts.dataDir, SQLITE_FILE);
  createPrivateFile(file);
  return openSqlite(file, opts.profileStatements ?? false);
}

/** The embedded store's database file in DATA_DIR; SQLite adds `-wal`, `-shm` (and `-journal`) beside it. */
export const SQLITE_FILE = 'corridor.sqlite';
/** The file `corridor start` holds an exclusive lock on while it runs (SQLite store): see lockDataDir. */
export const LOCK_FILE = 'corridor.lock';
/** The bootstrap credentials `corridor start` keeps for the developer. */
export const CREDENTIALS_FILE = 'credentials.json';

/**
 * Everything Corridor keeps in DATA_DIR. They hold private keys and credentials, so each is
 * readable by its owner only (0600), in a directory only its owner can enter (0700).
 */
export const DATA_DIR_FILES = [
  SQLITE_FILE,
  `${SQLITE_FILE}-wal`,
  `${SQLITE_FILE}-shm`,
  `${SQLITE_FILE}-journal`,
  CREDENTIALS_FILE,
  LOCK_FILE,
] as const;

/**
 * Creates DATA_DIR as 0700 when it is missing, and takes group and other access away from an
 * existing DATA_DIR and the store's files in it — whatever the umask (the modes are set
 * explicitly, not left to `mode & ~umask`). Returns one line naming what it changed, or undefined
 * when everything was already private. Files SQLite creates later (`-wal`, `-shm`) copy the
 * database file's mode, which is why the database file is created 0600 before SQLite opens it.
 */
export function secureDataDir(dataDir: string): string | undefined {
  const changed: string[] = [];
  const created = makeDir(dataDir);
  const dirMode = fs.statSync(dataDir).mode & 0o777;
  if (created) {
    if (dirMode !== 0o700) fs.chmodSync(dataDir, 0o700);
  } else if (dirMode & 0o077) {
    fs.chmodSync(dataDir, dirMode & 0o700);
    changed.push(`${dataDir} ${octal(dirMode)} -> ${octal(dirMode & 0o700)}`);
  }
  for (const name of DATA_DIR_FILES) {
    const file = path.join(dataDir, name);
    let mode: number;
    try {
      mode = fs.statSync(file).mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & 0o077) === 0) continue;
    fs.chmodSync(file, mode & 0o700);
    changed.push(`${name} ${octal(mode)} -> ${octal(mode & 0o700)}`);
  }
  if (changed.length === 0) return undefined;
  return `made the store private to its owner (it holds private keys): ${changed.join(', ')}`;
}

/** mkdir with mode 0700 (missing parents are created as usual); false when it already existed. */
function makeDir(dir: string): boolean {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  return makeDir(dir);
}

const octal = (mode: number) => `0${mode.toString(8).padStart(3, '0')}`;

/** Creates `file` empty with mode 0600 unless it exists (another process may create it at the same instant). */
export function createPrivateFile(file: string): void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  try {
    fs.fchmodSync(fd, 0o600);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes `file` (replacing it) with mode 0600 whatever the umask, and an existing file's mode too. */
export function writePrivateFile(file: string, text: string): void {
  fs.writeFileSync(file, text, { mode: 0o600 });
  fs.chmodSync(file, 0o600);
}

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

export interface DataDirLock {
  file: string;
  release(): void;
}

/**
 * Takes the embedded store's single-server lock: an exclusive SQLite lock on DATA_DIR/corridor.lock,
 * held until `release` or until the process ends. It is an OS-level (fcntl) lock, so the kernel
 * drops it with the process however it dies, SIGKILL included: there is never a stale lock to
 * clean up. Throws DataDirLockedError, naming the directory and (on Linux, from /proc/locks) the
 * pid holding it, when another process has it. Only `corridor start` takes it: the short commands
 * (migrate, platform, ledger-check, webhooks listen) share the store with a running server as
 * before.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE);
  createPrivateFile(file);
  const db = new SQLite(file);
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    // Nothing is ever written; an in-memory journal keeps a -journal file out of DATA_DIR.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_BUSY')) {
      const pid = lockHolder(file);
      throw new DataDirLockedError(
        `DATA_DIR ${dataDir} is in use by another corridor server${pid ? ` (pid ${pid})` : ''}. ` +
          'The embedded SQLite store serves one process: stop that server, or give this one another DATA_DIR ' +
          '(or share a PostgreSQL store with DATABASE_URL).',
      );
    }
    throw err;
  }
  held.add(db);
  return {
    file,
    release() {
      if (!held.delete(db)) return;
      db.close();
    },
  };
}

/** Lock handles kept reachable for the life of the process. */
const held = new Set<SQLite.Database>();

/** The pid of another process holding a POSIX lock on `file`, from /proc/locks (Linux); undefined elsewhere. */
function lockHolder(file: string): number | undefined {
  try {
    const inode = fs.statSync(file).ino;
    for (const line of fs.readFileSync('/proc/locks', 'utf8').split('\n')) {
      const m = /\bPOSIX\s+\S+\s+\S+\s+(\d+)\s+[0-9a-f]+:[0-9a-f]+:(\d+)\s/.exec(line);
      if (m && Number(m[2]) === inode && Number(m[1]) !== process.pid) return Number(m[1]);
    }
  } catch {
    // No /proc/locks (not Linux): the message goes without the pid.
  }
  return undefined;
}

function openPostgres(url: string, max: number, groups: number, profiled: boolean): Store {
  const pool = new pg.Pool({ connectionString: url, max });
  // An idle client that errors (server restart) must not crash the process; the pool drops it.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool) }) });
  return {
    kind: 'postgres',
    db,
    location: redactUrl(url),
    close: () => db.destroy(),
    ...(groups > 0 ? groupCommitOf(db, groups, profiled) : {}),
  };
}

function groupCommitOf(db: Kysely<Database>, groups: number, profiled: boolean): Pick<Store, 'groupCommit' | 'groupProfile'> {
  const profile = profiled ? new GroupProfile() : undefined;
  return {
    groupCommit: new PgGroupCommit(db, groups, profile),
    ...(profile ? { groupProfile: () => profile.snapshot() } : {}),
  };
}

function openSqlite(file: string, profiled: boolean): Store {
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
  const profiler = profiled ? profileStatements(statementCache(database)) : undefined;
  const driver = new GroupCommitDriver(database, profiler?.prepare ?? statementCache(database));
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
    ...(profiler ? { statementProfile: profiler.snapshot } : {}),
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
