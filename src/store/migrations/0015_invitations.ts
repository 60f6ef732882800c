/**
 * UMA invitations (issue #22): one row per invitation, named on the wire by its code. The code is
 * unique across platforms (it makes the invitation's URL), and every query also filters on
 * platform_id, so another platform's code reads as unknown.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0015Invitations: Migration = {
  name: '0015_invitations',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('invitations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('code', 'text', (c) => c.notNull())
      .addColumn('inviter_customer_id', 'text', (c) => c.notNull())
      .addColumn('inviter_uma', 'text', (c) => c.notNull())
      .addColumn('first_name', 'text')
      .addColumn('amount', 'bigint')
      .addColumn('amount_currency', 'text')
      .addColumn('expires_at', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('invitee_uma', 'text')
      .addColumn('claimed_at', 'text')
      .addColumn('cancelled_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('invitations_code').on('invitations').column('code').unique().execute();
    // The sandbox reset deletes a platform's rows by platform_id.
    await db.schema.createIndex('invitations_platform').on('invitations').columns(['platform_id', 'id']).execute();
  },
};
