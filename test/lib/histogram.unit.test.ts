/**
 * The log-scale histogram behind the commit groups' profile (src/lib/histogram.ts): quantiles
 * within its stated resolution, windows by difference, processes by sum.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Histogram, histogramDiff, histogramMean, histogramQuantile, histogramSum } from '../../src/lib/histogram.ts';

/** The exact quantile of sorted values, by the same rank rule (the ⌈q·n⌉-th smallest). */
function exact(sorted: number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1]!;
}

describe('Histogram', () => {
  it('reads quantiles within 4.5 % of the recorded values, and the exact mean', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 1, max: 1e9, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.constantFrom(0.5, 0.9, 0.99, 1),
        (values, q) => {
          const h = new Histogram();
          for (const v of values) h.record(v);
          const s = h.snapshot();
          const truth = exact(
            [...values].sort((a, b) => a - b),
            q,
          );
          const got = histogramQuantile(s, q)!;
          expect(Math.abs(got - truth) / truth).toBeLessThan(0.045);
          expect(histogramMean(s)).toBeCloseTo(values.reduce((a, b) => a + b, 0) / values.length, 3);
        },
      ),
    );
  });

  it('puts values below 1 (and negative ones, as 0) in the first bucket, read as 0', () => {
    const h = new Histogram();
    h.record(0.4);
    h.record(-3);
    expect(histogramQuantile(h.snapshot(), 1)).toBe(0);
    expect(h.snapshot().sum).toBeCloseTo(0.4);
  });

  it('has no quantile or mean with nothing recorded', () => {
    const s = new Histogram().snapshot();
    expect(histogramQuantile(s, 0.5)).toBeUndefined();
    expect(histogramMean(s)).toBeUndefined();
  });

  it('gives a window as the difference of two snapshots, and several processes as their sum', () => {
    const h = new Histogram();
    for (let i = 0; i < 100; i++) h.record(1000);
    const before = h.snapshot();
    for (let i = 0; i < 10; i++) h.record(50);
    const window = histogramDiff(h.snapshot(), before);
    expect(window.count).toBe(10);
    expect(histogramMean(window)).toBeCloseTo(50);
    expect(Math.abs(histogramQuantile(window, 0.99)! - 50) / 50).toBeLessThan(0.045);

    const other = new Histogram();
    for (let i = 0; i < 30; i++) other.record(2000);
    const both = histogramSum([window, other.snapshot()]);
    expect(both.count).toBe(40);
    expect(Math.abs(histogramQuantile(both, 0.2)! - 50) / 50).toBeLessThan(0.045);
    expect(Math.abs(histogramQuantile(both, 0.3)! - 2000) / 2000).toBeLessThan(0.045);
    expect(histogramDiff(h.snapshot(), undefined).count).toBe(110);
  });
});
