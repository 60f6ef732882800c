/**
 * The fuzzer's only source of randomness: a small seeded PRNG (sfc32), so a run is reproduced by its
 * seed. Each operation gets its own stream forked by name, so one operation's cases do not depend
 * on how many cases the operations before it drew.
 */
import { createHash, randomInt } from 'node:crypto';

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: number) {
    // splitmix32 spreads the seed over the four words of state.
    let s = seed >>> 0;
    const next = (): number => {
      s = (s + 0x9e3779b9) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0;
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** In [0, 1). */
  float(): number {
    return this.u32() / 0x1_0000_0000;
  }

  /** An integer in [lo, hi] (inclusive). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.float() * items.length)]!;
  }

  /** n bytes (not cryptographic: fuzz input only). */
  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.u32() & 0xff;
    return out;
  }

  hex(n: number): string {
    return this.bytes(n).toString('hex');
  }

  /** A random (version-4-shaped) uuid, for ids that exist nowhere. */
  uuid(): string {
    const h = this.hex(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
  }

  /** An independent stream for `label`, determined by this stream's seed and the label only. */
  fork(label: string): Rng {
    const h = createHash('sha256').update(`${this.seed}:${label}`).digest();
    return new Rng(h.readUInt32BE(0));
  }
}

/** The run's seed: FUZZ_SEED when set (reproduces a run), otherwise a fresh random one. */
export function fuzzSeed(): number {
  const raw = process.env.FUZZ_SEED;
  if (raw !== undefined && raw !== '') {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new Error(`FUZZ_SEED must be an integer in [0, 2^32): ${raw}`);
    return n;
  }
  return randomInt(0, 0x7fffffff);
}

/** Random cases per operation (on top of the fixed structural ones): FUZZ_ITERATIONS, or `fallback`. */
export function fuzzIterations(fallback: number): number {
  const raw = process.env.FUZZ_ITERATIONS;
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`FUZZ_ITERATIONS must be a non-negative integer: ${raw}`);
  return n;
}
