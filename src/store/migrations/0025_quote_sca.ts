/**
 * Per-transaction Strong Customer Authentication on quotes (issue #23):
 * - quotes.sca_steps: the authorisations a quote still needs, in order (JSON array of purposes such
 *   as CURRENCY_CONVERSION, PAYOUT); null for a quote that never needed one;
 * - quotes.sca_factor: the factor the platform asked for (SMS_OTP or PASSKEY), null for the default;
 * - sca_low_value: the PSD2 low-value exemption's running count and sum (in euro cents) of a
 *   customer's payments exempted since its last authorised one.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0025QuoteSca: Migration = {
  name: '0025_quote_sca',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema.alterTable('quotes').addColumn('sca_steps', 'text').execute();
    await db.schema.alterTable('quotes').addColumn('sca_factor', 'text').execute();
    await db.schema
      .createTable('sca_low_value')
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('exempted_count', 'integer', (c) => c.notNull())
      .addColumn('exempted_eur_cents', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('sca_low_value_pk', ['platform_id', 'customer_id'])
      .execute();
  },
};
