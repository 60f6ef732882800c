/** Quotes and transactions (outgoing and incoming payments, transfers in and out). */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0005Payments: Migration = {
  name: '0005_payments',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('transactions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('platform_customer_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('direction', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('sender_account_id', 'text')
      .addColumn('receiver_account_id', 'text')
      .addColumn('internal_account_id', 'text')
      .addColumn('sent_amount', 'bigint', (c) => c.notNull())
      .addColumn('sent_currency', 'text', (c) => c.notNull())
      .addColumn('received_amount', 'bigint', (c) => c.notNull())
      .addColumn('received_currency', 'text', (c) => c.notNull())
      .addColumn('fees', 'bigint', (c) => c.notNull())
      .addColumn('platform_fees', 'bigint', (c) => c.notNull())
      .addColumn('exchange_rate', 'text', (c) => c.notNull())
      .addColumn('quote_id', 'text')
      .addColumn('description', 'text')
      .addColumn('reference', 'text', (c) => c.notNull())
      .addColumn('payment_rail', 'text')
      .addColumn('scenario', 'text', (c) => c.notNull())
      .addColumn('failure_reason', 'text')
      .addColumn('refund', 'text')
      .addColumn('settled_at', 'text')
      .addColumn('receipt_delivery_confirmed_at', 'text')
      .addColumn('extra', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('transactions_platform').on('transactions').columns(['platform_id', 'id']).execute();
    await db.schema.createIndex('transactions_customer').on('transactions').columns(['platform_id', 'customer_id', 'id']).execute();
    await db.schema.createIndex('transactions_status').on('transactions').columns(['platform_id', 'status', 'id']).execute();
    await db.schema.createIndex('transactions_sender').on('transactions').columns(['platform_id', 'sender_account_id', 'id']).execute();
    await db.schema.createIndex('transactions_receiver').on('transactions').columns(['platform_id', 'receiver_account_id', 'id']).execute();
    await db.schema.createIndex('transactions_reference').on('transactions').columns(['platform_id', 'reference']).execute();

    await db.schema
      .createTable('quotes')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull().references('platforms.id'))
      .addColumn('customer_id', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('transaction_id', 'text', (c) => c.notNull())
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('destination', 'text', (c) => c.notNull())
      .addColumn('sending_currency', 'text', (c) => c.notNull())
      .addColumn('receiving_currency', 'text', (c) => c.notNull())
      .addColumn('locked_side', 'text', (c) => c.notNull())
      .addColumn('locked_amount', 'bigint', (c) => c.notNull())
      .addColumn('total_sending_amount', 'bigint', (c) => c.notNull())
      .addColumn('total_receiving_amount', 'bigint', (c) => c.notNull())
      .addColumn('exchange_rate', 'text', (c) => c.notNull())
      .addColumn('fees_included', 'bigint', (c) => c.notNull())
      .addColumn('platform_fees_included', 'bigint', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('payment_instructions', 'text')
      .addColumn('funding_reference', 'text')
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('quotes_funding_reference').on('quotes').columns(['platform_id', 'funding_reference']).execute();
  },
};
