/**
 * PostgreSQL lane: each test file gets a schema of its own in the lane's database.
 *
 * The files of the lane run side by side (one per vitest worker), and several start servers whose
 * clock is not the real one (frozen in the past or future, or skewed). Every server's job runner and
 * webhook deliverer works on every platform in its store, so on one shared schema a server frozen in
 * 2031 would run another file's delayed outcomes at once, and a real-clock server would run a
 * frozen-clock file's outcomes before that file advances its clock. A schema per file keeps what each
 * file's servers see to that file; its servers, child processes and direct store connections all get
 * it, because TEST_DATABASE_URL is rewritten to carry it as the connection's search_path.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { resetPgSchema, withSearchPath } from '../../bench/dataset/writers.ts';

/** The lane's database as CI gave it (kept across files run in the same worker). */
const base = process.env.CORRIDOR_TEST_DATABASE_BASE_URL ?? process.env.TEST_DATABASE_URL;

if (base) {
  process.env.CORRIDOR_TEST_DATABASE_BASE_URL = base;
  const schema = `test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await resetPgSchema(base, schema);
  process.env.TEST_DATABASE_URL = withSearchPath(base, schema);

  // Registered before the file's own hooks, so it runs after them (hooks unwind as a stack): the
  // file's servers are closed by then. Best effort: a lock still held by a killed process's
  // connection gives up after a few seconds, and CI drops the whole database at the end anyway.
  afterAll(async () => {
    const client = new pg.Client({ connectionString: base });
    try {
      await client.connect();
      await client.query(`SET lock_timeout = '5s'; DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } catch {
      // Left behind; see above.
    } finally {
      await client.end().catch(() => undefined);
    }
  });
}
