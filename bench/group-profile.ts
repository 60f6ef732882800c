/**
 * `--group-profile`: where PostgreSQL commit groups spend their time in the measured window. Each
 * Corridor child runs with CORRIDOR_GROUP_PROFILE=<its own file> (src/store/group-profile.ts); on
 * SIGUSR2 it writes its cumulative phase histograms there. The bench takes a snapshot of every
 * process before and after the window and reports the difference, the processes together.
 */
import { histogramDiff, histogramMean, histogramQuantile, histogramSum, type HistogramSnapshot } from '../src/lib/histogram.ts';
import { GROUP_PHASES, type GroupPhase, type GroupProfileSnapshot } from '../src/store/group-profile.ts';
import { childSnapshot } from './child-snapshot.ts';

export type { GroupProfileSnapshot };

export function groupSnapshot(pid: number, file: string): Promise<GroupProfileSnapshot> {
  return childSnapshot<GroupProfileSnapshot>(pid, file, '--group-profile');
}

/** What the processes did between their snapshots `before` and `after` (same order), together. */
export function groupWindow(before: readonly GroupProfileSnapshot[], after: readonly GroupProfileSnapshot[]): GroupProfileSnapshot {
  const diffs = after.map((a, i) => {
    const b = before[i];
    const phases = {} as Record<GroupPhase, HistogramSnapshot>;
    for (const p of GROUP_PHASES) phases[p] = histogramDiff(a.phases[p], b?.phases[p]);
    return { groups: a.groups - (b?.groups ?? 0), units: a.units - (b?.units ?? 0), replayed: a.replayed - (b?.replayed ?? 0), phases };
  });
  const phases = {} as Record<GroupPhase, HistogramSnapshot>;
  for (const p of GROUP_PHASES) phases[p] = histogramSum(diffs.map((d) => d.phases[p]));
  return {
    groups: diffs.reduce((n, d) => n + d.groups, 0),
    units: diffs.reduce((n, d) => n + d.units, 0),
    replayed: diffs.reduce((n, d) => n + d.replayed, 0),
    phases,
  };
}

const LABELS: Record<Exclude<GroupPhase, 'members'>, string> = {
  queued: 'a unit waiting for a group slot',
  connection: 'a group getting its pool connection',
  reads: 'reads: BEGIN to the barrier (every member at its first write)',
  writes: 'writes: barrier to COMMIT sent (row locks waited for and held)',
  commit: 'COMMIT round trip',
  unit: 'a unit, asking to run to its COMMIT answered',
};

/** A count read from a histogram (exact up to 11, where each whole number has a bucket of its own). */
function whole(v: number | undefined): string {
  return v === undefined ? '–' : String(Math.round(v));
}

/** The report: groups and their sizes, then each phase's mean and quantiles in milliseconds. */
export function groupReport(scenario: string, w: GroupProfileSnapshot, seconds: number): string[] {
  const size = w.phases.members;
  const f = (v: number | undefined, scale: number) => (v === undefined ? '–' : (v / scale).toFixed(v / scale < 10 ? 2 : 1));
  const lines = [
    `${scenario}: commit groups in the measured window: ${seconds > 0 ? (w.groups / seconds).toFixed(0) : '–'} a second, ` +
      `${f(histogramMean(size), 1)} units per group (p50 ${whole(histogramQuantile(size, 0.5))}, p99 ${whole(histogramQuantile(size, 0.99))}), ` +
      `${w.replayed} rolled back and run again unit by unit`,
    '',
    '| phase | mean ms | p50 ms | p90 ms | p99 ms |',
    '|-------|--------:|-------:|-------:|-------:|',
  ];
  for (const p of GROUP_PHASES) {
    if (p === 'members') continue;
    const h = w.phases[p];
    lines.push(
      `| ${LABELS[p]} | ${f(histogramMean(h), 1000)} | ${f(histogramQuantile(h, 0.5), 1000)} | ${f(histogramQuantile(h, 0.9), 1000)} | ${f(histogramQuantile(h, 0.99), 1000)} |`,
    );
  }
  return lines;
}
