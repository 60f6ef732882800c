/**
 * SCA login and security events.
 *
 * - Start: `SMS_OTP` (the customer needs a phone number, else 400) issues a 5-minute challenge whose
 *   id the complete echoes; `TOTP` and `PASSKEY` need the factor enrolled (else 400); PASSKEY
 *   answers WebAuthn request options. A new start replaces the customer's pending login.
 * - Complete: 423 ACCOUNT_LOCKED while locked or suspended; 409 CONFLICT without a pending login;
 *   the factor must be the started one. A wrong proof is 400, counts against the login's challenge
 *   (the 5th voids it: 429) and adds one to the customer's failed-login counter (lockout schedule in
 *   sca.security.ts). A right one opens the 180-day SCA session: `{status: SUCCESS, sessionExpiresAt}`.
 * - Record event: FAILED_LOGIN_ATTEMPT counts one failure (200 with the resulting state, also when
 *   that failure starts a lock; 423 while the customer is already locked, not counted);
 *   RESET_PASSWORD_COMPLETED resets the counter, lifts a lock or suspension and revokes the session
 *   (accepted while locked: it is how a suspension ends).
 */
import type { ApiError } from '../../http/errors.ts';
import type { Unit } from '../../unit.ts';
import { activeFactor, attemptProof, challengeWire, newChallengeRow } from './sca-challenges.ts';
import { customerPhone, requireScaCustomer } from './sca.customer.ts';
import { scaErrors } from './sca.errors.ts';
import { advertisedRpId, assertionOrigins, relyingParty } from './sca.proofs.ts';
import { endChallengesOf, factorsOf, insertChallenge, liveChallengeOf } from './sca.repo.ts';
import type { RecordSecurityEventResponse, ScaLoginCompleteRequest, ScaLoginStart } from './sca.schemas.ts';
import { assertNotLocked, lockDetails, openSession, recordFailedLogin, recordPasswordReset, stateOf } from './sca.security.ts';
import type { ScaFactorValue } from './sca.tables.ts';

/** POST /sca/login/start. */
export async function startLogin(u: Unit, customerId: string, factor: ScaFactorValue): Promise<ScaLoginStart> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  const state = await stateOf(u, customer.id);
  const factors = await factorsOf(u.trx, u.platform.id, customer.id);
  const passkey = activeFactor(factors, 'PASSKEY');
  if (factor === 'SMS_OTP' && (state.sms_number ?? customerPhone(customer)) === undefined) {
    throw scaErrors.proofRejected('factor', 'SMS_OTP needs the customer to have a phoneNumber');
  }
  if (factor === 'TOTP' && !activeFactor(factors, 'TOTP')) throw scaErrors.factorNotEnrolled('factor', 'TOTP');
  if (factor === 'PASSKEY' && !passkey) throw scaErrors.factorNotEnrolled('factor', 'PASSKEY');

  await endChallengesOf(u.trx, u.platform.id, customer.id, 'LOGIN', 'REPLACED', u.at);
  const row = newChallengeRow(u, {
    customerId: customer.id,
    kind: 'LOGIN',
    subjectId: customer.id,
    purpose: null,
    factor,
    availableFactors: [factor],
  });
  await insertChallenge(u.trx, row);
  if (factor === 'SMS_OTP') return { factor, challengeId: row.id, expiresAt: row.expires_at };
  if (factor === 'TOTP') return { factor };
  const wire = challengeWire(row, passkey);
  return {
    factor,
    passkeyOptions: wire.passkeyAssertionOptions ?? null,
    allowedOrigins: passkey ? assertionOrigins(u, passkey) : (relyingParty(u).origins ?? []),
    relyingPartyId: passkey?.rp_id ?? advertisedRpId(u) ?? null,
  };
}

export type LoginOutcome = { kind: 'done'; sessionExpiresAt: string } | { kind: 'rejected'; error: ApiError };

/** POST /sca/login/complete: a counted wrong proof is returned (the route commits, then answers it). */
export async function completeLogin(u: Unit, customerId: string, body: ScaLoginCompleteRequest): Promise<LoginOutcome> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  const state = await stateOf(u, customer.id);
  assertNotLocked(state, u.nowMs);
  const row = await liveChallengeOf(u.trx, u.platform.id, customer.id, 'LOGIN', { forUpdate: true });
  if (!row) throw scaErrors.noPendingChallenge(`the login of customer ${customer.id}; start one with POST /sca/login/start`);
  if (body.factor !== row.factor) throw scaErrors.proofRejected('factor', `must be ${row.factor}, the factor the login was started with`);
  if (row.factor === 'SMS_OTP') {
    if (body.challengeId === undefined || body.challengeId === null)
      throw scaErrors.proofRejected('challengeId', 'is required for SMS_OTP');
    if (body.challengeId !== row.id) throw scaErrors.proofRejected('challengeId', 'is not the pending login challenge');
  }
  const factors = await factorsOf(u.trx, u.platform.id, customer.id);
  const passkey = activeFactor(factors, 'PASSKEY');
  const outcome = await attemptProof(
    u,
    row,
    factors,
    { code: body.code, passkeyAssertion: body.passkeyAssertion, origin: body.origin, endUserIpAddress: body.endUserIpAddress },
    { allowTotp: row.factor === 'TOTP', ...(passkey ? { allowedOrigins: assertionOrigins(u, passkey) } : {}) },
  );
  if (outcome.kind === 'rejected') {
    await recordFailedLogin(u, state);
    return outcome;
  }
  return { kind: 'done', sessionExpiresAt: await openSession(u, state) };
}

/** POST /sca/record-event. */
export async function recordEvent(
  u: Unit,
  customerId: string,
  eventType: 'RESET_PASSWORD_COMPLETED' | 'FAILED_LOGIN_ATTEMPT',
): Promise<RecordSecurityEventResponse> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  const state = await stateOf(u, customer.id);
  let next = state;
  if (eventType === 'FAILED_LOGIN_ATTEMPT') {
    assertNotLocked(state, u.nowMs);
    next = await recordFailedLogin(u, state);
  } else {
    next = await recordPasswordReset(u, state);
  }
  const d = lockDetails(next, u.nowMs);
  return { eventType, suspended: d.suspended, lockedUntil: d.lockedUntil, failedAttempts: d.failedAttempts };
}
