/**
 * Seeded randomness for tests: the only source of random test data (account numbers, customer ids,
 * names), so that a run can be replayed and generated values cannot collide.
 *
 * `Rng` is a small seeded PRNG (sfc32). `testRng()` is the running test file's own stream, seeded
 * from the file's path: a file draws the same values on every run, whichever files ran before it in
 * the same worker, so a failure replays as it happened. `TEST_SEED=<n>` mixes another seed in, to
 * try other values (the failing file's seed then shows in the error of a collision, see `unique`).
 * Values from `unique…` never repeat within a file (each is drawn again until unused).
 */
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

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

interface FileStream {
  seed: number;
  rng: Rng;
  /** Values handed out by `unique`, per kind. */
  used: Map<string, Set<string>>;
}

/** One stream per test file (a worker may run several files with this module loaded once). */
const streams = new Map<string, FileStream>();

function stream(): FileStream {
  const file = path.relative(ROOT, expect.getState().testPath ?? 'outside-a-test-file');
  let s = streams.get(file);
  if (!s) {
    const seed = createHash('sha256')
      .update(`${process.env.TEST_SEED ?? ''}:${file}`)
      .digest()
      .readUInt32BE(0);
    s = { seed, rng: new Rng(seed), used: new Map() };
    streams.set(file, s);
  }
  return s;
}

/** The running test file's seed (from its path and TEST_SEED). */
export function testSeed(): number {
  return stream().seed;
}

/** The running test file's seeded stream. */
export function testRng(): Rng {
  return stream().rng;
}

/** A value from `draw` (given the file's stream) that this file has not been given before under `kind`. */
export function unique(kind: string, draw: (rng: Rng) => string): string {
  const s = stream();
  const used = s.used.get(kind) ?? new Set<string>();
  s.used.set(kind, used);
  for (let i = 0; i < 1000; i++) {
    const v = draw(s.rng);
    if (!used.has(v)) {
      used.add(v);
      return v;
    }
  }
  throw new Error(
    `no unused ${kind} left after 1000 draws (seed ${s.seed}${process.env.TEST_SEED ? `, TEST_SEED=${process.env.TEST_SEED}` : ''})`,
  );
}

/** A US account number: six seeded digits (never starting with 0), then `suffix` (the sandbox outcome selector). */
export function uniqueAccountNumber(suffix: string): string {
  return unique(`account-number:${suffix}`, (r) => `${r.int(100_000, 999_999)}${suffix}`);
}

/** `<prefix>-` and 12 seeded hex digits (platform customer ids, names). */
export function uniqueId(prefix: string): string {
  return unique(`id:${prefix}`, (r) => `${prefix}-${r.hex(6)}`);
}
