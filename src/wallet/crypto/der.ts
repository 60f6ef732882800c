/**
 * Strict DER for ECDSA signatures (`SEQUENCE { INTEGER r, INTEGER s }`), so a stamp whose
 * signature cannot even be parsed is told apart from one that parses but does not verify.
 */

export interface RawSignature {
  /** Unsigned big-endian r, 32 bytes. */
  r: Buffer;
  /** Unsigned big-endian s, 32 bytes. */
  s: Buffer;
}

/** Reads one positive, minimally encoded INTEGER of at most 33 bytes at `at`; returns value and next offset. */
function readInteger(der: Buffer, at: number): { value: Buffer; next: number } {
  if (der[at] !== 0x02) throw new Error('expected an INTEGER');
  const len = der[at + 1];
  if (len === undefined || len === 0 || len > 33) throw new Error('bad INTEGER length');
  const start = at + 2;
  const end = start + len;
  if (end > der.length) throw new Error('INTEGER runs past the end');
  const value = der.subarray(start, end);
  if (value[0]! & 0x80) throw new Error('negative INTEGER');
  // A leading zero is allowed only to keep the next byte's high bit from reading as a sign.
  if (len > 1 && value[0] === 0 && !(value[1]! & 0x80)) throw new Error('INTEGER is not minimally encoded');
  const trimmed = value[0] === 0 ? value.subarray(1) : value;
  if (trimmed.length > 32) throw new Error('INTEGER is longer than 32 bytes');
  return { value: Buffer.concat([Buffer.alloc(32 - trimmed.length), trimmed]), next: end };
}

/** Parses a DER ECDSA P-256 signature; throws an Error naming the defect. */
export function parseDerSignature(der: Uint8Array): RawSignature {
  const buf = Buffer.from(der);
  if (buf.length < 8 || buf.length > 72) throw new Error('a DER P-256 signature is 8 to 72 bytes');
  if (buf[0] !== 0x30) throw new Error('expected a SEQUENCE');
  // Short-form length only: the body is at most 70 bytes.
  if (buf[1] !== buf.length - 2) throw new Error('SEQUENCE length does not match the signature length');
  const r = readInteger(buf, 2);
  const s = readInteger(buf, r.next);
  if (s.next !== buf.length) throw new Error('trailing bytes after the signature');
  return { r: r.value, s: s.value };
}

function encodeInteger(value: Buffer): Buffer {
  let i = 0;
  while (i < value.length - 1 && value[i] === 0) i++;
  let v = value.subarray(i);
  if (v[0]! & 0x80) v = Buffer.concat([Buffer.from([0]), v]);
  return Buffer.concat([Buffer.from([0x02, v.length]), v]);
}

/** DER encoding of a raw r‖s (64-byte, IEEE P1363) signature. */
export function rawToDer(raw: Uint8Array): Buffer {
  if (raw.length !== 64) throw new Error('a raw P-256 signature is 64 bytes');
  const body = Buffer.concat([encodeInteger(Buffer.from(raw.subarray(0, 32))), encodeInteger(Buffer.from(raw.subarray(32)))]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

/** Raw r‖s (64 bytes) of a DER signature. */
export function derToRaw(der: Uint8Array): Buffer {
  const { r, s } = parseDerSignature(der);
  return Buffer.concat([r, s]);
}
