/**
 * Row locks as a repository option. A repository takes `{ forUpdate: true }` when its caller will
 * write what it reads in the same transaction; the store decides what that means: `FOR UPDATE` on
 * PostgreSQL, nothing on SQLite, where one write transaction runs at a time (a read inside it is
 * stable until it commits). Modules never branch on the store's dialect.
 */
import { PostgresAdapter, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

export interface LockOptions {
  /** Hold the rows read until the transaction ends (PostgreSQL `FOR UPDATE`). */
  forUpdate?: boolean | undefined;
}

/** Whether `db` (a transaction or the pool) talks to PostgreSQL. */
export function isPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** `q`, with `FOR UPDATE` when asked for and the store has row locks. */
export function lockRows<Q extends { forUpdate(): Q }>(db: Kysely<Database>, q: Q, opts: LockOptions | undefined): Q {
  return opts?.forUpdate === true && isPostgres(db) ? q.forUpdate() : q;
}
