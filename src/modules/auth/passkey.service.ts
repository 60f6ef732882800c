/**
 * PASSKEY credentials (spec §4.5; facts-auth §3): registration (a WebAuthn attestation over a
 * registration challenge the platform's backend issued, single use per platform), the login
 * challenge (bound to the `clientPublicKey` the session will use), and the login itself (an
 * assertion over that challenge, with the challenge's Request-Id).
 */
import { createHash } from 'node:crypto';
import { errors } from '../../http/errors.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import { iso } from '../../lib/time.ts';
import type { AuthCredentialRow } from '../../store/schema-auth.ts';
import type { Unit } from '../../unit.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { insertRequest, insertRequestOnce, requestExists, setPasskeyCounter } from './auth.repo.ts';
import type { CredentialCreate, CredentialVerify } from './auth.schemas.ts';
import type { NewCredential } from './credentials.service.ts';
import { verifyPasskeyAssertion, verifyPasskeyRegistration } from './crypto.ts';
import { createSession, type IssuedSession } from './sessions.service.ts';
import { consume, pendingRequest, requestData, sealRequestData } from './signed-retry.ts';

/** The legacy passkey assertion signature the sandbox still accepts (spec §4.12 item 3). */
export const SANDBOX_PASSKEY_SIGNATURE = 'sandbox-valid-passkey-signature';

/** What a passkey login challenge hands the client: the WebAuthn challenge and the Request-Id to echo on /verify. */
export interface PasskeyLoginChallenge {
  challenge: string;
  requestId: string;
  expiresAt: string;
}

type PasskeyCreate = Extract<CredentialCreate, { type: 'PASSKEY' }>;
type PasskeyVerify = Extract<CredentialVerify, { type: 'PASSKEY' }>;

/** The row that marks a platform's registration challenge used; its primary key makes the use single. */
function registrationChallengeId(platformId: string, challenge: string): string {
  return `PasskeyRegistration:${createHash('sha256').update(`${platformId}\n${challenge}`).digest('hex')}`;
}

/** A new PASSKEY credential from a verified attestation over an unused registration challenge. */
export async function preparePasskeyCredential(u: Unit, body: PasskeyCreate): Promise<NewCredential> {
  const nickname = body.nickname.trim();
  if (!/^[\p{L}\p{N} ._\-'()]{1,100}$/u.test(nickname)) {
    throw errors.invalidField('nickname', "must be 1-100 letters, digits, spaces or . _ - ' ( ) after trimming");
  }
  if (await requestExists(u.trx, registrationChallengeId(u.platform.id, body.challenge)))
    throw errors.invalidField('challenge', 'this registration challenge was already used');
  const reg = await verifyPasskeyRegistration({
    attestation: body.attestation,
    expectedChallenge: body.challenge,
    rpIds: u.app.config.wallet.rpIds,
    origins: u.app.config.wallet.origins,
  });
  if (!reg.ok) throw errors.invalidField(reg.field, reg.reason);
  return {
    type: 'PASSKEY',
    nickname,
    uniqueKey: `PASSKEY:${reg.credentialId}`,
    webauthn: {
      id: reg.credentialId,
      publicKey: reg.publicKey,
      counter: reg.counter,
      origin: reg.origin,
      rpId: reg.rpId,
      transports: body.attestation.transports,
      challenge: body.challenge,
    },
  };
}

/**
 * Marks the registration challenge used, with the credential it registered: two racing
 * registrations cannot both insert this row (the second is a 400, its unit rolls back).
 */
export async function markRegistrationChallenge(u: Unit, accountId: string, challenge: string): Promise<void> {
  const id = registrationChallengeId(u.platform.id, challenge);
  const marked = await insertRequestOnce(u.trx, {
    id,
    platform_id: u.platform.id,
    account_id: accountId,
    operation: 'passkey.register',
    target_id: id,
    body_hash: '',
    payload_to_sign: '',
    signer: '{}',
    data: null,
    created_at: u.at,
    expires_at: u.at,
    consumed_at: u.at,
  });
  if (!marked) throw errors.invalidField('challenge', 'this registration challenge was already used');
}

/** A login challenge for `cred`: the hex SHA-256 of the session-creation request it authorises. */
export async function passkeyChallenge(u: Unit, cred: AuthCredentialRow, clientPublicKey: string): Promise<PasskeyLoginChallenge> {
  const requestId = u.deps.ids.next('Request');
  const sessionRequest = {
    clientPublicKey,
    credentialId: cred.id,
    organizationId: u.platform.id,
    requestId,
    timestampMs: String(u.nowMs),
  };
  const challenge = createHash('sha256').update(JSON.stringify(sessionRequest)).digest('hex');
  const expiresAt = iso(u.nowMs + u.app.config.wallet.challengeSeconds * 1000);
  await insertRequest(u.trx, {
    id: requestId,
    platform_id: u.platform.id,
    account_id: cred.account_id,
    operation: 'passkey.session',
    target_id: cred.id,
    body_hash: '',
    payload_to_sign: challenge,
    signer: '{}',
    data: sealRequestData(u, requestId, { clientPublicKey }),
    created_at: u.at,
    expires_at: expiresAt,
    consumed_at: null,
  });
  return { challenge, requestId, expiresAt };
}

/** A passkey login: the assertion over the challenge `Request-Id` names, then a session for its clientPublicKey. */
export async function verifyPasskey(
  u: Unit,
  signature: WalletSignature,
  cred: AuthCredentialRow,
  body: PasskeyVerify,
): Promise<IssuedSession> {
  const { requestId } = signature;
  if (requestId === undefined)
    throw errors.walletAuthFailed('REQUEST_ID_MISSING', 'Request-Id header is missing; echo the requestId of the /challenge response');
  const pending = await pendingRequest(u, requestId, 'passkey.session', cred.id);
  const { clientPublicKey } = (requestData(u, pending) ?? {}) as { clientPublicKey: string };
  if (!(isSandbox(u.platform) && body.assertion.signature === SANDBOX_PASSKEY_SIGNATURE)) {
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
    if (!result.ok) throw errors.walletAuthFailed('UNAUTHORIZED', result.reason);
    await setPasskeyCounter(u.trx, cred.id, result.newCounter, u.at);
  }
  await consume(u, pending.id);
  return createSession(u, cred, { clientPublicKey });
}
