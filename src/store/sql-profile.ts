/**
 * Where the embedded store's time goes, statement by statement: a development tool behind
 * CORRIDOR_SQL_PROFILE (`npm run bench -- --sql-profile`), off otherwise (the store then prepares
 * its statements as it always does, with nothing in between).
 *
 * Every statement SQLite runs for the process — BEGIN and COMMIT included — is timed around the
 * native call and added to its SQL text's row: calls, total time, rows changed or returned. The
 * totals are cumulative; a reader takes two snapshots and subtracts (the bench does it around its
 * measured window). Times are wall-clock inside the native call on the event loop's thread, which
 * is where SQLite runs: nothing else runs meanwhile.
 */
import type SQLite from 'better-sqlite3';

export interface StatementTiming {
  sql: string;
  calls: number;
  /** Total time inside SQLite, in microseconds. */
  us: number;
  /** Rows changed (writes) or returned (reads). */
  rows: number;
}

type Prepare = (sql: string) => SQLite.Statement;

export interface StatementProfiler {
  prepare: Prepare;
  snapshot(): StatementTiming[];
}

export function profileStatements(prepare: Prepare): StatementProfiler {
  const totals = new Map<string, StatementTiming>();
  const wrapped = new WeakMap<SQLite.Statement, SQLite.Statement>();
  const add = (sql: string, started: bigint, rows: number) => {
    const us = Number(process.hrtime.bigint() - started) / 1000;
    const t = totals.get(sql);
    if (t) {
      t.calls++;
      t.us += us;
      t.rows += rows;
    } else totals.set(sql, { sql, calls: 1, us, rows });
  };
  const wrap = (stmt: SQLite.Statement): SQLite.Statement => {
    const sql = stmt.source;
    return new Proxy(stmt, {
      get(target, prop) {
        if (prop === 'run')
          return (...args: unknown[]) => {
            const t0 = process.hrtime.bigint();
            const r = target.run(...args);
            add(sql, t0, r.changes);
            return r;
          };
        if (prop === 'all')
          return (...args: unknown[]) => {
            const t0 = process.hrtime.bigint();
            const r = target.all(...args);
            add(sql, t0, r.length);
            return r;
          };
        const v: unknown = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  };
  return {
    prepare(sql) {
      const stmt = prepare(sql);
      let w = wrapped.get(stmt);
      if (!w) {
        w = wrap(stmt);
        wrapped.set(stmt, w);
      }
      return w;
    },
    snapshot: () => [...totals.values()].map((t) => ({ ...t })),
  };
}
