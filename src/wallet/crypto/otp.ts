/**
 * EMAIL_OTP / SMS_OTP bundles (crypto-formats.md §3).
 *
 * Server → client: `otpEncryptionTargetBundle`, a signed bundle whose `data` carries a fresh HPKE
 * target key (`{"targetPublic":"04…"}`); the server keeps the target private key for this issuance.
 * Client → server: `encryptedOtpBundle`, the JSON string `{"encappedPublic":"04…","ciphertext":"<hex ct‖tag>"}`
 * (`@turnkey/crypto` `formatHpkeBuf(hpkeEncrypt(…))`), whose plaintext is
 * `{"otp_code":"…","public_key":"<TEK hex>"}`.
 */
import { timingSafeEqual } from 'node:crypto';
import { hpkeOpen, HpkeOpenError, hpkeSeal } from './hpke.ts';
import { generateP256KeyPair, InvalidKeyError, normalizePublicKeyHex, parsePublicKey, type P256KeyPair } from './keys.ts';
import { createSignedBundle, parseSignedBundle, verifySignedBundle, type BundleSigner } from './signed-bundle.ts';

/** Longest `encryptedOtpBundle` accepted (a real one is about 570 characters). */
export const MAX_ENCRYPTED_OTP_BUNDLE_LENGTH = 8192;
/** Longest `otp_code` accepted from a decrypted bundle. */
const MAX_OTP_CODE_LENGTH = 64;

export interface OtpTarget {
  /** The `otpEncryptionTargetBundle` value (a JSON string). */
  otpEncryptionTargetBundle: string;
  /** Keep server-side with the issuance; it opens the client's `encryptedOtpBundle`. Never log it. */
  targetPrivateKeyHex: string;
  /** Uncompressed `targetPublic` carried in the bundle. */
  targetPublicKeyHex: string;
}

/**
 * A fresh target bundle signed by `signer`. `extraData` adds keys to the signed `data` object
 * (Turnkey bundles carry `organizationId`/`userId`; clients ignore extra keys). `targetKeyPair`
 * exists for tests; leave it out so each issuance gets a fresh key.
 */
export function createOtpEncryptionTargetBundle(
  signer: BundleSigner,
  opts: { extraData?: Record<string, string>; targetKeyPair?: P256KeyPair } = {},
): OtpTarget {
  const target = opts.targetKeyPair ?? generateP256KeyPair();
  // targetPublic must be uncompressed: clients feed these exact bytes into the KEM context and AAD.
  const bundle = createSignedBundle({ targetPublic: target.publicKeyUncompressedHex, ...opts.extraData }, signer);
  return {
    otpEncryptionTargetBundle: bundle,
    targetPrivateKeyHex: target.privateKeyHex,
    targetPublicKeyHex: target.publicKeyUncompressedHex,
  };
}

export type OtpBundleFailureCode =
  /** Not the expected structure (JSON, fields, hex, key encodings, plaintext shape). */
  | 'OTP_BUNDLE_MALFORMED'
  /** Well formed but does not decrypt under this issuance's target key: tampered, or sealed to another target. */
  | 'OTP_BUNDLE_INVALID';

export interface OtpBundleFailure {
  ok: false;
  code: OtpBundleFailureCode;
  reason: string;
}

export interface OpenedOtpBundle {
  ok: true;
  /** The decrypted code; compare with {@link otpCodeMatches}. */
  otpCode: string;
  /** The client's TEK public key, normalised (compressed lowercase hex): the session key of this login. */
  publicKey: string;
  /** `public_key` exactly as the client sent it. */
  publicKeyAsSent: string;
}

function malformed(reason: string): OtpBundleFailure {
  return { ok: false, code: 'OTP_BUNDLE_MALFORMED', reason };
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;

/**
 * The `{encappedPublic, ciphertext}` object of an `encryptedOtpBundle`. The value is JSON inside a
 * JSON string, and clients have double-encoded it, so an object, a JSON string, or a JSON string of
 * a JSON string are all accepted.
 */
function unwrapEncryptedBundle(input: unknown): Record<string, unknown> | string {
  let value = input;
  for (let depth = 0; depth < 3 && typeof value === 'string'; depth++) {
    if (value.length > MAX_ENCRYPTED_OTP_BUNDLE_LENGTH)
      return `the encrypted OTP bundle is longer than ${MAX_ENCRYPTED_OTP_BUNDLE_LENGTH} characters`;
    try {
      value = JSON.parse(value);
    } catch {
      return 'the encrypted OTP bundle is not JSON';
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'the encrypted OTP bundle is not a JSON object';
  return value as Record<string, unknown>;
}

/**
 * Decrypts an `encryptedOtpBundle` with the target private key of the issuance it was built
 * against, returning the code and the client's TEK public key, or a typed failure.
 */
export function openEncryptedOtpBundle(encryptedOtpBundle: unknown, targetPrivateKeyHex: string): OpenedOtpBundle | OtpBundleFailure {
  const outer = unwrapEncryptedBundle(encryptedOtpBundle);
  if (typeof outer === 'string') return malformed(outer);
  const { encappedPublic, ciphertext } = outer;
  if (typeof encappedPublic !== 'string') return malformed('the encrypted OTP bundle has no string "encappedPublic"');
  if (typeof ciphertext !== 'string') return malformed('the encrypted OTP bundle has no string "ciphertext"');
  try {
    parsePublicKey(encappedPublic);
  } catch (err) {
    return malformed(`"encappedPublic" is invalid: ${err instanceof InvalidKeyError ? err.message : 'not a P-256 key'}`);
  }
  if (!HEX.test(ciphertext) || ciphertext.length < 34) return malformed('"ciphertext" is not hex of at least the 16-byte tag');

  let plaintext: Buffer;
  try {
    plaintext = hpkeOpen(targetPrivateKeyHex, encappedPublic, Buffer.from(ciphertext, 'hex'));
  } catch (err) {
    if (err instanceof HpkeOpenError)
      return {
        ok: false,
        code: 'OTP_BUNDLE_INVALID',
        reason: 'the encrypted OTP bundle does not decrypt (tampered, or built for another challenge)',
      };
    throw err;
  }

  let inner: unknown;
  try {
    inner = JSON.parse(plaintext.toString('utf8'));
  } catch {
    return malformed('the decrypted OTP bundle is not JSON');
  }
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner))
    return malformed('the decrypted OTP bundle is not a JSON object');
  const { otp_code: otpCode, public_key: publicKey } = inner as Record<string, unknown>;
  if (typeof otpCode !== 'string' || otpCode.length === 0 || otpCode.length > MAX_OTP_CODE_LENGTH) {
    return malformed('the decrypted OTP bundle has no "otp_code" string');
  }
  if (typeof publicKey !== 'string') return malformed('the decrypted OTP bundle has no "public_key" string');
  let normalized: string;
  try {
    normalized = normalizePublicKeyHex(publicKey);
  } catch (err) {
    return malformed(`the decrypted "public_key" is invalid: ${err instanceof InvalidKeyError ? err.message : 'not a P-256 key'}`);
  }
  return { ok: true, otpCode, publicKey: normalized, publicKeyAsSent: publicKey };
}

/** Constant-time comparison of a submitted code with the expected one. */
export function otpCodeMatches(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'utf8');
  const b = Buffer.from(expected, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Client side: encrypts `{otp_code, public_key}` to the bundle's `targetPublic` and returns the
 * `encryptedOtpBundle` string (same format as `@turnkey/crypto` `encryptOtpCodeToBundle`). When
 * `expectedSignerPublicKeyHex` is given the bundle's signature must verify under that key (pin the
 * server's published key); otherwise, like the reference CLI, nothing is verified.
 */
export function encryptOtpCodeToBundle(
  otpCode: string,
  otpEncryptionTargetBundle: string,
  tekPublicKeyHex: string,
  opts: { expectedSignerPublicKeyHex?: string; ephemeralPrivateKeyHex?: string } = {},
): string {
  const { bundle, data } = parseSignedBundle(otpEncryptionTargetBundle);
  if (opts.expectedSignerPublicKeyHex !== undefined && !verifySignedBundle(bundle, opts.expectedSignerPublicKeyHex)) {
    throw new Error('the OTP target bundle signature does not verify under the expected signer key');
  }
  if (typeof data.targetPublic !== 'string') throw new Error('the OTP target bundle has no "targetPublic"');
  const plaintext = Buffer.from(JSON.stringify({ otp_code: otpCode, public_key: tekPublicKeyHex }), 'utf8');
  const sealed = hpkeSeal(
    data.targetPublic,
    plaintext,
    opts.ephemeralPrivateKeyHex === undefined ? {} : { ephemeralPrivateKeyHex: opts.ephemeralPrivateKeyHex },
  );
  return JSON.stringify({ encappedPublic: sealed.enc.toString('hex'), ciphertext: sealed.ciphertext.toString('hex') });
}
