/**
 * Retrying a transaction that lost a PostgreSQL deadlock (40P01) or serialisation failure (40001),
 * or met a statement made stale by a concurrent migration (0A000, "cached plan must not change
 * result type"):
 * the database rolled it back entirely, so running it again is safe, and the conflict is another
 * writer's timing, not the request's fault.
 */

import { isStalePreparedStatement } from './pg-prepared.ts';

/** Attempts in all, the first included. */
const MAX_ATTEMPTS = 4;

export function isTransientConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  // A statement prepared before another process's migration changed its result type
  // (store/pg-prepared.ts) is prepared afresh when the transaction runs again.
  return code === '40P01' || code === '40001' || isStalePreparedStatement(err);
}

export async function retryOnConflict<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= MAX_ATTEMPTS || !isTransientConflict(err)) throw err;
      // A short, growing, jittered pause lets the other transaction finish first.
      await new Promise((r) => setTimeout(r, attempt * 5 + Math.random() * 10));
    }
  }
}
