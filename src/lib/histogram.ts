/**
 * A histogram of non-negative values on a logarithmic scale: eight buckets per doubling, so a
 * quantile read from it is within about 4.5 % of the true value, in a fixed 300 numbers however
 * many values are recorded. Snapshots are cumulative; what happened between two of them is their
 * difference (`histogramDiff`), which is how the bench reads a measured window.
 */

/** Buckets per doubling. */
const PER_OCTAVE = 8;
/** Bucket 0 holds values below 1; bucket i ≥ 1 holds [2^((i−1)/8), 2^(i/8)); the last also everything above. */
const BUCKETS = 300;

export interface HistogramSnapshot {
  count: number;
  sum: number;
  buckets: number[];
}

export class Histogram {
  private readonly buckets = new Array<number>(BUCKETS).fill(0);
  private count = 0;
  private sum = 0;

  record(value: number): void {
    // Negative, NaN and infinite values (a clock that went back, a bug) count as 0 rather than break the sums.
    const v = Number.isFinite(value) && value > 0 ? value : 0;
    this.buckets[bucketOf(v)]! += 1;
    this.count += 1;
    this.sum += v;
  }

  snapshot(): HistogramSnapshot {
    return { count: this.count, sum: this.sum, buckets: [...this.buckets] };
  }
}

function bucketOf(v: number): number {
  if (v < 1) return 0;
  return Math.min(BUCKETS - 1, 1 + Math.floor(Math.log2(v) * PER_OCTAVE));
}

/** What was recorded between `before` and `after` (two snapshots of one histogram). */
export function histogramDiff(after: HistogramSnapshot, before: HistogramSnapshot | undefined): HistogramSnapshot {
  if (!before) return { count: after.count, sum: after.sum, buckets: [...after.buckets] };
  return {
    count: after.count - before.count,
    sum: after.sum - before.sum,
    buckets: after.buckets.map((n, i) => n - (before.buckets[i] ?? 0)),
  };
}

/** Several histograms' values together (one per process). */
export function histogramSum(parts: readonly HistogramSnapshot[]): HistogramSnapshot {
  const out: HistogramSnapshot = { count: 0, sum: 0, buckets: new Array<number>(BUCKETS).fill(0) };
  for (const p of parts) {
    out.count += p.count;
    out.sum += p.sum;
    p.buckets.forEach((n, i) => {
      out.buckets[i] = (out.buckets[i] ?? 0) + n;
    });
  }
  return out;
}

export function histogramMean(h: HistogramSnapshot): number | undefined {
  return h.count > 0 ? h.sum / h.count : undefined;
}

/**
 * The value below which a share `q` (0–1) of the recorded values lie, as the geometric middle of
 * the bucket it falls in (0 for the bucket of values below 1); undefined when nothing was recorded.
 */
export function histogramQuantile(h: HistogramSnapshot, q: number): number | undefined {
  if (h.count <= 0) return undefined;
  const rank = Math.max(1, Math.ceil(q * h.count));
  let seen = 0;
  for (let i = 0; i < h.buckets.length; i++) {
    seen += h.buckets[i]!;
    if (seen >= rank) return i === 0 ? 0 : 2 ** ((i - 0.5) / PER_OCTAVE);
  }
  return 2 ** ((h.buckets.length - 1.5) / PER_OCTAVE);
}
