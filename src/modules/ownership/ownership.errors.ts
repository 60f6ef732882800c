/**
 * The area's errors, by the live API's status for each case (facts-counterparties §1.5). The live
 * document names no codes of its own for them, so each uses its status's generic code and
 * `details.reason` says which case it is:
 * - a challenge where verification does not apply, or the account is verified already: 409 `CONFLICT`;
 * - a verify with no WALLET_SIGNATURE challenge outstanding: 409 `CONFLICT`;
 * - a signature that is not one in the wallet's encoding (the challenge stays): 400 `INVALID_INPUT` on `signature`;
 * - a signature that does not prove control, or comes after `expiresAt` (the account becomes
 *   UNVERIFIED): 400 `INVALID_INPUT`;
 * - LIVENESS on a PRODUCTION platform (no liveness provider is connected): 501 `NOT_IMPLEMENTED`.
 */
import { errors } from '../../http/errors.ts';
import type { NotApplicable, OwnershipMethod } from './ownership.rules.ts';
import type { ChallengeFailure } from './ownership.tables.ts';

const NOT_APPLICABLE: Record<NotApplicable, string> = {
  NOT_A_CRYPTO_WALLET: 'is not a self-custody crypto wallet (ownership verification applies to wallet accounts only)',
  CUSTODIAL_WALLET: 'is held at a VASP (accountInfo.vaspName); ownership verification applies to self-custody wallets only',
  NOT_FIRST_PARTY: 'is not FIRST_PARTY; only the owner of a wallet can verify it',
};

export const ownershipErrors = {
  notApplicable: (id: string, reason: NotApplicable) =>
    errors.coded(409, 'CONFLICT', `External account ${id} ${NOT_APPLICABLE[reason]}`, { reason }),
  alreadyVerified: (id: string, status: string) =>
    errors.coded(
      409,
      'CONFLICT',
      status === 'ACTIVE'
        ? `The ownership of external account ${id} is verified already`
        : `External account ${id} is ${status}; a challenge needs PENDING_OWNERSHIP_VERIFICATION or UNVERIFIED`,
      { reason: status === 'ACTIVE' ? 'ALREADY_VERIFIED' : 'STATUS_NOT_VERIFIABLE', status },
    ),
  addressNotVerifiable: (id: string, problem: string) =>
    errors.coded(409, 'CONFLICT', `The address of external account ${id} ${problem}: no signature can prove control of it; use LIVENESS`, {
      reason: 'ADDRESS_NOT_VERIFIABLE',
    }),
  noSignatureChallenge: (id: string, outstanding: OwnershipMethod | undefined) =>
    errors.coded(
      409,
      'CONFLICT',
      outstanding === 'LIVENESS'
        ? `The outstanding challenge of external account ${id} is LIVENESS: it completes on the hosted page, not here`
        : `No WALLET_SIGNATURE challenge is outstanding for external account ${id}; start one with POST …/challenge`,
      { reason: outstanding === 'LIVENESS' ? 'LIVENESS_CHALLENGE_OUTSTANDING' : 'NO_CHALLENGE_OUTSTANDING' },
    ),
  signatureMalformed: (detail: string) =>
    errors.coded(400, 'INVALID_INPUT', `signature ${detail}`, {
      reason: 'SIGNATURE_MALFORMED',
      errors: [{ field: 'signature', message: detail }],
    }),
  /** The verify's answer when it failed the challenge (the account is UNVERIFIED by then). */
  verificationFailed: (id: string, reason: Exclude<ChallengeFailure, 'LIVENESS_FAILED'>, detail: string) =>
    errors.coded(
      400,
      'INVALID_INPUT',
      reason === 'CHALLENGE_EXPIRED'
        ? `The challenge expired before the signature arrived; external account ${id} is UNVERIFIED: start a new challenge`
        : `Ownership not proven: ${detail}; external account ${id} is UNVERIFIED: start a new challenge`,
      {
        reason,
        status: 'UNVERIFIED',
        ...(reason === 'SIGNATURE_INVALID' ? { errors: [{ field: 'signature', message: detail }] } : {}),
      },
    ),
  livenessUnavailable: () =>
    errors.coded(
      501,
      'NOT_IMPLEMENTED',
      'LIVENESS needs a hosted identity-check provider, and none is connected to this Corridor; use WALLET_SIGNATURE (sandbox platforms simulate LIVENESS)',
    ),
};
