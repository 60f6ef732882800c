/**
 * Delegated keys (issue #22): the card funding-source bindings they belong to, and the keys
 * themselves. At most one ACTIVE key per binding is a partial unique index (SQLite and PostgreSQL
 * both have them), beside the service's locked check.
 */
import { sql, type Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0016DelegatedKeys: Migration = {
  name: '0016_delegated_keys',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('card_funding_sources')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('card_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('card_funding_sources_pair')
      .on('card_funding_sources')
      .columns(['platform_id', 'card_id', 'account_id'])
      .unique()
      .execute();

    await db.schema
      .createTable('delegated_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('funding_source_id', 'text', (c) => c.notNull())
      .addColumn('card_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('public_key', 'text', (c) => c.notNull())
      // Sealed private scalar; null once the key is revoked.
      .addColumn('private_key', 'text')
      .addColumn('nickname', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('delegated_keys_account').on('delegated_keys').columns(['platform_id', 'account_id', 'id']).execute();
    await db.schema
      .createIndex('delegated_keys_funding_source')
      .on('delegated_keys')
      .columns(['platform_id', 'funding_source_id', 'id'])
      .execute();
    await db.schema
      .createIndex('delegated_keys_one_active')
      .on('delegated_keys')
      .column('funding_source_id')
      .unique()
      .where(sql.ref('status'), '=', 'ACTIVE')
      .execute();
  },
};
