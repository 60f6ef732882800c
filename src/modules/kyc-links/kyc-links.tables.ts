/** Table types of hosted KYC links (migration 0019), declared onto the store's Database. */
import type { Selectable } from 'kysely';

export interface KycLinksTable {
  /**
   * SHA-256 (hex) of the link's token, the random secret in its URL. The token itself is never
   * stored: the link's URL is shown once, in the response that creates it.
   */
  token_hash: string;
  platform_id: string;
  /** The one customer the link verifies (of `platform_id`). */
  customer_id: string;
  /** Where the page sends the browser once the flow is complete; null: it shows its own page. */
  redirect_uri: string | null;
  created_at: string;
  /** On the platform's clock: from then on the link opens nothing. */
  expires_at: string;
  /** When the link was used (its form submitted); a used link opens nothing. */
  used_at: string | null;
  /** What its use recorded: the new verification's status (APPROVED, PENDING_MANUAL_REVIEW …), or NONE (an already decided customer). */
  outcome: string | null;
}

export type KycLinkRow = Selectable<KycLinksTable>;

declare module '../../store/schema.ts' {
  interface Database {
    kyc_links: KycLinksTable;
  }
}
