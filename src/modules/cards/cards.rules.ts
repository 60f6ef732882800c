/**
 * The pure rules of cards: card-eligible currencies, the sandbox's magic suffixes, card numbers
 * (test ranges, Luhn), the PATCH state machine and the authorization limits. No SQL, no HTTP.
 */
import { createHash } from 'node:crypto';
import type { Rng } from '../../deps.ts';
import type { CardBrand, CardState } from './cards.tables.ts';

/**
 * The currencies a card may be funded in: USD (the live API's examples and webhooks) and USDB (its
 * guides' v1 card currency). Every funding source of a card is in the same one.
 */
export const CARD_ELIGIBLE_CURRENCIES: ReadonlySet<string> = new Set(['USD', 'USDB']);

/** The most funding sources a card may have (the live API states no bound). */
export const MAX_FUNDING_SOURCES = 10;

const suffix = (s: string) => s.slice(-3);

// ── Issuance ──────────────────────────────────────────────────────────────────────────────────

/** What provisioning does, by the last 3 characters of platformCardId (of cardholderId when it is generated). */
export type Provisioning = { kind: 'NEVER' } | { kind: 'REJECT'; delayMs: number } | { kind: 'ACTIVATE'; delayMs: number };

/** The sandbox's `005`: activation ~30 s after issue (platform clock). */
export const DELAYED_ACTIVATION_MS = 30_000;

export function provisioningFor(magicKey: string): Provisioning {
  switch (suffix(magicKey)) {
    case '001':
      return { kind: 'NEVER' };
    case '002':
      return { kind: 'REJECT', delayMs: 0 };
    case '005':
      return { kind: 'ACTIVATE', delayMs: DELAYED_ACTIVATION_MS };
    default:
      return { kind: 'ACTIVATE', delayMs: 0 };
  }
}

/** Why binding this account is refused by the sandbox (`002`: balance check, `003`: account closed), if it is. */
export function fundingSourceMagic(accountId: string): string | undefined {
  switch (suffix(accountId)) {
    case '002':
      return 'the sandbox balance check refused it (account id ending in 002)';
    case '003':
      return 'the sandbox reports it closed (account id ending in 003)';
    default:
      return undefined;
  }
}

// ── Card numbers ──────────────────────────────────────────────────────────────────────────────

/** Recognisable test ranges: VISA 4000 00…, MASTERCARD 5555 55…. */
const PAN_PREFIX: Record<CardBrand, string> = { VISA: '400000', MASTERCARD: '555555' };
const PAN_LENGTH = 16;

/** The brand of a card: fixed by its id (the first byte of its SHA-256, even → VISA). */
export function brandFor(cardId: string): CardBrand {
  return createHash('sha256').update(cardId, 'utf8').digest()[0]! % 2 === 0 ? 'VISA' : 'MASTERCARD';
}

/** The Luhn check digit that completes `body`. */
export function luhnCheckDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    // Doubling starts at the digit left of the check digit (the body's last).
    let d = body.charCodeAt(body.length - 1 - i) - 48;
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return (10 - (sum % 10)) % 10;
}

export function isLuhnValid(pan: string): boolean {
  return /^[0-9]{12,19}$/.test(pan) && luhnCheckDigit(pan.slice(0, -1)) === Number(pan.slice(-1));
}

/** `n` uniformly random decimal digits (bytes ≥ 250 are drawn again: no modulo bias). */
export function randomDigits(rng: Rng, n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of rng.bytes(n)) {
      if (b < 250 && out.length < n) out += String(b % 10);
    }
  }
  return out;
}

/** A Luhn-valid 16-digit number in the brand's test range. */
export function newPan(brand: CardBrand, rng: Rng): string {
  const prefix = PAN_PREFIX[brand];
  const body = prefix + randomDigits(rng, PAN_LENGTH - 1 - prefix.length);
  return body + String(luhnCheckDigit(body));
}

export function newCvv(rng: Rng): string {
  return randomDigits(rng, 3);
}

/** A card activated at `nowMs` (platform clock) expires at the end of the same month three years on. */
export function expiryAt(nowMs: number): { expMonth: number; expYear: number } {
  const d = new Date(nowMs);
  return { expMonth: d.getUTCMonth() + 1, expYear: d.getUTCFullYear() + 3 };
}

// ── PATCH state machine ───────────────────────────────────────────────────────────────────────

export type StateChange =
  | { kind: 'none' }
  | { kind: 'change'; to: 'ACTIVE' | 'FROZEN' | 'CLOSED' }
  | { kind: 'refuse'; code: 'INVALID_STATE_TRANSITION' | 'CARD_ALREADY_CLOSED' };

/**
 * What a requested `state` does to a card in `from`: ACTIVE ⇄ FROZEN and ACTIVE | FROZEN → CLOSED
 * change it; asking for the state it is in changes nothing; CLOSED → CLOSED is CARD_ALREADY_CLOSED;
 * anything else (out of CLOSED, out of PROCESSING) is INVALID_STATE_TRANSITION.
 */
export function stateChange(from: CardState, to: 'ACTIVE' | 'FROZEN' | 'CLOSED'): StateChange {
  if (from === 'CLOSED') return { kind: 'refuse', code: to === 'CLOSED' ? 'CARD_ALREADY_CLOSED' : 'INVALID_STATE_TRANSITION' };
  if (from !== 'ACTIVE' && from !== 'FROZEN') return { kind: 'refuse', code: 'INVALID_STATE_TRANSITION' };
  return from === to ? { kind: 'none' } : { kind: 'change', to };
}

// ── Authorization decisioning ─────────────────────────────────────────────────────────────────

/** Why an authorization was declined (recorded with the issuer message; never an HTTP error). */
export type DeclineReason =
  | 'INSUFFICIENT_FUNDS'
  | 'CARD_PAUSED'
  | 'CARD_CLOSED'
  | 'CARD_NOT_ACTIVE'
  | 'EXCEEDS_MAX_SPEND_PER_TRANSACTION'
  | 'VELOCITY_LIMIT_EXCEEDED';

/** The velocity limit: at most this many approved authorizations per card … */
export const VELOCITY_MAX = 10;
/** … in any window this long (platform clock). */
export const VELOCITY_WINDOW_MS = 60_000;

/** An uncleared hold is released this long after the last authorization or advice (platform clock). */
export const HOLD_EXPIRY_MS = 7 * 24 * 3600_000;

/** The sandbox's `005`: the pull stays PENDING this long before it is confirmed. */
export const DELAYED_PULL_MS = 30_000;

/** What the descriptor's last 3 characters ask of an authorization-family simulation. */
export type DescriptorMagic = 'DECLINE_INSUFFICIENT_FUNDS' | 'DECLINE_CARD_PAUSED' | 'DELAYED_PULL' | 'PULL_FAILS' | 'NONE';

export function descriptorMagic(descriptor: string): DescriptorMagic {
  switch (suffix(descriptor)) {
    case '002':
      return 'DECLINE_INSUFFICIENT_FUNDS';
    case '003':
      return 'DECLINE_CARD_PAUSED';
    case '005':
      return 'DELAYED_PULL';
    case '006':
      return 'PULL_FAILS';
    default:
      return 'NONE';
  }
}

/** Why a card in `state` cannot authorize, if it cannot. */
export function stateDecline(state: CardState): DeclineReason | undefined {
  switch (state) {
    case 'ACTIVE':
      return undefined;
    case 'FROZEN':
      return 'CARD_PAUSED';
    case 'CLOSED':
      return 'CARD_CLOSED';
    default:
      return 'CARD_NOT_ACTIVE';
  }
}
