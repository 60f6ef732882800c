/**
 * Cards (issue #24): cards and their funding sources, card transactions (one parent row per approved
 * authorization), the issuer messages the sandbox simulations deliver (approved or declined), and
 * the reveals (audit records holding the page token's digest).
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0023Cards: Migration = {
  name: '0023_cards',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('cards')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('cardholder_id', 'text', (c) => c.notNull())
      .addColumn('platform_card_id', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('state_reason', 'text')
      .addColumn('brand', 'text')
      .addColumn('form', 'text', (c) => c.notNull())
      .addColumn('last4', 'text')
      .addColumn('exp_month', 'integer')
      .addColumn('exp_year', 'integer')
      .addColumn('pan', 'text')
      .addColumn('cvv', 'text')
      .addColumn('funding_sources', 'text', (c) => c.notNull())
      .addColumn('max_spend_per_transaction', 'bigint')
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('processor_ref', 'text', (c) => c.notNull())
      .addColumn('issuer_ref', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // Lists page by id per platform; the reset deletes by platform_id.
    await db.schema.createIndex('cards_platform').on('cards').columns(['platform_id', 'id']).execute();
    await db.schema.createIndex('cards_cardholder').on('cards').columns(['platform_id', 'cardholder_id', 'id']).execute();
    // platformCardId is unique per platform, as platformCustomerId is.
    await db.schema.createIndex('cards_platform_card_id').on('cards').columns(['platform_id', 'platform_card_id']).unique().execute();

    await db.schema
      .createTable('card_sources')
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('card_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('card_sources_pk', ['platform_id', 'card_id', 'account_id'])
      .execute();
    await db.schema.createIndex('card_sources_account').on('card_sources').columns(['platform_id', 'account_id', 'card_id']).execute();

    await db.schema
      .createTable('card_transactions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('card_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('platform_customer_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('issuer_transaction_token', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('direction', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('merchant', 'text', (c) => c.notNull())
      .addColumn('currency', 'text', (c) => c.notNull())
      .addColumn('authorized_amount', 'bigint', (c) => c.notNull())
      .addColumn('held_amount', 'bigint', (c) => c.notNull())
      .addColumn('settled_amount', 'bigint', (c) => c.notNull())
      .addColumn('refunded_amount', 'bigint', (c) => c.notNull())
      .addColumn('settlement_count', 'integer', (c) => c.notNull())
      .addColumn('refund_count', 'integer', (c) => c.notNull())
      .addColumn('pull_count', 'integer', (c) => c.notNull())
      .addColumn('pull_total', 'bigint', (c) => c.notNull())
      .addColumn('pull_pending_count', 'integer', (c) => c.notNull())
      .addColumn('shortfall', 'bigint', (c) => c.notNull())
      .addColumn('exception_reason', 'text')
      .addColumn('hold_expires_at', 'text')
      .addColumn('last_event_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // GET /transactions merges these in by id; its customer and account filters have their own.
    await db.schema.createIndex('card_transactions_platform').on('card_transactions').columns(['platform_id', 'id']).execute();
    await db.schema
      .createIndex('card_transactions_customer')
      .on('card_transactions')
      .columns(['platform_id', 'customer_id', 'id'])
      .execute();
    await db.schema.createIndex('card_transactions_account').on('card_transactions').columns(['platform_id', 'account_id', 'id']).execute();
    // The velocity limit counts a card's recent authorizations.
    await db.schema.createIndex('card_transactions_card').on('card_transactions').columns(['card_id', 'created_at']).execute();

    await db.schema
      .createTable('card_events')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('card_id', 'text', (c) => c.notNull())
      .addColumn('card_transaction_id', 'text')
      .addColumn('issuer_transaction_token', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('amount', 'bigint', (c) => c.notNull())
      .addColumn('outcome', 'text', (c) => c.notNull())
      .addColumn('decline_reason', 'text')
      .addColumn('reversed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('card_events_card').on('card_events').columns(['platform_id', 'card_id', 'id']).execute();
    await db.schema.createIndex('card_events_transaction').on('card_events').columns(['card_transaction_id', 'id']).execute();

    await db.schema
      .createTable('card_reveals')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('card_id', 'text', (c) => c.notNull())
      .addColumn('actor', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .execute();
    await db.schema.createIndex('card_reveals_card').on('card_reveals').columns(['platform_id', 'card_id']).execute();
  },
};
