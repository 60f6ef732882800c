/** SQL for transactions and quotes. Every query filters on platform_id. */
import { SqliteAdapter, type Kysely, type Updateable } from 'kysely';
import type { StoreKind } from '../../store/db.ts';
import type { Database, QuoteRow, QuotesTable, TransactionRow, TransactionsTable } from '../../store/schema.ts';

export async function insertTransaction(db: Kysely<Database>, row: TransactionRow): Promise<void> {
  await db.insertInto('transactions').values(row).execute();
}

/** Reads a transaction; `lock` (PostgreSQL) holds its row until the caller's transaction ends. */
export async function findTransaction(db: Kysely<Database>, platformId: string, id: string, lock?: StoreKind): Promise<TransactionRow | undefined> {
  let q = db.selectFrom('transactions').selectAll().where('platform_id', '=', platformId).where('id', '=', id);
  if (lock === 'postgres') q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function updateTransaction(db: Kysely<Database>, id: string, set: Updateable<TransactionsTable>): Promise<void> {
  await db.updateTable('transactions').set(set).where('id', '=', id).execute();
}

/**
 * Moves a transaction from one of `from` to a new status; false when another writer got there
 * first (the compare-and-set keeps each transition, and its money movement, single).
 */
export async function transitionTransaction(db: Kysely<Database>, id: string, from: string[], set: Updateable<TransactionsTable>): Promise<boolean> {
  const r = await db.updateTable('transactions').set(set).where('id', '=', id).where('status', 'in', from).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function insertQuote(db: Kysely<Database>, row: QuoteRow): Promise<void> {
  await db.insertInto('quotes').values(row).execute();
}

export async function findQuote(db: Kysely<Database>, platformId: string, id: string, lock?: StoreKind): Promise<QuoteRow | undefined> {
  let q = db.selectFrom('quotes').selectAll().where('platform_id', '=', platformId).where('id', '=', id);
  if (lock === 'postgres') q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function findQuoteByTransaction(db: Kysely<Database>, platformId: string, transactionId: string): Promise<QuoteRow | undefined> {
  return db.selectFrom('quotes').selectAll().where('platform_id', '=', platformId).where('transaction_id', '=', transactionId).executeTakeFirst();
}

export async function transitionQuote(db: Kysely<Database>, id: string, from: string[], set: Updateable<QuotesTable>): Promise<boolean> {
  const r = await db.updateTable('quotes').set(set).where('id', '=', id).where('status', 'in', from).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export interface TransactionFilter {
  customerId?: string | undefined;
  platformCustomerId?: string | undefined;
  accountIdentifier?: string | undefined;
  senderAccountIdentifier?: string | undefined;
  receiverAccountIdentifier?: string | undefined;
  status?: string | undefined;
  type?: string | undefined;
  reference?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
}

/**
 * One page of transactions in id order (`desc` newest first), plus the total that match.
 *
 * Shaped for large platforms (bench/scenarios/list.ts; indexes in migration 0010):
 * - `accountIdentifier` is written as two branches that each name the platform, so each branch
 *   can use its own (platform, sender|receiver, id) index — SQLite combines indexes for an OR
 *   only when every branch is fully indexable on its own;
 * - on SQLite the page first picks the ids (from an index alone when it covers the filters,
 *   sorting only ids), then reads just those rows: a date range matching thousands of rows no
 *   longer reads and sorts every one of them. PostgreSQL, which plans from statistics, picks a good
 *   plan for the plain query, and plans and runs it in a third of the time of the two-step one —
 *   except for a date range without a customer, where it too read every row of the range (a day:
 *   ~2,800 rows, 3.4 ms) and the two-step query takes 1.5 ms.
 */
export async function listTransactions(
  db: Kysely<Database>,
  platformId: string,
  f: TransactionFilter,
  page: { limit: number; afterId: string | undefined; order: 'asc' | 'desc' },
) {
  let q = db.selectFrom('transactions');
  if (f.accountIdentifier !== undefined) {
    const id = f.accountIdentifier;
    q = q.where((eb) =>
      eb.or([
        eb.and([eb('platform_id', '=', platformId), eb('sender_account_id', '=', id)]),
        eb.and([eb('platform_id', '=', platformId), eb('receiver_account_id', '=', id)]),
      ]),
    );
  } else {
    q = q.where('platform_id', '=', platformId);
  }
  if (f.customerId !== undefined) q = q.where('customer_id', '=', f.customerId);
  if (f.platformCustomerId !== undefined) q = q.where('platform_customer_id', '=', f.platformCustomerId);
  if (f.senderAccountIdentifier !== undefined) q = q.where('sender_account_id', '=', f.senderAccountIdentifier);
  if (f.receiverAccountIdentifier !== undefined) q = q.where('receiver_account_id', '=', f.receiverAccountIdentifier);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.type !== undefined) q = q.where('type', '=', f.type);
  if (f.reference !== undefined) q = q.where('reference', '=', f.reference);
  if (f.startDate !== undefined) q = q.where('created_at', '>=', f.startDate);
  if (f.endDate !== undefined) q = q.where('created_at', '<=', f.endDate);
  const count = q.select((eb) => eb.fn.countAll<number>().as('n'));
  if (page.afterId) q = q.where('id', page.order === 'desc' ? '<' : '>', page.afterId);
  const ids = q.select('id').orderBy('id', page.order).limit(page.limit + 1);
  // A platform-wide date range is read from an index in date order, not id order: every match
  // would be fetched and sorted for one page, so PostgreSQL too picks the ids first.
  const idsFirst = db.getExecutor().adapter instanceof SqliteAdapter || ((f.startDate !== undefined || f.endDate !== undefined) && f.customerId === undefined);
  const pageQuery = idsFirst
    ? db.selectFrom('transactions').selectAll().where('platform_id', '=', platformId).where('id', 'in', ids).orderBy('id', page.order)
    : q.selectAll().orderBy('id', page.order).limit(page.limit + 1);
  // The count rides along as an (uncorrelated, evaluated once) scalar subquery: one statement, one
  // round trip. An empty page carries no row to hold it, so then it is asked for on its own.
  const found = await pageQuery.select(() => count.as('total_count')).execute();
  if (found.length === 0) return { rows: [], totalCount: page.afterId ? Number((await count.executeTakeFirstOrThrow()).n) : 0 };
  const totalCount = Number(found[0]!.total_count);
  return { rows: found.map(({ total_count: _, ...row }) => row), totalCount };
}
