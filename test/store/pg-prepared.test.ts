/**
 * PostgreSQL statements prepared once per connection (src/store/pg-prepared.ts): a parameterised
 * statement is prepared under a name and reused; a statement whose result type another process's
 * migration changed is prepared again (outside a transaction transparently; inside one the
 * transaction fails once, as with any transient error). Store-level, on the postgres lane only
 * (vitest.config.ts).
 */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.ts';
import { isTransientConflict, retryOnConflict } from '../../src/store/retry.ts';

const url = process.env.TEST_DATABASE_URL!;
const table = `prepared_probe_${randomBytes(4).toString('hex')}`;
let store: Store;
// biome-ignore lint/suspicious/noExplicitAny: `any`: a scratch table outside the application schema.
let db: Kysely<any>;
let other: pg.Client;

beforeAll(async () => {
  if (!url) throw new Error('pg-prepared runs on the postgres lane (TEST_DATABASE_URL)');
  // One connection, so that what it prepared is visible to it.
  store = openStore({ databaseUrl: url, dataDir: '/nonexistent', poolSize: 1 });
  // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
  db = store.db as Kysely<any>;
  other = new pg.Client({ connectionString: url });
  await other.connect();
  await other.query(`CREATE TABLE ${table} (id integer PRIMARY KEY, a text NOT NULL)`);
  await other.query(`INSERT INTO ${table} VALUES (1, 'one'), (2, 'two')`);
});

afterAll(async () => {
  await other.query(`DROP TABLE IF EXISTS ${table}`);
  await other.end();
  await store.close();
});

const byId = (id: number) => db.selectFrom(table).selectAll().where('id', '=', id).executeTakeFirst();

it('prepares a parameterised statement once per connection and reuses it', async () => {
  expect(await byId(1)).toEqual({ id: 1, a: 'one' });
  expect(await byId(2)).toEqual({ id: 2, a: 'two' });
  const compiled = db.selectFrom(table).selectAll().where('id', '=', 1).compile().sql;
  const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db);
  const mine = rows.filter((r) => r.statement === compiled);
  expect(mine).toHaveLength(1);
  expect(mine[0]!.name).toMatch(/^c\d+_\d+$/);
  // Statements without parameters (BEGIN, COMMIT, this one) go in pipelines, prepared by name too;
  // a script of several statements goes by the simple protocol, unprepared.
  expect(rows.some((r) => r.statement.startsWith('select name'))).toBe(true);
  await sql`select 1; select 2`.execute(db);
  const after = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
  expect(after.rows.some((r) => r.statement.includes('select 2'))).toBe(false);
});

it('prepares again when another process changes the result type: at once outside a transaction, after one failed transaction inside', async () => {
  expect(await byId(1)).toEqual({ id: 1, a: 'one' });
  await other.query(`ALTER TABLE ${table} ADD COLUMN b text NOT NULL DEFAULT 'bee'`);
  // Outside a transaction the stale statement is replaced and the query run again.
  expect(await byId(1)).toEqual({ id: 1, a: 'one', b: 'bee' });
  // Prepared again (under a new name) on this use.
  expect(await byId(2)).toEqual({ id: 2, a: 'two', b: 'bee' });

  await other.query(`ALTER TABLE ${table} ADD COLUMN c integer NOT NULL DEFAULT 7`);
  const inTrx = () => db.transaction().execute((trx) => trx.selectFrom(table).selectAll().where('id', '=', 2).executeTakeFirst());
  await expect(inTrx()).rejects.toMatchObject({ code: '0A000' });
  expect(await inTrx()).toEqual({ id: 2, a: 'two', b: 'bee', c: 7 });
  // Which is why request transactions count it as a transient conflict and run again.
  await other.query(`ALTER TABLE ${table} ADD COLUMN d integer NOT NULL DEFAULT 8`);
  expect(await retryOnConflict(inTrx)).toEqual({ id: 2, a: 'two', b: 'bee', c: 7, d: 8 });
});

it('leaves any other 0A000 ("feature not supported") an error: neither prepared again nor retried', async () => {
  let runs = 0;
  const aggregateForUpdate = () => {
    runs++;
    return sql`select count(*) from ${sql.table(table)} where id > ${0} for update`.execute(db);
  };
  const err = await retryOnConflict(aggregateForUpdate).catch((e: unknown) => e);
  expect(err).toMatchObject({ code: '0A000' });
  expect(isTransientConflict(err)).toBe(false);
  expect(runs).toBe(1);
  // The statements prepared so far are still in use.
  expect(await byId(1)).toMatchObject({ id: 1, a: 'one' });
});
