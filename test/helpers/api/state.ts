/**
 * A platform's observable state, read straight from the store: a digest of every row of every
 * table that carries `platform_id` (plus the platform row itself). Two equal snapshots mean no
 * request in between changed anything of that platform.
 */
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { TestServer } from '../server.ts';

/**
 * Tables left out, each for a reason that is part of the design rather than a leak:
 * - auth_attempts: failed OTP verifies and challenge issues are counted on purpose (rate limiting
 *   of wallet login, spec §8), so a rejected verify legitimately adds a row.
 */
const EXCLUDED = new Set(['auth_attempts']);

export type Snapshot = Map<string, { rows: number; digest: string }>;

let tablesCache: { name: string; columns: string[] }[] | undefined;

/** Tables with a platform_id column and their columns, by introspection (new tables are covered too). */
async function platformTables(srv: TestServer): Promise<{ name: string; columns: string[] }[]> {
  if (tablesCache) return tablesCache;
  const tables = await tablesOf(srv);
  tablesCache = tables
    .filter((t) => t.columns.some((c) => c.name === 'platform_id') && !EXCLUDED.has(t.name) && !t.name.startsWith('kysely_'))
    .map((t) => ({ name: t.name, columns: t.columns.map((c) => c.name).sort() }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  return tablesCache;
}

let platformColumns: string[] | undefined;

/**
 * The store's tables with their columns. On PostgreSQL only the test's own schema: Kysely's
 * introspector lists every schema of the database, and other test files create and drop theirs
 * meanwhile (its catalogue query then fails on a table dropped under it).
 */
async function tablesOf(srv: TestServer): Promise<{ name: string; columns: { name: string }[] }[]> {
  const db = srv.app.ctx.db;
  if (srv.app.ctx.store.kind !== 'postgres') return db.introspection.getTables();
  const res = await sql<{ table_name: string; column_name: string }>`
    select table_name, column_name from information_schema.columns where table_schema = current_schema()`.execute(db);
  const byTable = new Map<string, { name: string }[]>();
  for (const r of res.rows) byTable.set(r.table_name, [...(byTable.get(r.table_name) ?? []), { name: r.column_name }]);
  return [...byTable].map(([name, columns]) => ({ name, columns }));
}

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

/**
 * One query for the whole snapshot (a round trip per table made it the fuzzer's main cost on
 * PostgreSQL): each row as the text of its columns joined, identical on both stores.
 */
export async function snapshot(srv: TestServer, platformId: string): Promise<Snapshot> {
  const tables = await platformTables(srv);
  const rowText = (columns: string[]) => columns.map((c) => `coalesce(cast(${quote(c)} as text), '<null>')`).join(` || '|' || `);
  platformColumns ??= (await tablesOf(srv))
    .find((t) => t.name === 'platforms')!
    .columns.map((c) => c.name)
    .sort();
  const parts = [sql`select 'platforms' as t, ${sql.raw(rowText(platformColumns))} as r from platforms where id = ${platformId}`];
  for (const t of tables)
    parts.push(
      sql`select ${sql.lit(t.name)} as t, ${sql.raw(rowText(t.columns))} as r from ${sql.table(t.name)} where platform_id = ${platformId}`,
    );
  const res = await sql<{ t: string; r: string }>`${sql.join(parts, sql` union all `)}`.execute(srv.app.ctx.db);
  const byTable = new Map<string, string[]>([['platforms', []], ...tables.map((t) => [t.name, []] as [string, string[]])]);
  for (const row of res.rows) byTable.get(row.t)!.push(row.r);
  const out: Snapshot = new Map();
  for (const [t, rows] of byTable) {
    rows.sort();
    out.set(t, { rows: rows.length, digest: createHash('sha256').update(rows.join('\n')).digest('hex') });
  }
  return out;
}

/** The tables that differ, with row counts before → after; empty when equal. */
export function diff(before: Snapshot, after: Snapshot): string[] {
  const out: string[] = [];
  for (const [t, b] of before) {
    const a = after.get(t);
    if (!a || a.digest !== b.digest) out.push(`${t} (${b.rows} → ${a?.rows ?? 'gone'} rows)`);
  }
  return out;
}
