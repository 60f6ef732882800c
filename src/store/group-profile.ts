/**
 * Where a PostgreSQL commit group's time goes (store/pg-group-commit.ts): a development tool behind
 * CORRIDOR_GROUP_PROFILE (`npm run bench -- --group-profile`), off otherwise (the groups then take
 * no timings at all).
 *
 * Every committed group adds its phases to histograms, in microseconds of wall-clock time on the
 * event loop's clock — what a caller waits, whatever it waited for (the server, a row lock, a CPU):
 * - `queued`: a unit, from asking to run to starting in a group (waiting for a free group slot);
 * - `connection`: a group, from being formed to having a pool connection;
 * - `reads`: from its BEGIN to the barrier where every member has come to its first write (or ended);
 * - `writes`: from that barrier to sending COMMIT — the row locks taken at the barrier are waited
 *   for and held in this phase;
 * - `commit`: the COMMIT round trip (the WAL flush included);
 * - `unit`: a unit, from asking to run to its group's COMMIT answered (one that left its group to
 *   run alone, `requireOwnTransaction`, is timed to its group's COMMIT too);
 * - `members`: units per group (a count, not a time).
 * Groups that roll back (their members then run alone) are counted, not timed. The totals are
 * cumulative; a reader takes two snapshots and subtracts (the bench does it around its window).
 */
import { Histogram, type HistogramSnapshot } from '../lib/histogram.ts';

export const GROUP_PHASES = ['queued', 'connection', 'reads', 'writes', 'commit', 'unit', 'members'] as const;
export type GroupPhase = (typeof GROUP_PHASES)[number];

export interface GroupProfileSnapshot {
  /** Groups committed, units committed in them, groups rolled back (their units run again alone). */
  groups: number;
  units: number;
  replayed: number;
  phases: Record<GroupPhase, HistogramSnapshot>;
}

export class GroupProfile {
  private readonly histograms = new Map<GroupPhase, Histogram>(GROUP_PHASES.map((p) => [p, new Histogram()]));
  private groups = 0;
  private units = 0;
  private replayed = 0;

  /** The clock the phases are measured on, in microseconds. */
  now(): number {
    return performance.now() * 1000;
  }

  /**
   * A committed group: when it was formed, got its connection, reached its barrier (undefined: it
   * never did, so its reads lasted until COMMIT), sent COMMIT and heard the answer; and when each of
   * its members asked to run and started in it.
   */
  committed(
    t: { formed: number; connected: number; barrier: number | undefined; commitSent: number; done: number },
    members: ReadonlyArray<{ asked: number; started: number }>,
  ): void {
    const barrier = t.barrier ?? t.commitSent;
    this.add('connection', t.connected - t.formed);
    this.add('reads', barrier - t.connected);
    this.add('writes', t.commitSent - barrier);
    this.add('commit', t.done - t.commitSent);
    this.add('members', members.length);
    for (const m of members) {
      this.add('queued', m.started - m.asked);
      this.add('unit', t.done - m.asked);
    }
    this.groups += 1;
    this.units += members.length;
  }

  rolledBack(): void {
    this.replayed += 1;
  }

  snapshot(): GroupProfileSnapshot {
    const phases = {} as Record<GroupPhase, HistogramSnapshot>;
    for (const p of GROUP_PHASES) phases[p] = this.histograms.get(p)!.snapshot();
    return { groups: this.groups, units: this.units, replayed: this.replayed, phases };
  }

  private add(phase: GroupPhase, value: number): void {
    this.histograms.get(phase)!.record(value);
  }
}
