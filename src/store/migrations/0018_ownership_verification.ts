/**
 * External account ownership verification (issue #22): one row per challenge issued. A partial
 * unique index keeps at most one outstanding (PENDING) challenge per account: issuing a new one
 * abandons the old one first, under the account's row lock.
 */
import { sql, type Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0018OwnershipVerification: Migration = {
  name: '0018_ownership_verification',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('ownership_challenges')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('external_account_id', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('message_to_sign', 'text')
      .addColumn('verification_link', 'text')
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('failure_reason', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // The sandbox reset deletes a platform's rows by platform_id.
    await db.schema.createIndex('ownership_challenges_platform').on('ownership_challenges').columns(['platform_id', 'id']).execute();
    await db.schema
      .createIndex('ownership_challenges_outstanding')
      .on('ownership_challenges')
      .column('external_account_id')
      .unique()
      .where(sql.ref('status'), '=', sql.lit('PENDING'))
      .execute();
  },
};
