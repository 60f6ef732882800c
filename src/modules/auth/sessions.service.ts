/**
 * Wallet sessions: issued by a verify (or a refresh), identified by their API key, expiring on the
 * platform clock (`CORRIDOR_WALLET_SESSION_SECONDS`, 15 minutes by default).
 *
 * Key modes: a PASSKEY or OAUTH session always gets a new session key generated here and returned
 * once, sealed to `clientPublicKey`, as `encryptedSessionSigningKey` (spec §2, §4.2). When that key
 * is compressed, the client's own key signs for the session too (the live API's client-held key
 * mode, facts-auth §5), so a client may use either. An uncompressed key gets the sealed key only.
 * OTP logins use the client's TEK; an OTP session's refresh keeps the live modes (a compressed key
 * is the session key, an uncompressed one gets a sealed key).
 */
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import type { PlatformRow } from '../../store/schema.ts';
import type { AuthCredentialRow, AuthSessionRow } from '../../store/schema-auth.ts';
import type { Unit } from '../../unit.ts';
import { findCredential, findSession, insertSession, listActiveSessions, revokeSessionRow } from './auth.repo.ts';
import type { AuthMethodType, AuthSessionWire } from './auth.schemas.ts';
import { compressPublicKey, isCompressedPublicKey, newSessionKey, sealSessionKey } from './crypto.ts';
import { activityPayload } from './payloads.ts';
import { signedStep, type CredentialSigned, type Signed } from './signed-retry.ts';

export type IssuedSession = AuthSessionWire;

type SessionKeySource = { clientPublicKey: string } | { tekPublicKey: string };

function sessionToWire(s: AuthSessionRow, cred: Pick<AuthCredentialRow, 'type' | 'nickname' | 'webauthn_id'>): AuthSessionWire {
  const wire: AuthSessionWire = {
    id: s.id,
    accountId: s.account_id,
    type: cred.type as AuthMethodType,
    nickname: cred.nickname,
    createdAt: s.created_at,
    updatedAt: s.updated_at,
    expiresAt: s.expires_at,
  };
  if (cred.webauthn_id !== null) wire.credentialId = cred.webauthn_id;
  return wire;
}

/** The credential types whose sessions always carry `encryptedSessionSigningKey` (spec §2 AuthSession, §4.2). */
const SEALED_KEY_TYPES: ReadonlySet<string> = new Set(['PASSKEY', 'OAUTH']);

/** Issues a session for `cred` (in the verifying unit). */
export async function createSession(u: Unit, cred: AuthCredentialRow, source: SessionKeySource): Promise<IssuedSession> {
  let publicKey: string;
  let clientKey: string | null = null;
  let sealed: string | undefined;
  if ('tekPublicKey' in source) publicKey = compressPublicKey(source.tekPublicKey);
  else if (isCompressedPublicKey(source.clientPublicKey) && !SEALED_KEY_TYPES.has(cred.type)) {
    // A refresh of an OTP session with a compressed key: the client-held key mode only.
    publicKey = compressPublicKey(source.clientPublicKey);
  } else {
    const key = newSessionKey();
    publicKey = key.publicKeyCompressed;
    sealed = sealSessionKey(key.privateKeyHex, source.clientPublicKey);
    if (isCompressedPublicKey(source.clientPublicKey)) clientKey = compressPublicKey(source.clientPublicKey);
  }
  const row: AuthSessionRow = {
    id: u.deps.ids.next('Session'),
    platform_id: u.platform.id,
    account_id: cred.account_id,
    credential_id: cred.id,
    public_key: publicKey,
    client_public_key: clientKey,
    created_at: u.at,
    updated_at: u.at,
    expires_at: iso(u.nowMs + u.app.config.wallet.sessionSeconds * 1000),
    revoked_at: null,
  };
  await insertSession(u.trx, row);
  const wire = sessionToWire(row, cred);
  if (sealed !== undefined) wire.encryptedSessionSigningKey = sealed;
  return wire;
}

/** GET /auth/sessions?accountId=: the account's active sessions, without key material. */
export async function listSessions(ctx: AppContext, platform: PlatformRow, accountId: string): Promise<AuthSessionWire[]> {
  const rows = await listActiveSessions(ctx.db, platform.id, accountId, iso(platformNowMs(ctx.deps.clock, platform)));
  return rows.map(({ cred_type, cred_nickname, cred_webauthn_id, ...s }) =>
    sessionToWire(s, { type: cred_type, nickname: cred_nickname, webauthn_id: cred_webauthn_id }),
  );
}

/** A session as a signed session operation finds it: unknown, no longer active, or active (with its credential). */
type SessionState = { state: 'missing' } | { state: 'inactive' } | { state: 'active'; session: AuthSessionRow; cred: AuthCredentialRow };

/** The session `id`, locked: a revoke or refresh racing on it waits, then finds it revoked. */
async function sessionState(u: Unit, id: string): Promise<SessionState> {
  const session = await findSession(u.trx, u.platform.id, id, { forUpdate: true });
  if (!session) return { state: 'missing' };
  if (session.revoked_at !== null || session.expires_at <= u.at) return { state: 'inactive' };
  const cred = await findCredential(u.trx, u.platform.id, session.credential_id);
  return cred ? { state: 'active', session, cred } : { state: 'inactive' };
}

/** DELETE /auth/sessions/{id}: a challenge, then (stamped by any active session of the account) the revocation. */
export async function revokeSession(u: Unit, input: { signature: WalletSignature; sessionId: string }): Promise<CredentialSigned<void>> {
  const found = await sessionState(u, input.sessionId);
  if (found.state !== 'active') throw errors.notFound('Active session', input.sessionId);
  const { session: s, cred } = found;
  const step = await signedStep(u, input.signature, {
    operation: 'session.revoke',
    accountId: s.account_id,
    targetId: s.id,
    content: {},
    signer: { kind: 'account-session' },
    payload: (requestId, nowMs) =>
      activityPayload(u.platform, requestId, nowMs, {
        type: 'ACTIVITY_TYPE_DELETE_API_KEYS',
        parameters: { apiKeyIds: [s.id], userId: s.account_id },
      }),
    ttlMs: u.app.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { kind: 'challenge', challenge: step.challenge, type: cred.type as AuthMethodType };
  await revokeSessionRow(u.trx, s.id, u.at);
  return { kind: 'done', value: undefined };
}

/**
 * POST /auth/sessions/{id}/refresh: a challenge, then — stamped by the session itself, same
 * clientPublicKey — a new session; the old one ends. The session must be active on both legs (else 401).
 */
export async function refreshSession(
  u: Unit,
  input: { signature: WalletSignature; sessionId: string; clientPublicKey: string },
): Promise<Signed<IssuedSession>> {
  const { sessionId: id, clientPublicKey } = input;
  const found = await sessionState(u, id);
  if (found.state === 'missing') throw errors.notFound('Session', id);
  if (found.state === 'inactive')
    throw errors.walletAuthFailed('UNAUTHORIZED', `session ${id} is no longer active; authenticate the credential again`);
  const { session: s, cred } = found;
  const step = await signedStep(u, input.signature, {
    operation: 'session.refresh',
    accountId: s.account_id,
    targetId: s.id,
    content: { clientPublicKey },
    signer: { kind: 'session', sessionId: s.id },
    payload: (requestId, nowMs) =>
      activityPayload(u.platform, requestId, nowMs, {
        type: 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2',
        parameters: { targetPublicKey: clientPublicKey },
      }),
    ttlMs: u.app.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { kind: 'challenge', challenge: step.challenge };
  await revokeSessionRow(u.trx, s.id, u.at);
  return { kind: 'done', value: await createSession(u, cred, { clientPublicKey }) };
}
