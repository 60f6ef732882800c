/**
 * The bench's `--group-profile` report (bench/group-profile.ts): a window is the difference of each
 * process's snapshots, the processes added together, and the report reads its phases in ms.
 */
import { describe, expect, it } from 'vitest';
import { groupReport, groupWindow } from '../../bench/group-profile.ts';
import { GroupProfile } from '../../src/store/group-profile.ts';

/** A committed group of `members` units whose phases last the given microseconds. */
function group(p: GroupProfile, members: number, us: { reads: number; writes: number; commit: number }): void {
  const formed = 0;
  const connected = 100;
  const barrier = connected + us.reads;
  const commitSent = barrier + us.writes;
  const done = commitSent + us.commit;
  p.committed(
    { formed, connected, barrier, commitSent, done },
    Array.from({ length: members }, () => ({ asked: -2_000, started: 0 })),
  );
}

describe('groupWindow and groupReport', () => {
  it('reports what each process did in the window, together', () => {
    const a = new GroupProfile();
    const b = new GroupProfile();
    // Before the window: slow groups that must not show.
    group(a, 1, { reads: 900_000, writes: 900_000, commit: 900_000 });
    const before = [a.snapshot(), b.snapshot()];
    for (let i = 0; i < 10; i++) group(a, 3, { reads: 1_000, writes: 4_000, commit: 2_000 });
    for (let i = 0; i < 10; i++) group(b, 1, { reads: 1_000, writes: 4_000, commit: 2_000 });
    a.rolledBack();
    const w = groupWindow(before, [a.snapshot(), b.snapshot()]);
    expect(w).toMatchObject({ groups: 20, units: 40, replayed: 1 });
    expect(w.phases.unit.count).toBe(40);
    expect(w.phases.reads.count).toBe(20);

    const lines = groupReport('payment', w, 2);
    expect(lines[0]).toBe(
      'payment: commit groups in the measured window: 10 a second, 2.00 units per group (p50 1, p99 3), 1 rolled back and run again unit by unit',
    );
    const row = (label: string) =>
      lines
        .find((l) => l.startsWith(`| ${label}`))!
        .split('|')
        .map((c) => c.trim());
    // Means are exact; quantiles are a bucket's middle, within 4.5 %.
    expect(row('reads')[2]).toBe('1.00');
    expect(row('writes')[2]).toBe('4.00');
    expect(row('COMMIT')[2]).toBe('2.00');
    expect(Math.abs(Number(row('writes')[5]) - 4) / 4).toBeLessThan(0.045);
    // A unit: 2 ms waiting for its group (asked at −2 ms, started at 0), then 100 µs + 1 + 4 + 2 ms.
    expect(row('a unit waiting')[2]).toBe('2.00');
    expect(row('a unit, asking')[2]).toBe('9.10');
  });

  it('reads a window with no groups as dashes, not as NaN', () => {
    const p = new GroupProfile();
    const lines = groupReport('payment', groupWindow([p.snapshot()], [p.snapshot()]), 10);
    expect(lines.join('\n')).not.toContain('NaN');
    expect(lines[0]).toContain('0 a second, – units per group (p50 –, p99 –)');
  });
});
