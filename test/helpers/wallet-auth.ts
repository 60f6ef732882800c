/**
 * Embedded-wallet test client: the real client libraries (@turnkey/api-key-stamper for stamps,
 * @turnkey/crypto for key pairs, OTP bundles and sealed session keys) driving the HTTP API.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptCredentialBundle, encryptOtpCodeToBundle, generateP256KeyPair, getPublicKey } from '@turnkey/crypto';
import { expect } from 'vitest';
import type { Client, Res } from './http.ts';
import type { PlatformHandle } from './server.ts';
import { SoftwareAuthenticator } from './webauthn.ts';
import { testRng } from './random.ts';

export interface KeyPair {
  privateKey: string;
  /** Compressed SEC1 hex. */
  publicKey: string;
  publicKeyUncompressed: string;
}

export function keyPair(): KeyPair {
  return generateP256KeyPair();
}

/** The `Service-Wallet-Signature` value over `payload`, made by @turnkey/api-key-stamper. */
export async function stamp(key: KeyPair, payload: string): Promise<string> {
  const s = new ApiKeyStamper({ apiPublicKey: key.publicKey, apiPrivateKey: key.privateKey });
  return (await s.stamp(payload)).stampHeaderValue;
}

export function signed(stampValue: string, requestId?: string): { headers: Record<string, string> } {
  const headers: Record<string, string> = { 'service-wallet-signature': stampValue };
  if (requestId !== undefined) headers['request-id'] = requestId;
  return { headers };
}

/** `encryptedOtpBundle` for `code`, made by @turnkey/crypto against the server's (pinned) signer key. */
export async function encryptOtp(targetBundle: string, code: string, tek: KeyPair): Promise<string> {
  const signer = (JSON.parse(targetBundle) as { enclaveQuorumPublic: string }).enclaveQuorumPublic;
  return encryptOtpCodeToBundle(code, targetBundle, tek.publicKey, signer);
}

export function openSessionKey(bundle: string, client: KeyPair): string {
  return decryptCredentialBundle(bundle, client.privateKey);
}

/** The key pair of a P-256 private scalar (hex), e.g. a session key opened with {@link openSessionKey}. */
export function keyFromPrivate(privateKey: string): KeyPair {
  const compressed = getPublicKey(privateKey, true);
  return {
    privateKey,
    publicKey: Buffer.from(compressed).toString('hex'),
    publicKeyUncompressed: Buffer.from(getPublicKey(privateKey, false)).toString('hex'),
  };
}

/** Moves the platform's sandbox clock forward by `seconds`. */
export async function advanceClock(api: Client, seconds: number): Promise<void> {
  const res = await api.post('/sandbox/clock/advance', { seconds });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

let seq = 0;

/** A platform supporting USDB and a customer with email and phone: their EMBEDDED_WALLET account id. */
export async function walletSetup(p: PlatformHandle): Promise<{ accountId: string; customerId: string }> {
  const cfg = await p.api.patch('/config', {
    supportedCurrencies: [
      {
        currencyCode: 'USD',
        minAmount: 1,
        maxAmount: 100_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
      },
      {
        currencyCode: 'USDB',
        minAmount: 1,
        maxAmount: 100_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
      },
    ],
  });
  expect(cfg.status, JSON.stringify(cfg.body)).toBe(200);
  return newWallet(p.api);
}

export async function newWallet(api: Client): Promise<{ accountId: string; customerId: string }> {
  seq += 1;
  const c = await api.post('/customers', {
    customerType: 'INDIVIDUAL',
    platformCustomerId: `wallet-${Date.now()}-${seq}`,
    email: `wallet${seq}@example.com`,
    phoneNumber: '+14155550100',
    fullName: 'Wallet Holder',
    birthDate: '1990-01-15',
    nationality: 'US',
    address: { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
    currencies: ['USD', 'USDB'],
  });
  expect(c.status, JSON.stringify(c.body)).toBe(201);
  const accounts = await api.get('/customers/internal-accounts', { query: { customerId: c.body.id } });
  const wallet = (accounts.body.data as { id: string; type: string }[]).find((a) => a.type === 'EMBEDDED_WALLET');
  expect(wallet).toBeDefined();
  return { accountId: wallet!.id, customerId: c.body.id };
}

export interface Session {
  id: string;
  key: KeyPair;
  credentialId: string;
}

/** Registers the first EMAIL_OTP credential of a wallet (201 directly); returns it and its first target bundle. */
export async function addFirstEmailOtp(api: Client, accountId: string): Promise<{ id: string; bundle: string }> {
  const r = await api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { id: r.body.id, bundle: r.body.otpEncryptionTargetBundle };
}

/** The full EMAIL_OTP / SMS_OTP login: challenge, encrypt 000000, 202, stamp with the TEK, 200. */
export async function otpLogin(api: Client, credentialId: string, type: 'EMAIL_OTP' | 'SMS_OTP' = 'EMAIL_OTP'): Promise<Session> {
  const ch = await api.post(`/auth/credentials/${credentialId}/challenge`, {});
  expect(ch.status, JSON.stringify(ch.body)).toBe(200);
  const tek = keyPair();
  const body = { type, encryptedOtpBundle: await encryptOtp(ch.body.otpEncryptionTargetBundle, '000000', tek) };
  const leg1 = await api.post(`/auth/credentials/${credentialId}/verify`, body);
  expect(leg1.status, JSON.stringify(leg1.body)).toBe(202);
  const leg2 = await api.post(
    `/auth/credentials/${credentialId}/verify`,
    body,
    signed(await stamp(tek, leg1.body.payloadToSign), leg1.body.requestId),
  );
  expect(leg2.status, JSON.stringify(leg2.body)).toBe(200);
  return { id: leg2.body.id, key: tek, credentialId };
}

/** Runs a signed operation: the unsigned call must answer 202; the retry stamped by `key` is returned. */
export async function signedCall(
  call: (o?: { headers: Record<string, string> }) => Promise<Res>,
  key: KeyPair,
): Promise<{ challenge: Res; result: Res }> {
  const challenge = await call();
  expect(challenge.status, JSON.stringify(challenge.body)).toBe(202);
  const result = await call(signed(await stamp(key, challenge.body.payloadToSign), challenge.body.requestId));
  return { challenge, result };
}

/** A new wallet with its first EMAIL_OTP credential and one OTP session. */
export async function walletWithSession(
  api: Client,
): Promise<{ accountId: string; customerId: string; credentialId: string; session: Session }> {
  const wallet = await newWallet(api);
  const cred = await addFirstEmailOtp(api, wallet.accountId);
  return { ...wallet, credentialId: cred.id, session: await otpLogin(api, cred.id) };
}

/**
 * Registers a PASSKEY as the wallet's first credential (a software authenticator) and logs in with
 * it, the session bound to `client` (compressed: client-held key). Works on production platforms,
 * where OTP login is not available.
 */
export async function passkeyLogin(api: Client, accountId: string, client: KeyPair = keyPair()): Promise<Session> {
  const { authenticator, credentialId } = await registerPasskey(api, accountId);
  const ch = await api.post(`/auth/credentials/${credentialId}/challenge`, { clientPublicKey: client.publicKey });
  expect(ch.status, JSON.stringify(ch.body)).toBe(200);
  const verify = await api.post(
    `/auth/credentials/${credentialId}/verify`,
    { type: 'PASSKEY', assertion: authenticator.assert(ch.body.challenge) },
    { headers: { 'request-id': ch.body.requestId } },
  );
  expect(verify.status, JSON.stringify(verify.body)).toBe(200);
  return { id: verify.body.id, key: client, credentialId };
}

/** Registers a PASSKEY (a software authenticator) as a wallet credential. */
export async function registerPasskey(
  api: Client,
  accountId: string,
): Promise<{ authenticator: SoftwareAuthenticator; credentialId: string }> {
  const authenticator = new SoftwareAuthenticator();
  const challenge = Buffer.from(`registration-${testRng().hex(16)}`).toString('base64url');
  const reg = await api.post('/auth/credentials', {
    type: 'PASSKEY',
    accountId,
    nickname: 'Test passkey',
    challenge,
    attestation: authenticator.register(challenge),
  });
  expect(reg.status, JSON.stringify(reg.body)).toBe(201);
  return { authenticator, credentialId: reg.body.id as string };
}

/** The platform's sandbox clock, in whole seconds (OIDC `iat`/`exp` are checked against it). */
export async function platformNowSeconds(api: Client): Promise<number> {
  const res = await api.get('/sandbox/clock');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return Math.floor(Date.parse(res.body.now) / 1000);
}

/**
 * A JWT-shaped OIDC ID token as the sandbox takes it: base64url header `{"alg":"RS256","typ":"JWT"}`,
 * base64url claims and a dummy signature segment (crypto-formats.md §6).
 */
export function oidcToken(claims: Record<string, unknown>, header: unknown = { alg: 'RS256', typ: 'JWT' }): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  return `${enc(header)}.${enc(claims)}.sandbox-signature`;
}

/** The `nonce` an OAUTH verify token carries for `clientPublicKey`: lowercase hex SHA-256 of its exact text. */
export function oidcNonce(clientPublicKey: string): string {
  return createHash('sha256').update(clientPublicKey, 'utf8').digest('hex');
}

/** A fresh base64url WebAuthn registration challenge, as a platform backend would mint it. */
export function registrationChallenge(): string {
  return randomBytes(32).toString('base64url');
}
