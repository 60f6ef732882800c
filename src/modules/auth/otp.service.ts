/**
 * EMAIL_OTP and SMS_OTP credentials (spec §4.3; facts-auth §3): the contact a new credential
 * names, OTP issuance (a fresh HPKE target per issuance, its private key sealed with the pending
 * `otp.issue` request), and the two-leg login — leg 1 opens the encrypted code and answers a
 * challenge (a verification token binding the client's TEK), leg 2 is the retry stamped by that
 * TEK and yields the session.
 *
 * Corridor delivers no codes: OTP login is a sandbox feature with the fixed code 000000.
 */
import { errors } from '../../http/errors.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import { iso } from '../../lib/time.ts';
import type { InternalAccountRow } from '../../store/schema.ts';
import type { AuthCredentialRow, AuthRequestRow } from '../../store/schema-auth.ts';
import type { Unit } from '../../unit.ts';
import { settingsOf, isSandbox } from '../platforms/platform-settings.ts';
import { consumeOpenRequests, findCustomerData, insertRequest, latestOpenRequest } from './auth.repo.ts';
import type { AuthMethodType } from './auth.schemas.ts';
import type { NewCredential } from './credentials.service.ts';
import { newOtpTarget, openOtpBundle, signVerificationToken } from './crypto.ts';
import { createSession, type IssuedSession } from './sessions.service.ts';
import { consume, issue, requestData, sealRequestData, verifyRetry, type CredentialSigned, type Signer } from './signed-retry.ts';
import { walletKey } from './wallet-keys.ts';

/** The sandbox's fixed one-time password (spec §4.12 item 1). */
export const SANDBOX_OTP = '000000';
const DEFAULT_OTP_TTL_SECONDS = 300;

/** A new EMAIL_OTP / SMS_OTP credential: named after the wallet customer's email or phone number, which it needs. */
export async function prepareOtpCredential(u: Unit, account: InternalAccountRow, type: 'EMAIL_OTP' | 'SMS_OTP'): Promise<NewCredential> {
  const contact = await customerContact(u, account.customer_id);
  const value = type === 'EMAIL_OTP' ? contact.email : contact.phoneNumber;
  if (!value) {
    throw errors.invalidField(
      'type',
      `the wallet's customer has no ${type === 'EMAIL_OTP' ? 'email' : 'phoneNumber'}; set it with PATCH /customers/{customerId} first`,
    );
  }
  return { type, nickname: value, uniqueKey: type };
}

async function customerContact(u: Unit, customerId: string | null): Promise<{ email?: string; phoneNumber?: string }> {
  if (!customerId) return {};
  const data = await findCustomerData(u.trx, u.platform.id, customerId);
  return data ? (JSON.parse(data) as { email?: string; phoneNumber?: string }) : {};
}

/**
 * Starts an OTP login: a fresh target key whose bundle the client encrypts the code to. Earlier
 * unused OTPs of the credential stop working (one bundle per issuance).
 */
export async function issueOtp(u: Unit, cred: AuthCredentialRow): Promise<string> {
  await consumeOpenRequests(u.trx, cred.id, 'otp.issue', u.at);
  const target = newOtpTarget(await walletKey(u));
  const ttlSeconds = settingsOf(u.platform).embeddedWalletConfig?.expirationSeconds ?? DEFAULT_OTP_TTL_SECONDS;
  const id = u.deps.ids.next('Request');
  await insertRequest(u.trx, {
    id,
    platform_id: u.platform.id,
    account_id: cred.account_id,
    operation: 'otp.issue',
    target_id: cred.id,
    body_hash: '',
    payload_to_sign: '',
    signer: '{}',
    data: sealRequestData(u, id, { targetPrivateKey: target.targetPrivateKeyHex }),
    created_at: u.at,
    expires_at: iso(u.nowMs + ttlSeconds * 1000),
    consumed_at: null,
  });
  return target.bundle;
}

/** The TEK public key an `otp.verify` pending request is bound to (its signer, set by leg 1). */
function boundTek(request: Pick<AuthRequestRow, 'signer'>): string {
  const signer = JSON.parse(request.signer) as Signer;
  if (signer.kind !== 'key') throw new Error('an otp.verify request is bound to a key');
  return signer.publicKey;
}

/** Verify of an OTP credential: leg 1 (no signature) answers a challenge, leg 2 (the TEK's stamp) a session. */
export async function verifyOtp(
  u: Unit,
  signature: WalletSignature,
  cred: AuthCredentialRow,
  bundle: string,
): Promise<CredentialSigned<IssuedSession>> {
  if (signature.stamp !== undefined || signature.requestId !== undefined) {
    // Leg 2: the retry stamped by the TEK whose public key the first leg bound — or, on a sandbox
    // platform only, the legacy `sandbox-valid-signature` (spec §4.12 item 5), checked by the engine.
    const { signer, request } = await verifyRetry(u, signature, {
      operation: 'otp.verify',
      targetId: cred.id,
      content: { encryptedOtpBundle: bundle },
    });
    // An OTP session's key is the TEK. The sandbox stamp carries no key: the session then takes the
    // TEK the first leg decrypted from the bundle and bound to this request.
    const tekPublicKey = signer.publicKey ?? boundTek(request);
    return { kind: 'done', value: await createSession(u, cred, { tekPublicKey }) };
  }
  // Leg 1: decrypt the bundle with the pending OTP's target key and check the code. The fixed code
  // is a sandbox rule: outside the sandbox no code was ever delivered, so no OTP login can succeed
  // (else anyone holding the platform token could open a wallet session with 000000).
  if (!isSandbox(u.platform)) throw errors.otpUnavailable();
  const otp = await latestOpenRequest(u.trx, cred.id, 'otp.issue', u.at);
  if (!otp) throw errors.walletAuthFailed('UNAUTHORIZED', 'No pending OTP for this credential; call /challenge first');
  const { targetPrivateKey } = (requestData(u, otp) ?? {}) as { targetPrivateKey: string };
  const opened = openOtpBundle(bundle, targetPrivateKey);
  if (!opened.ok) throw errors.walletAuthFailed('UNAUTHORIZED', opened.reason);
  if (opened.otpCode !== SANDBOX_OTP) throw errors.walletAuthFailed('UNAUTHORIZED', 'Invalid OTP code');
  await consume(u, otp.id);
  const key = await walletKey(u);
  const ttlMs = u.app.config.wallet.challengeSeconds * 1000;
  const challenge = await issue(u, {
    operation: 'otp.verify',
    accountId: cred.account_id,
    targetId: cred.id,
    content: { encryptedOtpBundle: bundle },
    signer: { kind: 'key', publicKey: opened.publicKey },
    // The verification token: a compact JWT binding the TEK, signed with the platform's wallet key.
    payload: (requestId, now) =>
      signVerificationToken(key, {
        sub: cred.id,
        public_key: opened.publicKey,
        jti: requestId,
        iat: Math.floor(now / 1000),
        exp: Math.floor((now + ttlMs) / 1000),
      }),
    ttlMs,
  });
  return { kind: 'challenge', challenge, type: cred.type as AuthMethodType };
}
