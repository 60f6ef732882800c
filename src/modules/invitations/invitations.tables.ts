/**
 * Table types of UMA invitations (migration 0015), declared into the store's `Database` by module
 * augmentation so that the area's SQL is typed without editing src/store/schema.ts.
 */
import type { Selectable } from 'kysely';

/**
 * What a row stores as its status. `EXPIRED` is never written: a PENDING invitation whose
 * `expires_at` has passed on the platform's clock reads as EXPIRED (invitations.rules.ts), so a
 * sandbox clock advance expires it at once and no job has to race a claim.
 */
export type StoredInvitationStatus = 'PENDING' | 'CLAIMED' | 'CANCELLED';

export interface InvitationsTable {
  /** `Invitation:<uuid>`: the outbox's resource id for the invitation's events; never on the wire. */
  id: string;
  platform_id: string;
  /** The code the API names the invitation by (lowercase, invitations.rules.ts); unique across all platforms. */
  code: string;
  /** The customer whose UMA address invited (read when the invitation was made). */
  inviter_customer_id: string;
  /** The inviter's UMA address as the customer had it then (lowercase). */
  inviter_uma: string;
  first_name: string | null;
  /** `amountToSend` in the smallest unit of `amount_currency`; both null when none was given. */
  amount: number | null;
  /** The inviter's currency when the invitation was made: later changes to the customer do not move it. */
  amount_currency: string | null;
  expires_at: string | null;
  status: StoredInvitationStatus;
  /** Set by a claim (lowercase), with `claimed_at`. */
  invitee_uma: string | null;
  claimed_at: string | null;
  /** Set by a cancellation; not on the wire (the live schema has no field for it). */
  cancelled_at: string | null;
  created_at: string;
  updated_at: string;
}

export type InvitationRow = Selectable<InvitationsTable>;

declare module '../../store/schema.ts' {
  interface Database {
    invitations: InvitationsTable;
  }
}
