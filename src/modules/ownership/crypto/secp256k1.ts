/**
 * Public-key recovery on secp256k1 (SEC 1 v2 §4.1.6): from a message hash and a recoverable ECDSA
 * signature (r, s, recovery id), the public key that made it. Ethereum (EIP-191), Tron (TIP-191)
 * and Bitcoin message signatures (BIP-137) carry no public key, only an address or nothing, so the
 * key is recovered and then compared. node:crypto verifies secp256k1 signatures but cannot recover
 * a key, hence this file.
 *
 * Only public data passes through here (a signature and a hash), so the arithmetic is plain
 * variable-time BigInt in Jacobian coordinates: about 2 ms a recovery, one per verify request.
 */

/** The field prime p, the group order n, and the generator G. */
export const P = 2n ** 256n - 2n ** 32n - 977n;
export const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const GX = 0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n;
const GY = 0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n;

/** A point in Jacobian coordinates (X/Z², Y/Z³); Z = 0 is the point at infinity. */
interface Jacobian {
  x: bigint;
  y: bigint;
  z: bigint;
}

/** An affine point on the curve. */
export interface Point {
  x: bigint;
  y: bigint;
}

const mod = (a: bigint, m: bigint = P): bigint => {
  const r = a % m;
  return r >= 0n ? r : r + m;
};

function pow(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n;
  let b = mod(base, m);
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return result;
}

/** The inverse modulo a prime (Fermat); `a` must not be 0 modulo `m`. */
const invert = (a: bigint, m: bigint): bigint => pow(a, m - 2n, m);

const INFINITY: Jacobian = { x: 0n, y: 1n, z: 0n };

function double(p: Jacobian): Jacobian {
  if (p.z === 0n || p.y === 0n) return INFINITY;
  // dbl-2009-l for a = 0.
  const a = mod(p.x * p.x);
  const b = mod(p.y * p.y);
  const c = mod(b * b);
  const d = mod(2n * (mod((p.x + b) * (p.x + b)) - a - c));
  const e = mod(3n * a);
  const f = mod(e * e);
  const x = mod(f - 2n * d);
  const y = mod(e * (d - x) - 8n * c);
  const z = mod(2n * p.y * p.z);
  return { x, y, z };
}

function add(p: Jacobian, q: Jacobian): Jacobian {
  if (p.z === 0n) return q;
  if (q.z === 0n) return p;
  // add-2007-bl.
  const z1z1 = mod(p.z * p.z);
  const z2z2 = mod(q.z * q.z);
  const u1 = mod(p.x * z2z2);
  const u2 = mod(q.x * z1z1);
  const s1 = mod(p.y * q.z * z2z2);
  const s2 = mod(q.y * p.z * z1z1);
  if (u1 === u2) return s1 === s2 ? double(p) : INFINITY;
  const h = mod(u2 - u1);
  const i = mod(4n * h * h);
  const j = mod(h * i);
  const r = mod(2n * (s2 - s1));
  const v = mod(u1 * i);
  const x = mod(r * r - j - 2n * v);
  const y = mod(r * (v - x) - 2n * s1 * j);
  const z = mod(((p.z + q.z) * (p.z + q.z) - z1z1 - z2z2) * h);
  return { x, y, z };
}

function multiply(p: Jacobian, k: bigint): Jacobian {
  let result = INFINITY;
  let addend = p;
  let e = k;
  while (e > 0n) {
    if (e & 1n) result = add(result, addend);
    addend = double(addend);
    e >>= 1n;
  }
  return result;
}

function toAffine(p: Jacobian): Point | null {
  if (p.z === 0n) return null;
  const zInv = invert(p.z, P);
  const zInv2 = mod(zInv * zInv);
  return { x: mod(p.x * zInv2), y: mod(p.y * zInv2 * zInv) };
}

/** The curve point with this x and y parity, or null when x is not on the curve. */
export function liftX(x: bigint, odd: boolean): Point | null {
  if (x <= 0n || x >= P) return null;
  const alpha = mod(x * x * x + 7n);
  // p ≡ 3 (mod 4): a square root is alpha^((p+1)/4), when one exists.
  const beta = pow(alpha, (P + 1n) / 4n, P);
  if (mod(beta * beta) !== alpha) return null;
  const y = (beta & 1n) === (odd ? 1n : 0n) ? beta : P - beta;
  return { x, y };
}

/**
 * The public key that signed `hash` with (r, s) and recovery id `recovery` (0-3), or null when
 * the signature has no such key (r or s out of range, r not an x coordinate, the point at infinity).
 */
export function recoverPublicKey(hash: Uint8Array, r: bigint, s: bigint, recovery: number): Point | null {
  if (r <= 0n || r >= N || s <= 0n || s >= N || recovery < 0 || recovery > 3) return null;
  const x = r + (recovery >> 1 ? N : 0n);
  const rPoint = liftX(x, (recovery & 1) === 1);
  if (!rPoint) return null;
  // e: the hash as an integer (32 bytes: no truncation needed for a 256-bit order), reduced mod n.
  const e = mod(BigInt(`0x${Buffer.from(hash).toString('hex') || '0'}`), N);
  const rInv = invert(r, N);
  const u1 = mod(-e * rInv, N);
  const u2 = mod(s * rInv, N);
  const g: Jacobian = { x: GX, y: GY, z: 1n };
  const q = add(multiply(g, u1), multiply({ ...rPoint, z: 1n }, u2));
  return toAffine(q);
}

const bytes32 = (v: bigint): Buffer => Buffer.from(v.toString(16).padStart(64, '0'), 'hex');

/** x ‖ y, 64 bytes (what Ethereum and Tron hash into an address). */
export function rawPublicKey(p: Point): Buffer {
  return Buffer.concat([bytes32(p.x), bytes32(p.y)]);
}

/** SEC 1 compressed form: 0x02/0x03 by the parity of y, then x (33 bytes). */
export function compressPublicKey(p: Point): Buffer {
  return Buffer.concat([Buffer.from([p.y & 1n ? 3 : 2]), bytes32(p.x)]);
}

/** A big-endian unsigned integer of any length. */
export function bigIntOf(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
}
