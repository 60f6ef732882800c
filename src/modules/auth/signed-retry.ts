/**
 * The signed-retry engine (spec §4.2). A signed operation is called twice:
 *
 * 1. without a wallet signature (`Service-Wallet-Signature` / `Request-Id`, read by the route with
 *    `walletSignatureOf`): a pending request is stored — bound to the platform, the operation, its
 *    target, the hash of the request content and who may sign — and the step returns its challenge
 *    (`{payloadToSign, requestId, expiresAt}`; the route answers 202);
 * 2. with both: the pending request is looked up by `Request-Id`, checked (same operation and
 *    target, unexpired, unused, same content), the stamp is verified over its exact
 *    `payloadToSign`, the stamping key is checked against the allowed signer, and the request is
 *    consumed — in the caller's unit, so it is consumed if and only if the effect commits.
 *
 * 401 codes: REQUEST_ID_MISSING (stamp without Request-Id), WALLET_SIGNATURE_MISSING (Request-Id
 * without stamp), UNAUTHORIZED (Request-Id matches no unexpired pending request of this operation),
 * WALLET_SIGNATURE_BODY_MISMATCH, WALLET_SIGNATURE_MALFORMED, WALLET_SIGNATURE_INVALID — each with a
 * `reason` naming the failed check (`errors.walletAuthFailed`).
 */
import { createHash } from 'node:crypto';
import { errors } from '../../http/errors.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import { canonicalJson } from '../../lib/canonical-json.ts';
import { iso } from '../../lib/time.ts';
import type { AuthRequestRow } from '../../store/schema-auth.ts';
import { SECRET_COLUMNS, secretRef } from '../../store/secret-box.ts';
import type { Unit } from '../../unit.ts';
import { isActiveDelegatedKey } from '../delegated-keys/delegated-keys.repo.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { activeSessionsWithKey, consumeRequest, findRequest, insertRequest } from './auth.repo.ts';
import type { AuthMethodType } from './auth.schemas.ts';
import { verifyWalletStamp } from './crypto.ts';

/** The legacy sandbox stamp: accepted on sandbox platforms only, in place of a real stamp. */
export const SANDBOX_SIGNATURE = 'sandbox-valid-signature';

/** Who may stamp the retry. */
export type Signer =
  /**
   * An active session on the account, optionally not one issued by `excludeCredentialId`; with
   * `delegatedKeys`, an ACTIVE delegated key of the account too (quote executions: raw-payload signing).
   */
  | { kind: 'account-session'; excludeCredentialId?: string; delegatedKeys?: boolean }
  /** This session only (refresh). */
  | { kind: 'session'; sessionId: string }
  /** This exact key (the OTP verify retry: the client's TEK). */
  | { kind: 'key'; publicKey: string };

/** The key that stamped a retry, and the session it belongs to (none for a `key` signer or the sandbox stamp). */
export interface VerifiedSigner {
  publicKey: string | null;
  sessionId: string | null;
}

export interface SignedOperation {
  /** e.g. `credential.add`, `credential.revoke`, `session.revoke`, `session.refresh`, `account.export`. */
  operation: string;
  accountId: string;
  targetId: string;
  /** The request content the retry must repeat exactly (hashed canonically). */
  content: unknown;
  signer: Signer;
  /** Builds the payload to sign; gets the new request id and the platform-clock time. */
  payload: (requestId: string, nowMs: number) => string;
  /** Operation data kept with the pending request, sealed (never returned). */
  data?: unknown;
  ttlMs: number;
}

export interface Challenge {
  payloadToSign: string;
  requestId: string;
  expiresAt: string;
}

export type SignedStep =
  | { kind: 'challenge'; challenge: Challenge }
  | { kind: 'verified'; signer: VerifiedSigner; request: AuthRequestRow };

/** What a signed operation's service returns: the challenge to answer (202), or the effect's value. */
export type Signed<T> = { kind: 'challenge'; challenge: Challenge } | { kind: 'done'; value: T };

/** `Signed` for an operation on a credential or its session, whose challenge names the credential's type. */
export type CredentialSigned<T> = { kind: 'challenge'; challenge: Challenge; type: AuthMethodType } | { kind: 'done'; value: T };

/** SHA-256 of canonical JSON (object keys sorted), so key order in a body does not matter. */
export function contentHash(content: unknown): string {
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
}

/**
 * Step 1 or step 2 of a signed operation, decided by the signature the request carries. Step 2
 * leaves the pending request consumed in the unit; the caller performs the effect in the same unit.
 */
export async function signedStep(u: Unit, signature: WalletSignature, op: SignedOperation): Promise<SignedStep> {
  if (signature.stamp === undefined && signature.requestId === undefined) return { kind: 'challenge', challenge: await issue(u, op) };
  return { kind: 'verified', ...(await verifyRetry(u, signature, op)) };
}

/**
 * Step 2 only: the retry's signature, pending request, content and stamp are checked and the
 * request is consumed in the unit. The signer comes from the pending request, not from the retry.
 */
export async function verifyRetry(
  u: Unit,
  signature: WalletSignature,
  op: Pick<SignedOperation, 'operation' | 'targetId' | 'content'>,
): Promise<{ signer: VerifiedSigner; request: AuthRequestRow }> {
  const { stamp, requestId } = signature;
  if (requestId === undefined)
    throw errors.walletAuthFailed('REQUEST_ID_MISSING', 'Request-Id header is missing; echo the requestId of the 202 response');
  if (stamp === undefined) throw errors.walletAuthFailed('WALLET_SIGNATURE_MISSING', 'Service-Wallet-Signature header is missing');
  const pending = await pendingRequest(u, requestId, op.operation, op.targetId);
  if (pending.body_hash !== contentHash(op.content)) {
    throw errors.walletAuthFailed('WALLET_SIGNATURE_BODY_MISMATCH', 'the request body differs from the one the challenge was issued for');
  }
  const signer = await checkStamp(u, stamp, pending.payload_to_sign, pending.account_id, JSON.parse(pending.signer) as Signer);
  await consume(u, pending.id);
  return { signer, request: pending };
}

/**
 * The stored form of a pending request's operation data (JSON, e.g. an OTP target private key):
 * sealed by the store's SecretBox, bound to the request's id.
 */
export function sealRequestData(u: Unit, requestId: string, data: unknown): string {
  return u.app.secrets.seal(JSON.stringify(data), secretRef(SECRET_COLUMNS.authRequestData, requestId));
}

/** A pending request's operation data, opened and parsed (undefined when it has none). */
export function requestData<T>(u: Unit, row: Pick<AuthRequestRow, 'id' | 'data'>): T | undefined {
  return row.data === null ? undefined : (JSON.parse(u.app.secrets.open(row.data, secretRef(SECRET_COLUMNS.authRequestData, row.id))) as T);
}

/** Stores a pending request and returns its challenge. */
export async function issue(u: Unit, op: SignedOperation): Promise<Challenge> {
  const id = u.deps.ids.next('Request');
  const payloadToSign = op.payload(id, u.nowMs);
  const expiresAt = iso(u.nowMs + op.ttlMs);
  await insertRequest(u.trx, {
    id,
    platform_id: u.platform.id,
    account_id: op.accountId,
    operation: op.operation,
    target_id: op.targetId,
    body_hash: contentHash(op.content),
    payload_to_sign: payloadToSign,
    signer: JSON.stringify(op.signer),
    data: op.data === undefined ? null : sealRequestData(u, id, op.data),
    created_at: u.at,
    expires_at: expiresAt,
    consumed_at: null,
  });
  return { payloadToSign, requestId: id, expiresAt };
}

/** The unexpired, unused pending request `requestId` of this operation and target, or a 401. */
export async function pendingRequest(u: Unit, requestId: string, operation: string, targetId: string): Promise<AuthRequestRow> {
  // Two retries racing on one request id: the second waits, then finds it consumed.
  const row = await findRequest(u.trx, u.platform.id, requestId, { forUpdate: true });
  if (!row || row.operation !== operation || row.target_id !== targetId) {
    throw errors.walletAuthFailed('UNAUTHORIZED', 'Request-Id does not match a pending challenge for this request');
  }
  if (row.consumed_at !== null) throw errors.walletAuthFailed('UNAUTHORIZED', 'Request-Id was already used; request a new challenge');
  if (u.nowMs >= Date.parse(row.expires_at)) {
    throw errors.walletAuthFailed('UNAUTHORIZED', `the challenge expired at ${row.expires_at}; request a new one`);
  }
  return row;
}

/** Marks a pending request used; exactly one retry can do this. */
export async function consume(u: Unit, requestId: string): Promise<void> {
  if (!(await consumeRequest(u.trx, requestId, u.at)))
    throw errors.walletAuthFailed('UNAUTHORIZED', 'Request-Id was already used; request a new challenge');
}

/**
 * Verifies `stamp` over `payload` and that its key may sign for `accountId` as `signer` says.
 * The legacy `sandbox-valid-signature` value passes on sandbox platforms without a key.
 */
export async function checkStamp(u: Unit, stamp: string, payload: string, accountId: string, signer: Signer): Promise<VerifiedSigner> {
  if (stamp === SANDBOX_SIGNATURE) {
    if (isSandbox(u.platform)) return { publicKey: null, sessionId: null };
    throw errors.walletAuthFailed('WALLET_SIGNATURE_MALFORMED', 'the sandbox signature value is not accepted outside the sandbox');
  }
  const verified = verifyWalletStamp(stamp, payload);
  if (!verified.ok) throw errors.walletAuthFailed(verified.code, verified.reason);
  const key = verified.publicKey;
  if (signer.kind === 'key') {
    if (key !== signer.publicKey)
      throw errors.walletAuthFailed('WALLET_SIGNATURE_INVALID', 'the stamp was not made with the key this challenge is bound to');
    return { publicKey: key, sessionId: null };
  }
  const sessions = await activeSessionsWithKey(u.trx, u.platform.id, accountId, key, u.at);
  if (sessions.length === 0 && signer.kind === 'account-session' && signer.delegatedKeys === true) {
    if (await isActiveDelegatedKey(u.trx, u.platform.id, accountId, key)) return { publicKey: key, sessionId: null };
  }
  if (sessions.length === 0)
    throw errors.walletAuthFailed('WALLET_SIGNATURE_INVALID', 'the signing key is not an active session of this wallet');
  if (signer.kind === 'session') {
    const s = sessions.find((x) => x.id === signer.sessionId);
    if (!s) throw errors.walletAuthFailed('WALLET_SIGNATURE_INVALID', 'the stamp must be made with the key of the session being refreshed');
    return { publicKey: key, sessionId: s.id };
  }
  const allowed = sessions.find((x) => x.credential_id !== signer.excludeCredentialId);
  if (!allowed)
    throw errors.walletAuthFailed('WALLET_SIGNATURE_INVALID', 'the stamp must be made by a session of another credential on this wallet');
  return { publicKey: key, sessionId: allowed.id };
}
