/**
 * The pure rules of invitations: what a UMA address is, how a code is drawn and read, where an
 * invitation's link points, when a platform may invite, and the status an invitation shows.
 * No SQL, no HTTP; the service applies them.
 */
import type { Rng } from '../../deps.ts';
import type { PlatformRow } from '../../store/schema.ts';
import { isSandbox, settingsOf } from '../platforms/platform-settings.ts';
import type { InvitationRow } from './invitations.tables.ts';

export type InvitationStatus = 'PENDING' | 'CLAIMED' | 'EXPIRED' | 'CANCELLED';

/** `$user@domain`: the user part in the characters customers' addresses use, at most 64 characters with the `$`. */
const UMA_ADDRESS = /^\$([a-z0-9\-_.+]{1,63})@([a-z0-9.-]{1,253})$/;
/** A dotted host name: two or more labels of letters, digits and inner hyphens. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The canonical (lowercase) form of a UMA address, or a sentence saying what is wrong with it.
 * Addresses compare case-insensitively, as customers' do (customers.validation.ts).
 */
export function parseUmaAddress(input: string): { address: string } | { problem: string } {
  const v = input.toLowerCase();
  const m = UMA_ADDRESS.exec(v);
  if (!m) return { problem: 'must look like $username@domain, the username (at most 63 characters) made of a-z 0-9 - _ . +' };
  if (!HOST.test(m[2]!)) return { problem: 'the domain must be a host name such as uma.example.com' };
  return { address: v };
}

/**
 * Codes are drawn from Crockford's base-32 alphabet (no i, l, o, u: nothing to misread when a
 * link is copied by hand), 12 characters = 60 random bits. The live examples are 8 hex digits (32
 * bits); a code ends up in a link shared in messages, so it is made long enough not to be guessed.
 */
const CODE_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';
export const CODE_LENGTH = 12;

export function newInvitationCode(rng: Rng): string {
  let n = rng.bytes(8).readBigUInt64BE();
  let code = '';
  for (let i = 0; i < CODE_LENGTH; i++) {
    code += CODE_ALPHABET[Number(n & 31n)];
    n >>= 5n;
  }
  return code;
}

/** A code as a path names it: codes are lowercase, and one typed in capitals still finds its invitation. */
export function normalizeCode(code: string): string {
  return code.toLowerCase();
}

/** Where the invitee opens the invitation: the live API's link format (docs/invitations.md). */
export function invitationUrl(code: string): string {
  return `https://uma.me/i/${code}`;
}

/**
 * Whether the platform may create invitations. A sandbox platform may from the start (Corridor
 * stands in for the dashboard set-up the live service asks for); a PRODUCTION platform once it has
 * a webhookEndpoint, because INVITATION.CLAIMED is the only way it learns that a link was claimed
 * — and, for a pay-by-link invitation, that it now owes the payment.
 */
export function invitationsConfigured(platform: PlatformRow): boolean {
  return isSandbox(platform) || Boolean(settingsOf(platform).webhookEndpoint);
}

/** The status the invitation shows at `nowMs` (the platform's clock): a PENDING one past its expiry is EXPIRED. */
export function effectiveStatus(row: Pick<InvitationRow, 'status' | 'expires_at'>, nowMs: number): InvitationStatus {
  if (row.status === 'PENDING' && row.expires_at !== null && Date.parse(row.expires_at) <= nowMs) return 'EXPIRED';
  return row.status;
}
