/** Customers (individual and business). Soft-deleted rows keep their id so later reads can answer 410. */
import { sql, type Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0002Customers: Migration = {
  name: '0002_customers',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('customers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
      .addColumn('customer_type', 'text', (c) => c.notNull())
      .addColumn('platform_customer_id', 'text', (c) => c.notNull())
      .addColumn('uma_address', 'text', (c) => c.notNull())
      .addColumn('region', 'text')
      .addColumn('kyc_status', 'text')
      .addColumn('kyb_status', 'text')
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('currencies', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('deleted_at', 'text')
      .execute();
    await db.schema.createIndex('customers_platform').on('customers').columns(['platform_id', 'id']).execute();
    await db.schema.createIndex('customers_platform_created').on('customers').columns(['platform_id', 'created_at']).execute();
    await db.schema.createIndex('customers_platform_updated').on('customers').columns(['platform_id', 'updated_at']).execute();
    await db.schema
      .createIndex('customers_platform_customer_id_active')
      .on('customers')
      .columns(['platform_id', 'platform_customer_id'])
      .unique()
      .where(sql.ref('deleted_at'), 'is', null)
      .execute();
    await db.schema
      .createIndex('customers_uma_address_active')
      .on('customers')
      .columns(['platform_id', 'uma_address'])
      .unique()
      .where(sql.ref('deleted_at'), 'is', null)
      .execute();
  },
};
