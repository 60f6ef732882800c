/**
 * Ownership verification of self-custody wallet external accounts: issuing a challenge, checking a
 * wallet signature against it, and the sandbox's liveness outcome (a job). The account's status
 * moves through src/modules/external-accounts (`setExternalAccountStatus`), which emits
 * EXTERNAL_ACCOUNT.STATUS_UPDATED in the same unit of work.
 *
 *   PENDING_OWNERSHIP_VERIFICATION ─challenge─▶ PENDING_OWNERSHIP_VERIFICATION (new challenge; the old one abandoned)
 *   UNVERIFIED ─challenge─▶ PENDING_OWNERSHIP_VERIFICATION
 *   PENDING_OWNERSHIP_VERIFICATION ─verify: valid signature before expiresAt─▶ ACTIVE
 *   PENDING_OWNERSHIP_VERIFICATION ─verify: invalid or late signature─▶ UNVERIFIED (the 400 still commits it)
 *   PENDING_OWNERSHIP_VERIFICATION ─liveness passed / failed (sandbox job)─▶ ACTIVE / UNVERIFIED
 *
 * Every step locks the account row first, so a challenge, a verify and a liveness result on one
 * account run one after another.
 */
import type { ApiError } from '../../http/errors.ts';
import { errors } from '../../http/errors.ts';
import type { JobHandler } from '../../jobs/jobs.ts';
import { iso } from '../../lib/time.ts';
import type { ExternalAccountRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import type { AccountInfo } from '../external-accounts/account-info.ts';
import { findExternalAccount } from '../external-accounts/external-accounts.repo.ts';
import {
  externalAccountToWire,
  sandboxSuffix,
  setExternalAccountStatus,
  type ExternalAccountWire,
} from '../external-accounts/external-accounts.service.ts';
import { addressProblem, checkWalletSignature } from './crypto/wallet-signatures.ts';
import { ownershipErrors } from './ownership.errors.ts';
import { abandonOutstanding, findChallenge, findOutstandingChallenge, insertChallenge, settleChallenge } from './ownership.repo.ts';
import {
  LIVENESS_CHALLENGE_TTL_MS,
  messageToSign,
  notApplicable,
  SANDBOX_LIVENESS_DELAY_MS,
  SIGNATURE_CHALLENGE_TTL_MS,
  sandboxLivenessOutcome,
  sandboxVerificationLink,
  VERIFIABLE_STATUSES,
} from './ownership.rules.ts';
import type { OwnershipChallengeRequest, OwnershipChallengeWire, OwnershipVerifyRequest } from './ownership.schemas.ts';
import type { OwnershipChallengeRow } from './ownership.tables.ts';

/** Which accounts a route acts on: the customer routes on customers' accounts, the platform routes on the platform's own. */
export type OwnershipScope = 'customer' | 'platform';

/** The job that delivers a sandbox liveness check's outcome. */
export const JOB_OWNERSHIP_LIVENESS = 'OWNERSHIP_LIVENESS_RESULT';

/** A verify's outcome: the verified account, or the 400 to answer after the failure is committed. */
export type VerifyOutcome = { kind: 'verified'; account: ExternalAccountWire } | { kind: 'rejected'; error: ApiError<400> };

/** The account the route names, locked; another scope's account or another platform's id is 404. */
async function lockedAccount(u: Unit, scope: OwnershipScope, id: string): Promise<ExternalAccountRow> {
  const row = await findExternalAccount(u.trx, u.platform.id, id, scope === 'platform' ? 'platform' : 'any', { forUpdate: true });
  if (!row || (scope === 'customer' && row.customer_id === null)) throw errors.notFound('External account', id);
  return row;
}

const infoOf = (row: ExternalAccountRow): AccountInfo => JSON.parse(row.account_info) as AccountInfo;

/** POST …/external-accounts/{id}/challenge: a new challenge (any outstanding one abandoned). */
export async function createOwnershipChallenge(
  u: Unit,
  scope: OwnershipScope,
  accountId: string,
  body: OwnershipChallengeRequest,
): Promise<OwnershipChallengeWire> {
  const account = await lockedAccount(u, scope, accountId);
  const info = infoOf(account);
  const reason = notApplicable({ accountType: account.account_type, vaspName: info.vaspName, ownershipType: account.ownership_type });
  if (reason) throw ownershipErrors.notApplicable(account.id, reason);
  if (!VERIFIABLE_STATUSES.has(account.status)) throw ownershipErrors.alreadyVerified(account.id, account.status);
  const sandbox = u.platform.environment === 'SANDBOX';
  if (body.method === 'WALLET_SIGNATURE') {
    const problem = addressProblem(account.account_type, String(info.address));
    if (problem) throw ownershipErrors.addressNotVerifiable(account.id, problem);
  } else if (!sandbox) {
    throw ownershipErrors.livenessUnavailable();
  }

  await abandonOutstanding(u.trx, u.platform.id, account.id, u.at);
  const id = u.deps.ids.next('OwnershipChallenge');
  const signature = body.method === 'WALLET_SIGNATURE';
  const row: OwnershipChallengeRow = {
    id,
    platform_id: u.platform.id,
    external_account_id: account.id,
    method: body.method,
    status: 'PENDING',
    // 128 random bits: a wallet cannot have signed this message before it was issued.
    message_to_sign: signature ? messageToSign(String(info.address), nonce(u)) : null,
    verification_link: signature ? null : sandboxVerificationLink(id.slice(id.indexOf(':') + 1)),
    expires_at: iso(u.nowMs + (signature ? SIGNATURE_CHALLENGE_TTL_MS : LIVENESS_CHALLENGE_TTL_MS)),
    failure_reason: null,
    created_at: u.at,
    updated_at: u.at,
  };
  await insertChallenge(u.trx, row);
  if (!signature && sandboxLivenessOutcome(sandboxSuffix(account)) !== 'NO_RESULT') {
    await u.schedule(JOB_OWNERSHIP_LIVENESS, { challengeId: id }, SANDBOX_LIVENESS_DELAY_MS);
  }
  await setExternalAccountStatus(u, account, 'PENDING_OWNERSHIP_VERIFICATION');
  return challengeToWire(row);
}

function nonce(u: Unit): string {
  return u.deps.rng.bytes(16).toString('hex');
}

function challengeToWire(row: OwnershipChallengeRow): OwnershipChallengeWire {
  if (row.method === 'WALLET_SIGNATURE') {
    return { method: 'WALLET_SIGNATURE', messageToSign: row.message_to_sign ?? '', expiresAt: row.expires_at };
  }
  return { method: 'LIVENESS', verificationLink: row.verification_link ?? '', expiresAt: row.expires_at };
}

/**
 * POST …/external-accounts/{id}/verify: checks the signature against the outstanding
 * WALLET_SIGNATURE challenge. A well-formed signature settles the challenge either way: ACTIVE, or
 * UNVERIFIED with a `rejected` outcome (the route answers 400 and the unit still commits). A
 * signature that is not one in the wallet's encoding is a plain 400: nothing changes.
 */
export async function verifyOwnership(
  u: Unit,
  scope: OwnershipScope,
  accountId: string,
  body: OwnershipVerifyRequest,
): Promise<VerifyOutcome> {
  const account = await lockedAccount(u, scope, accountId);
  const challenge = await findOutstandingChallenge(u.trx, u.platform.id, account.id);
  if (challenge?.method !== 'WALLET_SIGNATURE' || challenge.message_to_sign === null) {
    throw ownershipErrors.noSignatureChallenge(account.id, challenge?.method);
  }
  if (u.nowMs >= Date.parse(challenge.expires_at)) {
    await fail(u, account, challenge, 'CHALLENGE_EXPIRED');
    return { kind: 'rejected', error: ownershipErrors.verificationFailed(account.id, 'CHALLENGE_EXPIRED', 'expired') };
  }
  const check = checkWalletSignature({
    accountType: account.account_type,
    address: String(infoOf(account).address),
    message: challenge.message_to_sign,
    signature: body.signature,
    scheme: body.signatureScheme ?? 'bip137',
  });
  if (check.kind === 'malformed') throw ownershipErrors.signatureMalformed(check.message);
  if (check.kind === 'invalid') {
    await fail(u, account, challenge, 'SIGNATURE_INVALID');
    return { kind: 'rejected', error: ownershipErrors.verificationFailed(account.id, 'SIGNATURE_INVALID', check.message) };
  }
  await settleChallenge(u.trx, u.platform.id, challenge.id, 'VERIFIED', null, u.at);
  return { kind: 'verified', account: externalAccountToWire(await setExternalAccountStatus(u, account, 'ACTIVE')) };
}

async function fail(
  u: Unit,
  account: ExternalAccountRow,
  challenge: OwnershipChallengeRow,
  reason: 'CHALLENGE_EXPIRED' | 'SIGNATURE_INVALID' | 'LIVENESS_FAILED',
): Promise<void> {
  await settleChallenge(u.trx, u.platform.id, challenge.id, 'FAILED', reason, u.at);
  await setExternalAccountStatus(u, account, 'UNVERIFIED');
}

/**
 * The sandbox's hosted liveness check reports its outcome (by the address suffix, see
 * ownership.rules.ts). Nothing happens when the challenge was replaced or the account deleted meanwhile.
 */
export const livenessResultJob: JobHandler = async (u, job) => {
  const { challengeId } = JSON.parse(job.payload) as { challengeId: string };
  const pending = await findChallenge(u.trx, u.platform.id, challengeId);
  if (pending?.status !== 'PENDING') return;
  const account = await findExternalAccount(u.trx, u.platform.id, pending.external_account_id, 'any', { forUpdate: true });
  // Read again under the account's lock: a challenge or verify may have settled it meanwhile.
  const challenge = await findChallenge(u.trx, u.platform.id, challengeId);
  if (!account || !challenge || challenge.status !== 'PENDING') return;
  if (sandboxLivenessOutcome(sandboxSuffix(account)) === 'FAIL') {
    await fail(u, account, challenge, 'LIVENESS_FAILED');
    return;
  }
  await settleChallenge(u.trx, u.platform.id, challenge.id, 'VERIFIED', null, u.at);
  await setExternalAccountStatus(u, account, 'ACTIVE');
};
