/** SQL for verifications. Every query filters on platform_id. */
import type { Kysely } from 'kysely';
import type { Database, VerificationRow } from '../../store/schema.ts';
import { guard } from '../../store/guard.ts';

export async function insertVerification(db: Kysely<Database>, row: VerificationRow): Promise<void> {
  await db.insertInto('verifications').values(row).execute();
}

export async function findVerification(db: Kysely<Database>, platformId: string, id: string): Promise<VerificationRow | undefined> {
  return db.selectFrom('verifications').selectAll().where('id', '=', id).where(guard('platform_id', platformId)).executeTakeFirst();
}

export interface VerificationFilter {
  customerId?: string | undefined;
  verificationStatus?: string | undefined;
}

/** One page of verifications, newest first, plus the total that match. */
export async function listVerifications(
  db: Kysely<Database>,
  platformId: string,
  f: VerificationFilter,
  limit: number,
  afterId: string | undefined,
) {
  let q = db.selectFrom('verifications').where('platform_id', '=', platformId);
  if (f.customerId !== undefined) q = q.where('customer_id', '=', f.customerId);
  if (f.verificationStatus !== undefined) q = q.where('verification_status', '=', f.verificationStatus);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}
