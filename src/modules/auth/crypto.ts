/**
 * What the auth module needs from the wallet crypto library (src/wallet/crypto), in the module's
 * terms: one place that maps library results onto the service's decisions.
 */
import { sign } from 'node:crypto';
import { sealCredentialBundle, sealExportBundle as sealExport } from '../../wallet/crypto/bundle.ts';
import { compressPublicKeyHex, generateP256KeyPair, isCompressedPublicKeyHex } from '../../wallet/crypto/keys.ts';
import { createOtpEncryptionTargetBundle, openEncryptedOtpBundle } from '../../wallet/crypto/otp.ts';
import { verifyWalletStamp as verifyStamp, type StampVerification } from '../../wallet/crypto/stamp.ts';
import type { WalletKey } from './wallet-keys.ts';

export { checkOidcToken, verifyPasskeyAssertion, verifyPasskeyRegistration } from './crypto-identity.ts';

/** Verifies a stamp header over `payload`; on success `publicKey` is compressed lowercase hex. */
export function verifyWalletStamp(stamp: string, payload: string): StampVerification {
  return verifyStamp(stamp, payload);
}

export function isCompressedPublicKey(hex: string): boolean {
  return isCompressedPublicKeyHex(hex);
}

export function compressPublicKey(hex: string): string {
  return compressPublicKeyHex(hex);
}

/** A fresh OTP target: the bundle for the client and the private key to keep with the issuance. */
export function newOtpTarget(signer: WalletKey): { bundle: string; targetPrivateKeyHex: string } {
  const t = createOtpEncryptionTargetBundle(signer);
  return { bundle: t.otpEncryptionTargetBundle, targetPrivateKeyHex: t.targetPrivateKeyHex };
}

export function openOtpBundle(
  bundle: string,
  targetPrivateKeyHex: string,
): { ok: true; otpCode: string; publicKey: string } | { ok: false; reason: string } {
  const r = openEncryptedOtpBundle(bundle, targetPrivateKeyHex);
  return r.ok ? { ok: true, otpCode: r.otpCode, publicKey: r.publicKey } : { ok: false, reason: r.reason };
}

export function newSessionKey(): { privateKeyHex: string; publicKeyCompressed: string } {
  const k = generateP256KeyPair();
  return { privateKeyHex: k.privateKeyHex, publicKeyCompressed: k.publicKeyHex };
}

/** The legacy `encryptedSessionSigningKey`: the session scalar sealed to the client's uncompressed key. */
export function sealSessionKey(privateKeyHex: string, clientPublicKey: string): string {
  return sealCredentialBundle(clientPublicKey, Buffer.from(privateKeyHex, 'hex'));
}

/** `encryptedWalletCredentials`: unsigned, as in the live sandbox (empty dataSignature/enclaveQuorumPublic). */
export function sealExportBundle(mnemonic: string, clientPublicKey: string, organizationId: string): string {
  return sealExport(clientPublicKey, mnemonic, { organizationId, signer: null });
}

/** The OTP verification token: a compact ES256 JWT over `claims`, signed with the wallet key. */
export function signVerificationToken(key: WalletKey, claims: Record<string, unknown>): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${enc({ alg: 'ES256', kid: 'corridor-wallet', typ: 'JWT' })}.${enc(claims)}`;
  const sig = sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${sig.toString('base64url')}`;
}
