/**
 * PostgreSQL statements prepared once per connection. Kysely sends every query as an unnamed
 * statement, which PostgreSQL parses, analyses and plans on every execution — for Corridor's short
 * statements that is much of their cost. Here each distinct SQL text with parameters gets a name,
 * so `pg` prepares it the first time a connection runs it and then only binds and executes it
 * (PostgreSQL's plan cache decides between custom and generic plans, as for any prepared statement).
 *
 * - Names are per process and capped (MAX_NAMED texts); past the cap, new texts run unnamed.
 * - A statement prepared before a concurrent migration changed its result type (another process
 *   upgraded the schema) fails with 0A000 "cached plan must not change result type". Names then
 *   move to a new generation, so every statement is prepared afresh on its next use, and a query
 *   outside a transaction is run again at once; inside a transaction the error aborts it, as any
 *   transient error does (the request's retry, or the caller, sees it once).
 */
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

const MAX_NAMED = 5000;

/**
 * PostgreSQL's answer to a prepared statement whose result type a migration changed. Its code,
 * 0A000, is the general "feature not supported", so the message is checked too: any other 0A000 is
 * a real error, not something to prepare again or retry.
 */
export function isStalePreparedStatement(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  return e?.code === '0A000' && typeof e.message === 'string' && e.message.includes('cached plan must not change result type');
}

export function preparingPool(pool: pg.Pool): PostgresPool {
  const names = new Names();
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  return {
    async connect() {
      const client = await pool.connect();
      let w = wrapped.get(client);
      if (!w) {
        w = preparingClient(client, names);
        wrapped.set(client, w);
      }
      return w;
    },
    end: () => pool.end(),
  };
}

function preparingClient(client: pg.PoolClient, names: Names): PostgresPoolClient {
  let inTransaction = false;
  const run = async (sql: string, parameters: readonly unknown[]) => {
    const name = names.of(sql);
    if (!name) return client.query(sql, parameters as unknown[]);
    try {
      return await client.query({ name, text: sql, values: parameters as unknown[] });
    } catch (err) {
      if (!isStalePreparedStatement(err)) throw err;
      names.renew();
      if (inTransaction) throw err;
      return client.query(sql, parameters as unknown[]);
    }
  };
  return {
    // Kysely's driver calls query(sql, parameters); the query(cursor) form is for streaming with a
    // cursor class configured, which Corridor does not do (the cast only drops that overload).
    query: ((sql: string, parameters: readonly unknown[]) => {
      // BEGIN/COMMIT/ROLLBACK (and savepoints) arrive as raw statements without parameters.
      if (parameters.length === 0) {
        const head = sql.trimStart().slice(0, 12).toLowerCase();
        if (head.startsWith('begin') || head.startsWith('start')) inTransaction = true;
        else if (head.startsWith('commit') || (head.startsWith('rollback') && !head.startsWith('rollback to'))) inTransaction = false;
        return client.query(sql);
      }
      return run(sql, parameters);
    }) as unknown as PostgresPoolClient['query'],
    release: () => {
      inTransaction = false;
      client.release();
    },
  };
}

/** Statement names by SQL text, for this process. */
class Names {
  private readonly bySql = new Map<string, string>();
  private generation = 0;

  of(sql: string): string | undefined {
    const hit = this.bySql.get(sql);
    if (hit !== undefined) return hit;
    if (this.bySql.size >= MAX_NAMED) return undefined;
    const name = `c${this.generation}_${this.bySql.size}`;
    this.bySql.set(sql, name);
    return name;
  }

  /** Forget every name: statements are prepared again under new ones. */
  renew(): void {
    this.bySql.clear();
    this.generation++;
  }
}
