/** The bench's PostgreSQL window figures (bench/pg-window.ts): LSN arithmetic and per-response rates. */
import { describe, expect, it } from 'vitest';
import { lsnBytes, pgWindowFigures, type PgCounters } from '../../bench/pg-window.ts';

describe('lsnBytes', () => {
  it('reads both hex halves of an LSN', () => {
    expect(lsnBytes('0/0')).toBe(0n);
    expect(lsnBytes('0/16B3748')).toBe(0x16b3748n);
    expect(lsnBytes('2/14D22880')).toBe((2n << 32n) + 0x14d22880n);
    expect(lsnBytes('ffffffff/ffffffff')).toBe((1n << 64n) - 1n);
  });

  it('refuses what is not an LSN', () => {
    for (const bad of ['', '16B3748', '0/', '0/xyz', '1/2/3']) expect(() => lsnBytes(bad)).toThrow(/not an LSN/);
  });
});

describe('pgWindowFigures', () => {
  const before: PgCounters = { walBytes: lsnBytes('1/B2F42B48'), walSyncs: 100, walFpi: 7, checkpoints: 3, backendWrites: 50 };

  it('divides what happened in the window by the responses', () => {
    const after: PgCounters = {
      walBytes: before.walBytes + 27_464n * 5_236n,
      walSyncs: 100 + 2_461,
      walFpi: 7 + 0,
      checkpoints: 4,
      backendWrites: 50 + 21_782,
    };
    expect(pgWindowFigures(before, after, 5_236)).toEqual({
      'PostgreSQL WAL bytes per response': 27_464,
      'PostgreSQL WAL flushes per response': 0.47,
      'PostgreSQL full-page images per response': 0,
      'PostgreSQL buffers written by backends per response': 4.16,
      'PostgreSQL checkpoints begun in the window': 1,
    });
  });

  it('counts WAL across the 4 GB boundary of the LSN halves', () => {
    const start: PgCounters = { ...before, walBytes: lsnBytes('1/FFFFF000') };
    const end: PgCounters = { ...before, walBytes: lsnBytes('2/00001000') };
    expect(pgWindowFigures(start, end, 2)['PostgreSQL WAL bytes per response']).toBe(4096);
  });
});

describe('pgWindowFigures on a server without some counters', () => {
  it('leaves out what either end could not read, keeps the WAL bytes', () => {
    const before: PgCounters = { walBytes: 0n, walSyncs: 10, checkpoints: 1, backendWrites: undefined };
    const after: PgCounters = { walBytes: 3_000n, walSyncs: 13, checkpoints: undefined, backendWrites: 9 };
    expect(pgWindowFigures(before, after, 3)).toEqual({
      'PostgreSQL WAL bytes per response': 1_000,
      'PostgreSQL WAL flushes per response': 1,
    });
  });
});
