/**
 * The fuzzer's only source of randomness: a small seeded PRNG (sfc32), so a run is reproduced by its
 * seed. Each operation gets its own stream forked by name, so one operation's cases do not depend
 * on how many cases the operations before it drew.
 */
import { randomInt } from 'node:crypto';
import { Rng } from '../helpers/random.ts';

export { Rng };

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
