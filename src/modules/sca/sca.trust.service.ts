/**
 * Trusted beneficiaries: a customer external account is trusted (or untrusted) in two steps.
 *
 *   untrusted --trust (challenge issued)--> untrusted, trust pending --trust/confirm, right proof--> trusted
 *   trusted --untrust (challenge issued)--> trusted, untrust pending --untrust/confirm, right proof--> untrusted
 *
 * - The start always issues an SMS_OTP challenge (5 minutes); its `id` is the confirm's `challengeId`
 *   (optional: the account's pending challenge is the one checked; a different id is 400). The
 *   customer's enrolled TOTP (or a recovery code) is accepted too. A new start replaces a pending one.
 * - Only customer external accounts (a platform account, an unknown or another platform's id: 404);
 *   the owning customer must be an SCA customer (409). Trusting a trusted account or untrusting an
 *   untrusted one is 409 CONFLICT, at start and at confirm; a confirm without a pending start is 409.
 * - A wrong proof is 400 and counts (the 5th voids the challenge: 429); an expired one is 400.
 * - A trusted account cannot be deleted (409 BENEFICIARY_TRUSTED, external-accounts.service.ts).
 */
import type { ApiError } from '../../http/errors.ts';
import type { ExternalAccountRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findExternalAccount } from '../external-accounts/external-accounts.repo.ts';
import { activeFactor, attemptProof, challengeWire, newChallengeRow, type ScaChallengeWire } from './sca-challenges.ts';
import { requireScaCustomer } from './sca.customer.ts';
import { scaErrors } from './sca.errors.ts';
import { clearTrusted, endChallengesOf, factorsOf, insertChallenge, isTrusted, liveChallengeOf, setTrusted } from './sca.repo.ts';
import type { BeneficiaryTrustConfirmRequest } from './sca.schemas.ts';

export type TrustDirection = 'TRUST' | 'UNTRUST';

/** The customer external account (locked) and its SCA customer; 404 / 410 / 409 as the module header says. */
async function openAccount(u: Unit, externalAccountId: string): Promise<{ account: ExternalAccountRow; customerId: string }> {
  const account = await findExternalAccount(u.trx, u.platform.id, externalAccountId, 'any', { forUpdate: true });
  if (!account || account.customer_id === null) throw scaErrors.notFound('External account', externalAccountId);
  const customer = await requireScaCustomer(u.trx, u.platform.id, account.customer_id, { forUpdate: true });
  return { account, customerId: customer.id };
}

async function assertDirection(u: Unit, accountId: string, direction: TrustDirection): Promise<void> {
  const trusted = await isTrusted(u.trx, u.platform.id, accountId);
  if (direction === 'TRUST' && trusted) throw scaErrors.alreadyTrusted(accountId, true);
  if (direction === 'UNTRUST' && !trusted) throw scaErrors.alreadyTrusted(accountId, false);
}

/** POST …/trust and …/untrust: `{ scaChallenge }`. */
export async function startTrustChange(
  u: Unit,
  externalAccountId: string,
  direction: TrustDirection,
): Promise<{ scaChallenge: ScaChallengeWire }> {
  const { account, customerId } = await openAccount(u, externalAccountId);
  await assertDirection(u, account.id, direction);
  const factors = await factorsOf(u.trx, u.platform.id, customerId);
  await endChallengesOf(u.trx, u.platform.id, account.id, direction, 'REPLACED', u.at);
  const row = newChallengeRow(u, {
    customerId,
    kind: direction,
    subjectId: account.id,
    purpose: null,
    factor: 'SMS_OTP',
    availableFactors: activeFactor(factors, 'TOTP') ? ['SMS_OTP', 'TOTP'] : ['SMS_OTP'],
  });
  await insertChallenge(u.trx, row);
  return { scaChallenge: challengeWire(row, undefined) };
}

export type TrustOutcome = { kind: 'done'; trusted: boolean } | { kind: 'rejected'; error: ApiError };

/** POST …/trust/confirm and …/untrust/confirm: a counted wrong proof is returned (the route commits, then answers it). */
export async function confirmTrustChange(
  u: Unit,
  externalAccountId: string,
  direction: TrustDirection,
  body: BeneficiaryTrustConfirmRequest,
): Promise<TrustOutcome> {
  const { account, customerId } = await openAccount(u, externalAccountId);
  await assertDirection(u, account.id, direction);
  const row = await liveChallengeOf(u.trx, u.platform.id, account.id, direction, { forUpdate: true });
  if (!row) throw scaErrors.noPendingChallenge(`${direction === 'TRUST' ? 'trusting' : 'untrusting'} ${account.id}; start it first`);
  if (body.challengeId !== undefined && body.challengeId !== null && body.challengeId !== row.id) {
    throw scaErrors.proofRejected('challengeId', 'is not the pending challenge of this external account');
  }
  const factors = await factorsOf(u.trx, u.platform.id, customerId);
  const outcome = await attemptProof(
    u,
    row,
    factors,
    { code: body.code, passkeyAssertion: body.passkeyAssertion, origin: body.origin },
    { allowTotp: true },
  );
  if (outcome.kind === 'rejected') return outcome;
  if (direction === 'TRUST') await setTrusted(u.trx, u.platform.id, account.id, customerId, u.at);
  else await clearTrusted(u.trx, u.platform.id, account.id);
  return { kind: 'done', trusted: direction === 'TRUST' };
}
