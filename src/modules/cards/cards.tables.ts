/**
 * Table types of cards (migration 0023), declared into the store's `Database` by module augmentation
 * so that the area's SQL is typed without editing src/store/schema.ts.
 */
import type { Selectable } from 'kysely';

/** The live CardState values (PENDING_KYC is never written: issuance is gated on KYC). */
export type CardState = 'PENDING_KYC' | 'PROCESSING' | 'ACTIVE' | 'FROZEN' | 'CLOSED';
export type CardStateReason = 'ISSUER_REJECTED' | 'CLOSED_BY_PLATFORM' | 'CLOSED_BY_GRID';
export type CardBrand = 'VISA' | 'MASTERCARD';

export interface CardsTable {
  /** `Card:<uuid>`. */
  id: string;
  platform_id: string;
  /** The Customer holding the card. */
  cardholder_id: string;
  /** The platform's own id for the card; unique per platform (generated when not given). */
  platform_card_id: string;
  state: CardState;
  state_reason: CardStateReason | null;
  /** Chosen when the card is provisioned (null while PROCESSING). */
  brand: CardBrand | null;
  form: 'VIRTUAL';
  /** Filled when the card is activated. */
  last4: string | null;
  exp_month: number | null;
  exp_year: number | null;
  /** The card number and CVV, sealed by the store's SecretBox (SECRET_COLUMNS.cardPan / cardCvv); null until activation. */
  pan: string | null;
  cvv: string | null;
  /** JSON array of InternalAccount ids, in priority order (mirrored in card_sources for the accountId filter). */
  funding_sources: string;
  /** Per-transaction authorization limit in the card currency's smallest unit; null = no limit. */
  max_spend_per_transaction: number | null;
  currency: string;
  processor_ref: string;
  issuer_ref: string;
  created_at: string;
  updated_at: string;
}

/** One funding source of a card at one priority (0 = tried first); replaced wholesale by a PATCH. */
export interface CardSourcesTable {
  platform_id: string;
  card_id: string;
  account_id: string;
  position: number;
}

export type CardTransactionStatus = 'AUTHORIZED' | 'PARTIALLY_SETTLED' | 'SETTLED' | 'REFUNDED' | 'EXCEPTION';

/** Which simulation (issuer message) created a card transaction. */
export type CardTransactionKind =
  | 'AUTHORIZATION'
  | 'FINANCIAL_AUTHORIZATION'
  | 'CREDIT_AUTHORIZATION'
  | 'FINANCIAL_CREDIT_AUTHORIZATION'
  | 'CREDIT_AUTHORIZATION_ADVICE';

/**
 * The parent row of one approved authorization and everything reconciled against it. Money sits as
 * described in docs/cards.md: `held` is what is still in the funding account's PENDING bucket for it.
 */
export interface CardTransactionsTable {
  /** `CardTransaction:<uuid>`. */
  id: string;
  platform_id: string;
  card_id: string;
  customer_id: string;
  platform_customer_id: string;
  /** The funding source Authorization Decisioning used. */
  account_id: string;
  /** The issuer's token (the sandbox simulation's answer). */
  issuer_transaction_token: string;
  kind: CardTransactionKind;
  direction: 'DEBIT' | 'CREDIT';
  status: CardTransactionStatus;
  /** JSON CardMerchant {descriptor, mcc?, country?}. */
  merchant: string;
  currency: string;
  authorized_amount: number;
  /** Still held (DEBIT: the account's PENDING; CREDIT: the pending credit in the account's PENDING). */
  held_amount: number;
  settled_amount: number;
  refunded_amount: number;
  settlement_count: number;
  refund_count: number;
  pull_count: number;
  /** What the funding source has given or still holds for it (holds + post-hoc pulls, less released holds). */
  pull_total: number;
  pull_pending_count: number;
  /** What the funding source failed to provide (EXCEPTION): recorded, never overdrawn. */
  shortfall: number;
  exception_reason: string | null;
  /** When an uncleared hold is released (platform clock): 7 days after the last authorization or advice. */
  hold_expires_at: string | null;
  last_event_at: string;
  created_at: string;
  updated_at: string;
}

/**
 * Every issuer message a simulation delivered — approved or declined — with its token: the audit of
 * card activity, and where a decline (which makes no CardTransaction) is recorded.
 */
export interface CardEventsTable {
  /** `CardEvent:<uuid>`. */
  id: string;
  platform_id: string;
  card_id: string;
  /** The parent transaction, when the message concerned or created one. */
  card_transaction_id: string | null;
  issuer_transaction_token: string;
  /** AUTHORIZATION, CLEARING, RETURN, BALANCE_INQUIRY, … (the simulation's message type). */
  type: string;
  amount: number;
  outcome: 'APPROVED' | 'DECLINED';
  decline_reason: string | null;
  /** A RETURN later reversed by a RETURN_REVERSAL (1), else 0. */
  reversed: number;
  created_at: string;
}

/** A reveal: the audit record and the single-use page token (its SHA-256 only). */
export interface CardRevealsTable {
  /** SHA-256 (hex) of the page token. */
  token_hash: string;
  platform_id: string;
  card_id: string;
  /** The API token (its id) that asked for the reveal: the actor the reveal is audited against. */
  actor: string;
  created_at: string;
  expires_at: string;
  /** When the page was opened (the token is then spent). */
  used_at: string | null;
}

export type CardRow = Selectable<CardsTable>;
export type CardTransactionRow = Selectable<CardTransactionsTable>;
export type CardEventRow = Selectable<CardEventsTable>;
export type CardRevealRow = Selectable<CardRevealsTable>;

declare module '../../store/schema.ts' {
  interface Database {
    cards: CardsTable;
    card_sources: CardSourcesTable;
    card_transactions: CardTransactionsTable;
    card_events: CardEventsTable;
    card_reveals: CardRevealsTable;
  }
}
