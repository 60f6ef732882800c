/**
 * P-256 key helpers, base58check and strict DER: encodings round-trip, invalid points and scalars
 * are refused, and keys compare equal across compressed/uncompressed and hex case.
 */
import { createECDH, createPublicKey, sign, verify } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { base58Decode, base58Encode, bs58checkDecode, bs58checkEncode } from '../../src/wallet/crypto/base58.ts';
import { derToRaw, parseDerSignature, rawToDer } from '../../src/wallet/crypto/der.ts';
import {
  compressPublicKeyHex,
  generateP256KeyPair,
  InvalidKeyError,
  keyObjectToPrivateKeyHex,
  keyObjectToPublicKeyHex,
  normalizePublicKeyHex,
  parsePrivateKeyHex,
  parsePublicKey,
  privateKeyObject,
  publicKeyFromPrivateKeyHex,
  publicKeyObject,
  samePublicKey,
  tryNormalizePublicKeyHex,
  uncompressPublicKeyHex,
} from '../../src/wallet/crypto/keys.ts';

// RFC 6979 A.2.5 P-256 key.
const RFC_PRIV = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const RFC_PUB_COMPRESSED = '0360fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb6';
const RFC_PUB_UNCOMPRESSED =
  '0460fed4ba255a9d31c961eb74c6356d68c049b8923b61fa6ce669622e60f29fb67903fe1008b8bc99a41ae9e95628bc64f2f1b20c2d7e9f5177a3c294d4462299';

describe('P-256 keys', () => {
  it('derives the RFC 6979 public key in both encodings', () => {
    expect(publicKeyFromPrivateKeyHex(RFC_PRIV)).toBe(RFC_PUB_COMPRESSED);
    expect(publicKeyFromPrivateKeyHex(RFC_PRIV, false)).toBe(RFC_PUB_UNCOMPRESSED);
  });

  it('decompresses and compresses points', () => {
    expect(uncompressPublicKeyHex(RFC_PUB_COMPRESSED)).toBe(RFC_PUB_UNCOMPRESSED);
    expect(compressPublicKeyHex(RFC_PUB_UNCOMPRESSED)).toBe(RFC_PUB_COMPRESSED);
    for (let i = 0; i < 20; i++) {
      const k = generateP256KeyPair();
      expect(uncompressPublicKeyHex(k.publicKeyHex)).toBe(k.publicKeyUncompressedHex);
      expect(compressPublicKeyHex(k.publicKeyUncompressedHex)).toBe(k.publicKeyHex);
      expect(k.privateKeyHex).toMatch(/^[0-9a-f]{64}$/);
      expect(publicKeyFromPrivateKeyHex(k.privateKeyHex)).toBe(k.publicKeyHex);
    }
  });

  it('normalises keys for comparison: compressed, lowercase', () => {
    expect(normalizePublicKeyHex(RFC_PUB_UNCOMPRESSED.toUpperCase())).toBe(RFC_PUB_COMPRESSED);
    expect(normalizePublicKeyHex(Buffer.from(RFC_PUB_UNCOMPRESSED, 'hex'))).toBe(RFC_PUB_COMPRESSED);
    expect(samePublicKey(RFC_PUB_COMPRESSED, RFC_PUB_UNCOMPRESSED.toUpperCase())).toBe(true);
    expect(samePublicKey(RFC_PUB_COMPRESSED, generateP256KeyPair().publicKeyHex)).toBe(false);
    expect(samePublicKey('zz', 'zz')).toBe(false);
    // The same X with the other parity prefix is a different point.
    expect(samePublicKey(RFC_PUB_COMPRESSED, `02${RFC_PUB_COMPRESSED.slice(2)}`)).toBe(false);
  });

  it('refuses keys that are not points on the curve', () => {
    const bad = [
      '',
      'xyz',
      RFC_PUB_COMPRESSED.slice(0, 64),
      `05${RFC_PUB_COMPRESSED.slice(2)}`,
      `04${'ab'.repeat(64)}`, // well-formed but off the curve
      `02${'ff'.repeat(32)}`, // X ≥ p
      `${RFC_PUB_UNCOMPRESSED.slice(0, -2)}98`, // Y changed
    ];
    for (const k of bad) {
      expect(() => parsePublicKey(k), k).toThrow(InvalidKeyError);
      expect(tryNormalizePublicKeyHex(k)).toBeUndefined();
    }
    expect(() => parsePublicKey(new Uint8Array(64))).toThrow(InvalidKeyError);
  });

  it('refuses private scalars out of range', () => {
    const n = 'ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551';
    for (const k of ['00'.repeat(32), n, 'ff'.repeat(32), 'abc', RFC_PRIV.slice(2), `${RFC_PRIV}00`]) {
      expect(() => parsePrivateKeyHex(k), k).toThrow(InvalidKeyError);
    }
    expect(parsePrivateKeyHex(`${'00'.repeat(31)}01`)).toHaveLength(32);
  });

  it('imports key objects that sign and verify with each other', () => {
    const k = generateP256KeyPair();
    const priv = privateKeyObject(k.privateKeyHex);
    const sig = sign('sha256', Buffer.from('hello'), priv);
    expect(verify('sha256', Buffer.from('hello'), publicKeyObject(k.publicKeyHex), sig)).toBe(true);
    expect(verify('sha256', Buffer.from('hello'), publicKeyObject(k.publicKeyUncompressedHex), sig)).toBe(true);
    expect(keyObjectToPublicKeyHex(createPublicKey(priv))).toBe(k.publicKeyUncompressedHex);
    expect(keyObjectToPrivateKeyHex(priv)).toBe(k.privateKeyHex);
  });

  it('pads short private scalars to 32 bytes', () => {
    // A scalar with a leading zero byte: node's ECDH drops it, the helpers must not.
    const d = `00${'11'.repeat(31)}`;
    const ecdh = createECDH('prime256v1');
    ecdh.setPrivateKey(Buffer.from(d, 'hex'));
    expect(keyObjectToPrivateKeyHex(privateKeyObject(d))).toBe(d);
    expect(publicKeyFromPrivateKeyHex(d)).toBe(ecdh.getPublicKey('hex', 'compressed'));
  });
});

describe('base58 / base58check', () => {
  it('matches known base58 encodings', () => {
    // Bitcoin test vectors (base58 without checksum).
    expect(base58Encode(Buffer.from('Hello World!'))).toBe('2NEpo7TZRRrLZSi2U');
    expect(base58Encode(Buffer.from('00000000287fb4cd', 'hex'))).toBe('1111233QC4');
    expect(base58Encode(Buffer.alloc(0))).toBe('');
    expect(base58Decode('1111233QC4').toString('hex')).toBe('00000000287fb4cd');
    expect(base58Decode('2NEpo7TZRRrLZSi2U').toString()).toBe('Hello World!');
  });

  it('round-trips random payloads with and without leading zeros', () => {
    for (let i = 0; i < 50; i++) {
      const p = Buffer.concat([Buffer.alloc(i % 4), Buffer.from(generateP256KeyPair().privateKeyHex, 'hex').subarray(0, (i * 7) % 33)]);
      expect(base58Decode(base58Encode(p)).equals(p)).toBe(true);
      expect(bs58checkDecode(bs58checkEncode(p)).equals(p)).toBe(true);
    }
  });

  it('rejects bad characters and checksums', () => {
    expect(() => base58Decode('0OIl')).toThrow(/invalid base58/);
    const good = bs58checkEncode(Buffer.from('payload'));
    const flipped = good.slice(0, -1) + (good.endsWith('2') ? '3' : '2');
    expect(() => bs58checkDecode(flipped)).toThrow(/checksum/);
    expect(() => bs58checkDecode('1')).toThrow(/short/);
  });
});

describe('strict DER signatures', () => {
  it('round-trips raw ⇄ DER, including high bits and leading zeros', () => {
    const k = generateP256KeyPair();
    for (let i = 0; i < 30; i++) {
      const der = sign('sha256', Buffer.from(`m${i}`), privateKeyObject(k.privateKeyHex));
      const raw = derToRaw(der);
      expect(raw).toHaveLength(64);
      expect(rawToDer(raw).equals(der)).toBe(true);
    }
    const raw = Buffer.concat([Buffer.alloc(31), Buffer.from([0x80]), Buffer.alloc(32, 0xff)]);
    const der = rawToDer(raw);
    expect(der.toString('hex')).toBe(`3027020200800221 00${'ff'.repeat(32)}`.replace(' ', ''));
    expect(derToRaw(der).equals(raw)).toBe(true);
  });

  it('rejects non-DER encodings', () => {
    const ok = rawToDer(Buffer.alloc(64, 0x11));
    expect(() => parseDerSignature(ok)).not.toThrow();
    const cases: [string, Buffer][] = [
      ['not a sequence', Buffer.concat([Buffer.from([0x31]), ok.subarray(1)])],
      ['length mismatch', Buffer.concat([ok, Buffer.from([0])])],
      ['negative r', Buffer.from('3006020180020101', 'hex')],
      ['non-minimal r', Buffer.from('300702020001020101', 'hex')],
      ['zero-length integer', Buffer.from('30050200020101', 'hex')],
      ['too short', Buffer.from('3000', 'hex')],
    ];
    for (const [name, der] of cases) expect(() => parseDerSignature(der), name).toThrow();
  });
});
