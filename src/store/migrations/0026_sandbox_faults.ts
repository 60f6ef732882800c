/**
 * Fault injection for sandbox platforms (issue #25): one row per platform that has fault rules, the
 * rules as JSON (validated and normalised by src/modules/sandbox/faults.rules.ts). A platform without
 * faults has no row. Kept in the store (not in one process's memory) so every process on one
 * PostgreSQL database applies the same rules. Types: src/modules/sandbox/faults.tables.ts.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0026SandboxFaults: Migration = {
  name: '0026_sandbox_faults',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('sandbox_faults')
      .addColumn('platform_id', 'text', (c) => c.primaryKey())
      .addColumn('rules', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
  },
};
