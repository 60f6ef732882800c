/**
 * Quote pricing over the whole fee/amount/rate space (hostile review, defect 1: a RECEIVING-locked
 * quote under a 100 % variable fee looped forever and froze the server). Every call returns or
 * throws a 400 ApiError, quickly; what it returns is exact: on the receiving side the total is the
 * smallest that pays the locked amount after fees, on the sending side the receiving amount is the
 * floor of (total − fees) × rate.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { startLoopWatchdog } from '../helpers/loop-watchdog.ts';
import { ApiError } from '../../src/http/errors.ts';
import { CURRENCY_CODES } from '../../src/lib/currencies.ts';
import { applyRate, feesFor, sandboxRate, sendingForReceiving, type FeeTerms } from '../../src/lib/rates.ts';
import { price, totalForNet } from '../../src/modules/payments/quote-pricing.ts';
import { rateDetailsOf } from '../../src/modules/payments/rate-details.ts';

// An endless pricing loop (the defect) ends this file with a report instead of hanging CI.
const watchdog = startLoopWatchdog({ hangMs: 10_000 });
afterAll(() => watchdog.stop());

const MAX = Number.MAX_SAFE_INTEGER;
const pair = fc.tuple(fc.constantFrom(...CURRENCY_CODES), fc.constantFrom(...CURRENCY_CODES));
const terms = fc.option(
  fc.record({
    variableFeeBps: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.constantFrom(0, 1, 5_000, 9_999, 10_000)),
    fixedFee: fc.oneof(fc.integer({ min: 0, max: MAX }), fc.integer({ min: 0, max: 10_000 })),
  }),
  { nil: undefined },
);
const amount = fc.oneof(fc.integer({ min: 1, max: MAX }), fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(1, MAX));
const side = fc.constantFrom('SENDING' as const, 'RECEIVING' as const);
// Any instant over a few years: each 5-minute window has its own rates.
const atMs = fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2029, 0, 1) });

/** Runs `fn`; a thrown error must be a 400 (AMOUNT_OUT_OF_RANGE) naming lockedCurrencyAmount. */
function returnsOr400<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(400);
    expect(e.code).toBe('AMOUNT_OUT_OF_RANGE');
    expect(JSON.stringify(e.details)).toContain('lockedCurrencyAmount');
    return undefined;
  }
}

describe('price', () => {
  it('returns or answers 400 for every fee, amount and rate, and its result is exact', () => {
    fc.assert(
      fc.property(pair, terms, amount, side, atMs, ([from, to], t, lockedCurrencyAmount, lockedCurrencySide, at) => {
        const rate = sandboxRate(from, to, at);
        const priced = returnsOr400(() => price({ lockedCurrencySide, lockedCurrencyAmount }, rate, t));
        if (!priced) return;
        const applied: FeeTerms | undefined = from === to ? undefined : t;
        expect(Number.isSafeInteger(priced.total) && Number.isSafeInteger(priced.receiving) && Number.isSafeInteger(priced.fees)).toBe(
          true,
        );
        expect(priced.fees).toBe(Number(feesFor(priced.total, applied).total));
        expect(priced.receiving).toBeGreaterThan(0);
        if (lockedCurrencySide === 'SENDING') {
          expect(priced.total).toBe(lockedCurrencyAmount);
          expect(priced.receiving).toBe(Number(applyRate(BigInt(priced.total) - BigInt(priced.fees), rate)));
        } else {
          expect(priced.receiving).toBe(lockedCurrencyAmount);
          const net = sendingForReceiving(lockedCurrencyAmount, rate);
          const netOf = (x: bigint) => x - feesFor(x, applied).total;
          expect(netOf(BigInt(priced.total)) >= net).toBe(true);
          expect(netOf(BigInt(priced.total) - 1n) < net).toBe(true);
        }
      }),
      { numRuns: 3_000, seed: Number(process.env.PRICING_SEED ?? 20261126) },
    );
  });

  it('a 100 % variable fee on the receiving side is a 400 naming the fee, not an endless search', () => {
    const rate = sandboxRate('USD', 'EUR', Date.UTC(2026, 10, 26));
    for (const fixedFee of [0, 1, 250]) {
      expect(() =>
        price({ lockedCurrencySide: 'RECEIVING', lockedCurrencyAmount: 1_000 }, rate, { variableFeeBps: 10_000, fixedFee }),
      ).toThrow(/10000 bps|whole sending amount/);
    }
    // And on the sending side nothing would arrive: the same 400.
    expect(() =>
      price({ lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 1_000 }, rate, { variableFeeBps: 10_000, fixedFee: 0 }),
    ).toThrow(ApiError);
  });

  it('totalForNet is the smallest total paying net, at the edges of the fee range', () => {
    for (const bps of [0, 1, 4_999, 5_000, 5_001, 9_998, 9_999]) {
      for (const fixedFee of [0, 7]) {
        for (const net of [1n, 2n, 3n, 99n, 10_000n, 123_456_789n]) {
          const t = { variableFeeBps: bps, fixedFee };
          const total = totalForNet(net, t);
          expect(total - feesFor(total, t).total >= net).toBe(true);
          expect(total - 1n - feesFor(total - 1n, t).total < net).toBe(true);
        }
      }
    }
  });
});

describe('rateDetails (issue #21)', () => {
  it("describe every priced quote within the live schema's bounds and reproduce its fees and amounts", () => {
    fc.assert(
      fc.property(pair, terms, amount, side, atMs, ([from, to], t, lockedCurrencyAmount, lockedCurrencySide, at) => {
        const rate = sandboxRate(from, to, at);
        const priced = returnsOr400(() => price({ lockedCurrencySide, lockedCurrencyAmount }, rate, t));
        if (!priced) return;
        const d = rateDetailsOf({
          exchangeRate: rate.text,
          fees: priced.fees,
          feeFixed: priced.terms?.fixedFee ?? 0,
          feeVariableBps: priced.terms?.variableFeeBps ?? 0,
        })!;
        // OutgoingRateDetails: multipliers > 0, fees ≥ 0 (a priced quote's variable fee is under 100 %).
        expect(d.counterpartyMultiplier).toBeGreaterThan(0);
        expect(d.gridApiMultiplier).toBeGreaterThan(0);
        expect(d.gridApiMultiplier).toBeLessThanOrEqual(1);
        expect(d.counterpartyFixedFee).toBe(0);
        expect(d.gridApiFixedFee).toBeGreaterThanOrEqual(0);
        expect(d.gridApiVariableFeeAmount).toBeGreaterThanOrEqual(0);
        expect(Number.isSafeInteger(d.gridApiVariableFeeAmount)).toBe(true);
        expect(d.gridApiFixedFee + d.gridApiVariableFeeAmount).toBe(priced.fees);
        expect(d.gridApiVariableFeeAmount).toBe(Number(feesFor(priced.total, priced.terms).variable));
        if (lockedCurrencySide === 'SENDING') {
          const net = BigInt(priced.total) - BigInt(d.gridApiFixedFee) - BigInt(d.gridApiVariableFeeAmount);
          expect(priced.receiving).toBe(Number(applyRate(net, rate)) - d.counterpartyFixedFee);
        }
      }),
      { numRuns: 1_000, seed: Number(process.env.PRICING_SEED ?? 20261126) },
    );
  });

  it('are absent for a row priced before the fee terms were recorded', () => {
    expect(rateDetailsOf({ exchangeRate: '0.92', fees: 10, feeFixed: null, feeVariableBps: null })).toBeUndefined();
  });
});
