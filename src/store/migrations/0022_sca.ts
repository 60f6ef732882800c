/**
 * Strong Customer Authentication (issue #23): enrolled factors, challenges (per-transaction, login,
 * beneficiary trust), each customer's login security (lockout, session), 2FA resets and trusted
 * beneficiaries. Types: src/modules/sca/sca.tables.ts.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0022Sca: Migration = {
  name: '0022_sca',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('sca_factors')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('factor', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('totp_secret', 'text')
      .addColumn('recovery_codes', 'text')
      .addColumn('totp_last_step', 'bigint')
      .addColumn('registration_challenge', 'text')
      .addColumn('credential_id', 'text')
      .addColumn('public_key', 'text')
      .addColumn('sign_count', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('origin', 'text')
      .addColumn('rp_id', 'text')
      .addColumn('transports', 'text')
      .addColumn('expires_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // One row per customer and factor (a new enrollment start replaces a PENDING one).
    await db.schema
      .createIndex('sca_factors_customer_factor')
      .on('sca_factors')
      .columns(['platform_id', 'customer_id', 'factor'])
      .unique()
      .execute();

    await db.schema
      .createTable('sca_challenges')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('subject_id', 'text', (c) => c.notNull())
      .addColumn('purpose', 'text')
      .addColumn('factor', 'text', (c) => c.notNull())
      .addColumn('available_factors', 'text', (c) => c.notNull())
      .addColumn('code_digest', 'text')
      .addColumn('passkey_challenge', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('sends', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_sent_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('end_user_ip', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // A subject's challenges, newest first (the pending one is found by this prefix).
    await db.schema
      .createIndex('sca_challenges_subject')
      .on('sca_challenges')
      .columns(['platform_id', 'subject_id', 'kind', 'created_at'])
      .execute();

    await db.schema
      .createTable('sca_customer_states')
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('locked_until', 'text')
      .addColumn('suspended', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('session_expires_at', 'text')
      .addColumn('sms_number', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('sca_customer_states_pk', ['platform_id', 'customer_id'])
      .execute();

    await db.schema
      .createTable('sca_resets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('factor', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('enrollment_status', 'text')
      .addColumn('link_token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('liveness_outcome', 'text')
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('completed_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // The reset-start rate limit counts a customer's recent starts by this prefix.
    await db.schema.createIndex('sca_resets_customer').on('sca_resets').columns(['platform_id', 'customer_id', 'created_at']).execute();

    await db.schema
      .createTable('sca_trusted_beneficiaries')
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('external_account_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('trusted_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('sca_trusted_beneficiaries_pk', ['platform_id', 'external_account_id'])
      .execute();
  },
};
