/**
 * Table types of contact verification (migration 0020), declared into the store's `Database` by
 * module augmentation so that the area's SQL is typed without editing src/store/schema.ts.
 */
import type { Selectable } from 'kysely';

/** The two channels a customer's contact details are verified on. */
export type ContactChannel = 'EMAIL' | 'PHONE';

/**
 * One channel of one customer: what was verified, and the one code outstanding on it. A channel
 * without a row has never been sent a code. Times are on the platform's clock (its sandbox offset
 * included), so a sandbox clock advance expires codes and lifts the send limit.
 */
export interface ContactVerificationsTable {
  platform_id: string;
  customer_id: string;
  channel: ContactChannel;
  /**
   * The contact (normalised: an email in lowercase) that was confirmed, or null. The channel is
   * VERIFIED while it equals the customer's current contact: a changed email or phone number makes
   * the channel PENDING again without anything written here.
   */
  verified_contact: string | null;
  verified_at: string | null;
  /** The outstanding code as `v1$<salt hex>$<HMAC-SHA256 hex>`, never the code itself; null when none is outstanding. */
  code_digest: string | null;
  /** The contact (normalised) the outstanding code was sent to: a code proves only the address it went to. */
  code_contact: string | null;
  code_expires_at: string | null;
  /** Wrong codes tried against the outstanding code; at the limit the code is void. */
  failed_attempts: number;
  /** JSON array of the send times (ISO-8601) inside the send-limit window, oldest first. */
  recent_sends: string;
  created_at: string;
  updated_at: string;
}

export type ContactVerificationRow = Selectable<ContactVerificationsTable>;

declare module '../../store/schema.ts' {
  interface Database {
    contact_verifications: ContactVerificationsTable;
  }
}
