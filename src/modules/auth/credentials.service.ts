/**
 * Credentials on EMBEDDED_WALLET accounts (spec §4.1, §4.3–4.5; facts-auth §3):
 * - create: the first credential of an account is created directly (201); another one needs a
 *   signed retry stamped by an active session of the account (202 → 201);
 * - challenge: OTP → a fresh `otpEncryptionTargetBundle`; PASSKEY → a WebAuthn challenge bound to
 *   the `clientPublicKey` the session will use;
 * - verify: OTP (two legs, the retry stamped by the TEK), OAUTH (one call), PASSKEY (one call with
 *   the challenge's Request-Id) → an AuthSession;
 * - revoke: signed retry stamped by a session of *another* credential; revoking ends its sessions.
 */
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { ApiError, errors } from '../../http/errors.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import type { Database, InternalAccountRow, PlatformRow } from '../../store/schema.ts';
import type { AuthCredentialRow } from '../../store/schema-auth.ts';
import { isSandbox, settingsOf } from '../platforms/platform-settings.ts';
import type { AuthMethodResponseWire, AuthMethodType, AuthMethodWire, CredentialCreate, CredentialVerify } from './auth.schemas.ts';
import {
  checkOidcToken,
  newOtpTarget,
  openOtpBundle,
  signVerificationToken,
  verifyPasskeyAssertion,
  verifyPasskeyRegistration,
} from './crypto.ts';
import { activityPayload } from './payloads.ts';
import { enforceRateLimit, RATE_LIMITS, recordAttempt } from './rate-limit.ts';
import { createSession, type IssuedSession } from './sessions.service.ts';
import { consume, issue, pendingRequest, signatureHeaders, signedStep, verifyRetry, walletError, type Challenge } from './signed-retry.ts';
import { walletKey } from './wallet-keys.ts';

const otpUnavailable = () => errors.notImplemented('Corridor does not deliver one-time passwords; OTP login is available on sandbox platforms (code 000000)');
/** Corridor cannot fetch an identity provider's keys (it runs offline), so it cannot check a real token's signature. */
const oauthUnavailable = () => errors.notImplemented('Corridor cannot verify OIDC token signatures (it fetches no identity-provider keys); OAUTH credentials are available on sandbox platforms');

/** The sandbox's fixed one-time password (spec §4.12 item 1). */
export const SANDBOX_OTP = '000000';
/** The legacy passkey assertion signature the sandbox still accepts (spec §4.12 item 3). */
export const SANDBOX_PASSKEY_SIGNATURE = 'sandbox-valid-passkey-signature';
const DEFAULT_OTP_TTL_SECONDS = 300;

export function credentialToWire(row: AuthCredentialRow): AuthMethodWire {
  const wire: AuthMethodWire = {
    id: row.id,
    accountId: row.account_id,
    type: row.type as AuthMethodType,
    nickname: row.nickname,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.webauthn_id !== null) wire.credentialId = row.webauthn_id;
  return wire;
}

/** The platform's EMBEDDED_WALLET account `accountId`: 404 when unknown, 400 for another account type. */
export async function walletAccount(trx: Kysely<Database>, platformId: string, accountId: string): Promise<InternalAccountRow> {
  const row = await trx.selectFrom('internal_accounts').selectAll().where('platform_id', '=', platformId).where('id', '=', accountId).executeTakeFirst();
  if (!row) throw errors.notFound('Internal account', accountId);
  if (row.type !== 'EMBEDDED_WALLET') throw errors.invalidField('accountId', 'must be an EMBEDDED_WALLET internal account');
  return row;
}

/** Row lock on the wallet account (PostgreSQL; SQLite write transactions are already serial). */
export async function lockAccount(trx: Kysely<Database>, ctx: AppContext, accountId: string): Promise<void> {
  if (ctx.store.kind === 'postgres') await trx.selectFrom('internal_accounts').select('id').where('id', '=', accountId).forUpdate().execute();
}

export async function findCredential(trx: Kysely<Database>, platformId: string, id: string): Promise<AuthCredentialRow> {
  const row = await trx.selectFrom('auth_credentials').selectAll().where('platform_id', '=', platformId).where('id', '=', id).executeTakeFirst();
  if (!row) throw errors.notFound('Credential', id);
  return row;
}

export async function listCredentials(db: Kysely<Database>, platformId: string, accountId: string): Promise<AuthMethodWire[]> {
  const rows = await db.selectFrom('auth_credentials').selectAll().where('platform_id', '=', platformId).where('account_id', '=', accountId).orderBy('id').execute();
  return rows.map(credentialToWire);
}

function alreadyExists(type: AuthMethodType): ApiError {
  if (type === 'EMAIL_OTP') return new ApiError(400, 'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS', 'This wallet already has an EMAIL_OTP credential (one per account)');
  if (type === 'SMS_OTP') return new ApiError(400, 'SMS_OTP_CREDENTIAL_ALREADY_EXISTS', 'This wallet already has an SMS_OTP credential (one per account)');
  if (type === 'PASSKEY') return new ApiError(400, 'PASSKEY_CREDENTIAL_ALREADY_EXISTS', 'A passkey with this credentialId is already registered on this wallet');
  return errors.invalidField('oidcToken', 'this identity (iss, aud, sub) is already registered on this wallet');
}

/** What a new credential will be, checked against the request (before any signed retry). */
interface NewCredential {
  type: AuthMethodType;
  nickname: string;
  uniqueKey: string;
  webauthn?: { id: string; publicKey: string; counter: number; origin: string; rpId: string; transports: string[] | undefined; challenge: string };
  oidcIdentity?: { iss: string; aud: string; sub: string };
}

async function prepareCredential(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, account: InternalAccountRow, body: CredentialCreate): Promise<NewCredential> {
  switch (body.type) {
    case 'EMAIL_OTP':
    case 'SMS_OTP': {
      const contact = await customerContact(trx, platform.id, account.customer_id);
      const value = body.type === 'EMAIL_OTP' ? contact.email : contact.phoneNumber;
      if (!value) {
        throw errors.invalidField('type', `the wallet's customer has no ${body.type === 'EMAIL_OTP' ? 'email' : 'phoneNumber'}; set it with PATCH /customers/{customerId} first`);
      }
      return { type: body.type, nickname: value, uniqueKey: body.type };
    }
    case 'OAUTH': {
      if (!isSandbox(platform)) throw oauthUnavailable();
      const checked = checkOidcToken(body.oidcToken, { nowMs: platformNowMs(ctx.deps.clock, platform) });
      if (!checked.ok) {
        if (checked.malformed) throw errors.invalidField('oidcToken', checked.reason);
        throw walletError('UNAUTHORIZED', checked.reason);
      }
      const { iss, aud, sub } = checked.identity;
      return { type: 'OAUTH', nickname: checked.email ?? sub, uniqueKey: `OAUTH:${JSON.stringify([iss, aud, sub])}`, oidcIdentity: { iss, aud, sub } };
    }
    case 'PASSKEY': {
      const nickname = body.nickname.trim();
      if (!/^[\p{L}\p{N} ._\-'()]{1,100}$/u.test(nickname)) {
        throw errors.invalidField('nickname', "must be 1-100 letters, digits, spaces or . _ - ' ( ) after trimming");
      }
      const used = await trx.selectFrom('auth_requests').select('id').where('id', '=', registrationChallengeId(platform.id, body.challenge)).executeTakeFirst();
      if (used) throw errors.invalidField('challenge', 'this registration challenge was already used');
      const reg = await verifyPasskeyRegistration({
        attestation: body.attestation,
        expectedChallenge: body.challenge,
        rpIds: ctx.config.wallet.rpIds,
        origins: ctx.config.wallet.origins,
      });
      if (!reg.ok) throw errors.invalidField(reg.field, reg.reason);
      return {
        type: 'PASSKEY',
        nickname,
        uniqueKey: `PASSKEY:${reg.credentialId}`,
        webauthn: { id: reg.credentialId, publicKey: reg.publicKey, counter: reg.counter, origin: reg.origin, rpId: reg.rpId, transports: body.attestation.transports, challenge: body.challenge },
      };
    }
  }
}

/** The row that marks a platform's registration challenge used; its primary key makes the use single. */
function registrationChallengeId(platformId: string, challenge: string): string {
  return `PasskeyRegistration:${createHash('sha256').update(`${platformId}\n${challenge}`).digest('hex')}`;
}

async function customerContact(trx: Kysely<Database>, platformId: string, customerId: string | null): Promise<{ email?: string; phoneNumber?: string }> {
  if (!customerId) return {};
  const row = await trx.selectFrom('customers').select('data').where('platform_id', '=', platformId).where('id', '=', customerId).executeTakeFirst();
  return row ? (JSON.parse(row.data) as { email?: string; phoneNumber?: string }) : {};
}

async function assertUnique(trx: Kysely<Database>, accountId: string, c: NewCredential): Promise<void> {
  const clash = await trx.selectFrom('auth_credentials').select('id').where('account_id', '=', accountId).where('unique_key', '=', c.uniqueKey).executeTakeFirst();
  if (clash) throw alreadyExists(c.type);
}

/** The Turnkey-style activity a credential add is signed as (facts-auth §1.4). */
function addPayload(c: NewCredential, body: CredentialCreate, accountId: string) {
  const userId = accountId;
  switch (c.type) {
    case 'EMAIL_OTP':
      return { type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL', parameters: { userEmail: c.nickname, userId } };
    case 'SMS_OTP':
      return { type: 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER', parameters: { userId, userPhoneNumber: c.nickname } };
    case 'OAUTH':
      return { type: 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS', parameters: { oauthProviders: [{ oidcToken: body.type === 'OAUTH' ? body.oidcToken : '', providerName: c.oidcIdentity?.iss ?? '' }], userId } };
    case 'PASSKEY': {
      const a = body.type === 'PASSKEY' ? body : undefined;
      return {
        type: 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2',
        parameters: {
          authenticators: [{ attestation: a?.attestation, authenticatorName: c.nickname, challenge: a?.challenge, transports: a?.attestation.transports ?? [] }],
          userId,
        },
      };
    }
  }
}

export type CreateOutcome = { status: 201; body: AuthMethodResponseWire } | { status: 202; body: Challenge & { type: AuthMethodType } };

/** POST /auth/credentials. */
export async function createCredential(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, req: FastifyRequest, body: CredentialCreate): Promise<CreateOutcome> {
  const account = await walletAccount(trx, platform.id, body.accountId);
  const c = await prepareCredential(trx, ctx, platform, account, body);
  await assertUnique(trx, account.id, c);
  const existing = await trx.selectFrom('auth_credentials').select('id').where('account_id', '=', account.id).limit(1).executeTakeFirst();
  if (existing) {
    const step = await signedStep(trx, ctx, platform, req, {
      operation: 'credential.add',
      accountId: account.id,
      targetId: account.id,
      content: body,
      signer: { kind: 'account-session' },
      payload: (requestId, nowMs) => activityPayload(platform, requestId, nowMs, addPayload(c, body, account.id)),
      ttlMs: ctx.config.wallet.challengeSeconds * 1000,
    });
    if (step.kind === 'challenge') return { status: 202, body: { ...step.challenge, type: c.type } };
  }
  const row = await insertCredential(trx, ctx, platform, account.id, c);
  const wire: AuthMethodResponseWire = credentialToWire(row);
  if ((c.type === 'EMAIL_OTP' || c.type === 'SMS_OTP') && isSandbox(platform)) wire.otpEncryptionTargetBundle = await issueOtp(trx, ctx, platform, row);
  return { status: 201, body: wire };
}

async function insertCredential(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, accountId: string, c: NewCredential): Promise<AuthCredentialRow> {
  const at = iso(platformNowMs(ctx.deps.clock, platform));
  const row: AuthCredentialRow = {
    id: ctx.deps.ids.next('AuthMethod'),
    platform_id: platform.id,
    account_id: accountId,
    type: c.type,
    nickname: c.nickname,
    unique_key: c.uniqueKey,
    webauthn_id: c.webauthn?.id ?? null,
    webauthn_public_key: c.webauthn?.publicKey ?? null,
    webauthn_counter: c.webauthn?.counter ?? null,
    webauthn_transports: c.webauthn?.transports ? JSON.stringify(c.webauthn.transports) : null,
    webauthn_origin: c.webauthn?.origin ?? null,
    webauthn_rp_id: c.webauthn?.rpId ?? null,
    oidc_identity: c.oidcIdentity ? JSON.stringify(c.oidcIdentity) : null,
    created_at: at,
    updated_at: at,
  };
  // The unique index settles two racing adds of the same key (one wins, the other is a 400).
  const inserted = await trx.insertInto('auth_credentials').values(row).onConflict((oc) => oc.columns(['account_id', 'unique_key']).doNothing()).executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) !== 1) throw alreadyExists(c.type);
  if (c.webauthn) {
    // The platform's registration challenge is single use: two racing registrations cannot both insert this row.
    const id = registrationChallengeId(platform.id, c.webauthn.challenge);
    const marked = await trx
      .insertInto('auth_requests')
      .values({ id, platform_id: platform.id, account_id: accountId, operation: 'passkey.register', target_id: id, body_hash: '', payload_to_sign: '', signer: '{}', data: null, created_at: at, expires_at: at, consumed_at: at })
      .onConflict((oc) => oc.column('id').doNothing())
      .executeTakeFirst();
    if (Number(marked.numInsertedOrUpdatedRows ?? 0n) !== 1) throw errors.invalidField('challenge', 'this registration challenge was already used');
  }
  return row;
}

/**
 * Starts an OTP login: a fresh target key whose bundle the client encrypts the code to. Earlier
 * unused OTPs of the credential stop working (one bundle per issuance).
 */
async function issueOtp(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, cred: AuthCredentialRow): Promise<string> {
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  await trx.updateTable('auth_requests').set({ consumed_at: iso(nowMs) }).where('target_id', '=', cred.id).where('operation', '=', 'otp.issue').where('consumed_at', 'is', null).execute();
  const target = newOtpTarget(await walletKey(trx, platform.id));
  const ttlSeconds = settingsOf(platform).embeddedWalletConfig?.expirationSeconds ?? DEFAULT_OTP_TTL_SECONDS;
  await trx
    .insertInto('auth_requests')
    .values({
      id: ctx.deps.ids.next('Request'),
      platform_id: platform.id,
      account_id: cred.account_id,
      operation: 'otp.issue',
      target_id: cred.id,
      body_hash: '',
      payload_to_sign: '',
      signer: '{}',
      data: JSON.stringify({ targetPrivateKey: target.targetPrivateKeyHex }),
      created_at: iso(nowMs),
      expires_at: iso(nowMs + ttlSeconds * 1000),
      consumed_at: null,
    })
    .execute();
  return target.bundle;
}

/** POST /auth/credentials/{id}/challenge. */
export async function challengeCredential(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, id: string, clientPublicKey: string | undefined) {
  const cred = await findCredential(trx, platform.id, id);
  // Concurrent challenges on one credential count one after the other (PostgreSQL row lock).
  if (ctx.store.kind === 'postgres') await trx.selectFrom('auth_credentials').select('id').where('id', '=', cred.id).forUpdate().execute();
  await enforceRateLimit(trx, ctx, cred.id, RATE_LIMITS.challenge);
  await recordAttempt(trx, ctx, platform.id, cred.id, RATE_LIMITS.challenge.kind);
  if (cred.type === 'OAUTH') throw errors.invalidInput('OAUTH credentials do not use /challenge: call /verify with a fresh oidcToken and a clientPublicKey');
  if (cred.type === 'EMAIL_OTP' || cred.type === 'SMS_OTP') {
    if (!isSandbox(platform)) throw otpUnavailable();
    const bundle = await issueOtp(trx, ctx, platform, cred);
    const at = iso(platformNowMs(ctx.deps.clock, platform));
    await trx.updateTable('auth_credentials').set({ updated_at: at }).where('id', '=', cred.id).execute();
    return { ...credentialToWire({ ...cred, updated_at: at }), otpEncryptionTargetBundle: bundle };
  }
  if (!clientPublicKey) throw errors.invalidField('clientPublicKey', 'is required for a PASSKEY challenge');
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  const requestId = ctx.deps.ids.next('Request');
  // The challenge is the hex SHA-256 of the session-creation request it authorises.
  const sessionRequest = { clientPublicKey, credentialId: cred.id, organizationId: platform.id, requestId, timestampMs: String(nowMs) };
  const challenge = createHash('sha256').update(JSON.stringify(sessionRequest)).digest('hex');
  const expiresAt = iso(nowMs + ctx.config.wallet.challengeSeconds * 1000);
  await trx
    .insertInto('auth_requests')
    .values({
      id: requestId,
      platform_id: platform.id,
      account_id: cred.account_id,
      operation: 'passkey.session',
      target_id: cred.id,
      body_hash: '',
      payload_to_sign: challenge,
      signer: '{}',
      data: JSON.stringify({ clientPublicKey }),
      created_at: iso(nowMs),
      expires_at: expiresAt,
      consumed_at: null,
    })
    .execute();
  return { ...credentialToWire(cred), type: 'PASSKEY' as const, credentialId: cred.webauthn_id ?? '', challenge, requestId, expiresAt };
}

export type VerifyOutcome = { status: 200; body: IssuedSession } | { status: 202; body: Challenge & { type: AuthMethodType } };

/** POST /auth/credentials/{id}/verify. A 401 here counts toward the credential's failed-verify limit (see the route). */
export async function verifyCredential(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, req: FastifyRequest, id: string, body: CredentialVerify): Promise<VerifyOutcome> {
  const cred = await findCredential(trx, platform.id, id);
  await enforceRateLimit(trx, ctx, cred.id, RATE_LIMITS.failedVerify);
  if (body.type !== cred.type) throw errors.invalidField('type', `must be ${cred.type}, the type of credential ${cred.id}`);
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  switch (body.type) {
    case 'EMAIL_OTP':
    case 'SMS_OTP':
      return verifyOtp(trx, ctx, platform, req, cred, body.encryptedOtpBundle, nowMs);
    case 'OAUTH': {
      if (!isSandbox(platform)) throw oauthUnavailable();
      const identity = JSON.parse(cred.oidc_identity ?? '{}') as { iss: string; aud: string; sub: string };
      const checked = checkOidcToken(body.oidcToken, { nowMs, expectIdentity: identity, clientPublicKey: body.clientPublicKey });
      if (!checked.ok) {
        if (checked.malformed) throw errors.invalidField('oidcToken', checked.reason);
        throw walletError('UNAUTHORIZED', checked.reason);
      }
      return { status: 200, body: await createSession(trx, ctx, platform, cred, { clientPublicKey: body.clientPublicKey }) };
    }
    case 'PASSKEY': {
      const { requestId } = signatureHeaders(req);
      if (requestId === undefined) throw walletError('REQUEST_ID_MISSING', 'Request-Id header is missing; echo the requestId of the /challenge response');
      const pending = await pendingRequest(trx, ctx, platform, requestId, 'passkey.session', cred.id);
      const { clientPublicKey } = JSON.parse(pending.data ?? '{}') as { clientPublicKey: string };
      if (!(isSandbox(platform) && body.assertion.signature === SANDBOX_PASSKEY_SIGNATURE)) {
        const result = await verifyPasskeyAssertion({
          assertion: body.assertion,
          expectedChallenge: pending.payload_to_sign,
          credential: {
            credentialId: cred.webauthn_id ?? '',
            publicKey: cred.webauthn_public_key ?? '',
            counter: Number(cred.webauthn_counter ?? 0),
            origin: cred.webauthn_origin ?? '',
            rpId: cred.webauthn_rp_id ?? '',
          },
        });
        if (!result.ok) throw walletError('UNAUTHORIZED', result.reason);
        await trx.updateTable('auth_credentials').set({ webauthn_counter: result.newCounter, updated_at: iso(nowMs) }).where('id', '=', cred.id).execute();
      }
      await consume(trx, ctx, platform, pending.id);
      return { status: 200, body: await createSession(trx, ctx, platform, cred, { clientPublicKey }) };
    }
  }
}

async function verifyOtp(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, req: FastifyRequest, cred: AuthCredentialRow, bundle: string, nowMs: number): Promise<VerifyOutcome> {
  const headers = signatureHeaders(req);
  if (headers.stamp !== undefined || headers.requestId !== undefined) {
    // Leg 2: the retry stamped by the TEK whose public key the first leg bound.
    const { signer } = await verifyRetry(trx, ctx, platform, req, { operation: 'otp.verify', targetId: cred.id, content: { encryptedOtpBundle: bundle } });
    // The sandbox stamp carries no key, and an OTP session's key is the TEK: it needs a real stamp.
    if (signer.publicKey === null) throw walletError('WALLET_SIGNATURE_INVALID', 'the OTP login must be stamped with the TEK private key');
    return { status: 200, body: await createSession(trx, ctx, platform, cred, { tekPublicKey: signer.publicKey }) };
  }
  // Leg 1: decrypt the bundle with the pending OTP's target key and check the code. The fixed code
  // is a sandbox rule: outside the sandbox no code was ever delivered, so no OTP login can succeed
  // (else anyone holding the platform token could open a wallet session with 000000).
  if (!isSandbox(platform)) throw otpUnavailable();
  const otp = await trx
    .selectFrom('auth_requests')
    .selectAll()
    .where('target_id', '=', cred.id)
    .where('operation', '=', 'otp.issue')
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', iso(nowMs))
    .orderBy('id', 'desc')
    .executeTakeFirst();
  if (!otp) throw walletError('UNAUTHORIZED', 'No pending OTP for this credential; call /challenge first');
  const { targetPrivateKey } = JSON.parse(otp.data ?? '{}') as { targetPrivateKey: string };
  const opened = openOtpBundle(bundle, targetPrivateKey);
  if (!opened.ok) throw walletError('UNAUTHORIZED', opened.reason);
  if (opened.otpCode !== SANDBOX_OTP) throw walletError('UNAUTHORIZED', 'Invalid OTP code');
  await consume(trx, ctx, platform, otp.id);
  const key = await walletKey(trx, platform.id);
  const ttlMs = ctx.config.wallet.challengeSeconds * 1000;
  const challenge = await issue(trx, ctx, platform, {
    operation: 'otp.verify',
    accountId: cred.account_id,
    targetId: cred.id,
    content: { encryptedOtpBundle: bundle },
    signer: { kind: 'key', publicKey: opened.publicKey },
    // The verification token: a compact JWT binding the TEK, signed with the platform's wallet key.
    payload: (requestId, now) => signVerificationToken(key, { sub: cred.id, public_key: opened.publicKey, jti: requestId, iat: Math.floor(now / 1000), exp: Math.floor((now + ttlMs) / 1000) }),
    ttlMs,
  });
  return { status: 202, body: { ...challenge, type: cred.type as AuthMethodType } };
}

/** DELETE /auth/credentials/{id}: 202 challenge, then 204 after a stamp by another credential's session. */
export async function revokeCredential(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, req: FastifyRequest, id: string): Promise<{ status: 202; body: Challenge & { type: AuthMethodType } } | { status: 204 }> {
  const cred = await findCredential(trx, platform.id, id);
  // Two revokes racing on one wallet must not leave it without a credential: serialise them.
  await lockAccount(trx, ctx, cred.account_id);
  const others = await trx.selectFrom('auth_credentials').select('id').where('account_id', '=', cred.account_id).where('id', '!=', cred.id).limit(1).executeTakeFirst();
  if (!others) throw errors.invalidInput(`Credential ${cred.id} is the only credential of its wallet; add another before revoking it`);
  const step = await signedStep(trx, ctx, platform, req, {
    operation: 'credential.revoke',
    accountId: cred.account_id,
    targetId: cred.id,
    content: {},
    signer: { kind: 'account-session', excludeCredentialId: cred.id },
    payload: (requestId, nowMs) => activityPayload(platform, requestId, nowMs, { type: 'ACTIVITY_TYPE_DELETE_AUTHENTICATORS', parameters: { authenticatorIds: [cred.id], userId: cred.account_id } }),
    ttlMs: ctx.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { status: 202, body: { ...step.challenge, type: cred.type as AuthMethodType } };
  const at = iso(platformNowMs(ctx.deps.clock, platform));
  await trx.deleteFrom('auth_credentials').where('id', '=', cred.id).execute();
  await trx.updateTable('auth_sessions').set({ revoked_at: at, updated_at: at }).where('credential_id', '=', cred.id).where('revoked_at', 'is', null).execute();
  return { status: 204 };
}
