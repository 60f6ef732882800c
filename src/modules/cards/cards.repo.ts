/**
 * SQL of cards, their funding-source bindings and their reveals. Every query a request can reach
 * filters on platform_id (a reveal page's token names its platform, as a KYC link's does).
 */
import type { Kysely, Updateable } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database, InternalAccountRow } from '../../store/schema.ts';
import type { CardRevealRow, CardRow, CardState, CardsTable } from './cards.tables.ts';
import { guard } from '../../store/guard.ts';

type Db = Kysely<Database>;

export async function insertCard(db: Db, row: CardRow): Promise<void> {
  await db.insertInto('cards').values(row).execute();
}

/** The platform's card `id`; `{ forUpdate }` holds its row until the caller's transaction ends. */
export async function findCard(db: Db, platformId: string, id: string, opts?: LockOptions): Promise<CardRow | undefined> {
  const q = db.selectFrom('cards').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Whether the platform has a card `id` (delegated keys bind to existing cards only). */
export async function cardExists(db: Db, platformId: string, id: string): Promise<boolean> {
  const row = await db.selectFrom('cards').select('id').where('id', '=', id).where(guard('platform_id', platformId)).executeTakeFirst();
  return row !== undefined;
}

export async function platformCardIdInUse(db: Db, platformId: string, platformCardId: string): Promise<boolean> {
  const row = await db
    .selectFrom('cards')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('platform_card_id', '=', platformCardId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether a failed insert broke the one-platformCardId-per-platform index (two racing creates). */
export function isPlatformCardIdViolation(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown };
  const unique = e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE';
  return unique && `${String(e.constraint ?? '')} ${String(e.message ?? '')}`.includes('platform_card_id');
}

export async function updateCard(db: Db, platformId: string, id: string, set: Updateable<CardsTable>): Promise<void> {
  await db.updateTable('cards').set(set).where('id', '=', id).where(guard('platform_id', platformId)).execute();
}

/**
 * Moves a card from `from` to another state (provisioning); false when it is no longer in `from`
 * (a second runner of the same job, or a card changed meanwhile).
 */
export async function transitionCard(
  db: Db,
  platformId: string,
  id: string,
  from: CardState,
  set: Updateable<CardsTable>,
): Promise<boolean> {
  const r = await db
    .updateTable('cards')
    .set(set)
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where('state', '=', from)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** Replaces a card's bindings (one row per source, with its priority). */
export async function replaceCardSources(db: Db, platformId: string, cardId: string, accountIds: readonly string[]): Promise<void> {
  await db.deleteFrom('card_sources').where('platform_id', '=', platformId).where('card_id', '=', cardId).execute();
  await db
    .insertInto('card_sources')
    .values(accountIds.map((accountId, position) => ({ platform_id: platformId, card_id: cardId, account_id: accountId, position })))
    .execute();
}

export interface CardFilter {
  cardholderId?: string | undefined;
  accountId?: string | undefined;
  platformCardId?: string | undefined;
  state?: string | undefined;
}

/** One page of the platform's cards in id order, and how many match. */
export async function listCards(
  db: Db,
  platformId: string,
  f: CardFilter,
  page: { limit: number; afterId: string | undefined; order: 'asc' | 'desc' },
): Promise<{ rows: CardRow[]; totalCount: number }> {
  let q = db.selectFrom('cards').where('platform_id', '=', platformId);
  if (f.cardholderId !== undefined) q = q.where('cardholder_id', '=', f.cardholderId);
  if (f.platformCardId !== undefined) q = q.where('platform_card_id', '=', f.platformCardId);
  if (f.state !== undefined) q = q.where('state', '=', f.state as CardState);
  if (f.accountId !== undefined) {
    const accountId = f.accountId;
    q = q.where('id', 'in', (eb) =>
      eb.selectFrom('card_sources').select('card_id').where('platform_id', '=', platformId).where('account_id', '=', accountId),
    );
  }
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let rows = q.selectAll();
  if (page.afterId !== undefined) rows = rows.where('id', page.order === 'desc' ? '<' : '>', page.afterId);
  return {
    rows: await rows
      .orderBy('id', page.order)
      .limit(page.limit + 1)
      .execute(),
    totalCount: Number(total.n),
  };
}

/**
 * The platform's internal accounts among `ids`, in id order. With `{ forUpdate }` their rows are held
 * until the transaction ends (an authorization reads a balance it then holds); taken in id order, so
 * two units never wait on each other's rows.
 */
export async function findInternalAccounts(
  db: Db,
  platformId: string,
  ids: readonly string[],
  opts?: LockOptions,
): Promise<InternalAccountRow[]> {
  if (ids.length === 0) return [];
  const q = db.selectFrom('internal_accounts').selectAll().where('platform_id', '=', platformId).where('id', 'in', ids).orderBy('id');
  return lockRows(db, q, opts).execute();
}

// ── Reveals ───────────────────────────────────────────────────────────────────────────────────

export async function insertReveal(db: Db, row: CardRevealRow): Promise<void> {
  await db.insertInto('card_reveals').values(row).execute();
}

/** The reveal whose token hashes to `tokenHash`, of any platform (the token names its platform), or of `platformId`'s only. */
export async function findReveal(db: Db, tokenHash: string, platformId?: string, opts?: LockOptions): Promise<CardRevealRow | undefined> {
  let q = db.selectFrom('card_reveals').selectAll().where('token_hash', '=', tokenHash);
  if (platformId !== undefined) q = q.where('platform_id', '=', platformId);
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Spends a reveal's token; false when it was spent already. */
export async function useReveal(db: Db, platformId: string, tokenHash: string, at: string): Promise<boolean> {
  const r = await db
    .updateTable('card_reveals')
    .set({ used_at: at })
    .where('platform_id', '=', platformId)
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}
