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
import { PipelinedClient, pipelinedPoolClient } from './pg-pipeline.ts';

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
        w = pipelinedPoolClient(new PipelinedClient(client, names, isStalePreparedStatement));
        wrapped.set(client, w);
      }
      return w;
    },
    end: () => pool.end(),
  };
}

/** Statement names by SQL text, for this process. */
export class Names {
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
