/**
 * Table types for Kysely. The same schema runs on SQLite and PostgreSQL, so it uses only portable
 * column types: text (ids, ISO-8601 UTC timestamps that sort as text, JSON documents), bigint
 * (money in smallest units, read back as JS numbers ≤ 2^53−1) and integer 0/1 flags.
 */
import type { Insertable, Selectable, Updateable } from 'kysely';

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
  /** PENDING until delivered (or given up on); the webhook worker owns the later states. */
  status: string;
  attempts: number;
  next_attempt_at: string;
}

export interface JobsTable {
  id: string;
  platform_id: string;
  kind: string;
  payload: string;
  /** When the job may run, on the platform's (sandbox) clock. */
  due_at: string;
  /** PENDING, RUNNING, DONE or FAILED. */
  status: string;
  attempts: number;
  locked_until: string | null;
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

export interface Database {
  platforms: PlatformsTable;
  api_tokens: ApiTokensTable;
  internal_accounts: InternalAccountsTable;
  ledger_entries: LedgerEntriesTable;
  ledger_postings: LedgerPostingsTable;
  outbox_events: OutboxEventsTable;
  jobs: JobsTable;
  idempotency_keys: IdempotencyKeysTable;
}

export type PlatformRow = Selectable<PlatformsTable>;
export type ApiTokenRow = Selectable<ApiTokensTable>;
export type InternalAccountRow = Selectable<InternalAccountsTable>;
export type NewInternalAccount = Insertable<InternalAccountsTable>;
export type InternalAccountUpdate = Updateable<InternalAccountsTable>;
