/**
 * The signed-retry engine (spec §4.2). A signed operation is called twice:
 *
 * 1. without `Service-Wallet-Signature` / `Request-Id`: a pending request is stored — bound to the
 *    platform, the operation, its target, the hash of the request content and who may sign — and
 *    the caller answers 202 with `{payloadToSign, requestId, expiresAt[, type]}`;
 * 2. with both headers: the pending request is looked up by `Request-Id`, checked (same operation
 *    and target, unexpired, unused, same content), the stamp is verified over its exact
 *    `payloadToSign`, the stamping key is checked against the allowed signer, and the request is
 *    consumed — in the caller's transaction, so it is consumed if and only if the effect commits.
 *
 * 401 codes: REQUEST_ID_MISSING (stamp without Request-Id), WALLET_SIGNATURE_MISSING (Request-Id
 * without stamp), UNAUTHORIZED (Request-Id matches no unexpired pending request of this operation),
 * WALLET_SIGNATURE_BODY_MISMATCH, WALLET_SIGNATURE_MALFORMED, WALLET_SIGNATURE_INVALID — each with a
 * `reason` naming the failed check.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../http/errors.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import type { AuthRequestRow } from '../../store/schema-auth.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { verifyWalletStamp } from './crypto.ts';

export const SIGNATURE_HEADER = 'service-wallet-signature';
export const SIGNATURE_HEADER_ALIAS = 'grid-wallet-signature';
export const REQUEST_ID_HEADER = 'request-id';
/** The legacy sandbox stamp: accepted on sandbox platforms only, in place of a real stamp. */
export const SANDBOX_SIGNATURE = 'sandbox-valid-signature';

/** Who may stamp the retry. */
export type Signer =
  /** An active session on the account, optionally not one issued by `excludeCredentialId`. */
  | { kind: 'account-session'; excludeCredentialId?: string }
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
  /** Operation data kept with the pending request (never returned). */
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

/** SHA-256 of canonical JSON (object keys sorted), so key order in a body does not matter. */
export function contentHash(content: unknown): string {
  return createHash('sha256').update(canonicalJson(content)).digest('hex');
}

export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s === undefined || s === '' ? undefined : s;
}

/** The stamp and Request-Id headers of a request (`Grid-Wallet-Signature` accepted as an alias). */
export function signatureHeaders(req: FastifyRequest): { stamp: string | undefined; requestId: string | undefined } {
  return { stamp: header(req, SIGNATURE_HEADER) ?? header(req, SIGNATURE_HEADER_ALIAS), requestId: header(req, REQUEST_ID_HEADER) };
}

export function walletError(code: 'UNAUTHORIZED' | 'WALLET_SIGNATURE_MISSING' | 'WALLET_SIGNATURE_MALFORMED' | 'WALLET_SIGNATURE_BODY_MISMATCH' | 'WALLET_SIGNATURE_INVALID' | 'REQUEST_ID_MISSING', reason: string): ApiError {
  const messages = {
    UNAUTHORIZED: 'Authentication failed',
    WALLET_SIGNATURE_MISSING: 'Service-Wallet-Signature is required for this action',
    WALLET_SIGNATURE_MALFORMED: 'Service-Wallet-Signature cannot be parsed',
    WALLET_SIGNATURE_BODY_MISMATCH: 'The signed retry does not repeat the request it was challenged for',
    WALLET_SIGNATURE_INVALID: 'The wallet signature does not verify',
    REQUEST_ID_MISSING: 'Request-Id is required on the signed retry',
  } as const;
  return new ApiError(401, code, `${messages[code]}: ${reason}`, { reason }, undefined, reason);
}

/**
 * Step 1 or step 2 of a signed operation, decided by the headers. Step 2 leaves the pending
 * request consumed in `trx`; the caller performs the effect in the same transaction.
 */
export async function signedStep(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, req: FastifyRequest, op: SignedOperation): Promise<SignedStep> {
  const { stamp, requestId } = signatureHeaders(req);
  if (stamp === undefined && requestId === undefined) return { kind: 'challenge', challenge: await issue(trx, ctx, platform, op) };
  return { kind: 'verified', ...(await verifyRetry(trx, ctx, platform, req, op)) };
}

/**
 * Step 2 only: the retry's headers, pending request, content and stamp are checked and the request
 * is consumed in `trx`. The signer comes from the pending request, not from the retry.
 */
export async function verifyRetry(
  trx: Kysely<Database>,
  ctx: AppContext,
  platform: PlatformRow,
  req: FastifyRequest,
  op: Pick<SignedOperation, 'operation' | 'targetId' | 'content'>,
): Promise<{ signer: VerifiedSigner; request: AuthRequestRow }> {
  const { stamp, requestId } = signatureHeaders(req);
  if (requestId === undefined) throw walletError('REQUEST_ID_MISSING', 'Request-Id header is missing; echo the requestId of the 202 response');
  if (stamp === undefined) throw walletError('WALLET_SIGNATURE_MISSING', 'Service-Wallet-Signature header is missing');
  const pending = await pendingRequest(trx, ctx, platform, requestId, op.operation, op.targetId);
  if (pending.body_hash !== contentHash(op.content)) {
    throw walletError('WALLET_SIGNATURE_BODY_MISMATCH', 'the request body differs from the one the challenge was issued for');
  }
  const signer = await checkStamp(trx, ctx, platform, stamp, pending.payload_to_sign, pending.account_id, JSON.parse(pending.signer) as Signer);
  await consume(trx, ctx, platform, pending.id);
  return { signer, request: pending };
}

/** Stores a pending request and returns its challenge. */
export async function issue(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, op: SignedOperation): Promise<Challenge> {
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  const id = ctx.deps.ids.next('Request');
  const payloadToSign = op.payload(id, nowMs);
  const expiresAt = iso(nowMs + op.ttlMs);
  await trx
    .insertInto('auth_requests')
    .values({
      id,
      platform_id: platform.id,
      account_id: op.accountId,
      operation: op.operation,
      target_id: op.targetId,
      body_hash: contentHash(op.content),
      payload_to_sign: payloadToSign,
      signer: JSON.stringify(op.signer),
      data: op.data === undefined ? null : JSON.stringify(op.data),
      created_at: iso(nowMs),
      expires_at: expiresAt,
      consumed_at: null,
    })
    .execute();
  return { payloadToSign, requestId: id, expiresAt };
}

/** The unexpired, unused pending request `requestId` of this operation and target, or a 401. */
export async function pendingRequest(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, requestId: string, operation: string, targetId: string): Promise<AuthRequestRow> {
  let q = trx.selectFrom('auth_requests').selectAll().where('id', '=', requestId).where('platform_id', '=', platform.id);
  // Two retries racing on one request id: the second waits, then finds it consumed.
  if (ctx.store.kind === 'postgres') q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row || row.operation !== operation || row.target_id !== targetId) {
    throw walletError('UNAUTHORIZED', 'Request-Id does not match a pending challenge for this request');
  }
  if (row.consumed_at !== null) throw walletError('UNAUTHORIZED', 'Request-Id was already used; request a new challenge');
  if (platformNowMs(ctx.deps.clock, platform) >= Date.parse(row.expires_at)) {
    throw walletError('UNAUTHORIZED', `the challenge expired at ${row.expires_at}; request a new one`);
  }
  return row;
}

/** Marks a pending request used; exactly one retry can do this. */
export async function consume(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, requestId: string): Promise<void> {
  const done = await trx
    .updateTable('auth_requests')
    .set({ consumed_at: iso(platformNowMs(ctx.deps.clock, platform)) })
    .where('id', '=', requestId)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  if (Number(done.numUpdatedRows) !== 1) throw walletError('UNAUTHORIZED', 'Request-Id was already used; request a new challenge');
}

/**
 * Verifies `stamp` over `payload` and that its key may sign for `accountId` as `signer` says.
 * The legacy `sandbox-valid-signature` value passes on sandbox platforms without a key.
 */
export async function checkStamp(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, stamp: string, payload: string, accountId: string, signer: Signer): Promise<VerifiedSigner> {
  if (stamp === SANDBOX_SIGNATURE) {
    if (isSandbox(platform)) return { publicKey: null, sessionId: null };
    throw walletError('WALLET_SIGNATURE_MALFORMED', 'the sandbox signature value is not accepted outside the sandbox');
  }
  const verified = verifyWalletStamp(stamp, payload);
  if (!verified.ok) throw walletError(verified.code, verified.reason);
  const key = verified.publicKey;
  if (signer.kind === 'key') {
    if (key !== signer.publicKey) throw walletError('WALLET_SIGNATURE_INVALID', 'the stamp was not made with the key this challenge is bound to');
    return { publicKey: key, sessionId: null };
  }
  const nowIso = iso(platformNowMs(ctx.deps.clock, platform));
  const sessions = await trx
    .selectFrom('auth_sessions')
    .select(['id', 'credential_id'])
    .where('platform_id', '=', platform.id)
    .where('account_id', '=', accountId)
    .where('public_key', '=', key)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', nowIso)
    .execute();
  if (sessions.length === 0) throw walletError('WALLET_SIGNATURE_INVALID', 'the signing key is not an active session of this wallet');
  if (signer.kind === 'session') {
    const s = sessions.find((x) => x.id === signer.sessionId);
    if (!s) throw walletError('WALLET_SIGNATURE_INVALID', 'the stamp must be made with the key of the session being refreshed');
    return { publicKey: key, sessionId: s.id };
  }
  const allowed = sessions.find((x) => x.credential_id !== signer.excludeCredentialId);
  if (!allowed) throw walletError('WALLET_SIGNATURE_INVALID', 'the stamp must be made by a session of another credential on this wallet');
  return { publicKey: key, sessionId: allowed.id };
}
