/**
 * Table types of ownership verification (migration 0018), declared into the store's `Database` by
 * module augmentation so that the area's SQL is typed without editing src/store/schema.ts.
 */
import type { Selectable } from 'kysely';
import type { OwnershipMethod } from './ownership.rules.ts';

/**
 * A challenge's life: PENDING while outstanding (at most one per account, a partial unique index
 * holds it), then VERIFIED, FAILED (a bad or late signature, a failed liveness check), or ABANDONED
 * (replaced by a newer challenge). Expiry is not a stored status: a PENDING challenge past
 * `expires_at` on the platform's clock is expired, and a verify against it fails it.
 */
export type ChallengeStatus = 'PENDING' | 'VERIFIED' | 'FAILED' | 'ABANDONED';

/** Why a challenge failed (also `details.reason` of the verify's 400). */
export type ChallengeFailure = 'SIGNATURE_INVALID' | 'CHALLENGE_EXPIRED' | 'LIVENESS_FAILED';

export interface OwnershipChallengesTable {
  /** `OwnershipChallenge:<uuid>`: never on the wire (the live challenge has no id); the liveness job names it. */
  id: string;
  platform_id: string;
  external_account_id: string;
  method: OwnershipMethod;
  status: ChallengeStatus;
  /** WALLET_SIGNATURE: the exact text the wallet signs. */
  message_to_sign: string | null;
  /** LIVENESS: the hosted page's URL. */
  verification_link: string | null;
  /** Platform clock, ISO-8601 UTC. */
  expires_at: string;
  failure_reason: ChallengeFailure | null;
  created_at: string;
  updated_at: string;
}

export type OwnershipChallengeRow = Selectable<OwnershipChallengesTable>;

declare module '../../store/schema.ts' {
  interface Database {
    ownership_challenges: OwnershipChallengesTable;
  }
}
