/**
 * Stablecoins (issue #24): provider account links (their API secret sealed), registered
 * stablecoins (with their materialised supply and the amounts of mints and burns in flight), and
 * mint and burn operations. Types: src/modules/stablecoins/stablecoins.tables.ts.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0024Stablecoins: Migration = {
  name: '0024_stablecoins',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('stablecoin_provider_accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('provider_account_id', 'text', (c) => c.notNull())
      .addColumn('provider_environment', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('api_client_id', 'text', (c) => c.notNull())
      .addColumn('api_client_secret', 'text', (c) => c.notNull())
      .addColumn('last_verified_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // One link per provider account: a second link of the same account is a 409 (or a re-link).
    await db.schema
      .createIndex('stablecoin_provider_accounts_account')
      .on('stablecoin_provider_accounts')
      .columns(['platform_id', 'provider', 'provider_environment', 'provider_account_id'])
      .unique()
      .execute();
    await db.schema
      .createIndex('stablecoin_provider_accounts_list')
      .on('stablecoin_provider_accounts')
      .columns(['platform_id', 'id'])
      .execute();

    await db.schema
      .createTable('stablecoins')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('provider_account_link_id', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('provider_environment', 'text', (c) => c.notNull())
      .addColumn('provider_token_identifier', 'text', (c) => c.notNull())
      .addColumn('network', 'text', (c) => c.notNull())
      .addColumn('network_token_identifier', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('symbol', 'text', (c) => c.notNull())
      .addColumn('decimals', 'integer', (c) => c.notNull())
      .addColumn('base_currency', 'text', (c) => c.notNull())
      .addColumn('issuance_status', 'text', (c) => c.notNull())
      .addColumn('grid_operations_status', 'text', (c) => c.notNull())
      .addColumn('supply', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('mints_in_flight', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('burns_in_flight', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // The token is registered once per platform (its identifier is the ledger currency).
    await db.schema
      .createIndex('stablecoins_token')
      .on('stablecoins')
      .columns(['platform_id', 'provider_token_identifier'])
      .unique()
      .execute();
    await db.schema
      .createIndex('stablecoins_network_token')
      .on('stablecoins')
      .columns(['platform_id', 'network', 'network_token_identifier'])
      .unique()
      .execute();
    await db.schema.createIndex('stablecoins_list').on('stablecoins').columns(['platform_id', 'id']).execute();

    await db.schema
      .createTable('stablecoin_operations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('stablecoin_id', 'text', (c) => c.notNull())
      .addColumn('operation_type', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('fiat_amount', 'bigint', (c) => c.notNull())
      .addColumn('base_currency', 'text', (c) => c.notNull())
      .addColumn('provider_account_link_id', 'text', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('provider_environment', 'text', (c) => c.notNull())
      .addColumn('source_type', 'text', (c) => c.notNull())
      .addColumn('source_external_account_id', 'text')
      .addColumn('destination_account_id', 'text', (c) => c.notNull())
      .addColumn('destination_rail', 'text')
      .addColumn('funding_instructions', 'text')
      .addColumn('expires_at', 'text')
      .addColumn('scenario', 'text', (c) => c.notNull())
      .addColumn('failure_reason', 'text')
      .addColumn('description', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('stablecoin_operations_list')
      .on('stablecoin_operations')
      .columns(['platform_id', 'stablecoin_id', 'operation_type', 'id'])
      .execute();
    await db.schema
      .createIndex('stablecoin_operations_coin')
      .on('stablecoin_operations')
      .columns(['platform_id', 'stablecoin_id', 'id'])
      .execute();
  },
};
