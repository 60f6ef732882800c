/**
 * SQL of payments: the one repository of the `transactions` and `quotes` tables (every read and
 * write of them goes through here), plus the payment path's lookups in the tables around it (a live
 * external account to pay, a ledger entry of a payment). Every statement filters on the platform,
 * or on an id that was found through it.
 *
 * The hot path's statements (creating and settling a payment) are compiled once per store and re-run
 * with new arguments (store/prepared.ts); they return a value or a promise of one, and callers await
 * them. A read the caller will write back takes `{ forUpdate: true }` (store/row-lock.ts).
 */
import type { Kysely, Updateable } from 'kysely';
import { guard } from '../../store/guard.ts';
import { prepared, preparedInsert, type Prepared } from '../../store/prepared.ts';
import { isPostgres, lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database, ExternalAccountRow, QuoteRow, QuotesTable, TransactionRow, TransactionsTable } from '../../store/schema.ts';

/** A prepared statement's answer: at once inside a SQLite transaction, else a promise. */
type Maybe<T> = T | Promise<T>;

// ---------------------------------------------------------------------------------------------
// Transactions

const insertTransactionRow = preparedInsert<'transactions', TransactionRow>('transactions', {
  id: true,
  platform_id: true,
  customer_id: true,
  platform_customer_id: true,
  type: true,
  direction: true,
  status: true,
  kind: true,
  source: true,
  destination: true,
  sender_account_id: true,
  receiver_account_id: true,
  internal_account_id: true,
  sent_amount: true,
  sent_currency: true,
  received_amount: true,
  received_currency: true,
  fees: true,
  platform_fees: true,
  exchange_rate: true,
  quote_id: true,
  description: true,
  reference: true,
  payment_rail: true,
  scenario: true,
  failure_reason: true,
  refund: true,
  settled_at: true,
  receipt_delivery_confirmed_at: true,
  extra: true,
  created_at: true,
  updated_at: true,
  agent_id: true,
  rail_selection_mode: true,
  expected_settlement_at: true,
  fee_fixed: true,
  fee_variable_bps: true,
});

export function insertTransaction(db: Kysely<Database>, row: TransactionRow): Maybe<unknown> {
  // The columns of migration 0014 may be left out of a row built in code: they are written as null.
  return insertTransactionRow.defer(db, {
    ...row,
    agent_id: row.agent_id ?? null,
    rail_selection_mode: row.rail_selection_mode ?? null,
    expected_settlement_at: row.expected_settlement_at ?? null,
    fee_fixed: row.fee_fixed ?? null,
    fee_variable_bps: row.fee_variable_bps ?? null,
  });
}

const selectTransaction = prepared((db, a: { platformId: string; id: string }) =>
  db.selectFrom('transactions').selectAll().where('id', '=', a.id).where(guard('platform_id', a.platformId)),
);

/** A transaction of the platform; `forUpdate` holds its row until the caller's transaction ends. */
export function findTransaction(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  opts?: LockOptions,
): Maybe<TransactionRow | undefined> {
  if (!opts?.forUpdate) return selectTransaction.first(db, { platformId, id });
  return lockRows(
    db,
    db.selectFrom('transactions').selectAll().where('id', '=', id).where(guard('platform_id', platformId)),
    opts,
  ).executeTakeFirst();
}

/** The platform's transactions among `ids` (any order). */
export async function findTransactionsByIds(db: Kysely<Database>, platformId: string, ids: string[]): Promise<TransactionRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('transactions').selectAll().where('platform_id', '=', platformId).where('id', 'in', ids).execute();
}

export async function updateTransaction(db: Kysely<Database>, id: string, set: Updateable<TransactionsTable>): Promise<void> {
  await db.updateTable('transactions').set(set).where('id', '=', id).execute();
}

/**
 * Moves a transaction from one of `from` to a new status; false when another writer got there
 * first (the compare-and-set keeps each transition, and its money movement, single).
 */
export async function transitionTransaction(
  db: Kysely<Database>,
  id: string,
  from: string[],
  set: Updateable<TransactionsTable>,
): Promise<boolean> {
  const r = await db.updateTable('transactions').set(set).where('id', '=', id).where('status', 'in', from).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

type CompleteArgs = { id: string; at: string } & Record<string, unknown>;
const completeStatements = new Map<number, Prepared<CompleteArgs, unknown>>();

/**
 * Compare-and-set of an in-flight payment from one of `from` to COMPLETED (a statement compiled once
 * per number of statuses). Changes one row, or none when another writer moved it first.
 */
export function completeTransaction(db: Kysely<Database>, id: string, from: string[], at: string): Maybe<number> {
  let stmt = completeStatements.get(from.length);
  if (!stmt) {
    const n = from.length;
    stmt = prepared((db, a: CompleteArgs) =>
      db
        .updateTable('transactions')
        .set({ status: 'COMPLETED', settled_at: a.at, updated_at: a.at })
        .where('id', '=', a.id)
        .where(
          'status',
          'in',
          Array.from({ length: n }, (_, i) => a[`from${i}`] as string),
        ),
    );
    completeStatements.set(n, stmt);
  }
  const args: CompleteArgs = { id, at };
  from.forEach((s, i) => {
    args[`from${i}`] = s;
  });
  return stmt.run(db, args);
}

const completeInFlightStatement = prepared((db, a: { platformId: string; id: string; at: string }) =>
  db
    .updateTable('transactions')
    .set({ status: 'COMPLETED', settled_at: a.at, updated_at: a.at })
    .where('id', '=', a.id)
    .where(guard('platform_id', a.platformId))
    .where((eb) => eb.or([eb('status', '=', 'PROCESSING'), eb.and([eb('status', '=', 'PENDING'), eb('kind', '!=', 'QUOTE')])]))
    .returningAll(),
);

/**
 * The settlement's compare-and-set, returning the completed row: a payment is in flight while
 * PROCESSING, or PENDING unless it is a quote's (whose PENDING means not executed yet).
 */
export function completeInFlight(db: Kysely<Database>, platformId: string, id: string, at: string): Maybe<TransactionRow | undefined> {
  return completeInFlightStatement.first(db, { platformId, id, at });
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
 * Shaped for large platforms (bench/scenarios/list.ts; indexes in migrations 0010 and, for the status
 * on PostgreSQL, 0030):
 * - `accountIdentifier` is written as two branches that each name the platform, so each branch
 *   can use its own (platform, sender|receiver, id) index — SQLite combines indexes for an OR
 *   only when every branch is fully indexable on its own;
 * - on SQLite the page first picks the ids (from an index alone when it covers the filters,
 *   sorting only ids), then reads just those rows: a date range matching thousands of rows no
 *   longer reads and sorts every one of them. PostgreSQL, which plans from statistics, picks a good
 *   plan for the plain query, and plans and runs it in a third of the time of the two-step one —
 *   except for a date range without a customer, where it too read every row of the range (a day:
 *   ~2,800 rows, 3.4 ms) and the two-step query takes 1.5 ms.
 * This is the one statement whose shape follows the store (a measured plan choice, not a lock).
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
  const after = page.afterId;
  const baseCount = q.select((eb) => eb.fn.countAll<number>().as('n'));
  if (after) q = q.where('id', page.order === 'desc' ? '<' : '>', after);
  // PostgreSQL keeps the status out of the transactions' indexes (migration 0030, so that a
  // settlement is a HOT update): a filter on status (and type) alone, and its count, read the
  // narrow transaction_statuses table, and the page's rows are then fetched by id.
  const byStatus =
    isPostgres(db) && f.status !== undefined && filtersBesideStatus(f) === 0 ? statusIds(db, platformId, f.status, f.type) : undefined;
  const count = byStatus?.count ?? baseCount;
  const ids =
    byStatus?.ids(after, page) ??
    q
      .select('id')
      .orderBy('id', page.order)
      .limit(page.limit + 1);
  // A platform-wide date range is read from an index in date order, not id order: every match
  // would be fetched and sorted for one page, so PostgreSQL too picks the ids first.
  const idsFirst =
    !isPostgres(db) || byStatus !== undefined || ((f.startDate !== undefined || f.endDate !== undefined) && f.customerId === undefined);
  const pageQuery = idsFirst
    ? db.selectFrom('transactions').selectAll().where('platform_id', '=', platformId).where('id', 'in', ids).orderBy('id', page.order)
    : q
        .selectAll()
        .orderBy('id', page.order)
        .limit(page.limit + 1);
  // The count rides along as an (uncorrelated, evaluated once) scalar subquery: one statement, one
  // round trip. An empty page carries no row to hold it, so then it is asked for on its own.
  const found = await pageQuery.select(() => count.as('total_count')).execute();
  if (found.length === 0) return { rows: [], totalCount: page.afterId ? Number((await count.executeTakeFirstOrThrow()).n) : 0 };
  const totalCount = Number(found[0]!.total_count);
  return { rows: found.map(({ total_count: _, ...row }) => row), totalCount };
}

/** The ids and count of a status (and type) filter, from PostgreSQL's transaction_statuses (migration 0030). */
function statusIds(db: Kysely<Database>, platformId: string, status: string, type: string | undefined) {
  const all = db.selectFrom('transaction_statuses').where('platform_id', '=', platformId).where('status', '=', status);
  const base = type === undefined ? all : all.where('type', '=', type);
  return {
    count: base.select((eb) => eb.fn.countAll<number>().as('n')),
    ids: (after: string | undefined, page: { limit: number; order: 'asc' | 'desc' }) =>
      (after ? base.where('id', page.order === 'desc' ? '<' : '>', after) : base)
        .select('id')
        .orderBy('id', page.order)
        .limit(page.limit + 1),
  };
}

/** How many filters other than status and type are set (each narrows the list by an index of its own). */
function filtersBesideStatus(f: TransactionFilter): number {
  const { status: _status, type: _type, ...rest } = f;
  return Object.values(rest).filter((v) => v !== undefined).length;
}

// ---------------------------------------------------------------------------------------------
// Quotes

const insertQuoteRow = preparedInsert('quotes', {
  id: true,
  platform_id: true,
  customer_id: true,
  status: true,
  transaction_id: true,
  source: true,
  destination: true,
  sending_currency: true,
  receiving_currency: true,
  locked_side: true,
  locked_amount: true,
  total_sending_amount: true,
  total_receiving_amount: true,
  exchange_rate: true,
  fees_included: true,
  platform_fees_included: true,
  description: true,
  payment_instructions: true,
  funding_reference: true,
  expires_at: true,
  created_at: true,
  updated_at: true,
  fee_fixed: true,
  fee_variable_bps: true,
  sca_steps: true,
  sca_factor: true,
});

export function insertQuote(db: Kysely<Database>, row: QuoteRow): Maybe<unknown> {
  return insertQuoteRow.defer(db, {
    ...row,
    fee_fixed: row.fee_fixed ?? null,
    fee_variable_bps: row.fee_variable_bps ?? null,
    sca_steps: row.sca_steps ?? null,
    sca_factor: row.sca_factor ?? null,
  });
}

/** A quote of the platform; `forUpdate` holds its row until the caller's transaction ends. */
export async function findQuote(db: Kysely<Database>, platformId: string, id: string, opts?: LockOptions): Promise<QuoteRow | undefined> {
  return lockRows(
    db,
    db.selectFrom('quotes').selectAll().where('id', '=', id).where(guard('platform_id', platformId)),
    opts,
  ).executeTakeFirst();
}

/** The platform's quotes among `ids` (any order). */
export async function findQuotesByIds(db: Kysely<Database>, platformId: string, ids: string[]): Promise<QuoteRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('quotes').selectAll().where('platform_id', '=', platformId).where('id', 'in', ids).execute();
}

export async function transitionQuote(db: Kysely<Database>, id: string, from: string[], set: Updateable<QuotesTable>): Promise<boolean> {
  const r = await db.updateTable('quotes').set(set).where('id', '=', id).where('status', 'in', from).executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

const finishQuoteStatement = prepared((db, a: { id: string; status: string; at: string }) =>
  db
    .updateTable('quotes')
    .set({ status: a.status, updated_at: a.at })
    .where('id', '=', a.id)
    .where('status', 'in', ['PENDING', 'PROCESSING']),
);

/**
 * Compare-and-set of a quote still PENDING or PROCESSING to its payment's outcome. Nobody reads
 * its count (a quote already final stays as it is), so on PostgreSQL it goes with the unit's next
 * statement (`defer`) instead of a round trip of its own.
 */
export function finishQuote(db: Kysely<Database>, id: string, status: string, at: string): void | Promise<void> {
  return finishQuoteStatement.defer(db, { id, status, at });
}

// ---------------------------------------------------------------------------------------------
// The payment path's lookups around it

const selectLiveExternalAccount = prepared((db, a: { platformId: string; id: string }) =>
  db
    .selectFrom('external_accounts')
    .selectAll()
    .where('id', '=', a.id)
    .where(guard('platform_id', a.platformId))
    .where(guard('deleted_at', null)),
);

/** A live (not deleted) external account to pay or pull from, customer-owned or the platform's. */
export function findLiveExternalAccount(db: Kysely<Database>, platformId: string, id: string): Maybe<ExternalAccountRow | undefined> {
  return selectLiveExternalAccount.first(db, { platformId, id });
}

/** Whether the payment `referenceId` has a ledger entry of `kind`. */
export async function hasLedgerEntry(db: Kysely<Database>, platformId: string, referenceId: string, kind: string): Promise<boolean> {
  const row = await db
    .selectFrom('ledger_entries')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('reference_id', '=', referenceId)
    .where('kind', '=', kind)
    .executeTakeFirst();
  return row !== undefined;
}
