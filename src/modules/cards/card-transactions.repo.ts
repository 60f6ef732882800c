/** SQL of card transactions and the issuer messages (card events) behind them. Every query filters on the platform. */
import type { Kysely, Updateable } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database } from '../../store/schema.ts';
import type { CardEventRow, CardTransactionKind, CardTransactionRow, CardTransactionsTable } from './cards.tables.ts';
import { guard } from '../../store/guard.ts';

type Db = Kysely<Database>;

export async function insertCardTransaction(db: Db, row: CardTransactionRow): Promise<void> {
  await db.insertInto('card_transactions').values(row).execute();
}

/** The platform's card transaction `id` (of `cardId`, when given); `{ forUpdate }` holds its row. */
export async function findCardTransaction(
  db: Db,
  platformId: string,
  id: string,
  opts?: LockOptions & { cardId?: string },
): Promise<CardTransactionRow | undefined> {
  let q = db.selectFrom('card_transactions').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  if (opts?.cardId !== undefined) q = q.where('card_id', '=', opts.cardId);
  return lockRows(db, q, opts).executeTakeFirst();
}

export async function updateCardTransaction(db: Db, platformId: string, id: string, set: Updateable<CardTransactionsTable>): Promise<void> {
  await db.updateTable('card_transactions').set(set).where('id', '=', id).where(guard('platform_id', platformId)).execute();
}

/** How many card transactions of `kinds` the card made after `sinceIso` (the velocity window). */
export async function countRecentTransactions(
  db: Db,
  platformId: string,
  cardId: string,
  sinceIso: string,
  kinds: readonly CardTransactionKind[],
): Promise<number> {
  const r = await db
    .selectFrom('card_transactions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('card_id', '=', cardId)
    .where('created_at', '>', sinceIso)
    .where('platform_id', '=', platformId)
    .where('kind', 'in', [...kinds])
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function insertCardEvent(db: Db, row: CardEventRow): Promise<void> {
  await db.insertInto('card_events').values(row).execute();
}

/** The transaction's latest RETURN not yet reversed, if any. */
export async function lastOpenReturn(db: Db, platformId: string, transactionId: string): Promise<CardEventRow | undefined> {
  return db
    .selectFrom('card_events')
    .selectAll()
    .where('card_transaction_id', '=', transactionId)
    .where('platform_id', '=', platformId)
    .where('type', '=', 'RETURN')
    .where('outcome', '=', 'APPROVED')
    .where('reversed', '=', 0)
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

export async function markReturnReversed(db: Db, platformId: string, eventId: string): Promise<void> {
  await db.updateTable('card_events').set({ reversed: 1 }).where('id', '=', eventId).where(guard('platform_id', platformId)).execute();
}

/** The issuer messages of a card, oldest first (tests and support read declines here). */
export async function cardEventsOf(db: Db, platformId: string, cardId: string): Promise<CardEventRow[]> {
  return db
    .selectFrom('card_events')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('card_id', '=', cardId)
    .orderBy('id')
    .execute();
}

// ── GET /transactions ─────────────────────────────────────────────────────────────────────────

/** The filters of GET /transactions as they apply to card transactions (the others exclude them, see the service). */
export interface CardTransactionFilter {
  customerId?: string | undefined;
  platformCustomerId?: string | undefined;
  accountId?: string | undefined;
  direction?: 'DEBIT' | 'CREDIT' | undefined;
  status?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
}

function filtered(db: Db, platformId: string, f: CardTransactionFilter) {
  let q = db.selectFrom('card_transactions').where('platform_id', '=', platformId);
  if (f.customerId !== undefined) q = q.where('customer_id', '=', f.customerId);
  if (f.platformCustomerId !== undefined) q = q.where('platform_customer_id', '=', f.platformCustomerId);
  if (f.accountId !== undefined) q = q.where('account_id', '=', f.accountId);
  if (f.direction !== undefined) q = q.where('direction', '=', f.direction);
  if (f.status !== undefined) q = q.where('status', '=', f.status as CardTransactionRow['status']);
  if (f.startDate !== undefined) q = q.where('created_at', '>=', f.startDate);
  if (f.endDate !== undefined) q = q.where('created_at', '<=', f.endDate);
  return q;
}

/** How many card transactions match (one indexed count: what a platform without cards pays). */
export async function countCardTransactions(db: Db, platformId: string, f: CardTransactionFilter): Promise<number> {
  const r = await filtered(db, platformId, f)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Up to `limit` matching card transactions after `afterId` in id order. */
export async function pageCardTransactions(
  db: Db,
  platformId: string,
  f: CardTransactionFilter,
  page: { limit: number; afterId: string | undefined; order: 'asc' | 'desc' },
): Promise<CardTransactionRow[]> {
  let q = filtered(db, platformId, f).selectAll();
  if (page.afterId !== undefined) q = q.where('id', page.order === 'desc' ? '<' : '>', page.afterId);
  return q.orderBy('id', page.order).limit(page.limit).execute();
}
