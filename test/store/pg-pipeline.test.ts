/**
 * The pipelined PostgreSQL connection (src/store/pg-pipeline.ts), on a real server: what travels in
 * one round trip, and that a pipeline means exactly what the statements sent one by one would —
 * order, visibility, errors, and COMMIT. PostgreSQL lane only (vitest.config.ts).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { DEFERRED } from '../../src/store/pg-deferred.ts';
import { PipelinedClient } from '../../src/store/pg-pipeline.ts';
import { isStalePreparedStatement, Names } from '../../src/store/pg-prepared.ts';

const url = process.env.TEST_DATABASE_URL!;
const table = `pipeline_probe_${randomBytes(4).toString('hex')}`;
let pool: pg.Pool;
let other: pg.Client;
let client: PipelinedClient;
/** Round trips: pipelines and simple queries the client handed to its pg connection. */
let trips = 0;
/** Describe messages the client wrote to its connection. */
let describes = 0;

beforeAll(async () => {
  if (!url) throw new Error('pg-pipeline runs on the postgres lane (TEST_DATABASE_URL)');
  pool = new pg.Pool({ connectionString: url, max: 1 });
  other = new pg.Client({ connectionString: url });
  await other.connect();
  await other.query(`CREATE TABLE ${table} (k text PRIMARY KEY)`);
  // One connection and one client for the file, as the store keeps one per pooled connection
  // (what it prepared stays prepared on that connection).
  const real = await pool.connect();
  const query = real.query.bind(real) as (...a: unknown[]) => unknown;
  // Counting what reaches the connection: each call is one round trip (one Sync or one simple query).
  (real as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
    trips += 1;
    return query(...a);
  };
  // Describe messages, read off the bytes written to the socket (whole frontend messages: a type
  // byte and a length that counts itself, not the type).
  const stream = (real as unknown as { connection: { stream: { write: (b: unknown, ...rest: unknown[]) => boolean } } }).connection.stream;
  const write = stream.write.bind(stream);
  stream.write = (b: unknown, ...rest: unknown[]) => {
    if (Buffer.isBuffer(b)) for (let at = 0; at + 5 <= b.length; at += 1 + b.readInt32BE(at + 1)) if (b[at] === 0x44) describes += 1;
    return write(b, ...rest);
  };
  client = new PipelinedClient(real, new Names(), isStalePreparedStatement);
});

afterAll(async () => {
  client.release();
  await other.query(`DROP TABLE IF EXISTS ${table}`);
  await other.end();
  await pool.end();
});

beforeEach(async () => {
  await other.query(`DELETE FROM ${table}`);
  trips = 0;
});

const insert = `insert into ${table} (k) values ($1)`;
const count = `select count(*)::int as n from ${table}`;
const keys = async () => (await other.query(`SELECT k FROM ${table} ORDER BY k`)).rows.map((r) => r.k as string);

it('sends BEGIN and deferred writes with the next statement, which sees them, and what is left with COMMIT', async () => {
  await client.query('begin', []);
  await client.query(DEFERRED + insert, ['a']);
  await client.query(DEFERRED + insert, ['b']);
  expect(trips).toBe(0);
  const r = await client.query(count, []);
  expect(r.rows).toEqual([{ n: 2 }]);
  expect(trips).toBe(1);
  await client.query(DEFERRED + insert, ['c']);
  expect(await keys()).toEqual([]);
  await client.query('commit', []);
  expect(trips).toBe(2);
  expect(await keys()).toEqual(['a', 'b', 'c']);
});

it('sends nothing for an empty transaction, and runs a deferred statement at once outside one', async () => {
  await client.query('begin', []);
  await client.query('commit', []);
  expect(trips).toBe(0);
  await client.query(DEFERRED + insert, ['x']);
  expect(trips).toBe(1);
  expect(await keys()).toEqual(['x']);
});

it('fails the statement a failing deferred write travels with, with the write’s own error; nothing commits', async () => {
  await other.query(`INSERT INTO ${table} VALUES ('dup')`);
  await client.query('begin', []);
  await client.query(DEFERRED + insert, ['d1']);
  await client.query(DEFERRED + insert, ['dup']);
  await expect(client.query(count, [])).rejects.toMatchObject({ code: '23505' });
  await client.query('rollback', []);
  expect(await keys()).toEqual(['dup']);
  // The connection goes on: the same statements run again, prepared or not.
  await client.query('begin', []);
  await client.query(DEFERRED + insert, ['d2']);
  await client.query('commit', []);
  expect(await keys()).toEqual(['d2', 'dup']);
});

it('never runs a COMMIT that travels behind a failed write', async () => {
  await other.query(`INSERT INTO ${table} VALUES ('dup')`);
  await client.query('begin', []);
  await client.query(DEFERRED + insert, ['c1']);
  await client.query(DEFERRED + insert, ['dup']);
  await expect(client.query('commit', [])).rejects.toMatchObject({ code: '23505' });
  await client.query('rollback', []);
  expect(await keys()).toEqual(['dup']);
});

it('answers COMMIT of a transaction an earlier error aborted with an error, not a quiet rollback', async () => {
  await client.query('begin', []);
  await client.query(insert, ['e1']);
  await expect(client.query('select 1 / 0', [])).rejects.toMatchObject({ code: '22012' });
  await expect(client.query('commit', [])).rejects.toMatchObject({ code: '25P02' });
  await client.query('rollback', []);
  expect(await keys()).toEqual([]);
});

it('sends statements issued in one turn as one pipeline, each with its own result', async () => {
  await client.query('begin', []);
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => client.query(`select $1::int * 2 as v`, [i])));
  expect(results.map((r) => r.rows[0]!.v)).toEqual([0, 2, 4, 6, 8, 10]);
  expect(trips).toBe(1);
  await client.query('commit', []);
});

it('sends statements issued while a pipeline is on the wire together, after it', async () => {
  await client.query('begin', []);
  const first = client.query(`select pg_sleep(0.05), 1 as v`, []);
  // A later turn: the first pipeline is on the wire by now.
  await new Promise((r) => setTimeout(r, 10));
  const rest = Array.from({ length: 5 }, (_, i) => client.query(`select $1::int * 2 as v`, [i]));
  const results = await Promise.all([first, ...rest]);
  expect(results.map((r) => r.rows[0]!.v)).toEqual([1, 0, 2, 4, 6, 8]);
  // The first went alone; the five issued while it was on the wire went as one.
  expect(trips).toBe(2);
  await client.query('commit', []);
});

it('fails every statement from a failed one on in a shared pipeline, and those before it succeed', async () => {
  await other.query(`INSERT INTO ${table} VALUES ('dup')`);
  await client.query('begin', []);
  const first = client.query(count, []);
  const outcomes = await Promise.allSettled([first, client.query(count, []), client.query(insert, ['dup']), client.query(count, [])]);
  expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected']);
  for (const o of outcomes.slice(2)) expect((o as PromiseRejectedResult).reason.code).toBe('23505');
  await client.query('rollback', []);
});

it('runs a statement again after a pipeline failed between its Parse and its execution', async () => {
  const unique = `insert into ${table} (k) values ($1) returning k`;
  await other.query(`INSERT INTO ${table} VALUES ('taken')`);
  // Its first use is parsed, then fails executing: whether it stayed prepared is not known.
  await expect(client.query(unique, ['taken'])).rejects.toMatchObject({ code: '23505' });
  const r = await client.query(unique, ['free']);
  expect(r.rows).toEqual([{ k: 'free' }]);
  expect((await client.query(unique, ['free2'])).rows).toEqual([{ k: 'free2' }]);
});

it('describes a prepared statement once per connection, and reads its later results by those columns', async () => {
  await other.query(`INSERT INTO ${table} VALUES ('d1'), ('d2')`);
  const typed = `select k, length(k)::int as n, null::int as nothing, $1::boolean as flag from ${table} order by k`;
  const upsert = `insert into ${table} (k) values ($1) on conflict (k) do nothing`;
  const expected = (flag: boolean) => [
    { k: 'd1', n: 2, nothing: null, flag },
    { k: 'd2', n: 2, nothing: null, flag },
  ];
  describes = 0;
  expect((await client.query(typed, [true])).rows).toEqual(expected(true));
  // A statement without rows: its Describe is answered NoData.
  await client.query(upsert, ['d0']);
  expect(describes).toBe(2);
  // Both again, and in one pipeline with a statement still unknown: only that one is described.
  const [a, b, c] = await Promise.all([
    client.query(typed, [false]),
    client.query(upsert, ['d3']),
    client.query(`select count(*)::int as total, $1::text as tag from ${table}`, ['t']),
  ]);
  expect(a.rows).toEqual([{ k: 'd0', n: 2, nothing: null, flag: false }, ...expected(false)]);
  expect(b).toMatchObject({ command: 'INSERT', rowCount: 1, rows: [] });
  expect(c.rows).toEqual([{ total: 4, tag: 't' }]);
  expect(describes).toBe(3);
  expect(trips).toBe(3);
});

it('fails a statement whose value cannot be sent without writing anything, and the connection goes on', async () => {
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  const before = trips;
  await expect(client.query('select $1::text as v', [circular])).rejects.toBeInstanceOf(TypeError);
  expect(trips).toBe(before + 1);
  // Nothing of it reached the server: the next statement on the connection is answered as its own.
  expect((await client.query('select $1::text as v', ['after'])).rows).toEqual([{ v: 'after' }]);
});

it('runs a script of several statements by the simple protocol, after what is pending', async () => {
  await client.query('begin', []);
  await client.query(DEFERRED + insert, ['s1']);
  await client.query(`insert into ${table} (k) values ('s2'); insert into ${table} (k) values ('s3')`, []);
  expect(trips).toBe(2);
  await client.query('commit', []);
  expect(await keys()).toEqual(['s1', 's2', 's3']);
});
