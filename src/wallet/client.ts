/**
 * Client helpers for embedded-wallet flows, so a user with curl (or a TypeScript script) can finish
 * every flow without Turnkey's libraries. node:crypto only; the outputs are the formats those
 * libraries produce and read:
 *   - {@link generateKeyPair}: a P-256 key (compressed public key = client-held session key; uncompressed = legacy/export target);
 *   - {@link encryptOtp}: `encryptedOtpBundle` from an `otpEncryptionTargetBundle` (`encryptOtpCodeToBundle`);
 *   - {@link stamp}: the `Service-Wallet-Signature` value (`ApiKeyStamper.stamp(...).stampHeaderValue`);
 *   - {@link decryptBundle}: opens `encryptedSessionSigningKey` (`decryptCredentialBundle`) or
 *     `encryptedWalletCredentials` (`decryptExportBundle`), returning the plaintext as hex.
 */
import { openCredentialBundle, openExportBundle } from './crypto/bundle.ts';
import { generateP256KeyPair } from './crypto/keys.ts';
import { encryptOtpCodeToBundle } from './crypto/otp.ts';
import { createWalletStamp } from './crypto/stamp.ts';

export interface ClientKeyPair {
  /** 64 hex: keep secret. */
  privateKey: string;
  /** Compressed (66 hex) or uncompressed (130 hex) SEC1. */
  publicKey: string;
}

/** A fresh P-256 key pair; `compressed` selects the public key encoding (default uncompressed). */
export function generateKeyPair(opts: { compressed?: boolean } = {}): ClientKeyPair {
  const k = generateP256KeyPair();
  return { privateKey: k.privateKeyHex, publicKey: opts.compressed ? k.publicKeyHex : k.publicKeyUncompressedHex };
}

/**
 * Encrypts `{otp_code: code, public_key: tekPublicKey}` to the target key of `targetBundle` and
 * returns the `encryptedOtpBundle` string. Pass `expectedSignerPublicKey` (the server's published
 * `enclaveQuorumPublic`) to check the bundle's signature first.
 */
export function encryptOtp(
  targetBundle: string,
  tekPublicKey: string,
  code: string,
  opts: { expectedSignerPublicKey?: string } = {},
): string {
  return encryptOtpCodeToBundle(
    code,
    targetBundle,
    tekPublicKey,
    opts.expectedSignerPublicKey === undefined ? {} : { expectedSignerPublicKeyHex: opts.expectedSignerPublicKey },
  );
}

/**
 * The stamp header value over the exact `payload` string. The stamp carries `publicKey` when given
 * (verbatim, as ApiKeyStamper does) or else the compressed public key of `privateKey`.
 */
export function stamp(privateKey: string, payload: string, publicKey?: string): string {
  return createWalletStamp(privateKey, payload, publicKey);
}

/**
 * Decrypts a bundle sealed to `privateKey` and returns the plaintext as lowercase hex: a base58check
 * credential bundle (the session signing key) or a JSON export bundle (its plaintext is the wallet
 * mnemonic as UTF-8; use {@link decryptExportBundleText} for the text).
 */
export function decryptBundle(bundle: string, privateKey: string): string {
  const trimmed = bundle.trim();
  const plaintext = trimmed.startsWith('{') ? openExportBundle(trimmed, privateKey) : openCredentialBundle(trimmed, privateKey);
  return plaintext.toString('hex');
}

/** The UTF-8 plaintext of an export bundle (`encryptedWalletCredentials`), e.g. the mnemonic. */
export function decryptExportBundleText(bundle: string, privateKey: string, opts: { expectedSignerPublicKey?: string } = {}): string {
  return openExportBundle(
    bundle,
    privateKey,
    opts.expectedSignerPublicKey === undefined ? {} : { expectedSignerPublicKeyHex: opts.expectedSignerPublicKey },
  ).toString('utf8');
}
