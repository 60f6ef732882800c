/**
 * One-time codes of contact verification: what is sent, how it is kept, how a guess is checked.
 * A code is never stored or logged: the row keeps `v1$<salt>$<HMAC-SHA256(salt, code)>` and a guess
 * is compared in constant time. (A 6-digit code's digest does not resist an offline search; what
 * protects a code is its short life and the attempt limit, the digest keeps it out of backups and
 * query logs.)
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Unit } from '../../unit.ts';
import { isSandbox } from '../platforms/platform-settings.ts';

/** The sandbox's fixed contact-verification code (both channels), as the live sandbox documents. */
export const SANDBOX_CONTACT_CODE = '123456';

/** The code a send delivers. Only sandbox platforms require contact verification (contact-verification.status.ts). */
export function codeToSend(u: Unit): string {
  if (!isSandbox(u.platform)) throw new Error('contact verification codes are sent on sandbox platforms only');
  return SANDBOX_CONTACT_CODE;
}

function mac(saltHex: string, code: string): Buffer {
  return createHmac('sha256', Buffer.from(saltHex, 'hex')).update(code, 'utf8').digest();
}

/** The stored form of `code`, under a fresh random salt. */
export function codeDigest(u: Unit, code: string): string {
  const salt = u.deps.secretRng.bytes(16).toString('hex');
  return `v1$${salt}$${mac(salt, code).toString('hex')}`;
}

/** Whether `guess` is the code `digest` was made from (constant time in the guess). */
export function codeMatches(digest: string, guess: string): boolean {
  const [version, salt, hex] = digest.split('$');
  if (version !== 'v1' || salt === undefined || hex === undefined) return false;
  const expected = Buffer.from(hex, 'hex');
  const actual = mac(salt, guess);
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
