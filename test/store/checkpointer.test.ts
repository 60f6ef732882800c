/**
 * The SQLite store's WAL checkpoints on a worker thread (src/store/sqlite-checkpointer.ts): the
 * worker copies committed pages back into the database file, and once writes stop it gives the
 * WAL file's space back. Store-level, the same on both lanes (the test opens its own SQLite file).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.ts';

let dir: string;
let store: Store;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-checkpointer-'));
  store = openStore({ dataDir: dir });
});

afterAll(async () => {
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const size = (name: string) => (fs.existsSync(path.join(dir, name)) ? fs.statSync(path.join(dir, name)).size : 0);

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

it('copies committed pages into the database file without the writer, then truncates the idle WAL', async () => {
  // biome-ignore lint/suspicious/noExplicitAny: `any`: a test table outside the application schema.
  const db = store.db as Kysely<any>;
  await sql`create table blobs (id integer primary key, body text not null)`.execute(db);
  const before = size('corridor.sqlite');
  const body = 'x'.repeat(2000);
  for (let i = 0; i < 20; i++) {
    await Promise.all(
      Array.from({ length: 25 }, () => db.transaction().execute((trx) => sql`insert into blobs (body) values (${body})`.execute(trx))),
    );
  }
  expect(size('corridor.sqlite-wal')).toBeGreaterThan(500 * 2000);
  // The main connection checkpoints only past a large safety threshold: growth of the database
  // file is the worker's doing.
  expect(await until(() => size('corridor.sqlite') > before + 500 * 2000, 5_000)).toBe(true);
  // Idle for a while: the WAL file is truncated.
  expect(await until(() => size('corridor.sqlite-wal') === 0, 8_000)).toBe(true);
  // Every row is there, from an independent connection reading the database file.
  const outside = new SQLite(path.join(dir, 'corridor.sqlite'), { readonly: true });
  try {
    expect(outside.prepare('select count(*) as n from blobs').get()).toEqual({ n: 500 });
  } finally {
    outside.close();
  }
  // Writes go on after the truncation.
  await db.transaction().execute((trx) => sql`insert into blobs (body) values ('after')`.execute(trx));
  expect((await sql<{ n: number }>`select count(*) as n from blobs`.execute(db)).rows[0]).toEqual({ n: 501 });
});
