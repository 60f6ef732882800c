/**
 * Agents: programmatic clients bound to one customer and a policy. Device codes and access tokens
 * are stored only as SHA-256 hashes; actions record what an agent asked for and its decision.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0009Agents: Migration = {
  name: '0009_agents',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('agents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('is_paused', 'integer', (c) => c.notNull())
      .addColumn('is_connected', 'integer', (c) => c.notNull())
      .addColumn('policy', 'text', (c) => c.notNull())
      .addColumn('usage_day', 'text', (c) => c.notNull())
      .addColumn('daily_count', 'integer', (c) => c.notNull())
      .addColumn('daily_spend', 'bigint', (c) => c.notNull())
      .addColumn('usage_month', 'text', (c) => c.notNull())
      .addColumn('monthly_spend', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('deleted_at', 'text')
      .execute();
    await db.schema.createIndex('agents_platform').on('agents').columns(['platform_id', 'id']).execute();

    await db.schema
      .createTable('agent_device_codes')
      .addColumn('code_hash', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('redeemed_at', 'text')
      .addColumn('superseded_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('agent_device_codes_agent').on('agent_device_codes').columns(['agent_id']).execute();

    await db.schema
      .createTable('agent_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('agent_tokens_agent').on('agent_tokens').columns(['agent_id']).execute();

    await db.schema
      .createTable('agent_actions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('platform_customer_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('quote_id', 'text')
      .addColumn('transfer_details', 'text')
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('transaction_id', 'text')
      .addColumn('rejection_reason', 'text')
      .addColumn('failure_reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('agent_actions_agent').on('agent_actions').columns(['agent_id', 'id']).execute();
    await db.schema.createIndex('agent_actions_platform_status').on('agent_actions').columns(['platform_id', 'status', 'id']).execute();
    await db.schema.createIndex('agent_actions_quote').on('agent_actions').columns(['quote_id']).execute();

    await db.schema
      .createTable('agent_quotes')
      .addColumn('quote_id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },
};
