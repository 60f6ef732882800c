/**
 * The pieces behind CORRIDOR_SEED, without a server: the DRBG (HMAC-SHA256 in counter mode), the
 * per-type seeded ids, the seeded dependency set, and the CORRIDOR_SEED setting.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../../src/config.ts';
import { SEED_EPOCH_MS, seededDeps, seededIds, stoppedClock } from '../../src/lib/seeded-deps.ts';
import { seededRng, seedKey } from '../../src/lib/seeded-random.ts';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('the DRBG', () => {
  it('is HMAC-SHA256(key, label ‖ 0x00 ‖ uint64be(counter)), block after block', () => {
    const key = seedKey(42, SEED_EPOCH_MS);
    const block = (i: number) => {
      const index = Buffer.alloc(8);
      index.writeBigUInt64BE(BigInt(i));
      return createHmac('sha256', key).update('rng\0').update(index).digest();
    };
    expect(
      seededRng(key, 'rng')
        .bytes(96)
        .equals(Buffer.concat([block(0), block(1), block(2)])),
    ).toBe(true);
  });

  it('gives the same stream however the bytes are asked for', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 70 }), { maxLength: 20 }), fc.nat(1_000_000), (sizes, seed) => {
        const key = seedKey(seed, SEED_EPOCH_MS);
        const total = sizes.reduce((a, b) => a + b, 0);
        const pieces = seededRng(key, 'x');
        const joined = Buffer.concat(sizes.map((n) => pieces.bytes(n)));
        expect(joined.equals(seededRng(key, 'x').bytes(total))).toBe(true);
      }),
    );
  });

  it('separates seeds, start instants and labels', () => {
    const draw = (seed: number, start: number, label: string) => seededRng(seedKey(seed, start), label).bytes(32).toString('hex');
    const all = [
      draw(1, SEED_EPOCH_MS, 'rng'),
      draw(2, SEED_EPOCH_MS, 'rng'),
      draw(1, SEED_EPOCH_MS + 1, 'rng'),
      draw(1, SEED_EPOCH_MS, 'id:Customer'),
    ];
    expect(new Set(all).size).toBe(all.length);
    expect(draw(1, SEED_EPOCH_MS, 'rng')).toBe(all[0]);
  });

  it('refuses a seed that is not a non-negative safe integer, and a bad byte count', () => {
    for (const bad of [-1, 1.5, Number.NaN, 2 ** 53]) expect(() => seedKey(bad, 0)).toThrow(RangeError);
    expect(() => seededRng(seedKey(0, 0), 'rng').bytes(-1)).toThrow(RangeError);
    expect(seededRng(seedKey(0, 0), 'rng').bytes(0).length).toBe(0);
  });
});

describe('seeded ids', () => {
  it("a type's ids do not depend on what other types drew in between", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('LedgerEntry', 'Webhook', 'Job', ''), { maxLength: 30 }), (noise) => {
        const key = seedKey(7, SEED_EPOCH_MS);
        const quiet = seededIds(key, stoppedClock(SEED_EPOCH_MS));
        const busy = seededIds(key, stoppedClock(SEED_EPOCH_MS));
        const expected = [quiet.next('Customer'), quiet.next('Customer'), quiet.next('Customer')];
        const got: string[] = [];
        for (const [i, prefix] of [...noise, 'Customer', 'Customer', 'Customer'].entries()) {
          const id = prefix === '' ? busy.uuid() : busy.next(prefix);
          if (i >= noise.length) got.push(id);
        }
        expect(got).toEqual(expected);
      }),
    );
  });

  it('are uuid v7 at the clock, in creation order within a type, past 4,096 in one millisecond', () => {
    const ids = seededIds(seedKey(3, SEED_EPOCH_MS), stoppedClock(SEED_EPOCH_MS));
    const made = Array.from({ length: 5_000 }, () => ids.next('Transaction'));
    for (const id of made) expect(id.slice('Transaction:'.length)).toMatch(UUID_V7);
    expect([...made].sort()).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
    // The first carries the clock's millisecond; the counter borrows the next one after 4,096.
    const ms = (id: string) => Number.parseInt(id.slice('Transaction:'.length).replaceAll('-', '').slice(0, 12), 16);
    expect(ms(made[0]!)).toBe(SEED_EPOCH_MS);
    expect(ms(made[4_096]!)).toBe(SEED_EPOCH_MS + 1);
  });
});

describe('seededDeps', () => {
  it('repeats ids, randomness and time for one seed; never repeats secrets', () => {
    const a = seededDeps(42, SEED_EPOCH_MS);
    const b = seededDeps(42, SEED_EPOCH_MS);
    expect(b.ids.next('Customer')).toBe(a.ids.next('Customer'));
    expect(b.rng.bytes(16).equals(a.rng.bytes(16))).toBe(true);
    expect(a.clock.nowMs()).toBe(SEED_EPOCH_MS);
    expect(a.clock.nowMs()).toBe(SEED_EPOCH_MS);
    expect(b.secretRng.bytes(16).equals(a.secretRng.bytes(16))).toBe(false);
    expect(seededDeps(43, SEED_EPOCH_MS).ids.next('Customer')).not.toBe(seededDeps(42, SEED_EPOCH_MS).ids.next('Customer'));
  });
});

describe('CORRIDOR_SEED', () => {
  it('is unset by default and read as an integer', () => {
    expect(readConfig({}).seed).toBeUndefined();
    expect(readConfig({ CORRIDOR_SEED: '' }).seed).toBeUndefined();
    expect(readConfig({ CORRIDOR_SEED: '0' }).seed).toBe(0);
    expect(readConfig({ CORRIDOR_SEED: '9007199254740991' }).seed).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('is refused, named, when it is not a non-negative integer', () => {
    for (const bad of ['-1', '1.5', ' 7', 'seven', '0x10', '9007199254740992']) {
      expect(() => readConfig({ CORRIDOR_SEED: bad }), bad).toThrow(ConfigError);
      expect(() => readConfig({ CORRIDOR_SEED: bad })).toThrow(
        `CORRIDOR_SEED must be a non-negative integer up to 9007199254740991 (got "${bad}")`,
      );
    }
  });
});
