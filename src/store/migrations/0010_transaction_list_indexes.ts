/**
 * Indexes for `GET /transactions` on large platforms (issue #8: 1M transactions, a filtered page in
 * < 20 ms). Each filter gets an index that leads with the platform, then the filter's columns, then
 * `id`: the page is a keyset scan on id within the filter, and the total is counted from the index
 * alone. Without statistics (SQLite never gathers them here) the planner otherwise preferred to walk
 * the whole platform in id order — a reference lookup read ~400 ms, a date range ~1.8 s.
 *
 * Each index costs every new transaction one more B-tree insert (and the status/type one a move on
 * every status change). The payment scenario, run with them, still makes ~3,200 payments/s on SQLite
 * (docs/performance.md, 2026-11-24); the list scenario measures what they buy.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0010TransactionListIndexes: Migration = {
  name: '0010_transaction_list_indexes',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    // startDate / endDate: the range, then id (the page sorts only the ids of the range); type
    // (fixed at creation, so never moved by an update) lets a range + type be counted from it too.
    await db.schema.createIndex('transactions_created').on('transactions').columns(['platform_id', 'created_at', 'type', 'id']).execute();
    // customerId with a date range (a customer's statement): without it the planner picks the
    // platform-wide date range over the customer's few rows.
    await db.schema
      .createIndex('transactions_customer_created')
      .on('transactions')
      .columns(['platform_id', 'customer_id', 'created_at', 'id'])
      .execute();
    // type, and status + type (status alone keeps transactions_status).
    await db.schema.createIndex('transactions_type_status').on('transactions').columns(['platform_id', 'type', 'status', 'id']).execute();
    await db.schema
      .createIndex('transactions_platform_customer')
      .on('transactions')
      .columns(['platform_id', 'platform_customer_id', 'id'])
      .execute();
    // reference: with id, so the one matching row is found there rather than by walking the platform.
    await db.schema.dropIndex('transactions_reference').execute();
    await db.schema.createIndex('transactions_reference').on('transactions').columns(['platform_id', 'reference', 'id']).execute();
  },
};
