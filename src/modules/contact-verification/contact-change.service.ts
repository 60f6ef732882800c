/**
 * `PATCH /customers/{customerId}` changing the `email` (or `phoneNumber`) of a customer whose
 * embedded wallets hold EMAIL_OTP (or SMS_OTP) credentials: those credentials send their codes to
 * that contact, so moving them is an authentication change the customer's wallet must sign.
 *
 * 1. The call without `Service-Wallet-Signature` / `Request-Id` stores a pending request
 *    (`customer.contact`) bound to the customer, a hash of the whole PATCH body and — sealed in
 *    its data — the ids of the tied credentials, and answers 202 with its challenge. Nothing of the
 *    update is written yet.
 * 2. The retry repeats the body with the stamp over `payloadToSign` by an active session of any of
 *    the customer's embedded wallets and the `Request-Id`. In one transaction: the request is
 *    checked and consumed, the credentials are renamed to the new contact (their outstanding OTPs,
 *    sent to the old one, stop working), and the customer is updated — all or nothing.
 *
 * Refusals: 401 from the signed-retry engine's checks (missing/foreign/tampered stamp, unknown,
 * used or expired Request-Id, another body); 409 when the new contact already signs in to another
 * wallet, or when the tied credentials changed since the challenge. A customer without tied
 * credentials of the type (or a PATCH that does not change the contact) is updated at once, the
 * signature headers ignored, as the live API documents.
 */
import { ApiError, errors } from '../../http/errors.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import type { CustomerRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { consumeOpenRequests, findRequest } from '../auth/auth.repo.ts';
import { activityPayload } from '../auth/payloads.ts';
import {
  type Challenge,
  checkStamp,
  consume,
  contentHash,
  issue,
  pendingRequest,
  requestData,
  type VerifiedSigner,
} from '../auth/signed-retry.ts';
import { findCustomerAccounts } from '../internal-accounts/internal-accounts.repo.ts';
import { contactVerificationErrors as cvErrors } from './contact-verification.errors.ts';
import { otpContactTaken, otpCredentialsOf, setCredentialContact } from './contact-verification.repo.ts';

/** The pending-request operation of a contact change. */
export const CONTACT_CHANGE_OPERATION = 'customer.contact';

/** The customer's contact fields before and after a PATCH. */
export interface Contacts {
  email?: string | undefined;
  phoneNumber?: string | undefined;
}

/** What a contact change needs: a challenge to answer (202), or nothing more (write the update). */
export type ContactChangeAuthorization = { kind: 'challenge'; challenge: Challenge } | { kind: 'authorized' };

/** The contact change of a PATCH, if it moves OTP credentials' contact: which type, to what. */
function changeOf(before: Contacts, after: Contacts): { type: 'EMAIL_OTP' | 'SMS_OTP'; contact: string } | undefined {
  // The customers service has refused a PATCH giving both (the live API's rule).
  if (after.email !== undefined && after.email !== before.email) return { type: 'EMAIL_OTP', contact: after.email };
  if (after.phoneNumber !== undefined && after.phoneNumber !== before.phoneNumber) return { type: 'SMS_OTP', contact: after.phoneNumber };
  return undefined;
}

/** The Turnkey-style activity a contact change is signed as (the live API's 202 examples). */
function activity(type: 'EMAIL_OTP' | 'SMS_OTP', contact: string, customerId: string) {
  return type === 'EMAIL_OTP'
    ? { type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL', parameters: { userEmail: contact, userId: customerId } }
    : { type: 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER', parameters: { userId: customerId, userPhoneNumber: contact } };
}

/** A contact change that moves OTP credentials, with what it is checked against. */
interface TiedChange {
  type: 'EMAIL_OTP' | 'SMS_OTP';
  contact: string;
  customer: CustomerRow;
  /** The customer's embedded wallets (any one's session may sign). */
  walletIds: string[];
  /** The credentials of `type` on them, by id: what the change moves. */
  tiedIds: string[];
  /** The PATCH body as received: what the retry must repeat. */
  body: unknown;
}

/**
 * Decides a PATCH's contact change, inside the PATCH's unit, after its body was validated and
 * before anything is written. On a verified retry the tied credentials are already moved when this
 * returns `authorized`; the caller writes the customer in the same unit.
 */
export async function authorizeContactChange(
  u: Unit,
  input: { customer: CustomerRow; before: Contacts; after: Contacts; body: unknown; signature: WalletSignature },
): Promise<ContactChangeAuthorization> {
  const { customer, signature } = input;
  const moved = changeOf(input.before, input.after);
  if (!moved) return { kind: 'authorized' };
  const wallets = (await findCustomerAccounts(u.trx, u.platform.id, customer.id)).filter((a) => a.type === 'EMBEDDED_WALLET');
  const walletIds = wallets.map((w) => w.id);
  const tiedIds = (await otpCredentialsOf(u.trx, u.platform.id, walletIds, moved.type)).map((c) => c.id);
  const change: TiedChange = { ...moved, customer, walletIds, tiedIds, body: input.body };
  if (tiedIds.length === 0) {
    // Nothing to authorise: the update completes at once and signature headers are ignored — unless
    // they are the retry of a challenge issued while credentials were tied (the set changed: 409).
    const retry = signature.requestId !== undefined && (await openChallenge(u, signature.requestId, customer.id));
    if (!retry) return { kind: 'authorized' };
  } else if (await otpContactTaken(u.trx, u.platform.id, moved.type, moved.contact, walletIds)) {
    throw cvErrors.otpContactTaken(moved.type);
  }
  if (signature.stamp === undefined && signature.requestId === undefined) {
    return { kind: 'challenge', challenge: await issueChallenge(u, change) };
  }
  await verifyRetry(u, change, signature);
  await setCredentialContact(u.trx, u.platform.id, tiedIds, moved.contact, u.at);
  // An OTP already sent went to the old contact: it must not open a session any more.
  for (const id of tiedIds) await consumeOpenRequests(u.trx, id, 'otp.issue', u.at);
  return { kind: 'authorized' };
}

/** Step 1: the pending request, bound to the customer, the body and (sealed in its data) the tied credentials. */
async function issueChallenge(u: Unit, change: TiedChange): Promise<Challenge> {
  const { type, contact, customer } = change;
  return issue(u, {
    operation: CONTACT_CHANGE_OPERATION,
    // The record's account: the first wallet (the retry may be stamped by a session of any of them).
    accountId: change.walletIds[0]!,
    targetId: customer.id,
    content: change.body,
    signer: { kind: 'account-session' },
    payload: (requestId, nowMs) => activityPayload(u.platform, requestId, nowMs, activity(type, contact, customer.id)),
    data: { credentialIds: change.tiedIds },
    ttlMs: u.app.config.wallet.challengeSeconds * 1000,
  });
}

/**
 * Step 2: the retry's headers, its pending request (this operation and customer, unused,
 * unexpired), the body, the stamp, and the tied credentials as the challenge bound them; the
 * request is consumed in the unit, so only a committed change uses it up.
 */
async function verifyRetry(u: Unit, change: TiedChange, signature: WalletSignature): Promise<void> {
  const { stamp, requestId } = signature;
  if (requestId === undefined)
    throw errors.walletAuthFailed('REQUEST_ID_MISSING', 'Request-Id header is missing; echo the requestId of the 202 response');
  if (stamp === undefined) throw errors.walletAuthFailed('WALLET_SIGNATURE_MISSING', 'Service-Wallet-Signature header is missing');
  const pending = await pendingRequest(u, requestId, CONTACT_CHANGE_OPERATION, change.customer.id);
  if (pending.body_hash !== contentHash(change.body)) {
    throw errors.walletAuthFailed('WALLET_SIGNATURE_BODY_MISMATCH', 'the request body differs from the one the challenge was issued for');
  }
  await stampedByCustomerWallet(u, stamp, pending.payload_to_sign, change.walletIds);
  const bound = requestData<{ credentialIds: string[] }>(u, pending)?.credentialIds ?? [];
  const same = bound.length === change.tiedIds.length && bound.every((id, i) => id === change.tiedIds[i]);
  if (!same) throw cvErrors.credentialSetChanged(change.type);
  await consume(u, pending.id);
}

/** Whether `requestId` is an unused, unexpired contact-change challenge of this customer. */
async function openChallenge(u: Unit, requestId: string, customerId: string): Promise<boolean> {
  const row = await findRequest(u.trx, u.platform.id, requestId);
  return (
    row !== undefined &&
    row.operation === CONTACT_CHANGE_OPERATION &&
    row.target_id === customerId &&
    row.consumed_at === null &&
    u.nowMs < Date.parse(row.expires_at)
  );
}

/**
 * The stamp over `payload` by an active session of one of the customer's embedded wallets (or, on
 * a sandbox platform, the legacy sandbox stamp). A stamp no wallet's session made is the first
 * wallet's refusal (401 WALLET_SIGNATURE_INVALID).
 */
async function stampedByCustomerWallet(u: Unit, stamp: string, payload: string, walletIds: readonly string[]): Promise<VerifiedSigner> {
  let refusal: unknown;
  for (const walletId of walletIds) {
    try {
      return await checkStamp(u, stamp, payload, walletId, { kind: 'account-session' });
    } catch (err) {
      // Only "not a session of this wallet" moves on to the next wallet; a malformed stamp is final.
      if (!(err instanceof ApiError && err.code === 'WALLET_SIGNATURE_INVALID')) throw err;
      refusal ??= err;
    }
  }
  throw refusal ?? errors.walletAuthFailed('WALLET_SIGNATURE_INVALID', 'the customer has no embedded wallet whose session could sign');
}
