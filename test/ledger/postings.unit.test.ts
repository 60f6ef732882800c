/**
 * The ledger's pure rules (src/ledger/ledger.ts), as properties over random entries: which entries
 * are balanced (`assertBalanced`), and how an entry's postings merge into one net change per
 * internal account and bucket (`balanceDeltas`, what `postEntry` and a job batch apply): the sum
 * of that account's postings per bucket, whatever their order, additive over entries, and nothing
 * for system accounts. Seeded: fast-check prints the seed and path of a failure (replay with
 * `fc.assert(…, { seed, path })`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assertBalanced, balanceDeltas, type Bucket, type Delta, type Posting } from '../../src/ledger/ledger.ts';

const MAX = Number.MAX_SAFE_INTEGER;
const PLATFORM = 'Platform:019542f5-b3e7-7d02-8000-000000000001';
const CURRENCIES = ['USD', 'EUR', 'BTC'] as const;
/** A few internal accounts, each in one currency (as in the store), and system accounts (any currency). */
const INTERNAL = Array.from({ length: 6 }, (_, i) => ({
  id: `InternalAccount:019542f5-b3e7-7d02-8000-00000000000${i}`,
  currency: CURRENCIES[i % CURRENCIES.length]!,
}));
const SYSTEM = ['SANDBOX_ISSUER', 'RAIL_CLEARING', 'IN_TRANSIT', 'FEES'].map((role) => `System:${PLATFORM}:${role}`);

const bucket = fc.constantFrom<Bucket>('AVAILABLE', 'PENDING');
/** Amounts small enough that an entry's sums stay exact, with the edges in the mix. */
const amount = fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 2 ** 40 }), fc.constant(1));

/**
 * A balanced entry: a few legs, each moving `amount` from one account to another in one currency
 * (an internal account's legs are in its own currency). Every leg sums to zero, so the entry does.
 */
const leg = fc
  .record({
    from: fc.integer({ min: 0, max: INTERNAL.length + SYSTEM.length - 1 }),
    to: fc.integer({ min: 0, max: INTERNAL.length + SYSTEM.length - 1 }),
    currency: fc.constantFrom(...CURRENCIES),
    fromBucket: bucket,
    toBucket: bucket,
    amount,
  })
  .map(({ from, to, currency, fromBucket, toBucket, amount }): Posting[] => {
    const account = (i: number) => (i < INTERNAL.length ? INTERNAL[i]! : { id: SYSTEM[i - INTERNAL.length]!, currency });
    const a = account(from);
    // Both sides in one currency: an internal account fixes it, else the drawn one.
    const cur = a.id.startsWith('InternalAccount:') ? a.currency : currency;
    const candidates = [...INTERNAL.filter((x) => x.currency === cur).map((x) => x.id), ...SYSTEM];
    const b = candidates[to % candidates.length]!;
    return [
      { accountId: a.id, currency: cur, bucket: fromBucket, amount: -amount },
      { accountId: b, currency: cur, bucket: toBucket, amount },
    ];
  });
const postings = fc.array(leg, { minLength: 1, maxLength: 6 }).map((legs) => legs.flat());

const entry = (ps: Posting[]) => ({ id: 'LedgerEntry:x', platformId: PLATFORM, kind: 'TEST', referenceId: 'x', postings: ps, at: '' });

/** The expected net change, summed the slow way: per internal account and bucket. */
function naive(ps: Posting[]): Map<string, Delta> {
  const out = new Map<string, Delta>();
  for (const p of ps) {
    if (!p.accountId.startsWith('InternalAccount:')) continue;
    const d = out.get(p.accountId) ?? { currency: p.currency, available: 0, pending: 0 };
    d[p.bucket === 'AVAILABLE' ? 'available' : 'pending'] += p.amount;
    out.set(p.accountId, d);
  }
  return out;
}

const asObject = (m: Map<string, Delta>) => Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)));

describe('balanceDeltas (the net change an entry applies)', () => {
  it('is, per internal account and bucket, the sum of its postings; system accounts have none', () => {
    fc.assert(
      fc.property(postings, (ps) => {
        const d = balanceDeltas(ps);
        expect(asObject(d)).toEqual(asObject(naive(ps)));
        for (const id of d.keys()) expect(id.startsWith('InternalAccount:')).toBe(true);
      }),
    );
  });

  it('does not depend on the order of the postings', () => {
    fc.assert(
      fc.property(
        postings.chain((ps) => fc.tuple(fc.constant(ps), fc.shuffledSubarray(ps, { minLength: ps.length, maxLength: ps.length }))),
        ([ps, shuffled]) => {
          expect(asObject(balanceDeltas(shuffled))).toEqual(asObject(balanceDeltas(ps)));
        },
      ),
    );
  });

  it('is additive: two entries merged move each account by the sum of their changes', () => {
    fc.assert(
      fc.property(postings, postings, (a, b) => {
        const merged = balanceDeltas([...a, ...b]);
        const da = balanceDeltas(a);
        const db = balanceDeltas(b);
        for (const id of new Set([...da.keys(), ...db.keys()])) {
          const x = da.get(id);
          const y = db.get(id);
          expect(merged.get(id)).toEqual({
            currency: (x ?? y)!.currency,
            available: (x?.available ?? 0) + (y?.available ?? 0),
            pending: (x?.pending ?? 0) + (y?.pending ?? 0),
          });
        }
        expect(merged.size).toBe(new Set([...da.keys(), ...db.keys()]).size);
      }),
    );
  });

  it('with the system side, every balanced entry nets to zero per currency', () => {
    fc.assert(
      fc.property(postings, (ps) => {
        const internal = new Map<string, number>();
        for (const d of balanceDeltas(ps).values()) internal.set(d.currency, (internal.get(d.currency) ?? 0) + d.available + d.pending);
        const system = new Map<string, number>();
        for (const p of ps) if (p.accountId.startsWith('System:')) system.set(p.currency, (system.get(p.currency) ?? 0) + p.amount);
        for (const c of CURRENCIES) expect((internal.get(c) ?? 0) + (system.get(c) ?? 0)).toBe(0);
      }),
    );
  });

  it('refuses postings to one internal account in two currencies', () => {
    const id = INTERNAL[0]!.id;
    expect(() =>
      balanceDeltas([
        { accountId: id, currency: 'USD', bucket: 'AVAILABLE', amount: 5 },
        { accountId: id, currency: 'EUR', bucket: 'PENDING', amount: -5 },
      ]),
    ).toThrow(/two currencies/);
  });

  it('a transfer between the buckets of one account moves its total by nothing', () => {
    const id = INTERNAL[1]!.id;
    const d = balanceDeltas([
      { accountId: id, currency: 'EUR', bucket: 'AVAILABLE', amount: -70 },
      { accountId: id, currency: 'EUR', bucket: 'PENDING', amount: 70 },
    ]);
    expect(d.get(id)).toEqual({ currency: 'EUR', available: -70, pending: 70 });
  });
});

describe('assertBalanced (which entries the ledger accepts)', () => {
  it('accepts every entry whose postings sum to zero per currency', () => {
    fc.assert(
      fc.property(postings, (ps) => {
        expect(() => assertBalanced(entry(ps))).not.toThrow();
      }),
    );
  });

  it('refuses an entry with one posting changed by any non-zero amount', () => {
    fc.assert(
      fc.property(
        postings,
        fc.nat(),
        fc.integer({ min: -1_000_000, max: 1_000_000 }).filter((k) => k !== 0),
        (ps, i, k) => {
          const at = i % ps.length;
          const changed = ps.map((p, j) => (j === at ? { ...p, amount: p.amount + k } : p));
          fc.pre(changed[at]!.amount !== 0);
          expect(() => assertBalanced(entry(changed))).toThrow(/unbalanced/);
        },
      ),
    );
  });

  it('refuses zero, fractional and unsafe amounts, and entries of fewer than two postings', () => {
    const usd = (accountId: string, amount: number): Posting => ({ accountId, currency: 'USD', bucket: 'AVAILABLE', amount });
    const [a, b] = [INTERNAL[0]!.id, SYSTEM[0]!];
    for (const bad of [0, 0.5, MAX + 1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => assertBalanced(entry([usd(a, bad), usd(b, -bad)])), String(bad)).toThrow(/non-zero safe integer/);
    }
    expect(() => assertBalanced(entry([usd(a, 0)]))).toThrow(/at least two postings/);
    expect(() => assertBalanced(entry([]))).toThrow(/at least two postings/);
    // The largest amount is fine, and sums per currency, not across them.
    expect(() => assertBalanced(entry([usd(a, MAX), usd(b, -MAX)]))).not.toThrow();
    expect(() => assertBalanced(entry([usd(a, 10), { accountId: b, currency: 'EUR', bucket: 'AVAILABLE', amount: -10 }]))).toThrow(
      /unbalanced in (USD|EUR)/,
    );
  });
});
