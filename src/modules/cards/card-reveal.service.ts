/**
 * Card reveals: `POST /cards/{id}/reveal` mints a short-lived link to a page Corridor serves itself
 * (card-reveal.hosted.ts) that shows the card's number, CVV and expiry.
 *
 * Rules:
 * - Only an ACTIVE or FROZEN card has details to reveal (PROCESSING has none yet, CLOSED no longer):
 *   409 CONFLICT otherwise.
 * - The token is 32 random bytes (base64url) stored only as its SHA-256, with the API token that
 *   asked (the audit record of the reveal). It works once, within 5 minutes of the platform's clock:
 *   opening the page spends it; a second opening, an expired or an unknown token shows no details.
 * - The page names the card's brand as the platform's `cardTokenization2faConfig.displayName` when it
 *   is set (how Corridor honours that configuration), else the platform's name.
 */
import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import { iso } from '../../lib/time.ts';
import type { Database } from '../../store/schema.ts';
import { SECRET_COLUMNS, secretRef } from '../../store/secret-box.ts';
import type { Unit } from '../../unit.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { cardErrors } from './cards.errors.ts';
import { findCard, findReveal, insertReveal, useReveal } from './cards.repo.ts';
import type { CardBrand } from './cards.tables.ts';

/** How long a reveal link works (platform clock). */
export const REVEAL_TTL_MS = 5 * 60_000;
const TOKEN_BYTES = 32;
/** What a token looks like (base64url of TOKEN_BYTES); anything else names no reveal, checked before any query. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

const tokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** POST /cards/{id}/reveal. `pageBase` is the URL the token is appended to; `actor` the API token's id. */
export async function revealCard(
  u: Unit,
  cardId: string,
  actor: string,
  pageBase: string,
): Promise<{ panEmbedUrl: string; expiresAt: string }> {
  const card = await findCard(u.trx, u.platform.id, cardId);
  if (!card) throw cardErrors.notFound(cardId);
  if ((card.state !== 'ACTIVE' && card.state !== 'FROZEN') || card.pan === null) throw cardErrors.nothingToReveal(card.state);
  const token = u.deps.secretRng.bytes(TOKEN_BYTES).toString('base64url');
  const expiresAt = iso(u.nowMs + REVEAL_TTL_MS);
  await insertReveal(u.trx, {
    token_hash: tokenHash(token),
    platform_id: u.platform.id,
    card_id: card.id,
    actor,
    created_at: u.at,
    expires_at: expiresAt,
    used_at: null,
  });
  return { panEmbedUrl: `${pageBase}${token}`, expiresAt };
}

/** The card details the page shows. */
export interface Revealed {
  kind: 'open';
  brandName: string;
  brand: CardBrand | null;
  pan: string;
  cvv: string;
  expMonth: number;
  expYear: number;
  sandbox: boolean;
}

/** Why a token shows nothing: unknown (404), or spent, expired, or its card closed meanwhile (410). */
export type Unrevealable = { kind: 'missing' } | { kind: 'used' | 'expired' | 'closed' };

/** The platform a token's reveal belongs to, or undefined when the token names none. */
export async function revealPlatform(db: Kysely<Database>, token: string): Promise<string | undefined> {
  if (!TOKEN_PATTERN.test(token)) return undefined;
  return (await findReveal(db, tokenHash(token)))?.platform_id;
}

/** Opens the page: in a unit of the token's platform, spends the token and reads the card's details. */
export async function openReveal(u: Unit, token: string): Promise<Revealed | Unrevealable> {
  if (!TOKEN_PATTERN.test(token)) return { kind: 'missing' };
  const hash = tokenHash(token);
  const reveal = await findReveal(u.trx, hash, u.platform.id, { forUpdate: true });
  if (!reveal) return { kind: 'missing' };
  if (reveal.used_at !== null) return { kind: 'used' };
  if (reveal.expires_at <= u.at) return { kind: 'expired' };
  const card = await findCard(u.trx, u.platform.id, reveal.card_id);
  if (!card || card.pan === null || card.cvv === null) return { kind: 'missing' };
  if (card.state === 'CLOSED') return { kind: 'closed' };
  if (!(await useReveal(u.trx, u.platform.id, hash, u.at))) return { kind: 'used' };
  const displayName = settingsOf(u.platform).cardTokenization2faConfig?.displayName;
  return {
    kind: 'open',
    brandName: displayName !== undefined && displayName !== '' ? displayName : u.platform.name,
    brand: card.brand,
    pan: u.app.secrets.open(card.pan, secretRef(SECRET_COLUMNS.cardPan, card.id)),
    cvv: u.app.secrets.open(card.cvv, secretRef(SECRET_COLUMNS.cardCvv, card.id)),
    expMonth: Number(card.exp_month),
    expYear: Number(card.exp_year),
    sandbox: u.platform.environment === 'SANDBOX',
  };
}
