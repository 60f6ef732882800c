/**
 * Contact verification (the live "Contact Verification" operations): a one-time code sent to the
 * customer's email or phone number, confirmed to mark that channel VERIFIED.
 *
 * Per channel (EMAIL, PHONE) of a customer that must verify it (contact-verification.status.ts):
 *
 *   PENDING, no code        --send-->                PENDING, code outstanding
 *   PENDING, code outstanding --send-->              PENDING, a new code (the old one and its wrong attempts gone)
 *   PENDING, code outstanding --confirm, right code--> VERIFIED
 *   PENDING, code outstanding --5th wrong code-->     PENDING, no code (void)
 *   PENDING, code outstanding --10 minutes-->         PENDING, code expired (confirm refused; send again)
 *   VERIFIED                --email / phone changed--> PENDING, no code (derived: the new contact is unproven)
 *
 * - send on a VERIFIED channel, or confirm on one, is 409 (as the live API documents: no second
 *   confirmation); a channel the customer need not verify is 409 on every operation.
 * - A code lives 10 minutes; at most 5 wrong codes are tried against one code, the 5th voids it;
 *   at most 5 codes are sent per channel in any hour (429 RATE_LIMITED with Retry-After). All on
 *   the platform's clock, so a sandbox clock advance expires codes and lifts the send limit.
 * - A code proves the address it was sent to: confirmed after the contact changed, it is refused.
 * - The sandbox sends nothing and its code is always 123456 (codes.ts).
 */
import type { ApiError } from '../../http/errors.ts';
import { iso } from '../../lib/time.ts';
import type { CustomerRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { updateActiveCustomer } from '../customers/customers.repo.ts';
import { customerWire, requireCustomer } from '../customers/customers.service.ts';
import type { CustomerWire } from '../customers/customers.schemas.ts';
import { codeDigest, codeMatches, codeToSend } from './codes.ts';
import { type CodeRejection, contactVerificationErrors as cvErrors } from './contact-verification.errors.ts';
import { findVerification, saveVerification } from './contact-verification.repo.ts';
import { channelStatus, currentContact, requiredChannels } from './contact-verification.status.ts';
import type { ContactChannel, ContactVerificationRow } from './contact-verification.tables.ts';

/** How long a sent code can be confirmed. */
export const CODE_TTL_MS = 10 * 60_000;
/** Wrong codes tried against one code; the last of them voids it. */
export const MAX_FAILED_ATTEMPTS = 5;
/** Codes sent per channel and customer within `SEND_WINDOW_MS`. */
export const MAX_SENDS = 5;
export const SEND_WINDOW_MS = 60 * 60_000;

/** A channel of a customer that must verify it, locked with its customer for the unit. */
interface Channel {
  customer: CustomerRow;
  row: ContactVerificationRow | undefined;
}

/**
 * The customer (404 unknown or another platform's, 410 deleted) and its channel row, both locked,
 * after the checks every operation makes: the channel must be required (409) and not VERIFIED (409).
 */
async function openChannel(u: Unit, customerId: string, channel: ContactChannel): Promise<Channel> {
  // The customer's row lock serialises every send and confirm of the customer (and its PATCHes).
  const customer = await requireCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  if (!requiredChannels(u.platform, customer).includes(channel)) throw cvErrors.notRequired(customer.id, channel);
  const row = await findVerification(u.trx, u.platform.id, customer.id, channel, { forUpdate: true });
  if (channelStatus(customer, channel, row) === 'VERIFIED') throw cvErrors.alreadyVerified(customer.id, channel);
  return { customer, row };
}

/** A row to write: the stored one, or a channel's first. */
function baseRow(u: Unit, customerId: string, channel: ContactChannel, row: ContactVerificationRow | undefined): ContactVerificationRow {
  return (
    row ?? {
      platform_id: u.platform.id,
      customer_id: customerId,
      channel,
      verified_contact: null,
      verified_at: null,
      code_digest: null,
      code_contact: null,
      code_expires_at: null,
      failed_attempts: 0,
      recent_sends: '[]',
      created_at: u.at,
      updated_at: u.at,
    }
  );
}

const NO_CODE = { code_digest: null, code_contact: null, code_expires_at: null, failed_attempts: 0 } as const;

/**
 * POST /customers/{customerId}/verify-email and /verify-phone: sends (or sends again) a code to the
 * customer's current contact. A new code replaces the outstanding one and its wrong attempts.
 */
export async function sendCode(u: Unit, customerId: string, channel: ContactChannel): Promise<void> {
  const { customer, row } = await openChannel(u, customerId, channel);
  const contact = currentContact(customer, channel);
  if (contact === undefined) throw cvErrors.contactMissing(customer.id, channel);
  const windowStart = u.nowMs - SEND_WINDOW_MS;
  const sends = (JSON.parse(row?.recent_sends ?? '[]') as string[]).filter((t) => Date.parse(t) > windowStart);
  if (sends.length >= MAX_SENDS) {
    const oldest = Date.parse(sends[0]!);
    throw cvErrors.sendLimited(customer.id, channel, MAX_SENDS, Math.max(1, Math.ceil((oldest + SEND_WINDOW_MS - u.nowMs) / 1000)));
  }
  // Nothing leaves Corridor: the sandbox's code is fixed, and only its digest is kept.
  await saveVerification(u.trx, {
    ...baseRow(u, customer.id, channel, row),
    code_digest: codeDigest(u, codeToSend(u)),
    code_contact: contact,
    code_expires_at: iso(u.nowMs + CODE_TTL_MS),
    failed_attempts: 0,
    recent_sends: JSON.stringify([...sends, u.at]),
    updated_at: u.at,
  });
}

/**
 * What a confirm decided: the customer with the channel VERIFIED, or a refused code whose counted
 * attempt must be kept (the route commits the unit, then answers the error).
 */
export type ConfirmOutcome = { kind: 'verified'; customer: CustomerWire } | { kind: 'rejected'; error: ApiError };

/**
 * POST /customers/{customerId}/verify-email/confirm and /verify-phone/confirm. A refusal that
 * changes nothing is thrown; a wrong code is counted (and at the limit voids the code), which the
 * caller must commit, so it is returned.
 */
export async function confirmCode(u: Unit, customerId: string, channel: ContactChannel, code: string): Promise<ConfirmOutcome> {
  const { customer, row } = await openChannel(u, customerId, channel);
  const refuse = (reason: CodeRejection) => cvErrors.codeRejected(reason, channel);
  if (!row || row.code_digest === null || row.code_expires_at === null) throw refuse('NO_CODE_SENT');
  if (u.nowMs >= Date.parse(row.code_expires_at)) throw refuse('CODE_EXPIRED');
  const contact = currentContact(customer, channel);
  if (contact === undefined || row.code_contact !== contact) throw refuse('CONTACT_CHANGED');

  if (!codeMatches(row.code_digest, code)) {
    const failed = row.failed_attempts + 1;
    const exhausted = failed >= MAX_FAILED_ATTEMPTS;
    await saveVerification(u.trx, { ...row, ...(exhausted ? NO_CODE : { failed_attempts: failed }), updated_at: u.at });
    const error = exhausted
      ? cvErrors.codeRejected('ATTEMPTS_EXHAUSTED', channel)
      : cvErrors.codeRejected('CODE_INVALID', channel, MAX_FAILED_ATTEMPTS - failed);
    return { kind: 'rejected', error };
  }

  await saveVerification(u.trx, { ...row, ...NO_CODE, verified_contact: contact, verified_at: u.at, updated_at: u.at });
  // The customer's representation changed (its contactVerification): its updatedAt moves with it.
  if (!(await updateActiveCustomer(u.trx, u.platform.id, customer.id, { updated_at: u.at }))) {
    throw new Error(`customer ${customer.id} vanished under its row lock`);
  }
  return { kind: 'verified', customer: await customerWire(u.trx, u.platform, { ...customer, updated_at: u.at }) };
}
