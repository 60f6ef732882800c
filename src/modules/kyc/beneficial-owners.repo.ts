/** SQL for beneficial owners. Every query filters on platform_id. */
import type { Kysely, Updateable } from 'kysely';
import type { BeneficialOwnerRow, BeneficialOwnersTable, Database } from '../../store/schema.ts';
import { guard } from '../../store/guard.ts';

export async function insertBeneficialOwner(db: Kysely<Database>, row: BeneficialOwnerRow): Promise<void> {
  await db.insertInto('beneficial_owners').values(row).execute();
}

export async function findBeneficialOwner(db: Kysely<Database>, platformId: string, id: string): Promise<BeneficialOwnerRow | undefined> {
  return db.selectFrom('beneficial_owners').selectAll().where('id', '=', id).where(guard('platform_id', platformId)).executeTakeFirst();
}

export async function updateBeneficialOwner(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  set: Updateable<BeneficialOwnersTable>,
): Promise<void> {
  await db.updateTable('beneficial_owners').set(set).where('id', '=', id).where(guard('platform_id', platformId)).execute();
}

/** Every beneficial owner of a customer, oldest first. */
export async function allBeneficialOwners(db: Kysely<Database>, platformId: string, customerId: string): Promise<BeneficialOwnerRow[]> {
  return db
    .selectFrom('beneficial_owners')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .orderBy('id', 'asc')
    .execute();
}

/**
 * The beneficial owners of several customers in one query (a page of customers embeds them), by
 * customer and oldest first within each: the order `allBeneficialOwners` gives one customer.
 */
export async function beneficialOwnersOfCustomers(
  db: Kysely<Database>,
  platformId: string,
  customerIds: string[],
): Promise<BeneficialOwnerRow[]> {
  if (customerIds.length === 0) return [];
  return db
    .selectFrom('beneficial_owners')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', 'in', customerIds)
    .orderBy('customer_id', 'asc')
    .orderBy('id', 'asc')
    .execute();
}

/** One page of a customer's beneficial owners, newest first, plus the total. */
export async function listBeneficialOwners(
  db: Kysely<Database>,
  platformId: string,
  customerId: string,
  limit: number,
  afterId: string | undefined,
) {
  const q = db.selectFrom('beneficial_owners').where('platform_id', '=', platformId).where('customer_id', '=', customerId);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}
