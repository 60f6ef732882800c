/**
 * The dashboard's own reads (nothing here writes): the ledger postings behind an internal account,
 * and the operator's list of platforms. Every platform read filters on `platform_id`.
 */
import type { Kysely } from 'kysely';
import type { Database, PlatformRow } from '../store/schema.ts';
import { guard } from '../store/guard.ts';

export interface PostingRow {
  entry_id: string;
  seq: number;
  kind: string;
  reference_id: string;
  currency: string;
  bucket: string;
  amount: number;
  created_at: string;
}

/** Whether the internal account belongs to the platform (another platform's account reads as missing). */
export async function accountExists(db: Kysely<Database>, platformId: string, accountId: string): Promise<boolean> {
  const row = await db
    .selectFrom('internal_accounts')
    .select('id')
    .where('id', '=', accountId)
    .where(guard('platform_id', platformId))
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * One page of an account's postings, newest entry first, after the posting (afterEntry, afterSeq);
 * `limit + 1` rows (the extra one says there are more), and how many postings the account has.
 */
export async function listPostings(
  db: Kysely<Database>,
  platformId: string,
  accountId: string,
  page: { limit: number; after: { entryId: string; seq: number } | undefined },
): Promise<{ rows: PostingRow[]; totalCount: number }> {
  const base = db.selectFrom('ledger_postings as p').where('p.platform_id', '=', platformId).where('p.account_id', '=', accountId);
  let q = base
    .innerJoin('ledger_entries as e', 'e.id', 'p.entry_id')
    .select(['p.entry_id', 'p.seq', 'e.kind', 'e.reference_id', 'p.currency', 'p.bucket', 'p.amount', 'p.created_at']);
  const after = page.after;
  if (after)
    q = q.where((eb) =>
      eb.or([eb('p.entry_id', '<', after.entryId), eb.and([eb('p.entry_id', '=', after.entryId), eb('p.seq', '<', after.seq)])]),
    );
  const [rows, count] = await Promise.all([
    q
      .orderBy('p.entry_id', 'desc')
      .orderBy('p.seq', 'desc')
      .limit(page.limit + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.map((r) => ({ ...r, amount: Number(r.amount) })), totalCount: Number(count.n) };
}

/** One page of platforms, newest first (ids are time-ordered), and how many there are. */
export async function listPlatforms(
  db: Kysely<Database>,
  page: { limit: number; afterId: string | undefined },
): Promise<{ rows: PlatformRow[]; totalCount: number }> {
  let q = db.selectFrom('platforms').selectAll();
  if (page.afterId !== undefined) q = q.where('id', '<', page.afterId);
  const [rows, count] = await Promise.all([
    q
      .orderBy('id', 'desc')
      .limit(page.limit + 1)
      .execute(),
    db
      .selectFrom('platforms')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, totalCount: Number(count.n) };
}
