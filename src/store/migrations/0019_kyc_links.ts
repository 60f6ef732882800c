/**
 * KYC links (issue #22): `kyc_links`, one row per link to the hosted verification page, keyed by the
 * SHA-256 of its token (the token itself is never stored).
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0019KycLinks: Migration = {
  name: '0019_kyc_links',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('kyc_links')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('used_at', 'text')
      .addColumn('outcome', 'text')
      .execute();
    await db.schema.createIndex('kyc_links_customer').on('kyc_links').columns(['platform_id', 'customer_id']).execute();
  },
};
