/**
 * `--sql-profile`: where the embedded store's time goes during the measured window, statement by
 * statement. The Corridor child runs with CORRIDOR_SQL_PROFILE=<file> (src/store/sql-profile.ts);
 * on SIGUSR2 it writes its cumulative per-statement timings there. The bench takes a snapshot
 * before and after the window and reports the difference per response.
 */
import type { StatementTiming } from '../src/store/sql-profile.ts';
import { childSnapshot } from './child-snapshot.ts';

export type { StatementTiming };

/** Asks the child for its timings so far and reads them (waits up to 5 s for the file). */
export function sqlSnapshot(pid: number, file: string): Promise<StatementTiming[]> {
  return childSnapshot<StatementTiming[]>(pid, file, '--sql-profile');
}

/** What ran between two snapshots. */
export function sqlDiff(before: StatementTiming[], after: StatementTiming[]): StatementTiming[] {
  const prior = new Map(before.map((t) => [t.sql, t]));
  return after
    .map((t) => {
      const p = prior.get(t.sql);
      return p ? { sql: t.sql, calls: t.calls - p.calls, us: t.us - p.us, rows: t.rows - p.rows } : t;
    })
    .filter((t) => t.calls > 0);
}

/** The report: totals per response, then the statements that took the most time. */
export function sqlReport(scenario: string, window: StatementTiming[], responses: number, top = 15): string[] {
  const n = Math.max(responses, 1);
  const total = window.reduce((a, t) => a + t.us, 0);
  const calls = window.reduce((a, t) => a + t.calls, 0);
  const commits = window.filter((t) => /^\s*commit\b/i.test(t.sql)).reduce((a, t) => a + t.calls, 0);
  const lines = [
    `${scenario}: SQLite time in the measured window: ${(total / n).toFixed(1)} µs per response, ` +
      `${(calls / n).toFixed(2)} statements per response, one COMMIT per ${commits > 0 ? (responses / commits).toFixed(1) : '–'} responses`,
    '',
    '| µs/response | share | calls/response | µs/call | rows/call | statement |',
    '|------------:|------:|---------------:|--------:|----------:|-----------|',
  ];
  for (const t of [...window].sort((a, b) => b.us - a.us).slice(0, top)) {
    const sql = t.sql.replace(/\s+/g, ' ').trim();
    lines.push(
      `| ${(t.us / n).toFixed(1)} | ${((100 * t.us) / (total || 1)).toFixed(1)}% | ${(t.calls / n).toFixed(2)} | ${(t.us / t.calls).toFixed(1)} | ${(t.rows / t.calls).toFixed(1)} | ${sql.length > 110 ? `${sql.slice(0, 107)}…` : sql} |`,
    );
  }
  return lines;
}
