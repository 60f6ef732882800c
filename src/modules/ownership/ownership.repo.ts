/** SQL of ownership challenges. Every query filters on platform_id. */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import type { ChallengeFailure, ChallengeStatus, OwnershipChallengeRow } from './ownership.tables.ts';
import { guard } from '../../store/guard.ts';

export async function insertChallenge(db: Kysely<Database>, row: OwnershipChallengeRow): Promise<void> {
  await db.insertInto('ownership_challenges').values(row).execute();
}

/** The account's outstanding (PENDING) challenge, expired or not. */
export async function findOutstandingChallenge(
  db: Kysely<Database>,
  platformId: string,
  externalAccountId: string,
): Promise<OwnershipChallengeRow | undefined> {
  return db
    .selectFrom('ownership_challenges')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('external_account_id', '=', externalAccountId)
    .where('status', '=', 'PENDING')
    .executeTakeFirst();
}

export async function findChallenge(db: Kysely<Database>, platformId: string, id: string): Promise<OwnershipChallengeRow | undefined> {
  return db.selectFrom('ownership_challenges').selectAll().where('id', '=', id).where(guard('platform_id', platformId)).executeTakeFirst();
}

/** Abandons the account's outstanding challenge, if any (a new one replaces it). */
export async function abandonOutstanding(db: Kysely<Database>, platformId: string, externalAccountId: string, at: string): Promise<void> {
  await db
    .updateTable('ownership_challenges')
    .set({ status: 'ABANDONED', updated_at: at })
    .where('platform_id', '=', platformId)
    .where('external_account_id', '=', externalAccountId)
    .where('status', '=', 'PENDING')
    .execute();
}

/** Settles a PENDING challenge; false when it was no longer pending. */
export async function settleChallenge(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  status: Exclude<ChallengeStatus, 'PENDING' | 'ABANDONED'>,
  failure: ChallengeFailure | null,
  at: string,
): Promise<boolean> {
  const r = await db
    .updateTable('ownership_challenges')
    .set({ status, failure_reason: failure, updated_at: at })
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where('status', '=', 'PENDING')
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}
