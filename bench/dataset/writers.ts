/**
 * The store-specific part of the data set generator: multi-row INSERTs (SQLite: prepared
 * statements run inside large transactions; PostgreSQL: one `unnest` INSERT per 5,000 rows), and
 * dropping the secondary indexes of the loaded tables (their definitions read from the catalogue)
 * to rebuild them once the rows are in.
 */
import type SQLite from 'better-sqlite3';
import pg from 'pg';

type Row = Record<string, string | number | null>;

/** Told how many rows of an `insert` are in so far (after each statement), for progress. */
export type OnRows = (inserted: number) => void;

/** Told before each index (or, on PostgreSQL, table statistics) step of `rebuildIndexes`, for progress. */
export type OnIndexStep = (step: number, steps: number, name: string) => void;

/** The store-specific part: multi-row inserts, transactions, dropping and rebuilding indexes. */
export interface BulkWriter {
  insert(table: string, rows: readonly object[], onRows?: OnRows): Promise<void>;
  begin(): Promise<void>;
  commit(): Promise<void>;
  /** Drops the secondary indexes of `tables` (not those behind primary keys or constraints). */
  dropIndexes(tables: string[]): Promise<void>;
  rebuildIndexes(onStep?: OnIndexStep): Promise<void>;
  close(): Promise<void>;
}

export class SqliteWriter implements BulkWriter {
  private readonly stmts = new Map<string, SQLite.Statement>();
  private dropped: { name: string; sql: string }[] = [];
  constructor(private readonly db: SQLite.Database) {
    // A throw-away load: no journal, no syncs, one connection, a large page cache.
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('locking_mode = EXCLUSIVE');
    db.pragma('foreign_keys = OFF');
    db.pragma('temp_store = MEMORY');
    db.pragma('cache_size = -1048576');
  }
  async insert(table: string, rows: readonly object[], onRows?: OnRows): Promise<void> {
    if (rows.length === 0) return;
    const cols = Object.keys(rows[0]!);
    // SQLite allows 32,766 parameters per statement; 500 rows keeps statements short to prepare.
    const per = Math.max(1, Math.min(500, Math.floor(32_000 / cols.length)));
    for (let i = 0; i < rows.length; i += per) {
      const chunk = rows.slice(i, i + per) as Row[];
      const key = `${table}|${cols.length}|${chunk.length}`;
      let stmt = this.stmts.get(key);
      if (!stmt) {
        const tuple = `(${cols.map(() => '?').join(',')})`;
        stmt = this.db.prepare(
          `INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(',')}) VALUES ${new Array(chunk.length).fill(tuple).join(',')}`,
        );
        this.stmts.set(key, stmt);
      }
      const flat: unknown[] = new Array(chunk.length * cols.length);
      let k = 0;
      for (const r of chunk) for (const c of cols) flat[k++] = r[c];
      stmt.run(flat);
      onRows?.(i + chunk.length);
    }
  }
  async begin(): Promise<void> {
    this.db.exec('BEGIN');
  }
  async commit(): Promise<void> {
    this.db.exec('COMMIT');
  }
  async dropIndexes(tables: string[]): Promise<void> {
    const rows = this.db
      .prepare(
        `SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${tables.map(() => '?').join(',')})`,
      )
      .all(...tables) as { name: string; sql: string }[];
    for (const r of rows) this.db.exec(`DROP INDEX "${r.name}"`);
    this.dropped = rows;
  }
  async rebuildIndexes(onStep?: OnIndexStep): Promise<void> {
    for (const [i, r] of this.dropped.entries()) {
      onStep?.(i, this.dropped.length, r.name);
      this.db.exec(r.sql);
    }
    this.dropped = [];
  }
  async close(): Promise<void> {
    this.db.pragma('locking_mode = NORMAL');
    // Back to Corridor's journal mode (it sets WAL on open too); the file is complete on its own.
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
    this.db.close();
  }
}

/** PostgreSQL array types for `unnest`, from the column types Corridor's migrations created. */
const PG_ARRAY_TYPES: Record<string, string> = { text: 'text[]', bigint: 'int8[]', integer: 'int4[]' };

export class PgWriter implements BulkWriter {
  private readonly types = new Map<string, Map<string, string>>();
  private dropped: { name: string; def: string }[] = [];
  private tables: string[] = [];
  constructor(private readonly client: pg.Client) {}
  static async open(url: string): Promise<PgWriter> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    // A bulk load: commits need not wait for the WAL flush; index builds may use more memory.
    await client.query(`SET synchronous_commit = off`);
    await client.query(`SET maintenance_work_mem = '256MB'`);
    return new PgWriter(client);
  }
  private async columnTypes(table: string): Promise<Map<string, string>> {
    let t = this.types.get(table);
    if (!t) {
      const r = await this.client.query<{ column_name: string; data_type: string }>(
        `SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
        [table],
      );
      t = new Map(r.rows.map((x) => [x.column_name, PG_ARRAY_TYPES[x.data_type] ?? `${x.data_type}[]`]));
      this.types.set(table, t);
    }
    return t;
  }
  async insert(table: string, rows: readonly object[], onRows?: OnRows): Promise<void> {
    if (rows.length === 0) return;
    const cols = Object.keys(rows[0]!);
    const types = await this.columnTypes(table);
    const per = 5_000;
    for (let i = 0; i < rows.length; i += per) {
      const chunk = rows.slice(i, i + per) as Row[];
      const params = cols.map((c) => chunk.map((r) => r[c]));
      const unnest = cols.map((c, j) => `$${j + 1}::${types.get(c) ?? 'text[]'}`).join(', ');
      await this.client.query(`INSERT INTO ${table} (${cols.map((c) => `"${c}"`).join(', ')}) SELECT * FROM unnest(${unnest})`, params);
      onRows?.(i + chunk.length);
    }
  }
  async begin(): Promise<void> {
    await this.client.query('BEGIN');
  }
  async commit(): Promise<void> {
    await this.client.query('COMMIT');
  }
  async dropIndexes(tables: string[]): Promise<void> {
    // Indexes behind a primary key or unique constraint stay (they are the constraint).
    const r = await this.client.query<{ name: string; def: string }>(
      `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
        WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = format('%I.%I', i.schemaname, i.indexname)::regclass)`,
      [tables],
    );
    for (const x of r.rows) await this.client.query(`DROP INDEX "${x.name}"`);
    this.dropped = r.rows;
    this.tables = tables;
  }
  async rebuildIndexes(onStep?: OnIndexStep): Promise<void> {
    const steps = this.dropped.length + this.tables.length;
    for (const [i, x] of this.dropped.entries()) {
      onStep?.(i, steps, x.name);
      await this.client.query(x.def);
    }
    // What autovacuum would do to the new rows later: planner statistics, and the visibility map
    // that lets counts be answered from an index alone.
    for (const [i, t] of this.tables.entries()) {
      onStep?.(this.dropped.length + i, steps, `VACUUM (ANALYZE) ${t}`);
      await this.client.query(`VACUUM (ANALYZE) ${t}`);
    }
    this.dropped = [];
  }
  async close(): Promise<void> {
    await this.client.end();
  }
}

/** `url` with its sessions' search_path set to `schema` (a libpq `options` parameter, which `pg` passes on). */
export function withSearchPath(url: string, schema: string): string {
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  return u.toString();
}

/** Drops and recreates a PostgreSQL schema (for a dedicated data-set schema). */
export async function resetPgSchema(url: string, schema: string): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`schema name "${schema}" must be lowercase letters, digits and _`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
}

/**
 * Drops schemas a run made (after its servers closed), giving up on a lock after 5 s: one still
 * held by a killed process's connection leaves the schema behind rather than hanging.
 */
export async function dropPgSchemas(url: string, schemas: readonly string[]): Promise<void> {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    for (const s of schemas) await client.query(`SET lock_timeout = '5s'; DROP SCHEMA IF EXISTS ${s} CASCADE`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
