/**
 * SQL of the sandbox reset: what `POST /sandbox/reset` deletes and empties. (Funding and the clock
 * go through the ledger and the platforms repository.)
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';

/**
 * Every table holding a platform's customers, accounts and history, children before parents.
 * Tokens, configuration, the webhook signing key and the platform's own internal accounts (emptied,
 * not replaced) are kept.
 */
export const RESETTABLE_TABLES = [
  // Fault rules go with the rest: a reset puts the sandbox back to its defaults, faults off (issue #25).
  'sandbox_faults',
  'card_reveals',
  'card_events',
  'card_transactions',
  'card_sources',
  'cards',
  'stablecoin_operations',
  'stablecoins',
  'stablecoin_provider_accounts',
  'sca_low_value',
  'sca_trusted_beneficiaries',
  'sca_resets',
  'sca_customer_states',
  'sca_challenges',
  'sca_factors',
  'lookups',
  'bulk_import_errors',
  'bulk_import_chunks',
  'bulk_import_jobs',
  'agent_actions',
  'agent_quotes',
  'agent_tokens',
  'agent_device_codes',
  'agents',
  'ledger_postings',
  'ledger_entries',
  'webhook_attempts',
  'outbox_events',
  'jobs',
  'idempotency_keys',
  'quotes',
  'transactions',
  'delegated_keys',
  'card_funding_sources',
  'auth_attempts',
  'auth_requests',
  'auth_sessions',
  'auth_credentials',
  'wallet_secrets',
  'verifications',
  'document_files',
  'documents',
  'beneficial_owners',
  'ownership_challenges',
  'external_accounts',
  'invitations',
  'contact_verifications',
  'kyc_links',
  'customers',
] as const;

/** Deletes the platform's customers (with their internal accounts) and its history. */
export async function deletePlatformData(db: Kysely<Database>, platformId: string): Promise<void> {
  for (const table of RESETTABLE_TABLES) await db.deleteFrom(table).where('platform_id', '=', platformId).execute();
  await db.deleteFrom('internal_accounts').where('platform_id', '=', platformId).where('customer_id', 'is not', null).execute();
}

/** Empties the platform's remaining (own) internal accounts, keeping their ids. */
export async function emptyPlatformAccounts(db: Kysely<Database>, platformId: string, at: string): Promise<void> {
  await db
    .updateTable('internal_accounts')
    .set({ available: 0, pending: 0, updated_at: at })
    .where('platform_id', '=', platformId)
    .execute();
}
