/**
 * The commit groups' profile (src/store/group-profile.ts, CORRIDOR_GROUP_PROFILE; PostgreSQL lane
 * only): every committed group's phases land where they were spent, rolled-back groups are
 * counted and not timed, and nothing is recorded without a profile.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { histogramMean, histogramQuantile } from '../../src/lib/histogram.ts';
import { GROUP_PHASES, GroupProfile } from '../../src/store/group-profile.ts';
import { PgGroupCommit } from '../../src/store/pg-group-commit.ts';
import type { Database } from '../../src/store/schema.ts';

const url = process.env.TEST_DATABASE_URL;
if (!url) throw new Error('pg-group-profile runs on the postgres lane (TEST_DATABASE_URL)');

let db: Kysely<Database>;

beforeAll(async () => {
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 4 }) }) });
  await sql`create table gp_rows (k text primary key)`.execute(db);
});
afterAll(async () => {
  await db.destroy();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A unit that reads, waits `readMs`, writes its row (its first write: the group's barrier), then waits `writeMs`. */
function unit(k: string, readMs = 0, writeMs = 0) {
  return async (trx: Kysely<Database>) => {
    await sql`select 1`.execute(trx);
    if (readMs) await sleep(readMs);
    await sql`insert into gp_rows (k) values (${k})`.execute(trx);
    if (writeMs) await sleep(writeMs);
    return k;
  };
}

describe('GroupProfile', () => {
  it('times every committed group and its members, and counts them as the group commit does', async () => {
    const profile = new GroupProfile();
    const gc = new PgGroupCommit(db, 2, profile);
    await Promise.all(Array.from({ length: 40 }, (_, i) => gc.run(unit(`a${i}`))));
    const s = profile.snapshot();
    expect(s).toMatchObject({ groups: gc.stats.groups, units: 40, replayed: 0 });
    expect(s.groups).toBeLessThan(40);
    for (const phase of ['connection', 'reads', 'writes', 'commit', 'members'] as const)
      expect(s.phases[phase].count, phase).toBe(s.groups);
    expect(s.phases.queued.count).toBe(40);
    expect(s.phases.unit.count).toBe(40);
    expect(s.phases.members.sum).toBe(40);
    // A unit's time covers its group's COMMIT round trip at least.
    expect(histogramMean(s.phases.unit)!).toBeGreaterThanOrEqual(histogramMean(s.phases.commit)!);
    expect(Object.keys(s.phases).sort()).toEqual([...GROUP_PHASES].sort());
  });

  it('puts the time before the barrier in reads and the time after it in writes', async () => {
    const profile = new GroupProfile();
    const gc = new PgGroupCommit(db, 1, profile);
    await gc.run(unit('b1', 60, 0));
    await gc.run(unit('b2', 0, 400));
    const s = profile.snapshot();
    expect(s.groups).toBe(2);
    const reads = s.phases.reads;
    const writes = s.phases.writes;
    // One group read for 60 ms, the other wrote for 400 ms; each phase's other group took less
    // (microseconds; a bucket's middle is within 4.5 % of its values; the bounds leave room for a
    // busy machine's round trips, and none would let a swap of the two phases through).
    expect(histogramQuantile(reads, 1)!).toBeGreaterThan(57_000);
    expect(histogramQuantile(reads, 1)!).toBeLessThan(300_000);
    expect(histogramQuantile(reads, 0.5)!).toBeLessThan(57_000);
    expect(histogramQuantile(writes, 1)!).toBeGreaterThan(380_000);
    expect(histogramQuantile(writes, 0.5)!).toBeLessThan(300_000);
  });

  it('counts a group that rolls back without timing it; its units, run again alone, are not timed either', async () => {
    const profile = new GroupProfile();
    const gc = new PgGroupCommit(db, 1, profile);
    const outcomes = await Promise.allSettled([
      gc.run(unit('c1')),
      gc.run(async (trx) => {
        await unit('c2')(trx);
        throw new Error('refused after writing');
      }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    const s = profile.snapshot();
    expect(s.replayed).toBe(gc.stats.replayed);
    expect(s.replayed).toBeGreaterThan(0);
    expect(s.groups).toBe(gc.stats.groups);
    expect(s.phases.unit.count).toBe(s.units);
  });
});
