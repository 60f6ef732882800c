/**
 * Contact verification (issue #22): one row per customer and channel (EMAIL, PHONE) holding what
 * was verified and the one code outstanding on it (its keyed digest, never the code).
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0020ContactVerification: Migration = {
  name: '0020_contact_verification',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('contact_verifications')
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('channel', 'text', (c) => c.notNull())
      .addColumn('verified_contact', 'text')
      .addColumn('verified_at', 'text')
      .addColumn('code_digest', 'text')
      .addColumn('code_contact', 'text')
      .addColumn('code_expires_at', 'text')
      .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('recent_sends', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      // One row per channel of a customer; a platform's rows are found by this prefix too (reset, lists).
      .addPrimaryKeyConstraint('contact_verifications_pk', ['platform_id', 'customer_id', 'channel'])
      .execute();
  },
};
