/** SQL of hosted KYC links. */
import type { Kysely } from 'kysely';
import { type LockOptions, lockRows } from '../../store/row-lock.ts';
import type { Database } from '../../store/schema.ts';
import type { KycLinkRow } from './kyc-links.tables.ts';

export async function insertKycLink(db: Kysely<Database>, row: KycLinkRow): Promise<void> {
  await db.insertInto('kyc_links').values(row).execute();
}

/**
 * The link whose token hashes to `tokenHash`, of any platform (the token is the credential and
 * names its platform), or undefined. With `platformId`, only that platform's.
 */
export async function findKycLink(
  db: Kysely<Database>,
  tokenHash: string,
  platformId?: string,
  opts?: LockOptions,
): Promise<KycLinkRow | undefined> {
  let q = db.selectFrom('kyc_links').selectAll().where('token_hash', '=', tokenHash);
  if (platformId !== undefined) q = q.where('platform_id', '=', platformId);
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Marks an unused link used; false when it was used already (the caller's read was stale). */
export async function markKycLinkUsed(
  db: Kysely<Database>,
  platformId: string,
  tokenHash: string,
  at: string,
  outcome: string,
): Promise<boolean> {
  const r = await db
    .updateTable('kyc_links')
    .set({ used_at: at, outcome })
    .where('token_hash', '=', tokenHash)
    .where('platform_id', '=', platformId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}
