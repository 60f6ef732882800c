/**
 * SQL of delegated keys and their card funding-source bindings. Every query filters on the
 * platform. Sealing and opening of `private_key` stays with the service (it holds `u.app.secrets`).
 */
import type { Kysely } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database } from '../../store/schema.ts';
import type { CardFundingSourceRow, DelegatedKeyRow, DelegatedKeyStatus } from './delegated-keys.tables.ts';
import { guard } from '../../store/guard.ts';

type Db = Kysely<Database>;

/**
 * Most keys one list returns (newest first). The live list is not paginated; abandoned PENDING
 * keys can pile up, and a request's work stays bounded.
 */
export const LIST_MAX = 1000;

// ── Card funding sources ────────────────────────────────────────────────────────────────────────

/** The binding of `cardId` to `accountId`, or undefined; `{ forUpdate }` holds it (the one-active-key check serialises on it). */
export async function findFundingSource(
  db: Db,
  platformId: string,
  cardId: string,
  accountId: string,
  opts?: LockOptions,
): Promise<CardFundingSourceRow | undefined> {
  const q = db
    .selectFrom('card_funding_sources')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('card_id', '=', cardId)
    .where('account_id', '=', accountId);
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Records a binding unless its pair has one (two racing first creates: the first insert wins). */
export async function insertFundingSource(db: Db, row: CardFundingSourceRow): Promise<void> {
  await db
    .insertInto('card_funding_sources')
    .values(row)
    .onConflict((oc) => oc.columns(['platform_id', 'card_id', 'account_id']).doNothing())
    .execute();
}

// ── Delegated keys ──────────────────────────────────────────────────────────────────────────────

export async function insertDelegatedKey(db: Db, row: DelegatedKeyRow): Promise<void> {
  await db.insertInto('delegated_keys').values(row).execute();
}

export async function findDelegatedKey(db: Db, platformId: string, id: string, opts?: LockOptions): Promise<DelegatedKeyRow | undefined> {
  const q = db.selectFrom('delegated_keys').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

/** The ACTIVE key of a funding source, or undefined (there is at most one). */
export async function findActiveKey(db: Db, platformId: string, fundingSourceId: string): Promise<DelegatedKeyRow | undefined> {
  return db
    .selectFrom('delegated_keys')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('funding_source_id', '=', fundingSourceId)
    .where('status', '=', 'ACTIVE')
    .executeTakeFirst();
}

/** The ACTIVE key of a funding source named by its pair, or undefined. */
export async function findActiveKeyForPair(
  db: Db,
  platformId: string,
  cardId: string,
  accountId: string,
): Promise<DelegatedKeyRow | undefined> {
  return db
    .selectFrom('delegated_keys')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('card_id', '=', cardId)
    .where('account_id', '=', accountId)
    .where('status', '=', 'ACTIVE')
    .executeTakeFirst();
}

/** Whether `publicKey` is an ACTIVE delegated key of the wallet `accountId` (who may stamp its quote executions). */
export async function isActiveDelegatedKey(db: Db, platformId: string, accountId: string, publicKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('delegated_keys')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('account_id', '=', accountId)
    .where('public_key', '=', publicKey)
    .where('status', '=', 'ACTIVE')
    .executeTakeFirst();
  return row !== undefined;
}

/** Keys matching every filter given (at least one is), newest first, at most {@link LIST_MAX}. */
export async function listDelegatedKeys(
  db: Db,
  platformId: string,
  filter: { accountId?: string | undefined; fundingSourceId?: string | undefined },
): Promise<DelegatedKeyRow[]> {
  let q = db.selectFrom('delegated_keys').selectAll().where('platform_id', '=', platformId);
  if (filter.accountId !== undefined) q = q.where('account_id', '=', filter.accountId);
  if (filter.fundingSourceId !== undefined) q = q.where('funding_source_id', '=', filter.fundingSourceId);
  return q.orderBy('id', 'desc').limit(LIST_MAX).execute();
}

export async function setKeyStatus(
  db: Db,
  id: string,
  status: DelegatedKeyStatus,
  at: string,
  opts: { destroyPrivateKey?: boolean } = {},
): Promise<void> {
  await db
    .updateTable('delegated_keys')
    .set({ status, updated_at: at, ...(opts.destroyPrivateKey ? { private_key: null } : {}) })
    .where('id', '=', id)
    .execute();
}

// ── The pending request of the first leg ────────────────────────────────────────────────────────

/**
 * Drops the operation data of a consumed pending request (the first leg's keypair, now kept with
 * the key itself): the private key then lives in one place, which revocation clears.
 */
export async function forgetRequestData(db: Db, platformId: string, requestId: string): Promise<void> {
  await db.updateTable('auth_requests').set({ data: null }).where('id', '=', requestId).where(guard('platform_id', platformId)).execute();
}
