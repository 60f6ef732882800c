/** SQL for customers. Every query filters on platform_id. */
import type { Kysely, Updateable } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { CustomerRow, CustomersTable, Database } from '../../store/schema.ts';
import { guard } from '../../store/guard.ts';

/**
 * The customer with this id on this platform, deleted or not (check `deleted_at` to answer 410).
 * `{ forUpdate: true }` holds its row until the transaction ends: writes on one customer (its
 * update, delete, KYC data and submissions) then run one after the other.
 */
export async function findCustomer(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  opts?: LockOptions,
): Promise<CustomerRow | undefined> {
  const q = db.selectFrom('customers').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

export async function insertCustomer(db: Kysely<Database>, row: CustomerRow): Promise<void> {
  await db.insertInto('customers').values(row).execute();
}

/** Updates a non-deleted customer; false when it is (by now) deleted or unknown. */
export async function updateActiveCustomer(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  set: Updateable<CustomersTable>,
): Promise<boolean> {
  const r = await db
    .updateTable('customers')
    .set(set)
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where(guard('deleted_at', null))
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/** A non-deleted customer with this platformCustomerId, other than `exceptId`. */
export function findActiveByPlatformCustomerId(
  db: Kysely<Database>,
  platformId: string,
  platformCustomerId: string,
  exceptId?: string,
): Promise<CustomerRow | undefined> {
  return findActiveBy(db, platformId, 'platform_customer_id', platformCustomerId, exceptId);
}

/** A non-deleted customer with this UMA address, other than `exceptId`. */
export function findActiveByUmaAddress(
  db: Kysely<Database>,
  platformId: string,
  umaAddress: string,
  exceptId?: string,
): Promise<CustomerRow | undefined> {
  return findActiveBy(db, platformId, 'uma_address', umaAddress, exceptId);
}

async function findActiveBy(
  db: Kysely<Database>,
  platformId: string,
  column: 'platform_customer_id' | 'uma_address',
  value: string,
  exceptId: string | undefined,
): Promise<CustomerRow | undefined> {
  let q = db
    .selectFrom('customers')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where(column, '=', value)
    .where('deleted_at', 'is', null);
  if (exceptId) q = q.where('id', '!=', exceptId);
  return q.executeTakeFirst();
}

export interface CustomerFilter {
  platformCustomerId?: string | undefined;
  customerType?: string | undefined;
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  updatedAfter?: string | undefined;
  updatedBefore?: string | undefined;
  region?: string | undefined;
  currency?: string | undefined;
  umaAddress?: string | undefined;
  includeDeleted?: boolean | undefined;
}

/** One page of customers, newest first, plus the total that match the filter. */
export async function listCustomers(
  db: Kysely<Database>,
  platformId: string,
  f: CustomerFilter,
  limit: number,
  afterId: string | undefined,
) {
  let q = db.selectFrom('customers').where('platform_id', '=', platformId);
  if (!f.includeDeleted) q = q.where('deleted_at', 'is', null);
  if (f.platformCustomerId !== undefined) q = q.where('platform_customer_id', '=', f.platformCustomerId);
  if (f.customerType !== undefined) q = q.where('customer_type', '=', f.customerType);
  if (f.createdAfter) q = q.where('created_at', '>=', f.createdAfter);
  if (f.createdBefore) q = q.where('created_at', '<=', f.createdBefore);
  if (f.updatedAfter) q = q.where('updated_at', '>=', f.updatedAfter);
  if (f.updatedBefore) q = q.where('updated_at', '<=', f.updatedBefore);
  if (f.region !== undefined) q = q.where('region', '=', f.region);
  if (f.umaAddress !== undefined) q = q.where('uma_address', '=', f.umaAddress);
  // `currencies` is a JSON array of codes; the code's pattern ([A-Z0-9]) holds no LIKE wildcards.
  if (f.currency !== undefined) q = q.where('currencies', 'like', `%"${f.currency}"%`);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}

/** The customers with these ids (on this platform), for joining names onto other resources. */
export async function findCustomersByIds(db: Kysely<Database>, platformId: string, ids: string[]): Promise<CustomerRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('customers').selectAll().where('platform_id', '=', platformId).where('id', 'in', ids).execute();
}

/**
 * Which active-customer uniqueness rule a failed insert/update broke, if that is what failed:
 * the partial unique indexes catch the race two concurrent requests can win past the pre-checks.
 */
export function uniqueViolationOf(err: unknown): 'umaAddress' | 'platformCustomerId' | undefined {
  const e = err as { code?: unknown; constraint?: unknown; message?: unknown };
  const isUnique = e.code === '23505' || e.code === 'SQLITE_CONSTRAINT_UNIQUE';
  if (!isUnique) return undefined;
  const text = `${String(e.constraint ?? '')} ${String(e.message ?? '')}`;
  if (text.includes('uma_address')) return 'umaAddress';
  if (text.includes('platform_customer_id')) return 'platformCustomerId';
  return undefined;
}
