/**
 * The bench's PostgreSQL counters (bench/pg-window.ts) against the lane's real server: each one is
 * read with the query this server version has (chosen by `server_version_num`, so that no query on
 * a view the server lacks leaves an ERROR in its log at the edges of a measured window).
 */
import pg from 'pg';
import { expect, it } from 'vitest';
import { pgCounters } from '../../bench/pg-window.ts';

const url = process.env.TEST_DATABASE_URL;
if (!url) throw new Error('pg-bench-window runs on the postgres lane (TEST_DATABASE_URL)');

it('reads every counter this server version keeps', async () => {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const version = Number((await client.query<{ v: string }>("select current_setting('server_version_num') as v")).rows[0]!.v);
  await client.end();

  const counters = await pgCounters(url);
  expect(counters.walBytes).toBeGreaterThan(0n);
  expect(counters.walSyncs).toEqual(expect.any(Number));
  expect(counters.checkpoints).toEqual(expect.any(Number));
  // pg_stat_bgwriter lost buffers_backend in PostgreSQL 17 (it moved to pg_stat_io).
  if (version >= 170000) expect(counters.backendWrites).toBeUndefined();
  else expect(counters.backendWrites).toEqual(expect.any(Number));
});
