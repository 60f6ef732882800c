/**
 * The start-up sweep of the secrets at rest (`corridor start`, right after the migrations):
 *
 * 1. Refuse: when any stored secret is sealed under a key that is not configured (or any is sealed
 *    and no key is configured), throw a {@link SecretKeyError} naming the cause; the server does not
 *    start rather than failing later request by request.
 * 2. Seal: with a key configured, every clear secret is sealed under it and every secret under the
 *    previous key (CORRIDOR_SECRET_KEY_PREVIOUS) is sealed again under the current one.
 *
 * Several processes may start at once on one PostgreSQL database. Each row is rewritten by a
 * compare-and-set (`… WHERE key = k AND value = <the value read>`), so a row another process sealed
 * meanwhile is left alone and counted by the process that sealed it; running servers are unaffected
 * (a sealed value opens, a clear one still does). On PostgreSQL the check and the sweep run behind a
 * session advisory lock, so a second process checks only after the first has sealed: two processes
 * started with different keys cannot both seal a fresh store. A batch of rows is one UPDATE … FROM
 * (VALUES …) statement in its own transaction (no lock is held between batches; a deadlock with a
 * request transaction, which only a multi-row statement could meet, runs the batch again — it is
 * idempotent).
 */
import { sql, type Kysely } from 'kysely';
import type { Store } from './db.ts';
import { retryOnConflict } from './retry.ts';
import { MISSING_KEY_MESSAGE, SEALED_PREFIX, SECRET_COLUMNS, SecretKeyError, secretRef, type SecretBox } from './secret-box.ts';

/** Arbitrary constant naming the secrets sweep's lock (beside the migration and start-up locks). */
const PG_SECRETS_LOCK_KEY = 7_240_515;
const BATCH = 200;

export interface SweepResult {
  /** Clear secrets sealed under the current key. */
  sealed: number;
  /** Secrets under the previous key sealed again under the current key. */
  resealed: number;
}

/** Checks the stored secrets against the configured keys, then seals what is clear or under the previous key. */
export async function sealStoredSecrets(store: Store, box: SecretBox): Promise<SweepResult> {
  if (store.kind === 'postgres') {
    return store.db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${PG_SECRETS_LOCK_KEY})`.execute(conn);
      try {
        return await sweep(conn, box);
      } finally {
        await sql`select pg_advisory_unlock(${PG_SECRETS_LOCK_KEY})`.execute(conn);
      }
    });
  }
  return sweep(store.db, box);
}

/** The one start-up line about the secrets at rest (no secret in it; the key id is a one-way fingerprint). */
export function sweepSummary(box: SecretBox, r: SweepResult): string {
  return `secrets at rest: encrypted with key ${box.keyId}; sealed ${r.sealed} clear, re-sealed ${r.resealed} from the previous key`;
}

// biome-ignore lint/suspicious/noExplicitAny: `any`: the sweep walks several tables by name; the column list is SECRET_COLUMNS.
async function sweep(db: Kysely<any>, box: SecretBox): Promise<SweepResult> {
  const { current, previous } = box.prefixes;
  const known = [current, previous].filter((p): p is string => p !== undefined);
  // All prefixes have one length: `enc:v1:<16 hex>:`.
  const prefixLength = known[0]?.length ?? 0;

  for (const c of Object.values(SECRET_COLUMNS)) {
    let q = db
      .selectFrom(c.table)
      .select(c.key)
      .where(c.column, 'is not', null)
      .where(sql`substr(${sql.ref(c.column)}, 1, ${sql.lit(SEALED_PREFIX.length)})`, '=', SEALED_PREFIX);
    if (known.length > 0) q = q.where(sql`substr(${sql.ref(c.column)}, 1, ${sql.lit(prefixLength)})`, 'not in', known);
    if (await q.limit(1).executeTakeFirst()) throw new SecretKeyError(MISSING_KEY_MESSAGE);
  }
  const result: SweepResult = { sealed: 0, resealed: 0 };
  if (!box.enabled) return result;

  for (const c of Object.values(SECRET_COLUMNS)) {
    let after: string | undefined;
    for (;;) {
      let q = db
        .selectFrom(c.table)
        .select([`${c.key} as k`, `${c.column} as v`])
        .where(c.column, 'is not', null)
        .where((eb) =>
          eb.or([
            eb(sql`substr(${sql.ref(c.column)}, 1, ${sql.lit(SEALED_PREFIX.length)})`, '<>', SEALED_PREFIX),
            ...(previous ? [eb(sql`substr(${sql.ref(c.column)}, 1, ${sql.lit(prefixLength)})`, '=', previous)] : []),
          ]),
        );
      if (after !== undefined) q = q.where(c.key, '>', after);
      const rows = (await q.orderBy(c.key).limit(BATCH).execute()) as { k: string; v: string }[];
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.k;

      const wasClear = new Map(rows.map((r) => [r.k, box.state(r.v) === 'clear']));
      // One statement per batch; each row is written only if it still holds the value read.
      const values = sql.join(rows.map((r) => sql`(${r.k}, ${r.v}, ${box.reseal(r.v, secretRef(c, r.k))})`));
      const updated = await retryOnConflict(() =>
        sql<{ k: string }>`update ${sql.table(c.table)} set ${sql.ref(c.column)} = v.column3 from (values ${values}) as v
          where ${sql.ref(`${c.table}.${c.key}`)} = v.column1 and ${sql.ref(`${c.table}.${c.column}`)} = v.column2
          returning ${sql.ref(`${c.table}.${c.key}`)} as k`.execute(db),
      );
      for (const u of updated.rows) result[wasClear.get(u.k) ? 'sealed' : 'resealed'] += 1;
    }
  }
  return result;
}
