/**
 * PostgreSQL only: pages of the tables every payment updates once after inserting — transactions
 * (settled), quotes (executed), jobs (done) — are filled to 70 %, so a row's new version usually
 * fits on its own page (issue #26). A quote's status is in none of its indexes, so its update
 * becomes a HOT update (no index entries at all); a transaction's and a job's still add index
 * entries, but write the row where it was instead of looking for room elsewhere. Measured in the
 * payment bench: PostgreSQL's CPU per payment 3–9 % lower in each of three alternating pairs
 * (docs/performance.md). The tables take ~30 % more pages. Existing pages keep their fill until
 * rewritten; SQLite has no such setting.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../row-lock.ts';
import type { Database } from '../schema.ts';
import type { Migration } from './index.ts';

export const m0029UpdateRoom: Migration = {
  name: '0029_update_room',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    if (!isPostgres(db as Kysely<Database>)) return;
    for (const table of ['transactions', 'quotes', 'jobs']) await sql`alter table ${sql.table(table)} set (fillfactor = 70)`.execute(db);
  },
};
