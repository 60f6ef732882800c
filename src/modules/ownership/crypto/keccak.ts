/**
 * Keccak-256 as Ethereum and Tron use it: the original Keccak padding (0x01 … 0x80), not SHA3-256's
 * (0x06 … 0x80), which is why node:crypto's `sha3-256` does not do. Needed to hash EIP-191 and
 * TIP-191 signed messages and to derive an address from a public key. Lanes are 64-bit BigInts:
 * a challenge message is one or two blocks, so clarity wins over speed (about 0.1 ms a block).
 */

const MASK = (1n << 64n) - 1n;
/** Rate of Keccak-256 in bytes (1600 − 2·256 bits). */
const RATE = 136;

/** Rotation offsets by lane index x + 5y, and the lane each one moves to (ρ and π steps). */
const ROTATIONS: number[] = new Array(25).fill(0);
const DESTINATION: number[] = new Array(25).fill(0);
/** The 24 round constants (ι step), from the spec's LFSR. */
const ROUND_CONSTANTS: bigint[] = [];

(() => {
  let x = 1;
  let y = 0;
  for (let t = 0; t < 24; t++) {
    ROTATIONS[x + 5 * y] = (((t + 1) * (t + 2)) / 2) % 64;
    [x, y] = [y, (2 * x + 3 * y) % 5];
  }
  for (let i = 0; i < 25; i++) {
    const lx = i % 5;
    const ly = Math.floor(i / 5);
    DESTINATION[i] = ly + 5 * ((2 * lx + 3 * ly) % 5);
  }
  let r = 1;
  for (let round = 0; round < 24; round++) {
    let c = 0n;
    for (let j = 0; j < 7; j++) {
      r = ((r << 1) ^ ((r >> 7) * 0x71)) & 0xff;
      if (r & 2) c ^= 1n << ((1n << BigInt(j)) - 1n);
    }
    ROUND_CONSTANTS.push(c);
  }
})();

function rotl(v: bigint, n: number): bigint {
  if (n === 0) return v;
  const b = BigInt(n);
  return ((v << b) | (v >> (64n - b))) & MASK;
}

function permute(s: bigint[]): void {
  const c: bigint[] = new Array(5);
  const b: bigint[] = new Array(25);
  for (let round = 0; round < 24; round++) {
    for (let x = 0; x < 5; x++) c[x] = s[x]! ^ s[x + 5]! ^ s[x + 10]! ^ s[x + 15]! ^ s[x + 20]!;
    for (let x = 0; x < 5; x++) {
      const d = c[(x + 4) % 5]! ^ rotl(c[(x + 1) % 5]!, 1);
      for (let y = 0; y < 25; y += 5) s[x + y] = s[x + y]! ^ d;
    }
    for (let i = 0; i < 25; i++) b[DESTINATION[i]!] = rotl(s[i]!, ROTATIONS[i]!);
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) s[x + y] = b[x + y]! ^ (~b[((x + 1) % 5) + y]! & MASK & b[((x + 2) % 5) + y]!);
    }
    s[0] = s[0]! ^ ROUND_CONSTANTS[round]!;
  }
}

/** Keccak-256 of `data` (32 bytes). */
export function keccak256(data: Uint8Array): Buffer {
  const padded = Buffer.alloc((Math.floor(data.length / RATE) + 1) * RATE);
  padded.set(data);
  padded[data.length] = padded[data.length]! ^ 0x01;
  padded[padded.length - 1] = padded[padded.length - 1]! ^ 0x80;
  const s: bigint[] = new Array(25).fill(0n);
  for (let off = 0; off < padded.length; off += RATE) {
    for (let i = 0; i < RATE / 8; i++) s[i] = s[i]! ^ padded.readBigUInt64LE(off + i * 8);
    permute(s);
  }
  const out = Buffer.alloc(32);
  for (let i = 0; i < 4; i++) out.writeBigUInt64LE(s[i]!, i * 8);
  return out;
}
