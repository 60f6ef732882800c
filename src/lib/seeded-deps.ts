/**
 * The dependencies of a seeded run (CORRIDOR_SEED): the same seed and the same requests give the
 * same ids, account details, prices and timestamps, so two runs of one script against fresh
 * servers answer byte for byte alike (README, "Deterministic runs"; docs/decisions.md).
 *
 * - Time stands still. The clock stays at the run's start instant; only a platform's sandbox clock
 *   advance (`POST /sandbox/clock/advance`) moves that platform's time, and brings its delayed
 *   outcomes and webhook retries due with it. A clock that moved on its own (real time, or a tick
 *   per read) would put the moment a background job or a client's poll happened into every later
 *   timestamp. Work due "now" (settlement without a delay, first webhook attempts) still runs.
 * - Ids are uuid v7 as always, but each id type draws from a stream of its own (its random bits,
 *   and its own millisecond counter), so a type's n-th id is the same in every run whatever else
 *   happened in between: a settlement job creating ledger entries while the client creates the
 *   next customer cannot shift the customer's id.
 * - `rng` (account numbers, addresses, card numbers …) is one seeded stream of its own.
 * - `secretRng` stays the operating system's: secrets are never derived from the seed.
 */
import { cryptoRng, type Clock, type Deps, type Ids, uuidV7Ids } from '../deps.ts';
import { seededRng, seedKey } from './seeded-random.ts';

/**
 * Where a seeded run's clock stands when it starts on a fresh store: a fixed instant in the past,
 * so that a store seeded once and restarted later (its clock then at the real time) only moves on.
 */
export const SEED_EPOCH_MS = Date.UTC(2025, 0, 1);

/** A clock that stands at `ms`. */
export function stoppedClock(ms: number): Clock {
  return { nowMs: () => ms };
}

/** Ids whose random bits and in-millisecond counter are kept per type (the prefix): see the header. */
export function seededIds(key: Buffer, clock: Clock): Ids {
  const byPrefix = new Map<string, Ids>();
  const of = (prefix: string): Ids => {
    let ids = byPrefix.get(prefix);
    if (ids === undefined) {
      ids = uuidV7Ids(clock, seededRng(key, `id:${prefix}`));
      byPrefix.set(prefix, ids);
    }
    return ids;
  };
  return {
    next: (prefix) => of(prefix).next(prefix),
    // Bare uuids (card network tokens, a platform's own uuid) are one type of their own.
    uuid: () => of('').uuid(),
  };
}

/**
 * The dependencies for CORRIDOR_SEED=`seed`, with the clock standing at `startMs`: SEED_EPOCH_MS on
 * a fresh store (the reproducible case), the real time on a store a server already ran on (then ids
 * and account numbers come from other streams than the stored ones: the start is in the key).
 */
export function seededDeps(seed: number, startMs: number): Deps {
  const key = seedKey(seed, startMs);
  const clock = stoppedClock(startMs);
  return { clock, rng: seededRng(key, 'rng'), secretRng: cryptoRng, ids: seededIds(key, clock) };
}
