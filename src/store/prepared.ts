/**
 * Statements of hot paths, built with Kysely once per store and re-run with new parameters.
 *
 * Building and compiling a Kysely query costs more than SQLite takes to run it, and every
 * statement through Kysely's executor costs several promises. A `Prepared` statement is built once
 * (per dialect: the SQL text differs between SQLite and PostgreSQL) with placeholder arguments,
 * and each run only substitutes the arguments. Inside a SQLite transaction it runs synchronously on
 * the transaction's connection (the transaction holds SQLite's only connection while it runs);
 * elsewhere — PostgreSQL, or outside any transaction — it goes through Kysely's executor as usual.
 *
 * The builder must not branch on its arguments: it is called once, with stand-ins, and whatever
 * query it builds then is the statement. Arguments may appear anywhere a value can (where, set,
 * values, `sql` fragments, limit); a list of values (`in`) needs one argument per element.
 */
import { SqliteAdapter, type Compilable, type CompiledQuery, type Kysely, type Selectable } from 'kysely';
import { DEFERRED } from './pg-deferred.ts';
import type { Database } from './schema.ts';
import { SqliteHandle } from './sqlite-group-commit.ts';

/** Where each compiled parameter comes from: a named argument, or a constant of the builder. */
type Slot = { arg: string } | { value: unknown };

interface Compiled {
  query: CompiledQuery;
  slots: Slot[];
  sqlite: boolean;
  /**
   * `DEFERRED` + the SQL, built once and flat. Concatenated per call, it was a new cons string
   * each time, which V8 copied whole to hash it (the pipeline looks statements up by text) and to
   * match it (group commit tells reads from writes): ~10 % of a payment's CPU at low rates.
   */
  deferredSql?: string;
}

const STAND_IN = '\u0000corridor-arg:';

/** Stand-ins for the builder: every property read yields a marker naming the argument. */
const standIns: Record<string, unknown> = new Proxy({}, { get: (_t, key) => `${STAND_IN}${String(key)}` });

/** The SQLite connection each open transaction holds (found once per transaction). */
const handles = new WeakMap<Kysely<Database>, SqliteHandle>();

export class Prepared<A extends Record<string, unknown>, R> {
  /** By dialect adapter: one compiled form per store. */
  private readonly compiled = new WeakMap<object, Compiled>();

  constructor(private readonly build: (db: Kysely<Database>, args: A) => Compilable<R>) {}

  /** The rows it returns (SELECT, or a write with RETURNING). */
  all(db: Kysely<Database>, args: A): R[] | Promise<R[]> {
    const r = this.execute(db, args);
    return r instanceof Promise ? r.then((x) => x.rows) : r.rows;
  }

  /** The first row it returns, if any. */
  first(db: Kysely<Database>, args: A): R | undefined | Promise<R | undefined> {
    const r = this.execute(db, args);
    return r instanceof Promise ? r.then((x) => x.rows[0]) : r.rows[0];
  }

  /** Runs a write; resolves to the number of rows it changed. */
  run(db: Kysely<Database>, args: A): number | Promise<number> {
    const r = this.execute(db, args);
    return r instanceof Promise ? r.then((x) => x.changes) : r.changes;
  }

  /**
   * Runs a write whose result the caller does not need — an INSERT of a fresh row, say. On
   * PostgreSQL inside a transaction it is queued and sent with the transaction's next statement or
   * its COMMIT (store/pg-pipeline.ts), so it costs no round trip of its own; should it fail, that
   * next statement fails with its error. Elsewhere it runs now, as `run` does.
   */
  defer(db: Kysely<Database>, args: A): void | Promise<void> {
    const c = this.compiledFor(db);
    if (c.sqlite) {
      const r = this.execute(db, args);
      return r instanceof Promise ? r.then(() => undefined) : undefined;
    }
    c.deferredSql ??= Buffer.from(DEFERRED + c.query.sql, 'utf8').toString('utf8');
    return db.executeQuery({ ...c.query, sql: c.deferredSql, parameters: this.params(c, args) }).then(() => undefined);
  }

  private params(c: Compiled, args: A): unknown[] {
    const params = new Array<unknown>(c.slots.length);
    for (let i = 0; i < c.slots.length; i++) {
      const s = c.slots[i]!;
      params[i] = 'arg' in s ? args[s.arg] : s.value;
    }
    return params;
  }

  private execute(db: Kysely<Database>, args: A): Result<R> | Promise<Result<R>> {
    const c = this.compiledFor(db);
    const params = this.params(c, args);
    if (c.sqlite && db.isTransaction) {
      const h = handles.get(db);
      if (h?.state === 'in-transaction') return h.driver.runStatement<R>(h, c.query.sql, params);
      if (!h) return findHandle(db).then(() => this.execute(db, args));
    }
    return db.executeQuery<R>({ ...c.query, parameters: params }).then((r) => ({ rows: r.rows, changes: Number(r.numAffectedRows ?? 0n) }));
  }

  private compiledFor(db: Kysely<Database>): Compiled {
    const adapter = db.getExecutor().adapter;
    let c = this.compiled.get(adapter);
    if (!c) {
      const query = this.build(db, standIns as A).compile();
      const slots = query.parameters.map(
        (p): Slot => (typeof p === 'string' && p.startsWith(STAND_IN) ? { arg: p.slice(STAND_IN.length) } : { value: p }),
      );
      c = { query, slots, sqlite: adapter instanceof SqliteAdapter };
      this.compiled.set(adapter, c);
    }
    return c;
  }
}

export interface Result<R> {
  rows: R[];
  changes: number;
}

/** Declares a hot-path statement (see the module comment for what the builder may do). */
export function prepared<A extends Record<string, unknown>, R>(build: (db: Kysely<Database>, args: A) => Compilable<R>): Prepared<A, R> {
  return new Prepared(build);
}

/** Learns which SQLite connection a transaction holds (its executor knows; asked once). */
async function findHandle(trx: Kysely<Database>): Promise<void> {
  const conn = await trx.getExecutor().provideConnection(async (c) => c);
  if (!(conn instanceof SqliteHandle)) throw new Error('a SQLite transaction without the group-commit driver');
  handles.set(trx, conn);
}

/**
 * An INSERT of one whole row of `table`. `columns` lists every column (the type makes a missing
 * one a compile error), so a row object is written as it is.
 */
export function preparedInsert<T extends keyof Database, Row extends Record<string, unknown> = Selectable<Database[T]>>(
  table: T,
  columns: Record<keyof Row, true>,
): Prepared<Row, unknown> {
  const names = Object.keys(columns) as Array<keyof Row & string>;
  return prepared((db, a: Row) => {
    const values: Record<string, unknown> = {};
    for (const c of names) values[c] = a[c];
    // `never`: the column list is checked against the row type above; Kysely cannot see that.
    return db.insertInto(table).values(values as never);
  });
}
