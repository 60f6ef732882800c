/**
 * Table types of stablecoin issuance (migration 0024), declared into the store's `Database` by
 * module augmentation so that the area's SQL is typed without editing src/store/schema.ts.
 * Times are on the platform's clock (its sandbox offset included).
 */
import type { Selectable } from 'kysely';

export type ProviderAccountStatus = 'ACTIVE' | 'INVALID' | 'REVOKED';
export type IssuanceStatus = 'PENDING_REVIEW' | 'PROVISIONING' | 'PROVISIONED' | 'REJECTED' | 'FAILED';
export type GridOperationsStatus = 'NOT_ENABLED' | 'PENDING_APPROVAL' | 'ENABLING' | 'ENABLED' | 'DISABLED';
export type OperationType = 'MINT' | 'BURN';
export type OperationStatus = 'CREATED' | 'PENDING_FUNDING' | 'PENDING_PROVIDER' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'EXPIRED';
export type MintSourceType = 'WIRE' | 'ACH_DEBIT' | 'SAME_DAY_ACH_DEBIT';
export type BurnSourceType = 'EXTERNAL_ACCOUNT' | 'PROVIDER_INTERNAL_BALANCE';
export type BurnRail = 'WIRE' | 'ACH_CREDIT' | 'SAME_DAY_ACH_CREDIT' | 'RTP_CREDIT';

/** A platform's link to its account at a stablecoin provider (the provider's API credentials). */
export interface StablecoinProviderAccountsTable {
  /** `StablecoinProviderAccount:<uuid>`. */
  id: string;
  platform_id: string;
  /** Only `BRALE`. */
  provider: string;
  /** The provider's id of the account the credentials open; unique per platform, provider and environment. */
  provider_account_id: string;
  /** SANDBOX or PRODUCTION: the platform's environment when the link was made. */
  provider_environment: string;
  status: ProviderAccountStatus;
  /** The provider API client id (an identifier, not a secret; never on the wire). */
  api_client_id: string;
  /** The provider API client secret, sealed with the store's SecretBox (SECRET_COLUMNS.stablecoinProviderSecret). */
  api_client_secret: string;
  last_verified_at: string;
  created_at: string;
  updated_at: string;
}

/** A provider-created token registered with Corridor, with its outstanding supply. */
export interface StablecoinsTable {
  /** `Stablecoin:<uuid>`. */
  id: string;
  platform_id: string;
  /** The link the stablecoin was registered against; its operations use it. */
  provider_account_link_id: string;
  provider: string;
  provider_environment: string;
  /** The provider's id of the token (Brale's `value_type`); unique per platform. It is also the symbol and the ledger currency. */
  provider_token_identifier: string;
  network: string;
  /** The token's id on `network`; unique per platform and network. */
  network_token_identifier: string;
  name: string;
  symbol: string;
  decimals: number;
  base_currency: string;
  issuance_status: IssuanceStatus;
  grid_operations_status: GridOperationsStatus;
  /**
   * Outstanding supply in the token's smallest unit: −(sum of the platform's STABLECOIN_SUPPLY
   * postings in `symbol`), kept in the transaction of every completed mint and burn (the ledger
   * check compares the two).
   */
  supply: number;
  /** Sum of the amounts of this stablecoin's mints not yet COMPLETED, FAILED or EXPIRED (bounds the supply they may add). */
  mints_in_flight: number;
  /** Sum of the amounts of its burns in flight: a new burn may take at most `supply − burns_in_flight`. */
  burns_in_flight: number;
  created_at: string;
  updated_at: string;
}

/** One mint or burn. */
export interface StablecoinOperationsTable {
  /** `StablecoinOperation:<uuid>`. */
  id: string;
  platform_id: string;
  stablecoin_id: string;
  operation_type: OperationType;
  status: OperationStatus;
  /** In the stablecoin's smallest unit. */
  amount: number;
  /** `amount` in whole cents of `base_currency` (exact: the amount rule guarantees it). */
  fiat_amount: number;
  /** The stablecoin's base currency (the fiat side of the operation). */
  base_currency: string;
  /** The link the operation went through (the stablecoin's). */
  provider_account_link_id: string;
  provider: string;
  provider_environment: string;
  /** WIRE, ACH_DEBIT, SAME_DAY_ACH_DEBIT (mints); EXTERNAL_ACCOUNT, PROVIDER_INTERNAL_BALANCE (burns). */
  source_type: string;
  /** The debited bank account of an ACH mint. */
  source_external_account_id: string | null;
  /** The mint's receiving wallet, or the burn's receiving bank account. */
  destination_account_id: string;
  /** A burn's payout rail. */
  destination_rail: BurnRail | null;
  /** JSON of the funding instructions (WIRE mints, EXTERNAL_ACCOUNT burns). */
  funding_instructions: string | null;
  /** Awaiting funds until then (WIRE mints, EXTERNAL_ACCOUNT burns). */
  expires_at: string | null;
  /** The sandbox outcome drawn at creation (rules.ts): NORMAL, FAIL or NEVER_FUNDED. */
  scenario: string;
  failure_reason: string | null;
  description: string | null;
  created_at: string;
  updated_at: string;
}

export type ProviderAccountRow = Selectable<StablecoinProviderAccountsTable>;
export type StablecoinRow = Selectable<StablecoinsTable>;
export type OperationRow = Selectable<StablecoinOperationsTable>;

declare module '../../store/schema.ts' {
  interface Database {
    stablecoin_provider_accounts: StablecoinProviderAccountsTable;
    stablecoins: StablecoinsTable;
    stablecoin_operations: StablecoinOperationsTable;
  }
}
