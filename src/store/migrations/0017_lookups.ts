/**
 * Receiver lookups (issue #22): each answered `GET /receiver/…` is kept until it expires, so that
 * `POST /quotes` can check the `lookupId` it is given (the receiver, the sender, the payer data the
 * receiver asked for). Expired rows are pruned a few at a time as new lookups are written.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0017Lookups: Migration = {
  name: '0017_lookups',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('lookups')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('receiver_kind', 'text', (c) => c.notNull())
      .addColumn('receiver', 'text', (c) => c.notNull())
      .addColumn('sender_customer_id', 'text', (c) => c.notNull())
      .addColumn('sending_currency', 'text', (c) => c.notNull())
      .addColumn('currencies', 'text', (c) => c.notNull())
      .addColumn('required_payer_fields', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .execute();
    // The pruning of a platform's expired lookups walks this index.
    await db.schema.createIndex('lookups_platform_expiry').on('lookups').columns(['platform_id', 'expires_at']).execute();
  },
};
