/**
 * External accounts (bank accounts, wallets, Lightning destinations) of customers and platforms.
 * Deletion is soft (`deleted_at`), so transfers that name an account keep resolving it. A partial
 * unique index refuses a second live account with the same identity for the same owner.
 */
import { sql, type Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0003ExternalAccounts: Migration = {
  name: '0003_external_accounts',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('external_accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
      .addColumn('customer_id', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('account_type', 'text', (c) => c.notNull())
      .addColumn('account_info', 'text', (c) => c.notNull())
      .addColumn('identifier', 'text', (c) => c.notNull())
      .addColumn('identity_key', 'text', (c) => c.notNull())
      .addColumn('platform_account_id', 'text')
      .addColumn('ownership_type', 'text')
      .addColumn('default_uma_deposit', 'integer')
      .addColumn('beneficiary_verification_status', 'text')
      .addColumn('beneficiary_verified_name', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('deleted_at', 'text')
      .execute();
    await db.schema.createIndex('external_accounts_platform').on('external_accounts').columns(['platform_id', 'id']).execute();
    await db.schema
      .createIndex('external_accounts_customer')
      .on('external_accounts')
      .columns(['platform_id', 'customer_id', 'id'])
      .execute();
    await db.schema
      .createIndex('external_accounts_identity_active')
      .on('external_accounts')
      .columns(['platform_id', 'identity_key'])
      .unique()
      .where(sql.ref('deleted_at'), 'is', null)
      .execute();
  },
};
