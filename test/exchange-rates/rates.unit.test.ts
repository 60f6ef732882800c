/** The rate-table functions quotes reuse (src/lib/rates.ts): pure, so tested directly. */
import { describe, expect, it } from 'vitest';
import { CURRENCY_CODES } from '../../src/lib/currencies.ts';
import {
  RATE_WINDOW_MS,
  applyRate,
  convert,
  feesFor,
  rateWindow,
  receivingAmount,
  referenceRate,
  sandboxRate,
  sendingForReceiving,
} from '../../src/lib/rates.ts';

const AT = Date.parse('2025-02-05T12:01:00.000Z');

describe('sandbox rate table', () => {
  it('has a positive rate of at most 10 significant digits for every pair, exactly 1 for the same currency', () => {
    for (const from of CURRENCY_CODES) {
      for (const to of CURRENCY_CODES) {
        const r = sandboxRate(from, to, AT);
        expect(r.units > 0n, `${from}→${to}`).toBe(true);
        expect(String(r.value)).toBe(String(Number(r.text)));
        expect(r.text.replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length).toBeLessThanOrEqual(10);
        if (from === to) expect(r.text).toBe('1');
      }
    }
  });

  it('is a pure function of the 5-minute window', () => {
    const w = rateWindow(AT);
    expect(w.startMs).toBe(Date.parse('2025-02-05T12:00:00.000Z'));
    expect(sandboxRate('USD', 'INR', w.startMs)).toEqual(sandboxRate('USD', 'INR', w.startMs + RATE_WINDOW_MS - 1));
    expect(sandboxRate('USD', 'INR', w.startMs + RATE_WINDOW_MS).windowStartMs).toBe(w.startMs + RATE_WINDOW_MS);
    // Pegged dollar assets never move.
    expect(sandboxRate('USD', 'USDC', AT).text).toBe('10000');
    expect(sandboxRate('USDT', 'USD', AT + 7 * RATE_WINDOW_MS).text).toBe('0.0001');
    expect(referenceRate('USD', 'EUR').text).toBe('0.9259259259');
  });

  it('converts with integers: floor by default, ceil on request, and inverts to the smallest sufficient amount', () => {
    const r = sandboxRate('USD', 'INR', AT);
    expect(convert(10_000, 'USD', 'INR', AT)).toBe(applyRate(10_000, r));
    expect(applyRate(1, referenceRate('USD', 'EUR'), 'floor')).toBe(0n);
    expect(applyRate(1, referenceRate('USD', 'EUR'), 'ceil')).toBe(1n);
    for (const target of [1n, 99n, 825_000n, 123_456_789n]) {
      const s = sendingForReceiving(target, r);
      expect(applyRate(s, r) >= target).toBe(true);
      expect(applyRate(s - 1n, r) < target).toBe(true);
    }
  });

  it('computes fees (variable part rounded half up) and the receiving amount after them', () => {
    expect(feesFor(10_000, { variableFeeBps: 50, fixedFee: 100 })).toEqual({ fixed: 100n, variable: 50n, total: 150n });
    expect(feesFor(100, { variableFeeBps: 50, fixedFee: 0 }).total).toBe(1n);
    expect(feesFor(99, { variableFeeBps: 50, fixedFee: 0 }).total).toBe(0n);
    expect(feesFor(10_000, undefined).total).toBe(0n);
    const r = referenceRate('USD', 'EUR');
    expect(receivingAmount(10_000, feesFor(10_000, { variableFeeBps: 50, fixedFee: 100 }), r)).toBe(applyRate(9_850, r));
    expect(receivingAmount(50, feesFor(50, { variableFeeBps: 0, fixedFee: 100 }), r)).toBe(0n);
  });
});
