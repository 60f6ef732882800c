/**
 * SCA challenges: the API the payments module builds quote authorisation on (a per-transaction
 * challenge whose subject is a quote id), and the proof check the login and beneficiary-trust
 * operations share.
 *
 * A subject has at most one live challenge: PENDING (satisfiable until `expiresAt`, 5 minutes on the
 * platform's clock) or INVALIDATED (the 5th wrong proof voided it: later attempts are 429). Issuing
 * a new one REPLACES it; satisfying it makes it SATISFIED (a replay then finds none: 409); closing
 * it (its quote expired or failed) makes it CLOSED.
 *
 * Counting wrong proofs: a wrong proof is counted in the unit, so the unit must commit for the count
 * to stick. `attemptChallenge` returns such a refusal instead of throwing it (run it under
 * `writeThen`, throw the error after the commit, as contact verification's confirm does);
 * `satisfyChallenge` throws everything — inside `write` the count of a wrong proof is then rolled back
 * with the unit.
 */
import type { Kysely } from 'kysely';
import type { ApiError } from '../../http/errors.ts';
import { iso } from '../../lib/time.ts';
import type { Database } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { scaErrors } from './sca.errors.ts';
import { isScaCustomerRow, requireScaCustomer } from './sca.customer.ts';
import { assertionOptions, assertionOrigins, checkAssertion, newSmsCodeDigest, smsCodeMatches } from './sca.proofs.ts';
import { endChallengesOf, factorsOf, insertChallenge, isTrusted, liveChallengeOf, updateChallenge, updateFactor } from './sca.repo.ts';
import { assertNotLocked, hasSession, stateOf } from './sca.security.ts';
import type { ScaChallengeKind, ScaChallengeRow, ScaFactorRow } from './sca.tables.ts';
import { totpCheck } from './sca.totp-check.ts';

export type ScaFactor = 'SMS_OTP' | 'TOTP' | 'PASSKEY';

/** The live ScaChallenge wire object. */
export interface ScaChallengeWire {
  id: string;
  expiresAt: string;
  factor: ScaFactor;
  availableFactors: ScaFactor[];
  purpose?: string | null;
  passkeyAssertionOptions?: Record<string, unknown> | null;
  passkeyAllowedOrigins?: string[] | null;
}

/** A proof: the live ScaAuthorization body. */
export interface ScaProof {
  code?: string | null;
  passkeyAssertion?: Record<string, unknown> | null;
  origin?: string | null;
  endUserIpAddress?: string | null;
}

/** Challenges (per-transaction, trust, login SMS) live 5 minutes on the platform's clock. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** Wrong proofs one challenge takes; the last of them voids it. */
export const MAX_WRONG_PROOFS = 5;
/** Resends: one per 30 s, 5 per challenge. */
export const RESEND_INTERVAL_MS = 30_000;
export const MAX_RESENDS = 5;

/** Whether the platform's customer is SCA-regulated (the EEA rule). Reads the customer row. */
export async function isScaCustomer(db: Kysely<Database>, platformId: string, customerId: string): Promise<boolean> {
  const row = await findCustomer(db, platformId, customerId);
  return row !== undefined && isScaCustomerRow(row);
}

/** Whether a customer's external account is a trusted beneficiary. */
export async function isTrustedBeneficiary(db: Kysely<Database>, platformId: string, externalAccountId: string): Promise<boolean> {
  return isTrusted(db, platformId, externalAccountId);
}

/** The customer's ACTIVE factor of `factor`, if any. */
export function activeFactor(rows: readonly ScaFactorRow[], factor: 'TOTP' | 'PASSKEY'): ScaFactorRow | undefined {
  return rows.find((r) => r.factor === factor && r.status === 'ACTIVE');
}

/** A new PENDING challenge row (not written). */
export function newChallengeRow(
  u: Unit,
  input: {
    customerId: string;
    kind: ScaChallengeKind;
    subjectId: string;
    purpose: string | null;
    factor: ScaFactor;
    availableFactors: ScaFactor[];
    passkey?: boolean;
  },
): ScaChallengeRow {
  return {
    id: u.deps.ids.next('ScaChallenge'),
    platform_id: u.platform.id,
    customer_id: input.customerId,
    kind: input.kind,
    subject_id: input.subjectId,
    purpose: input.purpose,
    factor: input.factor,
    available_factors: JSON.stringify(input.availableFactors),
    code_digest: input.factor === 'SMS_OTP' ? newSmsCodeDigest(u) : null,
    passkey_challenge: input.factor === 'PASSKEY' ? u.deps.secretRng.bytes(32).toString('hex') : null,
    status: 'PENDING',
    failed_attempts: 0,
    sends: input.factor === 'SMS_OTP' ? 1 : 0,
    last_sent_at: u.at,
    expires_at: iso(u.nowMs + CHALLENGE_TTL_MS),
    end_user_ip: null,
    created_at: u.at,
    updated_at: u.at,
  };
}

/** A challenge on the wire (per-transaction and trust challenges carry no passkeyAllowedOrigins). */
export function challengeWire(row: ScaChallengeRow, passkey: ScaFactorRow | undefined, origins?: string[]): ScaChallengeWire {
  const wire: ScaChallengeWire = {
    id: row.id,
    expiresAt: row.expires_at,
    factor: row.factor,
    availableFactors: JSON.parse(row.available_factors) as ScaFactor[],
  };
  if (row.purpose !== null) wire.purpose = row.purpose;
  if (row.factor === 'PASSKEY' && passkey && row.passkey_challenge !== null) {
    wire.passkeyAssertionOptions = assertionOptions(
      passkey,
      row.passkey_challenge,
      Date.parse(row.expires_at) - Date.parse(row.created_at),
    );
    if (origins) wire.passkeyAllowedOrigins = origins;
  }
  return wire;
}

/**
 * Issues a per-transaction challenge on a subject (a quote id), replacing any pending one of that
 * subject. `factor` PASSKEY needs an enrolled passkey (else 400 on `scaFactor`); TOTP is refused by
 * the caller. 5-minute expiry. The customer must be an SCA customer (else 409); its row is locked.
 */
export async function issueChallenge(
  u: Unit,
  input: { customerId: string; subjectId: string; purpose: string | null; factor: 'SMS_OTP' | 'PASSKEY' },
): Promise<ScaChallengeWire> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, input.customerId, { forUpdate: true });
  const passkey = activeFactor(await factorsOf(u.trx, u.platform.id, customer.id), 'PASSKEY');
  if (input.factor === 'PASSKEY' && !passkey) throw scaErrors.factorNotEnrolled('scaFactor', 'PASSKEY');
  await endChallengesOf(u.trx, u.platform.id, input.subjectId, 'TRANSACTION', 'REPLACED', u.at);
  const row = newChallengeRow(u, {
    customerId: customer.id,
    kind: 'TRANSACTION',
    subjectId: input.subjectId,
    purpose: input.purpose,
    factor: input.factor,
    availableFactors: passkey ? ['SMS_OTP', 'PASSKEY'] : ['SMS_OTP'],
  });
  await insertChallenge(u.trx, row);
  return challengeWire(row, passkey);
}

/** The subject's pending, unexpired challenge as the wire shows it, or undefined. */
export async function pendingChallenge(
  db: Kysely<Database>,
  platformId: string,
  subjectId: string,
  nowMs: number,
): Promise<ScaChallengeWire | undefined> {
  const row = await liveChallengeOf(db, platformId, subjectId, 'TRANSACTION');
  if (row?.status !== 'PENDING' || Date.parse(row.expires_at) <= nowMs) return undefined;
  const passkey = row.factor === 'PASSKEY' ? activeFactor(await factorsOf(db, platformId, row.customer_id), 'PASSKEY') : undefined;
  return challengeWire(row, passkey);
}

/** Exactly one of code / passkeyAssertion; origin with the assertion (400 naming the field). */
export function checkProofShape(proof: ScaProof): { code: string } | { assertion: Record<string, unknown>; origin: string } {
  const hasCode = proof.code !== undefined && proof.code !== null;
  const hasAssertion = proof.passkeyAssertion !== undefined && proof.passkeyAssertion !== null;
  if (hasCode && hasAssertion) throw scaErrors.proofRejected('passkeyAssertion', 'give either code or passkeyAssertion, not both');
  if (!hasCode && !hasAssertion) throw scaErrors.proofRejected('code', 'code or passkeyAssertion (with origin) is required');
  if (hasCode) return { code: proof.code as string };
  if (proof.origin === undefined || proof.origin === null) throw scaErrors.proofRejected('origin', 'is required with passkeyAssertion');
  return { assertion: proof.passkeyAssertion as Record<string, unknown>, origin: proof.origin };
}

/** What one proof attempt decided. A `rejected` outcome carries a counted wrong proof: commit, then throw. */
export type ProofOutcome = { kind: 'satisfied'; challenge: ScaChallengeRow } | { kind: 'rejected'; error: ApiError };

/**
 * Checks `proof` against a live challenge `row` (locked by the caller) of the customer whose
 * factors are `factors`: refusals that change nothing are thrown (429 void challenge, 400 expired
 * or malformed proof); a wrong proof is counted and returned; a right one makes the challenge
 * SATISFIED. `allowTotp`: a TOTP code of the customer's enrolled TOTP is accepted too (login and
 * trust changes; never per-transaction challenges).
 */
export async function attemptProof(
  u: Unit,
  row: ScaChallengeRow,
  factors: ScaFactorRow[],
  proof: ScaProof,
  opts: { allowTotp: boolean; allowedOrigins?: string[] },
): Promise<ProofOutcome> {
  const expiresMs = Date.parse(row.expires_at);
  if (row.status === 'INVALIDATED') {
    if (expiresMs > u.nowMs) throw scaErrors.challengeInvalidated((expiresMs - u.nowMs) / 1000);
    throw scaErrors.proofRejected('code', 'the challenge has expired; start a new one');
  }
  const shape = checkProofShape(proof);
  const field = 'code' in shape ? 'code' : 'passkeyAssertion';
  if (expiresMs <= u.nowMs) throw scaErrors.proofRejected(field, 'the challenge has expired; start a new one');

  let right = false;
  if ('code' in shape) {
    if (row.factor === 'PASSKEY')
      throw scaErrors.proofRejected('code', 'this challenge was issued for PASSKEY: send passkeyAssertion and origin');
    if (row.code_digest !== null && smsCodeMatches(row.code_digest, shape.code)) right = true;
    else if (opts.allowTotp || row.factor === 'TOTP') right = await totpCheck(u, activeFactor(factors, 'TOTP'), shape.code);
  } else {
    const passkey = activeFactor(factors, 'PASSKEY');
    if (row.factor !== 'PASSKEY' || !passkey || row.passkey_challenge === null)
      throw scaErrors.proofRejected('passkeyAssertion', `this challenge was issued for ${row.factor}: send code`);
    const origins = opts.allowedOrigins ?? assertionOrigins(u, passkey);
    if (!origins.includes(shape.origin)) throw scaErrors.proofRejected('origin', `must be one of ${JSON.stringify(origins)}`);
    const r = await checkAssertion(passkey, shape.assertion, shape.origin, row.passkey_challenge);
    if (r.ok) {
      right = true;
      await updateFactor(u.trx, u.platform.id, passkey.id, { sign_count: r.newCounter, updated_at: u.at });
    }
  }

  if (!right) {
    const failed = row.failed_attempts + 1;
    const voided = failed >= MAX_WRONG_PROOFS;
    await updateChallenge(u.trx, u.platform.id, row.id, {
      failed_attempts: failed,
      ...(voided ? { status: 'INVALIDATED' } : {}),
      updated_at: u.at,
    });
    const message = voided
      ? 'is wrong, and too many wrong proofs were tried: the challenge no longer works'
      : 'is wrong (or the assertion does not verify)';
    return {
      kind: 'rejected',
      error: scaErrors.proofRejected(field, message, { attemptsRemaining: MAX_WRONG_PROOFS - failed }),
    };
  }
  const ip = proof.endUserIpAddress ?? null;
  await updateChallenge(u.trx, u.platform.id, row.id, { status: 'SATISFIED', end_user_ip: ip, updated_at: u.at });
  return { kind: 'satisfied', challenge: { ...row, status: 'SATISFIED', end_user_ip: ip } };
}

/**
 * `satisfyChallenge` without throwing a counted wrong proof: `undefined` when the challenge was
 * satisfied and consumed, the 400 to answer after the unit commits when the proof was wrong (counted;
 * the 5th voids the challenge). Every other refusal is thrown, as `satisfyChallenge` documents.
 */
export async function attemptChallenge(
  u: Unit,
  input: { customerId: string; subjectId: string; proof: ScaProof; requireSession: boolean },
): Promise<ApiError | undefined> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, input.customerId, { forUpdate: true });
  const state = await stateOf(u, customer.id);
  assertNotLocked(state, u.nowMs);
  const row = await liveChallengeOf(u.trx, u.platform.id, input.subjectId, 'TRANSACTION', { forUpdate: true });
  if (!row || row.customer_id !== customer.id) throw scaErrors.noPendingChallenge(input.subjectId);
  if (input.requireSession && !hasSession(state, u.nowMs)) throw scaErrors.sessionRequired(customer.id);
  const outcome = await attemptProof(u, row, await factorsOf(u.trx, u.platform.id, customer.id), input.proof, { allowTotp: false });
  return outcome.kind === 'rejected' ? outcome.error : undefined;
}

/**
 * Checks the proof against the subject's pending challenge and consumes it (same transaction).
 * Throws ApiErrors: 409 CONFLICT (no pending challenge), 409 SCA_SESSION_REQUIRED (when
 * requireSession and the customer has no unexpired login session), 423 ACCOUNT_LOCKED, 429
 * RATE_LIMITED, 400 INVALID_INPUT (wrong or expired proof; counted — but a thrown count is rolled
 * back with its unit: use `attemptChallenge` under `writeThen` to keep it).
 */
export async function satisfyChallenge(
  u: Unit,
  input: { customerId: string; subjectId: string; proof: ScaProof; requireSession: boolean },
): Promise<void> {
  const error = await attemptChallenge(u, input);
  if (error) throw error;
}

/** Re-sends the subject's pending SMS challenge: 409 CONFLICT when none or not SMS_OTP, 429 RATE_LIMITED when too frequent. */
export async function resendChallenge(u: Unit, input: { customerId: string; subjectId: string }): Promise<void> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, input.customerId, { forUpdate: true });
  const row = await liveChallengeOf(u.trx, u.platform.id, input.subjectId, 'TRANSACTION', { forUpdate: true });
  await resendOn(u, row, customer.id, input.subjectId);
}

/** The resend rules on a live challenge `row` (locked by the caller). */
export async function resendOn(u: Unit, row: ScaChallengeRow | undefined, customerId: string, what: string): Promise<void> {
  const expiresMs = row ? Date.parse(row.expires_at) : 0;
  if (!row || row.customer_id !== customerId || row.status !== 'PENDING' || expiresMs <= u.nowMs) throw scaErrors.noPendingChallenge(what);
  if (row.factor !== 'SMS_OTP') {
    throw scaErrors.noPendingChallenge(`${what} (its challenge is ${row.factor}: only SMS_OTP codes are re-sent)`);
  }
  if (row.sends - 1 >= MAX_RESENDS) throw scaErrors.resendExhausted(MAX_RESENDS, (expiresMs - u.nowMs) / 1000);
  const nextAllowed = Date.parse(row.last_sent_at) + RESEND_INTERVAL_MS;
  if (u.nowMs < nextAllowed) throw scaErrors.resendTooSoon((nextAllowed - u.nowMs) / 1000);
  // The same code again (nothing leaves Corridor); expiresAt is not extended.
  await updateChallenge(u.trx, u.platform.id, row.id, { sends: row.sends + 1, last_sent_at: u.at, updated_at: u.at });
}

/** Closes the subject's pending challenge (its quote expired or failed). No-op when none. */
export async function closeChallenge(u: Unit, subjectId: string): Promise<void> {
  await endChallengesOf(u.trx, u.platform.id, subjectId, 'TRANSACTION', 'CLOSED', u.at);
}

/** 409 BENEFICIARY_TRUSTED when the external account is a trusted beneficiary (its delete must untrust it first). */
export async function assertNotTrustedBeneficiary(db: Kysely<Database>, platformId: string, externalAccountId: string): Promise<void> {
  if (await isTrusted(db, platformId, externalAccountId)) throw scaErrors.beneficiaryTrusted(externalAccountId);
}
