/**
 * Every source of nondeterminism the server uses, injected so that tests (and the sandbox clock)
 * control it: wall-clock time, identifiers and random bytes.
 */
import { randomBytes } from 'node:crypto';

export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
}

export interface Rng {
  /** n cryptographically strong random bytes (tests may inject a seeded source). */
  bytes(n: number): Buffer;
}

export interface Ids {
  /** A new `<prefix>:<uuid v7>` identifier. */
  next(prefix: string): string;
  /** A bare uuid v7. */
  uuid(): string;
}

export interface Deps {
  clock: Clock;
  /** Randomness that reaches responses as data: account numbers, addresses, card numbers. Seeded under CORRIDOR_SEED. */
  rng: Rng;
  /**
   * Randomness for what must stay unguessable: client secrets, bearer and link tokens, one-time
   * codes, WebAuthn challenges. Never seeded (a seeded secret is a guessable one: seeds are small
   * numbers anyone can try), so responses that carry one differ between seeded runs.
   */
  secretRng: Rng;
  ids: Ids;
}

export const systemClock: Clock = { nowMs: () => Date.now() };
/** Random bytes served from a pooled buffer refilled 4 KiB at a time (one syscall per many ids). */
export function pooledCryptoRng(poolSize = 4096): Rng {
  let pool = randomBytes(poolSize);
  let offset = 0;
  return {
    bytes(n: number): Buffer {
      if (n > poolSize) return randomBytes(n);
      if (offset + n > poolSize) {
        pool = randomBytes(poolSize);
        offset = 0;
      }
      // A copy: callers may keep or mutate what they get.
      const out = Buffer.from(pool.subarray(offset, offset + n));
      offset += n;
      return out;
    },
  };
}

export const cryptoRng: Rng = pooledCryptoRng();

/**
 * UUID v7 generator (RFC 9562): 48-bit millisecond timestamp, then a 12-bit counter in `rand_a`
 * so ids made in one millisecond by one process still sort in creation order, then 62 random bits.
 */
export function uuidV7Ids(clock: Clock, rng: Rng): Ids {
  let lastMs = -1;
  let seq = 0;
  const uuid = (): string => {
    let ms = clock.nowMs();
    if (ms <= lastMs) {
      ms = lastMs;
      seq += 1;
      if (seq > 0xfff) {
        // Counter exhausted within one millisecond: borrow the next millisecond.
        ms = lastMs + 1;
        seq = 0;
      }
    } else {
      seq = 0;
    }
    lastMs = ms;
    const b = Buffer.alloc(16);
    b.writeUIntBE(ms, 0, 6);
    b.writeUInt16BE(0x7000 | seq, 6);
    rng.bytes(8).copy(b, 8);
    b[8] = (b[8]! & 0x3f) | 0x80;
    const h = b.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  return { uuid, next: (prefix) => `${prefix}:${uuid()}` };
}

/**
 * Production dependencies: system clock, crypto randomness, uuid v7 ids. A test that injects `rng`
 * gets it for secrets too (as before secretRng existed) unless it injects `secretRng` as well.
 * CORRIDOR_SEED's deterministic set is `seededDeps` (lib/seeded-deps.ts).
 */
export function defaultDeps(overrides: Partial<Deps> = {}): Deps {
  const clock = overrides.clock ?? systemClock;
  const rng = overrides.rng ?? cryptoRng;
  return { clock, rng, secretRng: overrides.secretRng ?? rng, ids: overrides.ids ?? uuidV7Ids(clock, rng) };
}
