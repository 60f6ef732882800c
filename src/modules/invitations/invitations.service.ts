/**
 * UMA invitations: a platform's customer invites someone by a link; whoever onboards through it is
 * recorded by a claim, and the inviting platform hears of it by the INVITATION.CLAIMED webhook.
 *
 * State machine (stored PENDING, CLAIMED, CANCELLED; EXPIRED is read, invitations.rules.ts):
 *   PENDING ──claim──▶ CLAIMED      (inviteeUma and claimedAt recorded; INVITATION.CLAIMED emitted)
 *   PENDING ──cancel─▶ CANCELLED
 *   PENDING ──expiresAt passes on the platform's clock──▶ EXPIRED
 * CLAIMED, CANCELLED and EXPIRED are final: a claim or cancel of one is a 400 naming its state
 * (INVITATION_ALREADY_CLAIMED, INVITATION_CANCELLED, EXPIRED).
 *
 * Rules:
 * - The inviter is a customer of the caller's platform, named by its UMA address (404 USER_NOT_FOUND
 *   otherwise); `amountToSend` is in that customer's currency, within the platform's per-transaction
 *   bounds for it, and moves nothing: paying it is the platform's own quote after the claim.
 * - An invitation is the creating platform's alone: every operation finds it by code among that
 *   platform's invitations, so another platform's code is 404 like a code that exists nowhere.
 * - A claim records any well-formed UMA address but the inviter's own.
 */
import type { AppContext } from '../../context.ts';
import { currency } from '../../lib/currencies.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import type { PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findActiveByUmaAddress } from '../customers/customers.repo.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { invitationErrors } from './invitations.errors.ts';
import { codeInUse, findInvitationByCode, finishPending, insertInvitation } from './invitations.repo.ts';
import {
  effectiveStatus,
  invitationsConfigured,
  invitationUrl,
  newInvitationCode,
  normalizeCode,
  parseUmaAddress,
} from './invitations.rules.ts';
import type { UmaInvitationClaim, UmaInvitationCreate, UmaInvitationWire } from './invitations.schemas.ts';
import type { InvitationRow } from './invitations.tables.ts';

/** Draws before giving up: with 60-bit codes a second draw is already a one-in-a-quintillion event. */
const CODE_DRAWS = 5;

/** POST /invitations: a PENDING invitation from the customer whose UMA address is `inviterUma`. */
export async function createInvitation(u: Unit, input: UmaInvitationCreate): Promise<UmaInvitationWire> {
  if (!invitationsConfigured(u.platform)) throw invitationErrors.notConfigured();
  const inviterUma = umaAddressOf('inviterUma', input.inviterUma);
  const inviter = await findActiveByUmaAddress(u.trx, u.platform.id, inviterUma);
  if (!inviter) throw invitationErrors.inviterNotFound();

  let expiresAt: string | null = null;
  if (input.expiresAt !== undefined) {
    const ms = Date.parse(input.expiresAt);
    // The schema's date-time admits a leap second (…:60Z), which no JavaScript date holds.
    if (Number.isNaN(ms)) throw invitationErrors.expiryUnreadable();
    if (ms <= u.nowMs) throw invitationErrors.expiryNotInFuture(u.at);
    expiresAt = iso(ms);
  }

  let amountCurrency: string | null = null;
  if (input.amountToSend !== undefined) {
    amountCurrency = inviterCurrency(u.platform, inviter.currencies);
    const bounds = settingsOf(u.platform).supportedCurrencies.find((c) => c.currencyCode === amountCurrency);
    if (bounds && (input.amountToSend < bounds.minAmount || input.amountToSend > bounds.maxAmount)) {
      throw invitationErrors.amountOutOfRange(amountCurrency, bounds.minAmount, bounds.maxAmount);
    }
  }

  const row: InvitationRow = {
    id: u.deps.ids.next('Invitation'),
    platform_id: u.platform.id,
    code: await freshCode(u),
    inviter_customer_id: inviter.id,
    inviter_uma: inviter.uma_address,
    first_name: input.firstName ?? null,
    amount: input.amountToSend ?? null,
    amount_currency: amountCurrency,
    expires_at: expiresAt,
    status: 'PENDING',
    invitee_uma: null,
    claimed_at: null,
    cancelled_at: null,
    created_at: u.at,
    updated_at: u.at,
  };
  await insertInvitation(u.trx, row);
  return invitationToWire(row, u.nowMs);
}

/** GET /invitations/{code}: the platform's invitation, its status as of the platform's clock now. */
export async function getInvitation(ctx: AppContext, platform: PlatformRow, code: string): Promise<UmaInvitationWire> {
  const row = await findInvitationByCode(ctx.db, platform.id, normalizeCode(code));
  if (!row) throw invitationErrors.notFound();
  return invitationToWire(row, platformNowMs(ctx.deps.clock, platform));
}

/** POST /invitations/{code}/claim: PENDING → CLAIMED by `inviteeUma`, and INVITATION.CLAIMED to the platform. */
export async function claimInvitation(u: Unit, code: string, input: UmaInvitationClaim): Promise<UmaInvitationWire> {
  const inviteeUma = umaAddressOf('inviteeUma', input.inviteeUma);
  const row = await pendingInvitation(u, code);
  if (inviteeUma === row.inviter_uma) throw invitationErrors.selfClaim();
  const claimed: InvitationRow = { ...row, status: 'CLAIMED', invitee_uma: inviteeUma, claimed_at: u.at, updated_at: u.at };
  await finish(u, row, { status: 'CLAIMED', invitee_uma: inviteeUma, claimed_at: u.at, updated_at: u.at });
  const wire = invitationToWire(claimed, u.nowMs);
  u.emit('INVITATION.CLAIMED', row.id, wire);
  return wire;
}

/** POST /invitations/{code}/cancel: PENDING → CANCELLED; the link can no longer be claimed. */
export async function cancelInvitation(u: Unit, code: string): Promise<UmaInvitationWire> {
  const row = await pendingInvitation(u, code);
  await finish(u, row, { status: 'CANCELLED', cancelled_at: u.at, updated_at: u.at });
  return invitationToWire({ ...row, status: 'CANCELLED', cancelled_at: u.at, updated_at: u.at }, u.nowMs);
}

export function invitationToWire(row: InvitationRow, nowMs: number): UmaInvitationWire {
  const w: UmaInvitationWire = {
    code: row.code,
    createdAt: row.created_at,
    url: invitationUrl(row.code),
    inviterUma: row.inviter_uma,
    status: effectiveStatus(row, nowMs),
  };
  if (row.claimed_at !== null) w.claimedAt = row.claimed_at;
  if (row.expires_at !== null) w.expiresAt = row.expires_at;
  if (row.invitee_uma !== null) w.inviteeUma = row.invitee_uma;
  if (row.first_name !== null) w.firstName = row.first_name;
  if (row.amount !== null && row.amount_currency !== null) {
    w.amountToSend = { amount: Number(row.amount), currency: { ...currency(row.amount_currency) } };
  }
  return w;
}

// ── helpers ───────────────────────────────────────────────────────────────────────────────────

function umaAddressOf(field: 'inviterUma' | 'inviteeUma', input: string): string {
  const parsed = parseUmaAddress(input);
  if ('problem' in parsed) throw invitationErrors.invalidUmaAddress(field, parsed.problem);
  return parsed.address;
}

/** The platform's invitation with `code`, read under its row lock, still PENDING at the unit's time; else the error that says why not. */
async function pendingInvitation(u: Unit, code: string): Promise<InvitationRow> {
  const row = await findInvitationByCode(u.trx, u.platform.id, normalizeCode(code), { forUpdate: true });
  if (!row) throw invitationErrors.notFound();
  refuseUnlessPending(row, u.nowMs);
  return row;
}

function refuseUnlessPending(row: InvitationRow, nowMs: number): void {
  switch (effectiveStatus(row, nowMs)) {
    case 'PENDING':
      return;
    case 'CLAIMED':
      throw invitationErrors.alreadyClaimed(row.invitee_uma);
    case 'CANCELLED':
      throw invitationErrors.cancelled();
    case 'EXPIRED':
      throw invitationErrors.expired(row.expires_at!);
  }
}

/** Writes the way out of PENDING; should another writer have got there first, answers with the state it left. */
async function finish(u: Unit, row: InvitationRow, set: Parameters<typeof finishPending>[3]): Promise<void> {
  if (await finishPending(u.trx, u.platform.id, row.id, set)) return;
  const now = await findInvitationByCode(u.trx, u.platform.id, row.code);
  if (!now) throw invitationErrors.notFound();
  refuseUnlessPending(now, u.nowMs);
  throw new Error(`invitation ${row.id} is PENDING but its update matched no row`);
}

/** The inviter's currency: the first the customer holds (its main one), else the platform's own. */
function inviterCurrency(platform: PlatformRow, currenciesJson: string): string {
  const held = JSON.parse(currenciesJson) as string[];
  return held[0] ?? platform.fiat_currency;
}

async function freshCode(u: Unit): Promise<string> {
  for (let i = 0; i < CODE_DRAWS; i++) {
    const code = newInvitationCode(u.deps.secretRng);
    if (!(await codeInUse(u.trx, code))) return code;
  }
  throw new Error(`no unused invitation code in ${CODE_DRAWS} draws: is the random source broken?`);
}
