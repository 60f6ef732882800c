/**
 * Migration 0030 on PostgreSQL (issue #26): a transaction's status is in none of the transactions
 * table's indexes, so a settlement is a HOT update; `transaction_statuses` holds the status for the
 * list's status filters, kept by triggers through every INSERT, UPDATE and DELETE. Checked against
 * this file's own schema, through Corridor's own statements.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { completeInFlight, listTransactions } from '../../src/modules/payments/payments.repo.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrate.ts';

const url = process.env.TEST_DATABASE_URL;
if (!url) throw new Error('pg-status-off-row runs on the postgres lane (TEST_DATABASE_URL)');

const P = 'Platform:status-row';
const OTHER = 'Platform:status-row-other';
let store: Store;

async function insertTransaction(id: string, o: { platformId?: string; type?: string; status?: string; customerId?: string } = {}) {
  await sql`insert into transactions (id, platform_id, customer_id, platform_customer_id, type, direction, status, kind,
      source, destination, sent_amount, sent_currency, received_amount, received_currency, fees, platform_fees,
      exchange_rate, reference, scenario, created_at, updated_at)
    values (${id}, ${o.platformId ?? P}, ${o.customerId ?? 'Customer:a'}, '', ${o.type ?? 'OUTGOING'}, 'OUT',
      ${o.status ?? 'PROCESSING'}, 'QUOTE', '{}', '{}', 100, 'USD', 100, 'USD', 0, 0, 1, ${`ref-${id}`}, '',
      '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.execute(store.db);
}

async function statusRows(): Promise<Record<string, string>> {
  const r = await sql<{ id: string; platform_id: string; type: string; status: string }>`
    select id, platform_id, type, status from transaction_statuses order by id`.execute(store.db);
  return Object.fromEntries(r.rows.map((row) => [row.id, `${row.platform_id} ${row.type} ${row.status}`]));
}

const page = (limit = 10, afterId?: string) => ({ limit, afterId, order: 'desc' as const });
const ids = (rows: { id: string }[]) => rows.map((r) => r.id);

beforeAll(async () => {
  store = openStore({ databaseUrl: url, dataDir: '/nonexistent', poolSize: 1 });
  await migrate(store);
  for (const [id, name] of [
    [P, 'Status row'],
    [OTHER, 'Other'],
  ]) {
    await sql`insert into platforms (id, name, environment, fiat_currency, config, created_at, updated_at)
      values (${id}, ${name}, 'SANDBOX', 'USD', '{}', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')`.execute(store.db);
  }
  await insertTransaction('Transaction:s1');
  await insertTransaction('Transaction:s2', { type: 'INCOMING', customerId: 'Customer:b' });
  await insertTransaction('Transaction:s3', { status: 'PENDING' });
  await insertTransaction('Transaction:s4', { platformId: OTHER });
});

afterAll(async () => {
  await store?.close();
});

it('indexes no transaction column a settlement changes', async () => {
  const r = await sql<{ indexdef: string }>`
    select indexdef from pg_indexes where tablename = 'transactions' and schemaname = current_schema()`.execute(store.db);
  expect(r.rows.length).toBeGreaterThan(0);
  for (const { indexdef } of r.rows) expect(indexdef).not.toMatch(/\b(status|settled_at|updated_at)\b/);
});

it('keeps one status row per transaction through inserts, updates and deletes', async () => {
  expect(await statusRows()).toEqual({
    'Transaction:s1': `${P} OUTGOING PROCESSING`,
    'Transaction:s2': `${P} INCOMING PROCESSING`,
    'Transaction:s3': `${P} OUTGOING PENDING`,
    'Transaction:s4': `${OTHER} OUTGOING PROCESSING`,
  });
  await insertTransaction('Transaction:gone');
  await sql`update transactions set status = 'FAILED' where id = 'Transaction:gone'`.execute(store.db);
  expect((await statusRows())['Transaction:gone']).toBe(`${P} OUTGOING FAILED`);
  await sql`delete from transactions where id = 'Transaction:gone'`.execute(store.db);
  expect(await statusRows()).not.toHaveProperty('Transaction:gone');
  // A statement that rolls back takes its status row with it.
  await expect(
    store.db.transaction().execute(async (trx) => {
      await sql`update transactions set status = 'FAILED' where id = 'Transaction:s1'`.execute(trx);
      throw new Error('undo');
    }),
  ).rejects.toThrow('undo');
  expect((await statusRows())['Transaction:s1']).toBe(`${P} OUTGOING PROCESSING`);
});

it('settles a transaction as a HOT update, and its status row follows', async () => {
  // This backend's counts not yet sent to the statistics (they may hold earlier transactions' too):
  // the settlement's own is the difference across it.
  const updates = async (trx: typeof store.db) =>
    (
      await sql<{ upd: string; hot: string }>`
        select n_tup_upd::text as upd, n_tup_hot_upd::text as hot from pg_stat_xact_user_tables
        where relid = 'transactions'::regclass`.execute(trx)
    ).rows[0]!;
  const [before, after] = await store.db.transaction().execute(async (trx) => {
    const b = await updates(trx);
    expect(await completeInFlight(trx, P, 'Transaction:s1', '2026-01-02T00:00:00.000Z')).toMatchObject({ status: 'COMPLETED' });
    return [b, await updates(trx)];
  });
  expect(Number(after!.upd) - Number(before!.upd)).toBe(1);
  expect(Number(after!.hot) - Number(before!.hot)).toBe(1);
  expect((await statusRows())['Transaction:s1']).toBe(`${P} OUTGOING COMPLETED`);
});

it('lists by status (and type) from the status rows, with the right count and pages', async () => {
  const db = store.db;
  const processing = await listTransactions(db, P, { status: 'PROCESSING' }, page());
  expect(ids(processing.rows)).toEqual(['Transaction:s2']);
  expect(processing.totalCount).toBe(1);
  expect(processing.rows[0]).toMatchObject({ id: 'Transaction:s2', status: 'PROCESSING', type: 'INCOMING' });

  await insertTransaction('Transaction:s5', { status: 'PENDING' });
  const pending = await listTransactions(db, P, { status: 'PENDING' }, page(1));
  expect(ids(pending.rows)).toEqual(['Transaction:s5', 'Transaction:s3']); // the page and one more (hasMore)
  expect(pending.totalCount).toBe(2);
  const next = await listTransactions(db, P, { status: 'PENDING' }, page(1, 'Transaction:s5'));
  expect(ids(next.rows)).toEqual(['Transaction:s3']);
  expect(next.totalCount).toBe(2);

  expect(ids((await listTransactions(db, P, { status: 'PROCESSING', type: 'OUTGOING' }, page())).rows)).toEqual([]);
  expect(ids((await listTransactions(db, P, { status: 'PROCESSING', type: 'INCOMING' }, page())).rows)).toEqual(['Transaction:s2']);
  // With another filter the status is checked on the rows themselves.
  expect(ids((await listTransactions(db, P, { status: 'COMPLETED', customerId: 'Customer:a' }, page())).rows)).toEqual(['Transaction:s1']);
  expect((await listTransactions(db, P, { status: 'COMPLETED', customerId: 'Customer:b' }, page())).totalCount).toBe(0);
  // Another platform's transactions are not counted or listed.
  const other = await listTransactions(db, OTHER, { status: 'PROCESSING' }, page());
  expect(ids(other.rows)).toEqual(['Transaction:s4']);
  expect(other.totalCount).toBe(1);
  expect(await listTransactions(db, P, { status: 'FAILED' }, page())).toEqual({ rows: [], totalCount: 0 });
});
