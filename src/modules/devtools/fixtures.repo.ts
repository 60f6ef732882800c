/** SQL for fixture export and load: a platform's live customers and accounts, oldest first. */
import type { Kysely } from 'kysely';
import type { CustomerRow, Database, ExternalAccountRow, InternalAccountRow } from '../../store/schema.ts';

export function liveCustomers(db: Kysely<Database>, platformId: string): Promise<CustomerRow[]> {
  return db
    .selectFrom('customers')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
}

/** Every internal account of the platform (its own and its customers'). */
export function allInternalAccounts(db: Kysely<Database>, platformId: string): Promise<InternalAccountRow[]> {
  return db.selectFrom('internal_accounts').selectAll().where('platform_id', '=', platformId).orderBy('id').execute();
}

export function liveExternalAccounts(db: Kysely<Database>, platformId: string): Promise<ExternalAccountRow[]> {
  return db
    .selectFrom('external_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .execute();
}

/** The first account (any type, so a USDB embedded wallet too) of a customer — or, with null, of the platform — in `currency`. */
export function firstAccountIn(
  db: Kysely<Database>,
  platformId: string,
  customerId: string | null,
  currency: string,
): Promise<InternalAccountRow | undefined> {
  const q = db.selectFrom('internal_accounts').selectAll().where('platform_id', '=', platformId).where('currency', '=', currency);
  return (customerId === null ? q.where('customer_id', 'is', null) : q.where('customer_id', '=', customerId))
    .orderBy('id')
    .executeTakeFirst();
}
