/**
 * Table types for Kysely. The same schema runs on SQLite and PostgreSQL, so it uses only portable
 * column types: text (ids, ISO-8601 UTC timestamps that sort as text, JSON documents), bigint
 * (money in smallest units, read back as JS numbers ≤ 2^53−1) and integer 0/1 flags.
 */
import type { Generated, Insertable, Selectable } from 'kysely';
import type {
  AuthAttemptsTable,
  AuthCredentialsTable,
  AuthRequestsTable,
  AuthSessionsTable,
  WalletKeysTable,
  WalletSecretsTable,
} from './schema-auth.ts';
import type { AgentActionsTable, AgentDeviceCodesTable, AgentQuotesTable, AgentsTable, AgentTokensTable } from './schema-agents.ts';

export interface PlatformsTable {
  id: string;
  name: string;
  /** SANDBOX or PRODUCTION; sandbox routes answer 403 for anything but SANDBOX. */
  environment: string;
  fiat_currency: string;
  /** PlatformConfig fields other than id and timestamps, as JSON. */
  config: string;
  /** Per-platform sandbox clock offset added to the injected clock. */
  clock_offset_ms: number;
  created_at: string;
  updated_at: string;
}

export interface ApiTokensTable {
  id: string;
  platform_id: string;
  name: string;
  /** Basic-auth username; unique across all platforms. */
  client_id: string;
  /** SHA-256 (hex) of the client secret; the secret itself is never stored. */
  secret_hash: string;
  /** JSON array of VIEW | TRANSACT | MANAGE. */
  permissions: string;
  /** 1 for the token created with the platform at bootstrap. */
  is_bootstrap: number;
  created_at: string;
  updated_at: string;
}

export interface InternalAccountsTable {
  id: string;
  platform_id: string;
  /** null for platform accounts. */
  customer_id: string | null;
  type: string;
  status: string;
  currency: string;
  /** Spendable balance (smallest unit). Maintained with the ledger; never below zero. */
  available: number;
  /** Held/pending amount; totalBalance = available + pending. */
  pending: number;
  /** Memo reference that credits a bank deposit to this account. */
  funding_reference: string;
  private_enabled: number | null;
  created_at: string;
  updated_at: string;
}

export interface LedgerEntriesTable {
  id: string;
  platform_id: string;
  /** What caused the movement (SANDBOX_FUNDING, PAYMENT_DEBIT, …). */
  kind: string;
  /** The resource the movement belongs to (transaction, quote, account …). */
  reference_id: string;
  created_at: string;
}

export interface LedgerPostingsTable {
  entry_id: string;
  /** Position of the posting within its entry; (entry_id, seq) is the key. */
  seq: number;
  platform_id: string;
  /** An internal account id, or a system account such as `System:SANDBOX_ISSUER`. */
  account_id: string;
  currency: string;
  /** AVAILABLE or PENDING: which balance of the account the posting moves. */
  bucket: string;
  /** Signed amount in the currency's smallest unit; each entry sums to zero per currency. */
  amount: number;
  created_at: string;
}

export interface OutboxEventsTable {
  /** `Webhook:<uuid>`: the envelope id receivers de-duplicate on. */
  id: string;
  platform_id: string;
  type: string;
  /** The resource the event is about; delivery keeps per-resource order. */
  resource_id: string;
  /** The event's `data`, as JSON. */
  payload: string;
  created_at: string;
  /** PENDING (due or waiting to retry), DELIVERING (an attempt in flight), DELIVERED or FAILED. */
  status: string;
  attempts: number;
  /**
   * When to try next, in ms on the system clock. Sandbox clock advances shift it, so retries
   * follow the platform's clock.
   */
  next_attempt_ms: number;
  /**
   * Platform-clock time of the first attempt of the current retry schedule (null until tried);
   * retries stop 7 days after it. A replay or recover starts a new schedule.
   */
  first_attempt_at: string | null;
  /**
   * Attempts made before the current retry schedule began (0, or the count at the last replay or
   * recover): the backoff counts attempts from here, the log's attempt numbers keep counting.
   */
  schedule_base: Generated<number>;
}

/** Per-platform webhook signing key (ECDSA P-256). The private key never leaves the server. */
export interface WebhookKeysTable {
  platform_id: string;
  /** PKCS#8 PEM. */
  private_key_pem: string;
  /** SPKI PEM, served by GET /webhooks/signing-key. */
  public_key_pem: string;
  created_at: string;
}

/** One row per webhook delivery attempt. */
export interface WebhookAttemptsTable {
  id: string;
  platform_id: string;
  event_id: string;
  /** 1 for the first attempt of the event. */
  attempt: number;
  /** Platform-clock time the attempt started. */
  at: string;
  url: string;
  /** The receiver's HTTP status; null when no response arrived. */
  response_status: number | null;
  latency_ms: number;
  /** The first 4 KiB of the response body. */
  response_body: string | null;
  /** Network error, timeout or redirect, when the attempt had no usable response. */
  error: string | null;
}

export interface JobsTable {
  id: string;
  platform_id: string;
  kind: string;
  payload: string;
  /**
   * When the job may run, in ms on the system clock (the injected clock without the platform's
   * sandbox offset). Advancing a platform's sandbox clock moves its pending jobs' due times
   * earlier by the same amount, so jobs follow the platform's clock.
   */
  due_at_ms: number;
  /** PENDING, DONE or FAILED. */
  status: string;
  attempts: number;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface IdempotencyKeysTable {
  platform_id: string;
  key: string;
  /** SHA-256 of method, route and body: the same key with another request is refused. */
  request_hash: string;
  response_status: number;
  response_body: string;
  created_at: string;
}

export interface CustomersTable {
  id: string;
  platform_id: string;
  /** INDIVIDUAL or BUSINESS. */
  customer_type: string;
  /** The platform's own id for the customer; unique per platform among non-deleted customers. */
  platform_customer_id: string;
  /** `$user@domain`; unique per platform among non-deleted customers. */
  uma_address: string;
  /** ISO 3166-1 alpha-2 region, when the platform sent one. */
  region: string | null;
  /** KycStatus of INDIVIDUAL customers (null for BUSINESS). */
  kyc_status: string | null;
  /** KybStatus of BUSINESS customers (null for INDIVIDUAL). */
  kyb_status: string | null;
  /** Type-specific fields (fullName, birthDate, address … or businessInfo, address …), as JSON. */
  data: string;
  /** JSON array of currency codes the customer holds internal accounts in. */
  currencies: string;
  created_at: string;
  updated_at: string;
  /** Set by DELETE /customers/{id} (soft delete); later access answers 410. */
  deleted_at: string | null;
}

/** KYB: the people behind a BUSINESS customer (owners, directors, control persons). */
export interface BeneficialOwnersTable {
  id: string;
  platform_id: string;
  /** The BUSINESS customer the person belongs to. */
  customer_id: string;
  /** JSON array of BeneficialOwnerRole. */
  roles: string;
  ownership_percentage: number;
  /** BeneficialOwnerPersonalInfo, as JSON. */
  personal_info: string;
  /** KycStatus, decided by the sandbox rule on personalInfo.lastName. */
  kyc_status: string;
  created_at: string;
  updated_at: string;
}

/** KYC/KYB documents (metadata; the bytes live in document_files). */
export interface DocumentsTable {
  id: string;
  platform_id: string;
  /** Customer or BeneficialOwner id the document belongs to. */
  document_holder: string;
  /** The customer the holder is or belongs to (verification looks documents up by it). */
  customer_id: string;
  document_type: string;
  side: string | null;
  country: string;
  document_number: string | null;
  issuing_authority: string | null;
  file_name: string;
  /** Detected from the file's magic bytes: application/pdf, image/jpeg or image/png. */
  content_type: string;
  size_bytes: number;
  /** SHA-256 (hex) of the bytes. */
  sha256: string;
  /** Set when a verification that moved past RESOLVE_ERRORS used the document; it can no longer be deleted. */
  submitted_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The bytes of a document, base64 in a text column (portable across SQLite and PostgreSQL). */
export interface DocumentFilesTable {
  document_id: string;
  platform_id: string;
  content_base64: string;
}

/** KYC/KYB submissions (`POST /verifications`). */
export interface VerificationsTable {
  id: string;
  platform_id: string;
  customer_id: string;
  /** VerificationStatus. */
  verification_status: string;
  /** JSON array of VerificationError. */
  errors: string;
  created_at: string;
  updated_at: string;
}

export interface ExternalAccountsTable {
  id: string;
  platform_id: string;
  /** null for platform accounts. */
  customer_id: string | null;
  /** ExternalAccountStatus: ACTIVE while usable; INACTIVE once deleted. */
  status: string;
  currency: string;
  /** Canonical accountType (US_ACCOUNT, EUR_ACCOUNT, LAYER2_WALLET …). */
  account_type: string;
  /** The accountInfo as emitted (canonical accountType, paymentRails, beneficiary), as JSON. */
  account_info: string;
  /** The primary identifier (account number, IBAN, CLABE, PIX key, address …): its last 3 digits steer the sandbox. */
  identifier: string;
  /** Owner + type + currency + normalised identifying fields; unique among non-deleted accounts. */
  identity_key: string;
  platform_account_id: string | null;
  ownership_type: string | null;
  /** 0/1 for customer accounts (defaultUmaDepositAccount); null for platform accounts. */
  default_uma_deposit: number | null;
  beneficiary_verification_status: string | null;
  beneficiary_verified_name: string | null;
  created_at: string;
  updated_at: string;
  /** Set by DELETE (soft delete): the row stays so transfers that name it still resolve. */
  deleted_at: string | null;
}

/** A payment: outgoing (quote execution, transfer-out) or incoming (transfer-in, UMA receive). */
export interface TransactionsTable {
  id: string;
  platform_id: string;
  /** The customer the payment belongs to, or the platform id for the platform's own. */
  customer_id: string;
  platform_customer_id: string;
  /** INCOMING or OUTGOING. */
  type: string;
  /** CREDIT or DEBIT (an ACH pull is INCOMING + DEBIT). */
  direction: string;
  status: string;
  /** QUOTE, TRANSFER_OUT, TRANSFER_IN, UMA_RECEIVE: which flow drives it. */
  kind: string;
  /** TransactionSource and TransactionDestination wire objects, as JSON. */
  source: string;
  destination: string;
  /** Account ids on either side, for the list filters. */
  sender_account_id: string | null;
  receiver_account_id: string | null;
  /** The internal account whose balance this payment moves. */
  internal_account_id: string | null;
  /** Amount taken from the sender, fees included (smallest unit of sent_currency). */
  sent_amount: number;
  sent_currency: string;
  received_amount: number;
  received_currency: string;
  fees: number;
  platform_fees: number;
  /** Decimal string: receiving smallest units per sending smallest unit. */
  exchange_rate: string;
  quote_id: string | null;
  description: string | null;
  reference: string;
  payment_rail: string | null;
  /** The sandbox outcome chosen when the payment started (e.g. SUCCESS, FAIL_BANK_REJECTED). */
  scenario: string;
  failure_reason: string | null;
  /** Refund wire object as JSON, once a refund started. */
  refund: string | null;
  settled_at: string | null;
  receipt_delivery_confirmed_at: string | null;
  /** Other wire fields (remittance information, purpose of payment, counterparty data), as JSON. */
  extra: string | null;
  created_at: string;
  updated_at: string;
  // Added by migration 0014 (issue #21, wire fidelity); null on rows written before it.
  /** The agent whose action started the payment (`Agent:…`); null when the platform started it. */
  agent_id: string | null;
  /** MANUAL when the request named `paymentRail`, AUTO when Corridor chose it; null without a rail. */
  rail_selection_mode: string | null;
  /** When an outgoing payment's delayed sandbox outcome is due; null while not started or when immediate. */
  expected_settlement_at: string | null;
  /** A quote payment's fee terms (sending currency): the fixed part and the variable rate in bps. */
  fee_fixed: number | null;
  fee_variable_bps: number | null;
}

export interface QuotesTable {
  id: string;
  platform_id: string;
  customer_id: string | null;
  /** PENDING, PENDING_AUTHORIZATION, PROCESSING, COMPLETED, FAILED or EXPIRED. */
  status: string;
  transaction_id: string;
  /** The request's source and destination objects, as JSON. */
  source: string;
  destination: string;
  sending_currency: string;
  receiving_currency: string;
  locked_side: string;
  locked_amount: number;
  total_sending_amount: number;
  total_receiving_amount: number;
  exchange_rate: string;
  fees_included: number;
  platform_fees_included: number;
  description: string | null;
  /** PaymentInstructions[] for real-time funded quotes, as JSON. */
  payment_instructions: string | null;
  /** The memo reference a real-time funding payment must carry. */
  funding_reference: string | null;
  expires_at: string;
  created_at: string;
  updated_at: string;
  // Added by migration 0014 (issue #21); null on quotes priced before it.
  /** The fee terms the quote was priced with (sending currency): the fixed part and the variable rate in bps. */
  fee_fixed: number | null;
  fee_variable_bps: number | null;
  // Added by migration 0025 (issue #23).
  /** The SCA authorisations still needed, in order (JSON array of purposes); null: none was ever needed. */
  sca_steps: string | null;
  /** The factor asked for (SMS_OTP or PASSKEY); null: the default. */
  sca_factor: string | null;
}

/** PostgreSQL only (migration 0030): a transaction's status, indexed here rather than on its row. */
export interface TransactionStatusesTable {
  id: string;
  platform_id: string;
  type: string;
  status: string;
}

export interface Database {
  transactions: TransactionsTable;
  transaction_statuses: TransactionStatusesTable;
  quotes: QuotesTable;
  platforms: PlatformsTable;
  api_tokens: ApiTokensTable;
  internal_accounts: InternalAccountsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_postings: LedgerPostingsTable;
  outbox_events: OutboxEventsTable;
  jobs: JobsTable;
  idempotency_keys: IdempotencyKeysTable;
  customers: CustomersTable;
  external_accounts: ExternalAccountsTable;
  beneficial_owners: BeneficialOwnersTable;
  documents: DocumentsTable;
  document_files: DocumentFilesTable;
  verifications: VerificationsTable;
  webhook_keys: WebhookKeysTable;
  webhook_attempts: WebhookAttemptsTable;
  auth_credentials: AuthCredentialsTable;
  auth_sessions: AuthSessionsTable;
  auth_requests: AuthRequestsTable;
  auth_attempts: AuthAttemptsTable;
  wallet_keys: WalletKeysTable;
  wallet_secrets: WalletSecretsTable;
  agents: AgentsTable;
  agent_device_codes: AgentDeviceCodesTable;
  agent_tokens: AgentTokensTable;
  agent_actions: AgentActionsTable;
  agent_quotes: AgentQuotesTable;
}

export type PlatformRow = Selectable<PlatformsTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type InternalAccountRow = Selectable<InternalAccountsTable>;
export type NewInternalAccount = Insertable<InternalAccountsTable>;
export type CustomerRow = Selectable<CustomersTable>;
/** Columns of migration 0014: a row built in code may leave them out (read as null), e.g. the bench's data sets. */
type TransactionWireColumns = 'agent_id' | 'rail_selection_mode' | 'expected_settlement_at' | 'fee_fixed' | 'fee_variable_bps';
type QuoteWireColumns = 'fee_fixed' | 'fee_variable_bps' | 'sca_steps' | 'sca_factor';
export type TransactionRow = Omit<Selectable<TransactionsTable>, TransactionWireColumns> &
  Partial<Pick<Selectable<TransactionsTable>, TransactionWireColumns>>;
export type QuoteRow = Omit<Selectable<QuotesTable>, QuoteWireColumns> & Partial<Pick<Selectable<QuotesTable>, QuoteWireColumns>>;
export type ExternalAccountRow = Selectable<ExternalAccountsTable>;
export type BeneficialOwnerRow = Selectable<BeneficialOwnersTable>;
export type DocumentRow = Selectable<DocumentsTable>;
export type VerificationRow = Selectable<VerificationsTable>;
export type OutboxEventRow = Selectable<OutboxEventsTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;
