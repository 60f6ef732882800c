/** SQL for internal accounts. */
import type { Kysely } from 'kysely';
import type { Database, InternalAccountRow, NewInternalAccount } from '../../store/schema.ts';

export async function insertInternalAccount(db: Kysely<Database>, row: NewInternalAccount): Promise<void> {
  await db.insertInto('internal_accounts').values(row).execute();
}

export async function findInternalAccount(db: Kysely<Database>, platformId: string, id: string): Promise<InternalAccountRow | undefined> {
  return db.selectFrom('internal_accounts').selectAll().where('platform_id', '=', platformId).where('id', '=', id).executeTakeFirst();
}

export async function listPlatformAccounts(
  db: Kysely<Database>,
  platformId: string,
  filter: { currency?: string | undefined; type?: string | undefined },
): Promise<InternalAccountRow[]> {
  let q = db.selectFrom('internal_accounts').selectAll().where('platform_id', '=', platformId).where('customer_id', 'is', null);
  if (filter.currency) q = q.where('currency', '=', filter.currency);
  if (filter.type) q = q.where('type', '=', filter.type);
  return q.orderBy('id', 'asc').execute();
}
