/**
 * Table types of delegated signing keys (migration 0016), declared into the store's `Database` by
 * module augmentation so that the area's SQL is typed without editing src/store/schema.ts.
 */
import type { Selectable } from 'kysely';

/**
 * A card funding-source binding: one card (of the cards area, issue #24) funded by one
 * EMBEDDED_WALLET internal account. A binding is recorded by the first signed create for its pair
 * and reused after; its id is the live API's `CardFundingSource:<uuid>`.
 */
export interface CardFundingSourcesTable {
  /** `CardFundingSource:<uuid>`. */
  id: string;
  platform_id: string;
  /** `Card:<uuid>`. */
  card_id: string;
  /** The EMBEDDED_WALLET internal account funding the card. */
  account_id: string;
  created_at: string;
}

/** The states of a delegated key (the live `DelegatedKeyStatus`). */
export type DelegatedKeyStatus = 'PENDING' | 'ACTIVE' | 'REVOKED';

/** A Corridor-custodied P-256 key that signs for a card funding source's wallet while ACTIVE. */
export interface DelegatedKeysTable {
  /** `DelegatedKey:<uuid>`. */
  id: string;
  platform_id: string;
  funding_source_id: string;
  card_id: string;
  /** The EMBEDDED_WALLET internal account the key signs for. */
  account_id: string;
  /** Compressed SEC1 hex (66 lowercase hex): what its stamps carry. */
  public_key: string;
  /**
   * The private scalar (64 hex), sealed by the store's SecretBox (clear only without
   * CORRIDOR_SECRET_KEY). Null once revoked: a revoked key's material is destroyed.
   */
  private_key: string | null;
  nickname: string;
  status: DelegatedKeyStatus;
  created_at: string;
  updated_at: string;
}

export type CardFundingSourceRow = Selectable<CardFundingSourcesTable>;
export type DelegatedKeyRow = Selectable<DelegatedKeysTable>;

declare module '../../store/schema.ts' {
  interface Database {
    card_funding_sources: CardFundingSourcesTable;
    delegated_keys: DelegatedKeysTable;
  }
}
