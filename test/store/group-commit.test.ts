/**
 * The SQLite store's group commit (src/store/sqlite-group-commit.ts) and prepared statements
 * (src/store/prepared.ts), on a real SQLite file. These are store-level properties, the same on
 * both lanes: the test opens its own SQLite store whatever the lane.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/db.ts';
import { prepared } from '../../src/store/prepared.ts';
import type { Database } from '../../src/store/schema.ts';

let dir: string;
let store: Store;
// biome-ignore lint/suspicious/noExplicitAny: `any`: the test tables are not part of the application schema.
let db: Kysely<any>;
/** A second, independent connection: sees only what is committed. */
let outside: SQLite.Database;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-group-commit-'));
  store = openStore({ dataDir: dir });
  // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
  db = store.db as Kysely<any>;
  await sql`create table items (id integer primary key, label text not null)`.execute(db);
  await sql`create table counters (name text primary key, value integer not null)`.execute(db);
  await sql`create table parents (id integer primary key)`.execute(db);
  // Checked at COMMIT: an orphan makes the group's COMMIT itself fail.
  await sql`create table children (id integer primary key, parent_id integer not null references parents(id) deferrable initially deferred)`.execute(
    db,
  );
  outside = new SQLite(path.join(dir, 'corridor.sqlite'));
});

afterAll(async () => {
  outside.close();
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  await sql`delete from items`.execute(db);
  await sql`delete from children`.execute(db);
  await sql`delete from counters`.execute(db);
  await sql`insert into counters (name, value) values ('c', 0)`.execute(db);
});

const committedLabels = () => (outside.prepare('select label from items order by id').all() as { label: string }[]).map((r) => r.label);
const counter = () => (outside.prepare(`select value from counters where name = 'c'`).get() as { value: number }).value;

// biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
function insertItem(trx: Kysely<any>, label: string) {
  return sql`insert into items (label) values (${label})`.execute(trx);
}
// biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
function bump(trx: Kysely<any>, by: number) {
  return sql`update counters set value = value + ${by} where name = 'c'`.execute(trx);
}

describe('SQLite group commit', () => {
  it('commits transactions of one event-loop turn together, each answered only after the COMMIT', async () => {
    let seenInside: string[] = [];
    let seenOutside: string[] = [];
    const a = db.transaction().execute((trx) => insertItem(trx, 'a'));
    const b = db.transaction().execute(async (trx) => {
      await insertItem(trx, 'b');
      // Same group: b sees a's work, which no one outside sees yet (not committed).
      seenInside = (await sql<{ label: string }>`select label from items order by id`.execute(trx)).rows.map((r) => r.label);
      seenOutside = committedLabels();
    });
    await Promise.all([a, b]);
    expect(seenInside).toEqual(['a', 'b']);
    expect(seenOutside).toEqual([]);
    expect(committedLabels()).toEqual(['a', 'b']);
  });

  it('undoes a failing transaction alone, after it wrote, and keeps the others of its group', async () => {
    const results = await Promise.allSettled([
      db.transaction().execute(async (trx) => {
        await insertItem(trx, 'first');
        await bump(trx, 1);
      }),
      db.transaction().execute(async (trx) => {
        await insertItem(trx, 'failing');
        await bump(trx, 10);
        throw new Error('refused after writing');
      }),
      db.transaction().execute(async (trx) => {
        await insertItem(trx, 'third');
        await bump(trx, 100);
        return 'ok';
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe('refused after writing');
    expect(committedLabels()).toEqual(['first', 'third']);
    expect(counter()).toBe(101);
  });

  it('a failing transaction that changed nothing costs the others nothing', async () => {
    const results = await Promise.allSettled([
      db.transaction().execute((trx) => insertItem(trx, 'kept')),
      db.transaction().execute(async (trx) => {
        await sql`select * from items`.execute(trx);
        await bump(trx, 0); // an UPDATE that changes a row with the same value still counts as a change
        throw new Error('no');
      }),
      db.transaction().execute(async (trx) => {
        await sql`update counters set value = 5 where name = 'nobody'`.execute(trx); // changes no row
        throw new Error('no');
      }),
      db.transaction().execute((trx) => insertItem(trx, 'also kept')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(committedLabels()).toEqual(['kept', 'also kept']);
    expect(counter()).toBe(0);
  });

  it('a statement that fails inside a transaction that goes on leaves no trace', async () => {
    await db.transaction().execute(async (trx) => {
      await insertItem(trx, 'x');
      await expect(sql`insert into items (id, label) values (1, null)`.execute(trx)).rejects.toThrow();
      await insertItem(trx, 'y');
    });
    expect(committedLabels()).toEqual(['x', 'y']);
  });

  it('fails every transaction of the group when the COMMIT fails, and acknowledges none', async () => {
    const results = await Promise.allSettled([
      db.transaction().execute((trx) => insertItem(trx, 'innocent')),
      // An orphan child: the deferred foreign key fails the group's COMMIT.
      db.transaction().execute((trx) => sql`insert into children (id, parent_id) values (1, 999)`.execute(trx)),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(committedLabels()).toEqual([]);
    expect(outside.prepare('select count(*) as n from children').get()).toEqual({ n: 0 });
    // The store carries on.
    await db.transaction().execute((trx) => insertItem(trx, 'after'));
    expect(committedLabels()).toEqual(['after']);
  });

  it('a query outside any transaction commits the open group first, so it never sees uncommitted work', async () => {
    // Both wait for the connection in this order: the transaction runs, then the plain query
    // gets the connection while the transaction's group is still open.
    const tx = db.transaction().execute((trx) => insertItem(trx, 'grouped'));
    const plain = sql<{ label: string }>`select label from items`
      .execute(db)
      .then((r) => ({ rows: r.rows.map((x) => x.label), committed: committedLabels() }));
    expect(await plain).toEqual({ rows: ['grouped'], committed: ['grouped'] });
    await tx;
  });

  it('many concurrent transactions all commit, serialised, with nothing lost', async () => {
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        db
          .transaction()
          .execute(async (trx) => {
            await bump(trx, 1);
            if (i % 7 === 0) throw new Error('every seventh refuses');
            await insertItem(trx, `t${i}`);
          })
          .catch(() => undefined),
      ),
    );
    const refused = Array.from({ length: 200 }, (_, i) => i).filter((i) => i % 7 === 0).length;
    expect(counter()).toBe(200 - refused);
    expect(committedLabels()).toHaveLength(200 - refused);
  });
});

describe('prepared statements', () => {
  const insertCounter = prepared((d: Kysely<Database>, a: { name: string; value: number }) =>
    // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
    (d as Kysely<any>).insertInto('counters').values({ name: a.name, value: a.value }),
  );
  const readCounter = prepared((d: Kysely<Database>, a: { name: string }) =>
    // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
    (d as Kysely<any>).selectFrom('counters').select(['name', 'value']).where('name', '=', a.name),
  );
  const addTo = prepared((d: Kysely<Database>, a: { name: string; by: number; names0: string; names1: string }) =>
    // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
    (d as Kysely<any>)
      .updateTable('counters')
      .set({ value: sql`value + ${a.by}` })
      .where('name', 'in', [a.names0, a.names1])
      .where('name', '=', a.name)
      .returning(['name', 'value']),
  );

  it('run with new arguments each time, inside and outside transactions', async () => {
    const d = store.db;
    await insertCounter.run(d, { name: 'p', value: 1 });
    const inTrx = await d.transaction().execute(async (trx) => {
      expect(await insertCounter.run(trx, { name: 'q', value: 2 })).toBe(1);
      const row = await readCounter.first(trx, { name: 'q' });
      const moved = await addTo.all(trx, { name: 'q', by: 40, names0: 'p', names1: 'q' });
      const none = await addTo.run(trx, { name: 'q', by: 1, names0: 'x', names1: 'y' });
      return { row, moved, none };
    });
    expect(inTrx).toEqual({ row: { name: 'q', value: 2 }, moved: [{ name: 'q', value: 42 }], none: 0 });
    expect(await readCounter.all(d, { name: 'p' })).toEqual([{ name: 'p', value: 1 }]);
    expect(await readCounter.first(d, { name: 'nobody' })).toBeUndefined();
  });

  it('a transaction undone by a failure takes its prepared writes with it', async () => {
    await expect(
      store.db.transaction().execute(async (trx) => {
        await insertCounter.run(trx, { name: 'gone', value: 1 });
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(await readCounter.first(store.db, { name: 'gone' })).toBeUndefined();
  });
});
