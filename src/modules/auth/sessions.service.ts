/**
 * Wallet sessions: issued by a verify (or a refresh), identified by their API key, expiring on the
 * platform clock (`CORRIDOR_WALLET_SESSION_SECONDS`, 15 minutes by default).
 *
 * Key modes (facts-auth §5): a compressed `clientPublicKey` is the session key itself (the client
 * holds the private key); an uncompressed one gets a new session key generated here and returned
 * once, sealed to it, as `encryptedSessionSigningKey`. OTP sessions use the client's TEK.
 */
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import type { AuthCredentialRow, AuthSessionRow } from '../../store/schema-auth.ts';
import type { AuthMethodType, AuthSessionWire } from './auth.schemas.ts';
import { compressPublicKey, isCompressedPublicKey, newSessionKey, sealSessionKey } from './crypto.ts';
import { activityPayload } from './payloads.ts';
import { signedStep, walletError, type Challenge } from './signed-retry.ts';

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

/** Issues a session for `cred` (in the verifying transaction). */
export async function createSession(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, cred: AuthCredentialRow, source: SessionKeySource): Promise<IssuedSession> {
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  let publicKey: string;
  let sealed: string | undefined;
  if ('tekPublicKey' in source) publicKey = compressPublicKey(source.tekPublicKey);
  else if (isCompressedPublicKey(source.clientPublicKey)) publicKey = compressPublicKey(source.clientPublicKey);
  else {
    const key = newSessionKey();
    publicKey = key.publicKeyCompressed;
    sealed = sealSessionKey(key.privateKeyHex, source.clientPublicKey);
  }
  const row: AuthSessionRow = {
    id: ctx.deps.ids.next('Session'),
    platform_id: platform.id,
    account_id: cred.account_id,
    credential_id: cred.id,
    public_key: publicKey,
    created_at: iso(nowMs),
    updated_at: iso(nowMs),
    expires_at: iso(nowMs + ctx.config.wallet.sessionSeconds * 1000),
    revoked_at: null,
  };
  await trx.insertInto('auth_sessions').values(row).execute();
  const wire = sessionToWire(row, cred);
  if (sealed !== undefined) wire.encryptedSessionSigningKey = sealed;
  return wire;
}

/** GET /auth/sessions?accountId=: the account's active sessions, without key material. */
export async function listSessions(db: Kysely<Database>, ctx: AppContext, platform: PlatformRow, accountId: string): Promise<AuthSessionWire[]> {
  const rows = await db
    .selectFrom('auth_sessions as s')
    .innerJoin('auth_credentials as c', 'c.id', 's.credential_id')
    .selectAll('s')
    .select(['c.type as cred_type', 'c.nickname as cred_nickname', 'c.webauthn_id as cred_webauthn_id'])
    .where('s.platform_id', '=', platform.id)
    .where('s.account_id', '=', accountId)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', iso(platformNowMs(ctx.deps.clock, platform)))
    .orderBy('s.id')
    .execute();
  return rows.map(({ cred_type, cred_nickname, cred_webauthn_id, ...s }) => sessionToWire(s, { type: cred_type, nickname: cred_nickname, webauthn_id: cred_webauthn_id }));
}

/** The active session `id` with its credential, or undefined. */
async function activeSession(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, id: string) {
  let q = trx
    .selectFrom('auth_sessions as s')
    .innerJoin('auth_credentials as c', 'c.id', 's.credential_id')
    .selectAll('s')
    .select(['c.type as cred_type', 'c.nickname as cred_nickname', 'c.webauthn_id as cred_webauthn_id'])
    .where('s.platform_id', '=', platform.id)
    .where('s.id', '=', id)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', iso(platformNowMs(ctx.deps.clock, platform)));
  if (ctx.store.kind === 'postgres') q = q.forUpdate('s');
  return q.executeTakeFirst();
}

/** DELETE /auth/sessions/{id}: 202, then 204 after a stamp by any active session of the account. */
export async function revokeSession(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, req: FastifyRequest, id: string): Promise<{ status: 202; body: Challenge & { type: AuthMethodType } } | { status: 204 }> {
  const s = await activeSession(trx, ctx, platform, id);
  if (!s) throw errors.notFound('Active session', id);
  const step = await signedStep(trx, ctx, platform, req, {
    operation: 'session.revoke',
    accountId: s.account_id,
    targetId: s.id,
    content: {},
    signer: { kind: 'account-session' },
    payload: (requestId, nowMs) => activityPayload(platform, requestId, nowMs, { type: 'ACTIVITY_TYPE_DELETE_API_KEYS', parameters: { apiKeyIds: [s.id], userId: s.account_id } }),
    ttlMs: ctx.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { status: 202, body: { ...step.challenge, type: s.cred_type as AuthMethodType } };
  const at = iso(platformNowMs(ctx.deps.clock, platform));
  await trx.updateTable('auth_sessions').set({ revoked_at: at, updated_at: at }).where('id', '=', s.id).execute();
  return { status: 204 };
}

/**
 * POST /auth/sessions/{id}/refresh: 202, then — stamped by the session itself, same clientPublicKey —
 * 201 with a new session; the old one ends. The session must be active on both legs (else 401).
 */
export async function refreshSession(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, req: FastifyRequest, id: string, clientPublicKey: string): Promise<{ status: 202; body: Challenge } | { status: 201; body: IssuedSession }> {
  const exists = await trx.selectFrom('auth_sessions').select('id').where('platform_id', '=', platform.id).where('id', '=', id).executeTakeFirst();
  if (!exists) throw errors.notFound('Session', id);
  const s = await activeSession(trx, ctx, platform, id);
  if (!s) throw walletError('UNAUTHORIZED', `session ${id} is no longer active; authenticate the credential again`);
  const step = await signedStep(trx, ctx, platform, req, {
    operation: 'session.refresh',
    accountId: s.account_id,
    targetId: s.id,
    content: { clientPublicKey },
    signer: { kind: 'session', sessionId: s.id },
    payload: (requestId, nowMs) => activityPayload(platform, requestId, nowMs, { type: 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2', parameters: { targetPublicKey: clientPublicKey } }),
    ttlMs: ctx.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { status: 202, body: step.challenge };
  const cred = await trx.selectFrom('auth_credentials').selectAll().where('id', '=', s.credential_id).executeTakeFirstOrThrow();
  const at = iso(platformNowMs(ctx.deps.clock, platform));
  await trx.updateTable('auth_sessions').set({ revoked_at: at, updated_at: at }).where('id', '=', s.id).execute();
  return { status: 201, body: await createSession(trx, ctx, platform, cred, { clientPublicKey }) };
}
