/**
 * The store records which platform is its bootstrap sandbox platform (the one `corridor start`
 * creates and prints), in a one-row table of its own. Before this, the bootstrap platform was found
 * through its token (`api_tokens.is_bootstrap`), so deleting that token orphaned the platform and
 * the next start created a second one. Existing stores adopt the oldest platform that holds a
 * bootstrap token, which is the one start was using.
 */
import { sql, type Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0012BootstrapPlatform: Migration = {
  name: '0012_bootstrap_platform',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('bootstrap_platform')
      // One row at most: the key can only be 1.
      .addColumn('singleton', 'integer', (c) => c.primaryKey().check(sql`singleton = 1`))
      .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await sql`
      insert into bootstrap_platform (singleton, platform_id, created_at)
      select 1, p.id, p.created_at from platforms p
      where exists (select 1 from api_tokens t where t.platform_id = p.id and t.is_bootstrap = 1)
      order by p.created_at, p.id
      limit 1`.execute(db);
  },
};
