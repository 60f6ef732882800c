/** Every schema migration, in the order it is applied. Never edit one that has shipped. */
import type { Kysely } from 'kysely';
import { m0001Init } from './0001_init.ts';
import { m0002Customers } from './0002_customers.ts';
import { m0003ExternalAccounts } from './0003_external_accounts.ts';
import { m0004Kyc } from './0004_kyc.ts';
import { m0005Payments } from './0005_payments.ts';
import { m0006Webhooks } from './0006_webhooks.ts';
import { m0007WebhookDeliveries } from './0007_webhook_deliveries.ts';
import { m0008WalletAuth } from './0008_wallet_auth.ts';
import { m0009Agents } from './0009_agents.ts';
import { m0010TransactionListIndexes } from './0010_transaction_list_indexes.ts';
import { m0011OutboxClaim } from './0011_outbox_claim.ts';
import { m0012BootstrapPlatform } from './0012_bootstrap_platform.ts';
import { m0013SessionClientKey } from './0013_session_client_key.ts';
import { m0014TransactionWireFields } from './0014_transaction_wire_fields.ts';
import { m0015Invitations } from './0015_invitations.ts';
import { m0016DelegatedKeys } from './0016_delegated_keys.ts';
import { m0017Lookups } from './0017_lookups.ts';
import { m0018OwnershipVerification } from './0018_ownership_verification.ts';
import { m0019KycLinks } from './0019_kyc_links.ts';
import { m0020ContactVerification } from './0020_contact_verification.ts';
import { m0021BulkImport } from './0021_bulk_import.ts';
import { m0022Sca } from './0022_sca.ts';
import { m0023Cards } from './0023_cards.ts';
import { m0024Stablecoins } from './0024_stablecoins.ts';
import { m0025QuoteSca } from './0025_quote_sca.ts';
import { m0026SandboxFaults } from './0026_sandbox_faults.ts';
import { m0027PostingsByAccount } from './0027_postings_by_account.ts';
import { m0028OutboxFewerIndexes } from './0028_outbox_fewer_indexes.ts';
import { m0029UpdateRoom } from './0029_update_room.ts';
import { m0030StatusOffTheRow } from './0030_status_off_the_row.ts';

export interface Migration {
  name: string;
  // biome-ignore lint/suspicious/noExplicitAny: `any`: a migration creates the tables the typed Database describes, so it cannot use them.
  up(db: Kysely<any>): Promise<void>;
}

export const migrations: Migration[] = [
  m0001Init,
  m0002Customers,
  m0003ExternalAccounts,
  m0004Kyc,
  m0005Payments,
  m0006Webhooks,
  m0007WebhookDeliveries,
  m0008WalletAuth,
  m0009Agents,
  m0010TransactionListIndexes,
  m0011OutboxClaim,
  m0012BootstrapPlatform,
  m0013SessionClientKey,
  m0014TransactionWireFields,
  m0015Invitations,
  m0016DelegatedKeys,
  m0017Lookups,
  m0018OwnershipVerification,
  m0019KycLinks,
  m0020ContactVerification,
  m0021BulkImport,
  m0022Sca,
  m0023Cards,
  m0024Stablecoins,
  m0025QuoteSca,
  m0026SandboxFaults,
  m0027PostingsByAccount,
  m0028OutboxFewerIndexes,
  m0029UpdateRoom,
  m0030StatusOffTheRow,
];
