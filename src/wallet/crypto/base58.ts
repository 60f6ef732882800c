/**
 * Base58 (Bitcoin alphabet) and base58check without a version byte: the encoding of
 * `encryptedSessionSigningKey` that `@turnkey/crypto`'s `decryptCredentialBundle` reads
 * (crypto-formats.md §4). Small enough to own rather than add a dependency.
 */
import { createHash } from 'node:crypto';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const INDEX = new Map([...ALPHABET].map((c, i) => [c, i]));

export function base58Encode(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // Repeated division of a big-endian base-256 number by 58, digits collected little-endian.
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i]!;
    for (let j = 0; j < digits.length; j++) {
      carry += digits[j]! << 8;
      digits[j] = carry % 58;
      carry = (carry / 58) | 0;
    }
    while (carry > 0) {
      digits.push(carry % 58);
      carry = (carry / 58) | 0;
    }
  }
  let out = '1'.repeat(zeros);
  for (let i = digits.length - 1; i >= 0; i--) out += ALPHABET[digits[i]!];
  return out;
}

/** Decodes base58; throws on a character outside the alphabet. */
export function base58Decode(text: string): Buffer {
  let zeros = 0;
  while (zeros < text.length && text[zeros] === '1') zeros++;
  const bytes: number[] = [];
  for (let i = zeros; i < text.length; i++) {
    const value = INDEX.get(text[i]!);
    if (value === undefined) throw new Error(`invalid base58 character at position ${i}`);
    let carry = value;
    for (let j = 0; j < bytes.length; j++) {
      carry += bytes[j]! * 58;
      bytes[j] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  return Buffer.concat([Buffer.alloc(zeros), Buffer.from(bytes.reverse())]);
}

function checksum(payload: Uint8Array): Buffer {
  const once = createHash('sha256').update(payload).digest();
  return createHash('sha256').update(once).digest().subarray(0, 4);
}

/** base58(payload ‖ sha256(sha256(payload))[0..4]). */
export function bs58checkEncode(payload: Uint8Array): string {
  return base58Encode(Buffer.concat([payload, checksum(payload)]));
}

/** The payload of a base58check string; throws on a bad character, a short input or a checksum mismatch. */
export function bs58checkDecode(text: string): Buffer {
  const raw = base58Decode(text);
  if (raw.length < 4) throw new Error('base58check input is too short');
  const payload = raw.subarray(0, raw.length - 4);
  if (!checksum(payload).equals(raw.subarray(raw.length - 4))) throw new Error('base58check checksum mismatch');
  return payload;
}
