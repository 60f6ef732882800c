/**
 * Progress (src/lib/progress.ts): what a long phase writes, on a fake output (TTY or not) and an
 * injected clock — the in-place line and its throttle on a terminal, the rare plain lines elsewhere,
 * final lines, phases of unknown total, and the quiet modes migrations use.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  formatCount,
  formatDuration,
  PLAIN_INTERVAL_MS,
  PLAIN_UNKNOWN_INTERVAL_MS,
  Progress,
  type ProgressOptions,
  RATE_AFTER_MS,
  TTY_REFRESH_MS,
} from '../../src/lib/progress.ts';

/** A fake stderr that records every write, and a clock moved by hand. */
function rig(isTTY: boolean, columns?: number) {
  const writes: string[] = [];
  let t = 1_000;
  const output = { isTTY, columns, write: (s: string) => writes.push(s) };
  return {
    writes,
    output,
    advance: (ms: number) => {
      t += ms;
    },
    opts: (extra: ProgressOptions = {}): ProgressOptions => ({ output, now: () => t, prefix: 'ds: ', ...extra }),
    /** The text of the in-place redraws (without `\r` and the clear-to-end). */
    draws: () => writes.filter((w) => w.startsWith('\r') && w.length > 4).map((w) => w.slice(1).replace('\x1b[K', '')),
    lines: () => writes.filter((w) => w.endsWith('\n')),
  };
}

describe('formatting', () => {
  it('durations: tenths of seconds under a minute, then minutes and seconds, then hours and minutes', () => {
    expect(formatDuration(0)).toBe('0.0 s');
    expect(formatDuration(4_240)).toBe('4.2 s');
    expect(formatDuration(59_940)).toBe('59.9 s');
    expect(formatDuration(59_960)).toBe('1 min 00 s');
    expect(formatDuration(185_000)).toBe('3 min 05 s');
    expect(formatDuration(3_599_600)).toBe('1 h 00 min');
    expect(formatDuration(3_725_000)).toBe('1 h 02 min');
    expect(formatDuration(-5)).toBe('0.0 s');
  });

  it('counts: whole numbers with thousands separators', () => {
    expect(formatCount(1_000_000)).toBe('1,000,000');
    expect(formatCount(9_120.7)).toBe('9,120');
  });
});

describe('on a terminal', () => {
  it('draws the phase at once, then one line in place with done/total, percent, rate and ETA', () => {
    const r = rig(true);
    const p = new Progress('transactions', 1_000_000, r.opts());
    expect(r.draws()).toEqual(['ds: transactions 0/1,000,000 (0%), ETA …']);
    // No rate or ETA from the first moments of a phase.
    r.advance(RATE_AFTER_MS - 1);
    p.update(60);
    expect(r.draws().at(-1)).toBe('ds: transactions 60/1,000,000 (0%), ETA …');
    r.advance(10_000 - RATE_AFTER_MS + 1);
    p.update(250_000);
    expect(r.draws().at(-1)).toBe('ds: transactions 250,000/1,000,000 (25%), 25,000/s, ETA 30.0 s');
    // Every in-place write returns to the start of the line and clears what a longer line left; no newline.
    for (const w of r.writes) {
      expect(w.startsWith('\r')).toBe(true);
      expect(w.endsWith('\x1b[K')).toBe(true);
      expect(w).not.toContain('\n');
    }
  });

  it('redraws at most every TTY_REFRESH_MS (5 a second) however often it is updated', () => {
    const r = rig(true);
    const p = new Progress('customers', 10_000, r.opts());
    // 10,000 updates, one a millisecond: 10 s.
    for (let i = 1; i <= 10_000; i++) {
      r.advance(1);
      p.update(i);
    }
    const draws = r.writes.length;
    expect(draws).toBeLessThanOrEqual(1 + 10_000 / TTY_REFRESH_MS);
    expect(draws).toBeGreaterThanOrEqual(10_000 / TTY_REFRESH_MS - 1);
    // Nothing drawn within TTY_REFRESH_MS of the last draw.
    const before = r.writes.length;
    p.update(10_000);
    r.advance(TTY_REFRESH_MS - 1);
    p.update(10_000);
    expect(r.writes.length).toBe(before);
  });

  it('ends with the line cleared and a final line with the elapsed time and rate', () => {
    const r = rig(true);
    const p = new Progress('customers', 100_000, r.opts());
    r.advance(14_800);
    p.update(100_000);
    p.finish();
    expect(r.writes.at(-2)).toBe('\r\x1b[K');
    expect(r.writes.at(-1)).toBe('ds: customers: 100,000/100,000 in 14.8 s (6,756/s)\n');
    // Finished: later calls write nothing.
    const n = r.writes.length;
    r.advance(10_000);
    p.update(5);
    p.finish();
    p.abandon();
    expect(r.writes.length).toBe(n);
  });

  it('final lines go through `line` when given (the caller adds its own prefix)', () => {
    const r = rig(true);
    const got: string[] = [];
    const p = new Progress('customers', 10, r.opts({ line: (t) => got.push(t) }));
    r.advance(2_000);
    p.update(10);
    p.finish();
    expect(got).toEqual(['customers: 10/10 in 2.0 s (5/s)']);
    expect(r.lines()).toEqual([]);
  });

  it('cuts the line to the terminal width, so it never wraps', () => {
    const r = rig(true, 30);
    new Progress('a-phase-with-a-very-long-name', 1_000_000, r.opts());
    expect(r.draws()).toEqual(['ds: a-phase-with-a-very-long-'.slice(0, 29)]);
  });

  it('a phase of unknown total shows its elapsed time and detail', () => {
    const r = rig(true);
    const p = new Progress('indexes', undefined, r.opts());
    r.advance(12_340);
    p.update(4, '5/23 transactions_platform_idx');
    expect(r.draws().at(-1)).toBe('ds: indexes 12.3 s, 5/23 transactions_platform_idx');
    r.advance(1_000);
    p.finish();
    expect(r.writes.at(-1)).toBe('ds: indexes: done in 13.3 s\n');
  });

  it('abandon() clears the line and writes no final line', () => {
    const r = rig(true);
    const p = new Progress('transactions', 10, r.opts());
    r.advance(5_000);
    p.update(3);
    p.abandon();
    expect(r.writes.at(-1)).toBe('\r\x1b[K');
    expect(r.lines()).toEqual([]);
  });

  it('refreshEvery() redraws the elapsed time while no update comes', () => {
    vi.useFakeTimers();
    const r = rig(true);
    const p = new Progress('indexes', undefined, { ...r.opts(), now: () => Date.now() }).refreshEvery(1_000);
    vi.advanceTimersByTime(3_000);
    expect(r.draws().map((d) => d.replace(/[\d.]+ s/, 'N s'))).toEqual(Array(4).fill('ds: indexes N s'));
    p.finish();
    const n = r.writes.length;
    vi.advanceTimersByTime(5_000);
    expect(r.writes.length).toBe(n);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('off a terminal (CI, pipes)', () => {
  /** Updates every 100 ms, linearly to `total` over `ms`; returns the lines written. */
  function run(ms: number, total: number | undefined, extra: ProgressOptions = {}) {
    const r = rig(false);
    const p = new Progress('transactions', total, r.opts(extra));
    for (let t = 100; t <= ms; t += 100) {
      r.advance(100);
      p.update(Math.round(((total ?? 1000) * t) / ms));
    }
    p.finish();
    return r;
  }

  it('no in-place drawing: plain lines only, never at the start', () => {
    const r = run(60_000, 600);
    for (const w of r.writes) {
      expect(w).not.toContain('\r');
      expect(w).not.toContain('\x1b');
      expect(w.endsWith('\n')).toBe(true);
    }
    expect(r.writes[0]).not.toMatch(/ 0\/600/);
  });

  it('a slow phase: a line every 10 % (not every 5 s), then the final line', () => {
    // 10 % takes 6 s here, longer than PLAIN_INTERVAL_MS.
    const r = run(60_000, 600);
    expect(r.lines()).toEqual([
      ...[60, 120, 180, 240, 300, 360, 420, 480, 540].map((d) =>
        expect.stringMatching(new RegExp(`^ds: transactions: ${d}/600 \\(\\d+%\\), 10/s, ETA `)),
      ),
      'ds: transactions: 600/600 in 1 min 00 s (10/s)\n',
    ]);
  });

  it('a fast phase: a line every 5 s (not every 10 %), then the final line', () => {
    // 10 % takes 2 s here: lines at 5, 10 and 15 s.
    const r = run(20_000, 1_000_000);
    expect(r.lines()).toEqual([
      'ds: transactions: 250,000/1,000,000 (25%), 50,000/s, ETA 15.0 s\n',
      'ds: transactions: 500,000/1,000,000 (50%), 50,000/s, ETA 10.0 s\n',
      'ds: transactions: 750,000/1,000,000 (75%), 50,000/s, ETA 5.0 s\n',
      'ds: transactions: 1,000,000/1,000,000 in 20.0 s (50,000/s)\n',
    ]);
  });

  it('a phase shorter than PLAIN_INTERVAL_MS writes its final line only', () => {
    const r = run(PLAIN_INTERVAL_MS - 100, 1_000);
    expect(r.lines()).toEqual(['ds: transactions: 1,000/1,000 in 4.9 s (204/s)\n']);
  });

  it('a phase of unknown total: a line every PLAIN_UNKNOWN_INTERVAL_MS', () => {
    const r = run(70_000, undefined);
    expect(PLAIN_UNKNOWN_INTERVAL_MS).toBe(30_000);
    expect(r.lines()).toEqual(['ds: transactions: 30.0 s\n', 'ds: transactions: 1 min 00 s\n', 'ds: transactions: done in 1 min 10 s\n']);
  });

  it('refreshEvery() starts no timer', () => {
    vi.useFakeTimers();
    const r = rig(false);
    new Progress('indexes', undefined, r.opts()).refreshEvery(1_000);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('quiet modes (migrations)', () => {
  it('ttyOnly: nothing at all off a terminal, final line included', () => {
    const r = run2(false);
    expect(r.writes).toEqual([]);
  });

  it('showAfterMs: nothing for a phase that ends sooner, on a terminal too', () => {
    const r = rig(true);
    const p = new Progress('migrations', 40, r.opts({ ttyOnly: true, showAfterMs: 2_000, rate: false }));
    for (let i = 0; i < 40; i++) {
      r.advance(40);
      p.update(i, `applying m${i}`);
    }
    p.finish();
    expect(r.writes).toEqual([]);
  });

  it('showAfterMs: a longer phase shows which step runs (n/total) from then on, and its time', () => {
    const r = run2(true);
    expect(r.draws()[0]).toBe('ds: migrations 20/40 (50%), applying m20');
    expect(r.draws().every((d) => !d.includes('/s'))).toBe(true);
    expect(r.lines()).toEqual(['ds: migrations: 40/40 in 4.0 s\n']);
  });

  /** 40 steps of 100 ms under the migrations' options. */
  function run2(isTTY: boolean) {
    const r = rig(isTTY);
    const p = new Progress('migrations', 40, r.opts({ ttyOnly: true, showAfterMs: 2_000, rate: false }));
    for (let i = 0; i < 40; i++) {
      p.update(i, `applying m${i}`);
      r.advance(100);
    }
    p.update(40);
    p.finish();
    return r;
  }
});

afterEach(() => {
  vi.useRealTimers();
});
