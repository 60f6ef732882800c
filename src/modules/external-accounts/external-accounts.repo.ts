/** SQL for external accounts. Every query filters on platform_id; deleted rows are never listed. */
import type { Kysely } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database, ExternalAccountRow } from '../../store/schema.ts';
import { guard } from '../../store/guard.ts';

/**
 * Inserts the account unless a live account of the platform already has its identity key; false
 * when one does. That race (two creates of one account, both past the duplicate check) is settled
 * by the partial unique index without failing the transaction: on PostgreSQL the loser waits for
 * the winner's commit, after which the winner is visible to the caller's next read.
 */
export async function insertExternalAccount(db: Kysely<Database>, row: ExternalAccountRow): Promise<boolean> {
  const r = await db
    .insertInto('external_accounts')
    .values(row)
    .onConflict((oc) => oc.columns(['platform_id', 'identity_key']).where('deleted_at', 'is', null).doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/**
 * The non-deleted external account with this id on this platform. `scope` 'platform' only finds
 * platform-owned accounts; 'any' finds customer and platform accounts alike. With
 * `{ forUpdate: true }` the row stays locked until the transaction ends.
 */
export async function findExternalAccount(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  scope: 'any' | 'platform' = 'any',
  opts?: LockOptions,
): Promise<ExternalAccountRow | undefined> {
  let q = db
    .selectFrom('external_accounts')
    .selectAll()
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where(guard('deleted_at', null));
  if (scope === 'platform') q = q.where('customer_id', 'is', null);
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Sets a live account's status (ownership verification); false when there was no such account. */
export async function updateExternalAccountStatus(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  status: string,
  at: string,
): Promise<boolean> {
  const r = await db
    .updateTable('external_accounts')
    .set({ status, updated_at: at })
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where(guard('deleted_at', null))
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** The live account of this platform with this identity key, if any (duplicate detection). */
export async function findByIdentity(
  db: Kysely<Database>,
  platformId: string,
  identityKey: string,
): Promise<ExternalAccountRow | undefined> {
  return db
    .selectFrom('external_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('identity_key', '=', identityKey)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Clears the default-UMA-deposit flag on the customer's other accounts. */
export async function clearDefaultUmaDeposit(db: Kysely<Database>, platformId: string, customerId: string, at: string): Promise<void> {
  await db
    .updateTable('external_accounts')
    .set({ default_uma_deposit: 0, updated_at: at })
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('default_uma_deposit', '=', 1)
    .where('deleted_at', 'is', null)
    .execute();
}

/** Soft-deletes a live account; false when there was none to delete. */
export async function softDeleteExternalAccount(db: Kysely<Database>, platformId: string, id: string, at: string): Promise<boolean> {
  const r = await db
    .updateTable('external_accounts')
    .set({ deleted_at: at, updated_at: at, status: 'INACTIVE', default_uma_deposit: null })
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where(guard('deleted_at', null))
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export interface ExternalAccountFilter {
  /** 'customers': every account of the platform (optionally one customer's); 'platform': platform-owned only. */
  scope: 'customers' | 'platform';
  customerId?: string | undefined;
  currency?: string | undefined;
}

/** One page of accounts, newest first, plus the total that match the filter. */
export async function listExternalAccounts(
  db: Kysely<Database>,
  platformId: string,
  f: ExternalAccountFilter,
  limit: number,
  afterId: string | undefined,
) {
  let q = db.selectFrom('external_accounts').where('platform_id', '=', platformId).where('deleted_at', 'is', null);
  if (f.scope === 'platform') q = q.where('customer_id', 'is', null);
  if (f.customerId !== undefined) q = q.where('customer_id', '=', f.customerId);
  if (f.currency !== undefined) q = q.where('currency', '=', f.currency);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}
