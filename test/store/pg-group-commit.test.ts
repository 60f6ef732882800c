/**
 * PostgreSQL group commit (src/store/pg-group-commit.ts; PostgreSQL lane only): concurrent units
 * share transactions, each unit's failure is its own, and no unit hears of success (or of a
 * refusal) unless its group committed.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PgGroupCommit, requireOwnTransaction } from '../../src/store/pg-group-commit.ts';
import type { Database } from '../../src/store/schema.ts';
import { individual } from '../helpers/customers.ts';
import { expectLedgerClean, fund, platformExternal, platformUsdAccount } from '../helpers/payments.ts';
import { startServer } from '../helpers/server.ts';

const url = process.env.TEST_DATABASE_URL;
if (!url) throw new Error('pg-group-commit runs on the postgres lane (TEST_DATABASE_URL)');

/** `any`: a scratch table outside the store's typed schema. */
// biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (a scratch table the typed Database does not list)
type Any = Kysely<any>;

let db: Kysely<Database>;
const raw = () => db as unknown as Any;

beforeAll(async () => {
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 4 }) }) });
  await sql`create table gc_rows (k text primary key, v integer not null)`.execute(db);
  // Checked at COMMIT: a duplicate inserted into it fails the group's transaction as a whole.
  await sql`create table gc_deferred (k text, constraint gc_deferred_k unique (k) deferrable initially deferred)`.execute(db);
});
afterAll(async () => {
  await db.destroy();
});

async function keys(): Promise<string[]> {
  const rows = await raw().selectFrom('gc_rows').select('k').orderBy('k').execute();
  return rows.map((r) => r.k as string);
}

describe('PgGroupCommit', () => {
  it('runs concurrent units in fewer transactions than units, each with its own result', async () => {
    const gc = new PgGroupCommit(db, 2);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        gc.run(async (trx) => {
          await (trx as unknown as Any)
            .insertInto('gc_rows')
            .values({ k: `a${String(i).padStart(2, '0')}`, v: i })
            .execute();
          return i * 2;
        }),
      ),
    );
    expect(results).toEqual(Array.from({ length: 40 }, (_, i) => i * 2));
    expect(gc.stats.units).toBe(40);
    expect(gc.stats.groups).toBeLessThan(40);
    expect((await keys()).filter((k) => k.startsWith('a'))).toHaveLength(40);
  });

  it('undoes a failing unit alone: a thrown error and an SQL error leave the others committed', async () => {
    const gc = new PgGroupCommit(db, 1);
    const ins = (k: string) => (trx: Kysely<Database>) => (trx as unknown as Any).insertInto('gc_rows').values({ k, v: 1 }).execute();
    const outcomes = await Promise.allSettled([
      gc.run(ins('b1')),
      gc.run(async (trx) => {
        await ins('b2')(trx);
        throw new Error('refused after writing');
      }),
      gc.run(async (trx) => {
        await ins('b3')(trx);
        await ins('b1')(trx); // duplicate key: the statement fails inside the unit's savepoint
      }),
      gc.run(ins('b4')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('refused after writing');
    expect((outcomes[2] as PromiseRejectedResult).reason.code).toBe('23505');
    expect((await keys()).filter((k) => k.startsWith('b'))).toEqual(['b1', 'b4']);
  });

  it('answers nobody from a group that does not commit: each of its units runs again alone and reports that', async () => {
    const gc = new PgGroupCommit(db, 1);
    // Hold the one group open until all four have joined, so they share it.
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let runs = 0;
    const first = gc.run(async (trx) => {
      runs += 1;
      await (trx as unknown as Any).insertInto('gc_rows').values({ k: 'c1', v: 1 }).execute();
      await gate;
    });
    const others = [
      gc.run(async (trx) => {
        await (trx as unknown as Any).insertInto('gc_deferred').values({ k: 'dup' }).execute();
      }),
      gc.run(async (trx) => {
        await (trx as unknown as Any).insertInto('gc_rows').values({ k: 'c3', v: 1 }).execute();
        throw new Error('a refusal after writing');
      }),
      gc.run(async (trx) => {
        await (trx as unknown as Any).insertInto('gc_deferred').values({ k: 'dup' }).execute();
      }),
    ];
    release();
    const outcomes = await Promise.allSettled([first, ...others]);
    // The group rolled back (a unit threw after writing). Alone, the first commits, the refusal is
    // its own, and of the two duplicates (run side by side) one commits and the other fails its own
    // COMMIT.
    expect(outcomes[0]!.status).toBe('fulfilled');
    expect((outcomes[2] as PromiseRejectedResult).reason.message).toBe('a refusal after writing');
    const dups = [outcomes[1]!, outcomes[3]!];
    expect(dups.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect(dups.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason.code)).toEqual(['23505']);
    expect(runs).toBe(2);
    expect(gc.stats.replayed).toBe(1);
    expect(await keys()).toContain('c1');
    expect(await keys()).not.toContain('c3');
  });

  it('commits beside a unit refused having only read, and reports the refusal after the COMMIT', async () => {
    const gc = new PgGroupCommit(db, 1);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const writer = gc.run(async (trx) => {
      await (trx as unknown as Any).insertInto('gc_rows').values({ k: 'e1', v: 1 }).execute();
      await gate;
    });
    let refusedAt: number | undefined;
    const reader = gc
      .run(async (trx) => {
        await (trx as unknown as Any).selectFrom('gc_rows').select('k').where('k', '=', 'e1').execute();
        throw new Error('refused on what it read');
      })
      .catch((e: Error) => {
        refusedAt = Date.now();
        return e.message;
      });
    await new Promise((r) => setTimeout(r, 20));
    // The refusal waits for its group's COMMIT, which waits for the writer.
    expect(refusedAt).toBeUndefined();
    release();
    await writer;
    expect(await reader).toBe('refused on what it read');
    expect(gc.stats.replayed).toBe(0);
    expect(gc.stats.units).toBe(2);
    expect(await keys()).toContain('e1');
  });

  it('runs a unit that asks for its own transaction alone, after its group, and nothing of it twice', async () => {
    const gc = new PgGroupCommit(db, 1);
    let runs = 0;
    const counter = gc.run(async (trx) => {
      runs += 1;
      const before = await (trx as unknown as Any).selectFrom('gc_rows').select('v').where('k', '=', 'f1').executeTakeFirst();
      requireOwnTransaction(trx);
      await (trx as unknown as Any)
        .insertInto('gc_rows')
        .values({ k: 'f1', v: (before?.v ?? 0) + 1 })
        .execute();
      return 'counted';
    });
    const neighbour = gc.run(async (trx) => {
      await (trx as unknown as Any).insertInto('gc_rows').values({ k: 'f2', v: 1 }).execute();
      return 'written';
    });
    expect(await Promise.all([counter, neighbour])).toEqual(['counted', 'written']);
    // Once in the group (it left before writing), once alone.
    expect(runs).toBe(2);
    expect(gc.stats.replayed).toBe(0);
    const rows = await raw().selectFrom('gc_rows').select(['k', 'v']).where('k', 'in', ['f1', 'f2']).orderBy('k').execute();
    expect(rows).toEqual([
      { k: 'f1', v: 1 },
      { k: 'f2', v: 1 },
    ]);
    // Outside a group it changes nothing.
    await db.transaction().execute(async (trx) => requireOwnTransaction(trx));
  });

  it('keeps a unit’s result from its caller until the COMMIT: a concurrent reader sees it only after', async () => {
    const gc = new PgGroupCommit(db, 1);
    let seenBeforeAnswer: number | undefined;
    await gc.run(async (trx) => {
      await (trx as unknown as Any).insertInto('gc_rows').values({ k: 'd1', v: 1 }).execute();
      const outside = await raw().selectFrom('gc_rows').select('k').where('k', '=', 'd1').execute();
      seenBeforeAnswer = outside.length;
    });
    expect(seenBeforeAnswer).toBe(0);
    expect(await keys()).toContain('d1');
  });
});

describe('the server with group commit (CORRIDOR_PG_GROUP_COMMIT=2, the default)', () => {
  it('pays concurrently from one account without overdrawing, each refusal its own, the ledger exact', async () => {
    const srv = await startServer({ env: { CORRIDOR_PG_GROUP_COMMIT: '2' } });
    try {
      const p = await srv.newPlatform();
      const account = await platformUsdAccount(p);
      await fund(p, account, 10_000);
      const dest = await platformExternal(p, '001');
      const body = {
        source: { sourceType: 'ACCOUNT', accountId: account },
        destination: { destinationType: 'ACCOUNT', accountId: dest },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 1_000,
        immediatelyExecute: true,
      };
      // Ten for half the funds, sent together: they share groups (with two group slots, requests
      // that arrive while both are busy wait, and the next group takes them all).
      const group = srv.app.ctx.store.groupCommit;
      expect(group).toBeDefined();
      const fits = await Promise.all(Array.from({ length: 10 }, () => p.api.post('/quotes', { ...body, lockedCurrencyAmount: 500 })));
      expect(fits.map((r) => r.status)).toEqual(fits.map(() => 201));
      expect(group!.stats.units).toBeGreaterThan(group!.stats.groups);
      // Then thirty for the five thousand left: five are paid, the others refused for want of
      // funds, none a 5xx.
      const answers = await Promise.all(Array.from({ length: 30 }, () => p.api.post('/quotes', body)));
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(5);
      expect(statuses.filter((s) => s === 400)).toHaveLength(25);
      for (const r of answers.filter((a) => a.status === 400)) expect(r.body.code).toBe('INVALID_AMOUNT');
      await expectLedgerClean(srv, p.id);
    } finally {
      await srv.close();
    }
  });

  it('pays concurrently from many accounts without a deadlock: a group locks its balance rows in id order', async () => {
    // Two groups whose members pay from overlapping accounts, each coming to its balance UPDATE in
    // its own order, deadlocked (each group holding a row the other waited for); PostgreSQL broke
    // that only after deadlock_timeout, and both groups ran again member by member.
    const srv = await startServer({ env: { CORRIDOR_PG_GROUP_COMMIT: '2' } });
    try {
      const p = await srv.newPlatform();
      const dest = await platformExternal(p, '001');
      const accounts: string[] = [];
      for (let i = 0; i < 12; i++) {
        const c = await p.api.post('/customers', individual({ platformCustomerId: `gc-payer-${i}` }));
        expect(c.status).toBe(201);
        const list = await p.api.get('/customers/internal-accounts', { query: { customerId: c.body.id, currency: 'USD' } });
        const id = list.body.data[0].id as string;
        await fund(p, id, 1_000_000);
        accounts.push(id);
      }
      const deadlocks = async () =>
        Number(
          (await sql<{ n: string }>`select deadlocks as n from pg_stat_database where datname = current_database()`.execute(db)).rows[0]!.n,
        );
      const before = await deadlocks();
      const group = srv.app.ctx.store.groupCommit!;
      const replayedBefore = group.stats.replayed;
      const pay = (accountId: string) =>
        p.api.post('/quotes', {
          source: { sourceType: 'ACCOUNT', accountId },
          destination: { destinationType: 'ACCOUNT', accountId: dest },
          lockedCurrencySide: 'SENDING',
          lockedCurrencyAmount: 100,
          immediatelyExecute: true,
        });
      // Waves of payments from every account, in a different order each time.
      for (let wave = 0; wave < 6; wave++) {
        const order = accounts.flatMap((a, i) => [
          accounts[(i * 5 + wave) % accounts.length]!,
          a,
          accounts[(i * 7 + wave) % accounts.length]!,
        ]);
        const answers = await Promise.all(order.map(pay));
        expect(answers.map((r) => r.status)).toEqual(order.map(() => 201));
      }
      expect(group.stats.units).toBeGreaterThan(group.stats.groups);
      expect(group.stats.replayed - replayedBefore).toBe(0);
      expect((await deadlocks()) - before).toBe(0);
      await expectLedgerClean(srv, p.id);
    } finally {
      await srv.close();
    }
  });
});
