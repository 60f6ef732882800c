/**
 * The wallet stamp (`Service-Wallet-Signature`, alias `Grid-Wallet-Signature`; Turnkey's `X-Stamp`):
 * base64url (no padding) of JSON `{"publicKey": SEC1 hex, "scheme": "SIGNATURE_SCHEME_TK_API_P256",
 * "signature": DER hex}`, the signature being ECDSA P-256 / SHA-256 over the UTF-8 bytes of the exact
 * `payloadToSign` string (crypto-formats.md §2).
 *
 * Verification distinguishes a header that cannot be parsed (`WALLET_SIGNATURE_MALFORMED`) from a
 * well-formed stamp whose signature does not verify (`WALLET_SIGNATURE_INVALID`). High-S signatures
 * are accepted: node's and browsers' signers emit them about half the time.
 */
import { sign, verify } from 'node:crypto';
import { parseDerSignature } from './der.ts';
import { InvalidKeyError, normalizePublicKeyHex, privateKeyObject, publicKeyFromPrivateKeyHex, publicKeyObject } from './keys.ts';

export const STAMP_SCHEME = 'SIGNATURE_SCHEME_TK_API_P256';
/** Longest header accepted. A stamp with an uncompressed key and a 72-byte signature is about 530 characters. */
export const MAX_STAMP_LENGTH = 2048;

export interface WalletStamp {
  publicKey: string;
  scheme: string;
  signature: string;
}

export type StampFailureCode = 'WALLET_SIGNATURE_MALFORMED' | 'WALLET_SIGNATURE_INVALID';

export interface StampFailure {
  ok: false;
  code: StampFailureCode;
  /** Names the failed check; safe to return to the caller (no key material beyond what they sent). */
  reason: string;
}

export interface ParsedStamp {
  ok: true;
  stamp: WalletStamp;
  /** The stamp's key, normalised: compressed lowercase SEC1 hex. */
  publicKey: string;
  /** DER signature bytes. */
  signature: Buffer;
}

export interface VerifiedStamp {
  ok: true;
  /** The key that made the stamp, normalised: compressed lowercase SEC1 hex (compare with stored keys as-is). */
  publicKey: string;
  stamp: WalletStamp;
}

export type StampVerification = VerifiedStamp | StampFailure;

const BASE64URL = /^[A-Za-z0-9_-]*={0,2}$/;
const HEX = /^(?:[0-9a-fA-F]{2})+$/;

function malformed(reason: string): StampFailure {
  return { ok: false, code: 'WALLET_SIGNATURE_MALFORMED', reason };
}

/** Parses the header value without checking the signature. */
export function parseWalletStamp(header: string): ParsedStamp | StampFailure {
  if (typeof header !== 'string' || header.length === 0) return malformed('the wallet signature is empty');
  if (header.length > MAX_STAMP_LENGTH) return malformed(`the wallet signature is longer than ${MAX_STAMP_LENGTH} characters`);
  const unpadded = header.replace(/=+$/, '');
  if (!BASE64URL.test(header) || unpadded.length % 4 === 1) return malformed('the wallet signature is not base64url');
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(unpadded, 'base64url').toString('utf8'));
  } catch {
    return malformed('the wallet signature does not decode to JSON');
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    return malformed('the wallet signature does not decode to a JSON object');
  const { publicKey, scheme, signature } = json as Record<string, unknown>;
  if (typeof publicKey !== 'string') return malformed('the wallet signature has no string "publicKey"');
  if (typeof scheme !== 'string') return malformed('the wallet signature has no string "scheme"');
  if (typeof signature !== 'string') return malformed('the wallet signature has no string "signature"');
  if (scheme !== STAMP_SCHEME) return malformed(`the wallet signature scheme must be ${STAMP_SCHEME}`);
  let normalized: string;
  try {
    normalized = normalizePublicKeyHex(publicKey);
  } catch (err) {
    return malformed(`the wallet signature publicKey is invalid: ${err instanceof InvalidKeyError ? err.message : 'not a P-256 key'}`);
  }
  if (!HEX.test(signature)) return malformed('the wallet signature "signature" is not hex');
  const der = Buffer.from(signature, 'hex');
  try {
    parseDerSignature(der);
  } catch (err) {
    return malformed(`the wallet signature "signature" is not a DER ECDSA signature (${(err as Error).message})`);
  }
  return { ok: true, stamp: { publicKey, scheme, signature }, publicKey: normalized, signature: der };
}

/**
 * Verifies a stamp header over the exact `payloadToSign` string the server issued (never a
 * re-serialised copy). On success returns the normalised key; whether that key may sign is the
 * caller's check.
 */
export function verifyWalletStamp(header: string, payloadToSign: string): StampVerification {
  const parsed = parseWalletStamp(header);
  if (!parsed.ok) return parsed;
  const ok = verify('sha256', Buffer.from(payloadToSign, 'utf8'), publicKeyObject(parsed.publicKey), parsed.signature);
  if (!ok)
    return {
      ok: false,
      code: 'WALLET_SIGNATURE_INVALID',
      reason: 'the wallet signature does not verify over the payload with its public key',
    };
  return { ok: true, publicKey: parsed.publicKey, stamp: parsed.stamp };
}

/** The header value of a stamp object: base64url of its JSON, unpadded (what ApiKeyStamper emits). */
export function encodeWalletStamp(stamp: WalletStamp): string {
  return Buffer.from(JSON.stringify({ publicKey: stamp.publicKey, scheme: stamp.scheme, signature: stamp.signature }), 'utf8').toString(
    'base64url',
  );
}

/**
 * Stamps `payload` with a private key (64 hex), as `@turnkey/api-key-stamper` does: the stamp's
 * `publicKey` is `publicKeyHex` verbatim when given, otherwise the compressed key of `privateKeyHex`.
 */
export function createWalletStamp(privateKeyHex: string, payload: string, publicKeyHex?: string): string {
  const signature = sign('sha256', Buffer.from(payload, 'utf8'), privateKeyObject(privateKeyHex)).toString('hex');
  return encodeWalletStamp({ publicKey: publicKeyHex ?? publicKeyFromPrivateKeyHex(privateKeyHex, true), scheme: STAMP_SCHEME, signature });
}
