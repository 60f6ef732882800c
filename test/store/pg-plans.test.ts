/**
 * The plans PostgreSQL keeps for the payment path's by-id statements (PostgreSQL lane only): on a
 * young schema — this file's own, a few rows per table, as a fresh install's first minute — the
 * generic plan a connection caches for each must find its row through the primary key. Before
 * `guard` (src/store/guard.ts) the settlement's UPDATE was planned through `transactions_reference
 * (platform_id, reference, id)`, a walk over every transaction of the platform per settlement, and
 * kept that plan until the table's first autoanalyze (issue #26).
 *
 * Each statement runs once through Corridor's own code on a one-connection store, which prepares it
 * under a name (src/store/pg-prepared.ts); `EXPLAIN EXECUTE` of that name with
 * `plan_cache_mode = force_generic_plan` then shows the plan the connection would keep. The last
 * test checks the page fill migration 0029 sets on the tables a payment updates once.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BalanceBatch, postEntry } from '../../src/ledger/ledger.ts';
import { findInternalAccount } from '../../src/modules/internal-accounts/internal-accounts.repo.ts';
import { completeInFlight, findLiveExternalAccount, findTransaction } from '../../src/modules/payments/payments.repo.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';

const url = process.env.TEST_DATABASE_URL;
if (!url) throw new Error('pg-plans runs on the postgres lane (TEST_DATABASE_URL)');

let store: Store;

beforeAll(async () => {
  store = openStore({ databaseUrl: url, dataDir: '/nonexistent', poolSize: 1 });
  await migrate(store);
  const db = store.db;
  await sql`insert into platforms (id, name, environment, fiat_currency, config, created_at, updated_at)
    values ('Platform:plans', 'Plans', 'SANDBOX', 'USD', '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.execute(db);
  // A handful of rows, as a young table has: no statistics the planner could tell the indexes apart by.
  for (let i = 0; i < 20; i++) {
    await sql`insert into transactions (id, platform_id, customer_id, platform_customer_id, type, direction, status, kind,
        source, destination, sent_amount, sent_currency, received_amount, received_currency, fees, platform_fees,
        exchange_rate, reference, scenario, created_at, updated_at)
      values (${`Transaction:plan-${i}`}, 'Platform:plans', '', '', 'OUTGOING', 'OUT', 'PROCESSING', 'QUOTE', '{}', '{}',
        100, 'USD', 100, 'USD', 0, 0, 1, ${`ref-${i}`}, '', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.execute(db);
  }
  await sql`set plan_cache_mode = force_generic_plan`.execute(db);
});

afterAll(async () => {
  await store?.close();
});

/**
 * The generic plan of each statement this connection prepared that finds a row of a table by its
 * `id` (`"id" = $n`), by the table it reads or writes.
 */
async function byIdPlans(): Promise<{ table: string; statement: string; plan: string }[]> {
  const db = store.db;
  const found = await sql<{ name: string; statement: string; parameter_types: string }>`
    select name, statement, parameter_types::text as parameter_types from pg_prepared_statements
    where statement ~ ${'"id" = \\$[0-9]'}`.execute(db);
  const out: { table: string; statement: string; plan: string }[] = [];
  for (const { name, statement, parameter_types } of found.rows) {
    const table = /(?:from|update) "([a-z_]+)"/.exec(statement)?.[1];
    if (!table) throw new Error(`no table in ${statement}`);
    const types = parameter_types.replace(/[{}]/g, '').split(',');
    // Any value of the right type: a generic plan does not look at them.
    const args = types.map((t) => (/int|numeric|double/.test(t) ? '0' : `'x'`)).join(', ');
    const plan = await sql.raw<{ 'QUERY PLAN': string }>(`explain execute ${name}(${args})`).execute(db);
    out.push({ table, statement, plan: plan.rows.map((r) => r['QUERY PLAN']).join('\n') });
  }
  return out;
}

it("plans the payment path's by-id statements through each table's primary key", async () => {
  const db = store.db;
  // The settlement's status change, and the reads a payment makes of its accounts and transaction.
  expect(await completeInFlight(db, 'Platform:plans', 'Transaction:plan-1', '2026-01-02T00:00:00.000Z')).toMatchObject({
    status: 'COMPLETED',
  });
  expect(await findTransaction(db, 'Platform:plans', 'Transaction:plan-2')).toMatchObject({ status: 'PROCESSING' });
  expect(await findInternalAccount(db, 'Platform:plans', 'InternalAccount:plan-a')).toBeUndefined();
  expect(await findLiveExternalAccount(db, 'Platform:plans', 'ExternalAccount:plan-a')).toBeUndefined();
  // Both balance UPDATEs, a posting's and a job batch's. No such accounts: each UPDATE runs (and
  // is prepared), finds nothing and refuses; the transaction rolls back.
  const entry = {
    platformId: 'Platform:plans',
    kind: 'PLAN_PROBE',
    referenceId: 'Transaction:plan-2',
    at: '2026-01-02T00:00:00.000Z',
    postings: [
      { accountId: 'InternalAccount:plan-a', currency: 'USD', bucket: 'AVAILABLE' as const, amount: -1 },
      { accountId: 'InternalAccount:plan-b', currency: 'USD', bucket: 'AVAILABLE' as const, amount: 1 },
    ],
  };
  await expect(
    db.transaction().execute((trx) => postEntry(trx, { ...entry, id: 'LedgerEntry:plan-1', balancesLast: true })),
  ).rejects.toThrow(/Insufficient funds in InternalAccount:plan-a/);
  await expect(
    db.transaction().execute(async (trx) => {
      const batch = new BalanceBatch();
      await batch.post(trx, { ...entry, id: 'LedgerEntry:plan-2' });
      await batch.flush(trx);
    }),
  ).rejects.toThrow(/Insufficient funds in InternalAccount:plan-a/);

  const plans = await byIdPlans();
  const tables = new Set(plans.map((p) => p.table));
  for (const t of ['transactions', 'internal_accounts', 'external_accounts']) expect(tables, t).toContain(t);
  // transactions: the settlement's UPDATE and the read; internal accounts: the read, the posting's
  // UPDATE (its debit, which refuses first) and the batch's; external accounts: the read.
  expect(plans.length).toBeGreaterThanOrEqual(6);
  for (const p of plans) expect(p.plan, p.statement).toContain(`using ${p.table}_pkey on ${p.table}`);
});

it('leaves room on the pages of the tables a payment updates once (transactions 50 %, quotes and jobs 70 %), and only those', async () => {
  const r = await sql<{ relname: string; reloptions: string[] | null }>`
    select relname, reloptions from pg_class
    where oid in ('transactions'::regclass, 'quotes'::regclass, 'jobs'::regclass, 'outbox_events'::regclass, 'ledger_postings'::regclass)
    order by relname`.execute(store.db);
  expect(Object.fromEntries(r.rows.map((row) => [row.relname, row.reloptions]))).toEqual({
    jobs: ['fillfactor=70'],
    ledger_postings: null,
    outbox_events: null,
    quotes: ['fillfactor=70'],
    transactions: ['fillfactor=50'],
  });
});
