/**
 * The area's errors, by the live API's status and code for each case (facts-sca §9). Where the
 * live document names no code of its own, the generic code of that status is used and
 * `details.reason` says which case it is.
 */
import { errors } from '../../http/errors.ts';
import { iso } from '../../lib/time.ts';

/** The lock state a 423 carries (live Error423 details). */
export interface LockDetails {
  suspended: boolean;
  lockedUntil: string | null;
  failedAttempts: number;
}

const retryAfter = (seconds: number) => Math.max(1, Math.ceil(seconds));

export const scaErrors = {
  notScaCustomer: (customerId: string) =>
    errors.coded(
      409,
      'CONFLICT',
      `SCA does not apply to customer ${customerId}: Corridor applies it to customers whose address is in the EEA`,
      { reason: 'SCA_NOT_REQUIRED' },
    ),
  noPendingChallenge: (what: string) =>
    errors.coded(409, 'CONFLICT', `No pending SCA challenge for ${what}`, { reason: 'NO_PENDING_CHALLENGE' }),
  sessionRequired: (customerId: string) =>
    errors.coded(
      409,
      'SCA_SESSION_REQUIRED',
      `Customer ${customerId} has no unexpired SCA login session; complete POST /sca/login/start and /sca/login/complete, then retry`,
    ),
  passkeyAlreadyEnrolled: () =>
    errors.coded(
      409,
      'PASSKEY_ALREADY_ENROLLED',
      'The customer already has a passkey; delete it with DELETE /sca/factors/{credentialId} first',
    ),
  totpAlreadyEnrolled: () =>
    errors.coded(
      409,
      'CONFLICT',
      'The customer already has a TOTP factor; a lost one is cleared with a 2FA reset (POST /sca/factors/reset)',
      {
        reason: 'TOTP_ALREADY_ENROLLED',
      },
    ),
  beneficiaryTrusted: (id: string) =>
    errors.coded(
      409,
      'BENEFICIARY_TRUSTED',
      `External account ${id} is a trusted beneficiary; untrust it (POST …/untrust and …/untrust/confirm) before deleting it`,
    ),
  alreadyTrusted: (id: string, trusted: boolean) =>
    errors.coded(409, 'CONFLICT', `External account ${id} is ${trusted ? 'already' : 'not'} a trusted beneficiary`, {
      reason: trusted ? 'ALREADY_TRUSTED' : 'NOT_TRUSTED',
    }),
  locked: (d: LockDetails) =>
    errors.coded(
      423,
      'ACCOUNT_LOCKED',
      d.suspended
        ? "The customer's login is suspended after too many failed attempts; record RESET_PASSWORD_COMPLETED to lift it"
        : `The customer's login is locked until ${d.lockedUntil} after too many failed attempts`,
      { suspended: d.suspended, lockedUntil: d.lockedUntil, failedAttempts: d.failedAttempts },
    ),
  challengeInvalidated: (retryAfterSeconds: number) =>
    errors.credentialRateLimited(
      'Too many wrong proofs: this challenge no longer works; a new challenge is needed',
      retryAfter(retryAfterSeconds),
    ),
  resendTooSoon: (retryAfterSeconds: number) =>
    errors.credentialRateLimited(
      `The code was sent less than 30 seconds ago; retry in ${retryAfter(retryAfterSeconds)} s`,
      retryAfter(retryAfterSeconds),
    ),
  resendExhausted: (max: number, retryAfterSeconds: number) =>
    errors.credentialRateLimited(`The code of this challenge was already re-sent ${max} times`, retryAfter(retryAfterSeconds)),
  resetsLimited: (max: number, resumeAtMs: number, nowMs: number) =>
    errors.credentialRateLimited(
      `At most ${max} 2FA resets are started per customer in 24 hours; retry after ${iso(resumeAtMs)}`,
      retryAfter((resumeAtMs - nowMs) / 1000),
    ),
  /** A wrong, expired or unusable proof: 400 on the field that carries it. */
  proofRejected: (field: string, message: string, extra: Record<string, unknown> = {}) =>
    errors.coded(400, 'INVALID_INPUT', `${field}: ${message}`, { errors: [{ field, message }], ...extra }),
  factorNotEnrolled: (field: string, factor: string) =>
    errors.coded(400, 'INVALID_INPUT', `${field}: the customer has no ${factor} factor enrolled`, {
      errors: [{ field, message: `${factor} is not enrolled` }],
    }),
  notFound: (what: string, id: string) => errors.notFound(what, id),
};
