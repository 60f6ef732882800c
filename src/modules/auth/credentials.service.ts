/**
 * Credentials on EMBEDDED_WALLET accounts (spec §4.1, §4.3–4.5; facts-auth §3):
 * - create: the first credential of an account is created directly; another one needs a signed
 *   retry stamped by an active session of the account (a challenge, then the credential);
 * - challenge: OTP → a fresh `otpEncryptionTargetBundle`; PASSKEY → a WebAuthn challenge bound to
 *   the `clientPublicKey` the session will use;
 * - verify: OTP (two legs, the retry stamped by the TEK), OAUTH (one call), PASSKEY (one call with
 *   the challenge's Request-Id) → an AuthSession; a failed verify counts toward a rate limit;
 * - revoke: signed retry stamped by a session of *another* credential; revoking ends its sessions.
 * What is particular to a credential type lives in otp.service.ts, passkey.service.ts and
 * oidc.service.ts; this file holds the operations and what they share.
 */
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import type { LockOptions } from '../../store/row-lock.ts';
import type { InternalAccountRow, PlatformRow } from '../../store/schema.ts';
import type { AuthCredentialRow } from '../../store/schema-auth.ts';
import type { Unit } from '../../unit.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import {
  deleteCredential,
  findCredential,
  findInternalAccount,
  hasCredential,
  hasCredentialKey,
  insertCredential as insertCredentialRow,
  listAccountCredentials,
  revokeCredentialSessions,
  touchCredential,
} from './auth.repo.ts';
import type {
  AuthMethodResponseWire,
  AuthMethodType,
  AuthMethodWire,
  ChallengeResponseWire,
  CredentialCreate,
  CredentialVerify,
} from './auth.schemas.ts';
import { prepareOauthCredential, verifyOauth } from './oidc.service.ts';
import { issueOtp, prepareOtpCredential, verifyOtp } from './otp.service.ts';
import { markRegistrationChallenge, passkeyChallenge, preparePasskeyCredential, verifyPasskey } from './passkey.service.ts';
import { activityPayload } from './payloads.ts';
import { enforceRateLimit, RATE_LIMITS, recordAttempt } from './rate-limit.ts';
import type { IssuedSession } from './sessions.service.ts';
import { signedStep, type CredentialSigned } from './signed-retry.ts';

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

/**
 * The platform's EMBEDDED_WALLET account `accountId`: 404 when unknown, 400 for another account
 * type. `{ forUpdate: true }` holds it for the unit (the credential operations serialise on it).
 */
export async function walletAccount(u: Unit, accountId: string, opts?: LockOptions): Promise<InternalAccountRow> {
  const row = await findInternalAccount(u.trx, u.platform.id, accountId, opts);
  if (!row) throw errors.notFound('Internal account', accountId);
  if (row.type !== 'EMBEDDED_WALLET') throw errors.invalidField('accountId', 'must be an EMBEDDED_WALLET internal account');
  return row;
}

/** The platform's credential `id`, or a 404. */
async function credential(u: Unit, id: string, opts?: LockOptions): Promise<AuthCredentialRow> {
  const row = await findCredential(u.trx, u.platform.id, id, opts);
  if (!row) throw errors.notFound('Credential', id);
  return row;
}

/** GET /auth/credentials?accountId=. */
export async function listCredentials(ctx: AppContext, platform: PlatformRow, accountId: string): Promise<AuthMethodWire[]> {
  return (await listAccountCredentials(ctx.db, platform.id, accountId)).map(credentialToWire);
}

/** What a new credential will be, checked against the request (before any signed retry). */
export interface NewCredential {
  type: AuthMethodType;
  nickname: string;
  uniqueKey: string;
  webauthn?: {
    id: string;
    publicKey: string;
    counter: number;
    origin: string;
    rpId: string;
    transports: string[] | undefined;
    challenge: string;
  };
  oidcIdentity?: { iss: string; aud: string; sub: string };
}

async function prepareCredential(u: Unit, account: InternalAccountRow, body: CredentialCreate): Promise<NewCredential> {
  switch (body.type) {
    case 'EMAIL_OTP':
    case 'SMS_OTP':
      return prepareOtpCredential(u, account, body.type);
    case 'OAUTH':
      return prepareOauthCredential(u, body.oidcToken);
    case 'PASSKEY':
      return preparePasskeyCredential(u, body);
  }
}

function alreadyExists(type: AuthMethodType) {
  if (type === 'OAUTH') return errors.invalidField('oidcToken', 'this identity (iss, aud, sub) is already registered on this wallet');
  return errors.credentialAlreadyExists(type);
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
      return {
        type: 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS',
        parameters: {
          oauthProviders: [{ oidcToken: body.type === 'OAUTH' ? body.oidcToken : '', providerName: c.oidcIdentity?.iss ?? '' }],
          userId,
        },
      };
    case 'PASSKEY': {
      const a = body.type === 'PASSKEY' ? body : undefined;
      return {
        type: 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2',
        parameters: {
          authenticators: [
            {
              attestation: a?.attestation,
              authenticatorName: c.nickname,
              challenge: a?.challenge,
              transports: a?.attestation.transports ?? [],
            },
          ],
          userId,
        },
      };
    }
  }
}

/** POST /auth/credentials: the credential (with an OTP bundle on the sandbox), or first a challenge when the wallet has one already. */
export async function createCredential(
  u: Unit,
  input: { signature: WalletSignature; body: CredentialCreate },
): Promise<CredentialSigned<AuthMethodResponseWire>> {
  const { body } = input;
  // Locked as revocation does: two concurrent first credentials must not both skip the signature
  // (the second one waits, then finds the first and needs a session's stamp).
  const account = await walletAccount(u, body.accountId, { forUpdate: true });
  const c = await prepareCredential(u, account, body);
  if (await hasCredentialKey(u.trx, account.id, c.uniqueKey)) throw alreadyExists(c.type);
  if (await hasCredential(u.trx, account.id)) {
    const step = await signedStep(u, input.signature, {
      operation: 'credential.add',
      accountId: account.id,
      targetId: account.id,
      content: body,
      signer: { kind: 'account-session' },
      payload: (requestId, nowMs) => activityPayload(u.platform, requestId, nowMs, addPayload(c, body, account.id)),
      ttlMs: u.app.config.wallet.challengeSeconds * 1000,
    });
    if (step.kind === 'challenge') return { kind: 'challenge', challenge: step.challenge, type: c.type };
  }
  const row = await insertCredential(u, account.id, c);
  const wire: AuthMethodResponseWire = credentialToWire(row);
  if ((c.type === 'EMAIL_OTP' || c.type === 'SMS_OTP') && isSandbox(u.platform)) wire.otpEncryptionTargetBundle = await issueOtp(u, row);
  return { kind: 'done', value: wire };
}

async function insertCredential(u: Unit, accountId: string, c: NewCredential): Promise<AuthCredentialRow> {
  const row: AuthCredentialRow = {
    id: u.deps.ids.next('AuthMethod'),
    platform_id: u.platform.id,
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
    created_at: u.at,
    updated_at: u.at,
  };
  // The unique index settles two racing adds of the same key (one wins, the other is a 400).
  if (!(await insertCredentialRow(u.trx, row))) throw alreadyExists(c.type);
  if (c.webauthn) await markRegistrationChallenge(u, accountId, c.webauthn.challenge);
  return row;
}

/** POST /auth/credentials/{id}/challenge: an OTP credential's fresh target bundle, or a passkey's login challenge. */
export async function challengeCredential(
  u: Unit,
  input: { credentialId: string; clientPublicKey: string | undefined },
): Promise<ChallengeResponseWire> {
  // Locked: concurrent challenges on one credential count one after the other.
  const cred = await credential(u, input.credentialId, { forUpdate: true });
  await enforceRateLimit(u, cred.id, RATE_LIMITS.challenge);
  await recordAttempt(u, cred.id, RATE_LIMITS.challenge.kind);
  if (cred.type === 'OAUTH')
    throw errors.invalidInput('OAUTH credentials do not use /challenge: call /verify with a fresh oidcToken and a clientPublicKey');
  if (cred.type === 'EMAIL_OTP' || cred.type === 'SMS_OTP') {
    if (!isSandbox(u.platform)) throw errors.otpUnavailable();
    const bundle = await issueOtp(u, cred);
    await touchCredential(u.trx, cred.id, u.at);
    return { ...credentialToWire({ ...cred, updated_at: u.at }), otpEncryptionTargetBundle: bundle };
  }
  const { clientPublicKey } = input;
  if (!clientPublicKey) throw errors.invalidField('clientPublicKey', 'is required for a PASSKEY challenge');
  const challenge = await passkeyChallenge(u, cred, clientPublicKey);
  return { ...credentialToWire(cred), type: 'PASSKEY' as const, credentialId: cred.webauthn_id ?? '', ...challenge };
}

/**
 * POST /auth/credentials/{id}/verify: a session, or (OTP leg 1) a challenge for the TEK's stamp.
 * A wallet 401 from here counts toward the credential's failed-verify limit: the route records it
 * with `recordFailedVerify` in a unit of its own, since this one rolls back.
 */
export async function verifyCredential(
  u: Unit,
  input: { signature: WalletSignature; credentialId: string; body: CredentialVerify },
): Promise<CredentialSigned<IssuedSession>> {
  const { body } = input;
  const cred = await credential(u, input.credentialId);
  await enforceRateLimit(u, cred.id, RATE_LIMITS.failedVerify);
  if (body.type !== cred.type) throw errors.invalidField('type', `must be ${cred.type}, the type of credential ${cred.id}`);
  switch (body.type) {
    case 'EMAIL_OTP':
    case 'SMS_OTP':
      return verifyOtp(u, input.signature, cred, body.encryptedOtpBundle);
    case 'OAUTH':
      return { kind: 'done', value: await verifyOauth(u, cred, body) };
    case 'PASSKEY':
      return { kind: 'done', value: await verifyPasskey(u, input.signature, cred, body) };
  }
}

/** Counts a failed verify of the platform's credential `credentialId` (nothing when it does not exist). */
export async function recordFailedVerify(u: Unit, credentialId: string): Promise<void> {
  const cred = await findCredential(u.trx, u.platform.id, credentialId);
  if (cred) await recordAttempt(u, cred.id, RATE_LIMITS.failedVerify.kind);
}

/** DELETE /auth/credentials/{id}: a challenge, then — stamped by a session of another credential — the revocation. */
export async function revokeCredential(
  u: Unit,
  input: { signature: WalletSignature; credentialId: string },
): Promise<CredentialSigned<void>> {
  const cred = await credential(u, input.credentialId);
  // Two revokes racing on one wallet must not leave it without a credential: serialise them.
  await findInternalAccount(u.trx, u.platform.id, cred.account_id, { forUpdate: true });
  if (!(await hasCredential(u.trx, cred.account_id, cred.id)))
    throw errors.invalidInput(`Credential ${cred.id} is the only credential of its wallet; add another before revoking it`);
  const step = await signedStep(u, input.signature, {
    operation: 'credential.revoke',
    accountId: cred.account_id,
    targetId: cred.id,
    content: {},
    signer: { kind: 'account-session', excludeCredentialId: cred.id },
    payload: (requestId, nowMs) =>
      activityPayload(u.platform, requestId, nowMs, {
        type: 'ACTIVITY_TYPE_DELETE_AUTHENTICATORS',
        parameters: { authenticatorIds: [cred.id], userId: cred.account_id },
      }),
    ttlMs: u.app.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { kind: 'challenge', challenge: step.challenge, type: cred.type as AuthMethodType };
  await deleteCredential(u.trx, cred.id);
  await revokeCredentialSessions(u.trx, cred.id, u.at);
  return { kind: 'done', value: undefined };
}
