/**
 * P-256 key helpers over node:crypto: key generation, SEC1 compressed ⇄ uncompressed hex, key
 * normalisation for comparison, and KeyObject import. Wallet keys travel as lowercase or uppercase
 * SEC1 hex — compressed (`02|03` + X, 66 hex) or uncompressed (`04` + X + Y, 130 hex) — and the
 * same key may arrive in either form (crypto-formats.md §2, §3.1), so every comparison goes
 * through {@link normalizePublicKeyHex}.
 */
import { createECDH, createPrivateKey, createPublicKey, ECDH, type KeyObject } from 'node:crypto';

const CURVE = 'prime256v1';
/** DER SubjectPublicKeyInfo header for an uncompressed (65-byte) P-256 point. */
const SPKI_PREFIX_UNCOMPRESSED = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');

/** The OpenAPI pattern of `clientPublicKey`: compressed or uncompressed SEC1 hex. */
export const PUBLIC_KEY_HEX_PATTERN = /^(0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$/;
const PRIVATE_KEY_HEX_PATTERN = /^[0-9a-fA-F]{64}$/;

/** A key that is not a valid P-256 point or scalar (wrong length, bad hex, not on the curve, out of range). */
export class InvalidKeyError extends Error {
  override name = 'InvalidKeyError';
}

export interface P256KeyPair {
  /** The 32-byte private scalar, 64 lowercase hex. */
  privateKeyHex: string;
  /** Compressed SEC1, 66 lowercase hex. */
  publicKeyHex: string;
  /** Uncompressed SEC1, 130 lowercase hex. */
  publicKeyUncompressedHex: string;
}

export function isCompressedPublicKeyHex(hex: string): boolean {
  return hex.length === 66;
}

/** Left-pads a big-endian scalar to 32 bytes (node's ECDH drops leading zero bytes now and then). */
function pad32(bytes: Buffer): Buffer {
  return bytes.length >= 32 ? bytes : Buffer.concat([Buffer.alloc(32 - bytes.length), bytes]);
}

/** A fresh random key pair. */
export function generateP256KeyPair(): P256KeyPair {
  const ecdh = createECDH(CURVE);
  ecdh.generateKeys();
  return {
    privateKeyHex: pad32(ecdh.getPrivateKey()).toString('hex'),
    publicKeyHex: ecdh.getPublicKey('hex', 'compressed'),
    publicKeyUncompressedHex: ecdh.getPublicKey('hex', 'uncompressed'),
  };
}

/**
 * The 32 bytes of a private scalar given as 64 hex; throws {@link InvalidKeyError} unless it is in [1, n-1].
 */
export function parsePrivateKeyHex(hex: string): Buffer {
  if (!PRIVATE_KEY_HEX_PATTERN.test(hex)) throw new InvalidKeyError('a P-256 private key is 64 hex characters');
  const bytes = Buffer.from(hex, 'hex');
  try {
    createECDH(CURVE).setPrivateKey(bytes);
  } catch {
    throw new InvalidKeyError('the private key is out of range for P-256');
  }
  return bytes;
}

/**
 * The uncompressed 65-byte point of a SEC1 public key given as hex or bytes (33 or 65 bytes).
 * Throws {@link InvalidKeyError} for any other length or a point that is not on the curve.
 */
export function parsePublicKey(key: string | Uint8Array): Buffer {
  let bytes: Buffer;
  if (typeof key === 'string') {
    if (!PUBLIC_KEY_HEX_PATTERN.test(key)) {
      throw new InvalidKeyError('a P-256 public key is 66 hex characters starting 02/03 or 130 starting 04');
    }
    bytes = Buffer.from(key, 'hex');
  } else {
    bytes = Buffer.from(key);
    const okLength = (bytes.length === 33 && (bytes[0] === 2 || bytes[0] === 3)) || (bytes.length === 65 && bytes[0] === 4);
    if (!okLength) throw new InvalidKeyError('a P-256 public key is 33 bytes starting 02/03 or 65 starting 04');
  }
  try {
    // OpenSSL decodes (and for compressed input decompresses) the point and rejects one off the curve.
    return ECDH.convertKey(bytes, CURVE, undefined, undefined, 'uncompressed') as Buffer;
  } catch {
    throw new InvalidKeyError('the public key is not a point on P-256');
  }
}

/** Uncompressed SEC1 hex (130, lowercase) of a public key in either encoding. */
export function uncompressPublicKeyHex(key: string | Uint8Array): string {
  return parsePublicKey(key).toString('hex');
}

/** Compressed SEC1 hex (66, lowercase) of a public key in either encoding. */
export function compressPublicKeyHex(key: string | Uint8Array): string {
  return compressPoint(parsePublicKey(key)).toString('hex');
}

/** The 33-byte compressed form of a validated 65-byte point. */
export function compressPoint(uncompressed: Uint8Array): Buffer {
  const y = uncompressed[64]!;
  return Buffer.concat([Buffer.from([y & 1 ? 3 : 2]), uncompressed.subarray(1, 33)]);
}

/**
 * The canonical form used to store and compare wallet public keys: compressed, lowercase hex.
 * Throws {@link InvalidKeyError} for a bad key.
 */
export function normalizePublicKeyHex(key: string | Uint8Array): string {
  return compressPublicKeyHex(key);
}

/** {@link normalizePublicKeyHex}, or undefined for a bad key. */
export function tryNormalizePublicKeyHex(key: string | Uint8Array): string | undefined {
  try {
    return normalizePublicKeyHex(key);
  } catch {
    return undefined;
  }
}

/** True when both values are valid encodings of the same point (compressed/uncompressed, any hex case). */
export function samePublicKey(a: string | Uint8Array, b: string | Uint8Array): boolean {
  const na = tryNormalizePublicKeyHex(a);
  return na !== undefined && na === tryNormalizePublicKeyHex(b);
}

/** A node KeyObject (for crypto.verify) of a SEC1 public key in either encoding. */
export function publicKeyObject(key: string | Uint8Array): KeyObject {
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX_UNCOMPRESSED, parsePublicKey(key)]), format: 'der', type: 'spki' });
}

/** The public key of a private scalar (hex), compressed by default. */
export function publicKeyFromPrivateKeyHex(privateKeyHex: string, compressed = true): string {
  const ecdh = createECDH(CURVE);
  ecdh.setPrivateKey(parsePrivateKeyHex(privateKeyHex));
  return ecdh.getPublicKey('hex', compressed ? 'compressed' : 'uncompressed');
}

/** A node KeyObject (for crypto.sign) of a private scalar given as 64 hex. */
export function privateKeyObject(privateKeyHex: string): KeyObject {
  const d = parsePrivateKeyHex(privateKeyHex);
  const ecdh = createECDH(CURVE);
  ecdh.setPrivateKey(d);
  const point = ecdh.getPublicKey();
  return createPrivateKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      d: d.toString('base64url'),
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33, 65).toString('base64url'),
    },
    format: 'jwk',
  });
}

/** Uncompressed SEC1 hex of a P-256 KeyObject (public or private). */
export function keyObjectToPublicKeyHex(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'P-256' || !jwk.x || !jwk.y) throw new InvalidKeyError('not a P-256 key');
  return `04${Buffer.from(jwk.x, 'base64url').toString('hex')}${Buffer.from(jwk.y, 'base64url').toString('hex')}`;
}

/** The private scalar (64 hex) of a P-256 private KeyObject. */
export function keyObjectToPrivateKeyHex(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'P-256' || !jwk.d) throw new InvalidKeyError('not a P-256 private key');
  return pad32(Buffer.from(jwk.d, 'base64url')).toString('hex');
}
