/** SQL of Strong Customer Authentication. Every query filters on platform_id. */
import type { Kysely, Updateable } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database } from '../../store/schema.ts';
import type {
  ScaChallengeKind,
  ScaChallengeRow,
  ScaChallengesTable,
  ScaCustomerStateRow,
  ScaCustomerStatesTable,
  ScaFactorRow,
  ScaFactorsTable,
  ScaResetRow,
  ScaResetsTable,
} from './sca.tables.ts';
import { guard } from '../../store/guard.ts';

type Db = Kysely<Database>;

// ── Factors ──────────────────────────────────────────────────────────────────────────────────

/** The customer's factor rows (PENDING and ACTIVE). */
export async function factorsOf(db: Db, platformId: string, customerId: string, opts?: LockOptions): Promise<ScaFactorRow[]> {
  const q = db
    .selectFrom('sca_factors')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .orderBy('id');
  return lockRows(db, q, opts).execute();
}

export async function insertFactor(db: Db, row: ScaFactorRow): Promise<void> {
  await db.insertInto('sca_factors').values(row).execute();
}

export async function updateFactor(db: Db, platformId: string, id: string, set: Updateable<ScaFactorsTable>): Promise<void> {
  await db.updateTable('sca_factors').set(set).where('id', '=', id).where(guard('platform_id', platformId)).execute();
}

export async function deleteFactor(db: Db, platformId: string, id: string): Promise<void> {
  await db.deleteFrom('sca_factors').where('id', '=', id).where(guard('platform_id', platformId)).execute();
}

// ── Challenges ───────────────────────────────────────────────────────────────────────────────

export async function insertChallenge(db: Db, row: ScaChallengeRow): Promise<void> {
  await db.insertInto('sca_challenges').values(row).execute();
}

/**
 * The subject's newest challenge of `kind` that is still PENDING or INVALIDATED (a void one answers
 * 429 until a new one replaces it), or undefined.
 */
export async function liveChallengeOf(
  db: Db,
  platformId: string,
  subjectId: string,
  kind: ScaChallengeKind,
  opts?: LockOptions,
): Promise<ScaChallengeRow | undefined> {
  const q = db
    .selectFrom('sca_challenges')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('subject_id', '=', subjectId)
    .where('kind', '=', kind)
    .where('status', 'in', ['PENDING', 'INVALIDATED'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1);
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Moves the subject's PENDING / INVALIDATED challenges of `kind` to `status`. */
export async function endChallengesOf(
  db: Db,
  platformId: string,
  subjectId: string,
  kind: ScaChallengeKind,
  status: 'REPLACED' | 'CLOSED',
  at: string,
): Promise<void> {
  await db
    .updateTable('sca_challenges')
    .set({ status, updated_at: at })
    .where('platform_id', '=', platformId)
    .where('subject_id', '=', subjectId)
    .where('kind', '=', kind)
    .where('status', 'in', ['PENDING', 'INVALIDATED'])
    .execute();
}

export async function updateChallenge(db: Db, platformId: string, id: string, set: Updateable<ScaChallengesTable>): Promise<void> {
  await db.updateTable('sca_challenges').set(set).where('id', '=', id).where(guard('platform_id', platformId)).execute();
}

// ── Login security state ─────────────────────────────────────────────────────────────────────

export async function findState(
  db: Db,
  platformId: string,
  customerId: string,
  opts?: LockOptions,
): Promise<ScaCustomerStateRow | undefined> {
  const q = db.selectFrom('sca_customer_states').selectAll().where('platform_id', '=', platformId).where('customer_id', '=', customerId);
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Writes the state whole (the caller holds the customer's row lock). */
export async function saveState(db: Db, row: ScaCustomerStateRow): Promise<void> {
  const { platform_id: _p, customer_id: _c, created_at: _created, ...changes } = row;
  await db
    .insertInto('sca_customer_states')
    .values(row)
    .onConflict((oc) => oc.columns(['platform_id', 'customer_id']).doUpdateSet(changes satisfies Updateable<ScaCustomerStatesTable>))
    .execute();
}

// ── 2FA resets ───────────────────────────────────────────────────────────────────────────────

export async function insertReset(db: Db, row: ScaResetRow): Promise<void> {
  await db.insertInto('sca_resets').values(row).execute();
}

export async function findReset(db: Db, platformId: string, id: string, opts?: LockOptions): Promise<ScaResetRow | undefined> {
  const q = db.selectFrom('sca_resets').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

/** The reset whose hosted-page token hashes to `hash` (any platform: the token names its platform). */
export async function findResetByTokenHash(db: Db, hash: string, opts?: LockOptions): Promise<ScaResetRow | undefined> {
  const q = db.selectFrom('sca_resets').selectAll().where('link_token_hash', '=', hash);
  return lockRows(db, q, opts).executeTakeFirst();
}

/** The creation times of the customer's resets started after `since`, oldest first. */
export async function resetStartsSince(db: Db, platformId: string, customerId: string, since: string): Promise<string[]> {
  const rows = await db
    .selectFrom('sca_resets')
    .select('created_at')
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('created_at', '>', since)
    .orderBy('created_at')
    .execute();
  return rows.map((r) => r.created_at);
}

/** The customer's resets in `statuses` (for the factor a replacement enrollment completes). */
export async function resetsIn(
  db: Db,
  platformId: string,
  customerId: string,
  where: { factor: ScaResetRow['factor']; status: ScaResetRow['status']; enrollmentStatus: 'PENDING' },
): Promise<ScaResetRow[]> {
  return db
    .selectFrom('sca_resets')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('factor', '=', where.factor)
    .where('status', '=', where.status)
    .where('enrollment_status', '=', where.enrollmentStatus)
    .execute();
}

export async function updateReset(db: Db, platformId: string, id: string, set: Updateable<ScaResetsTable>): Promise<void> {
  await db.updateTable('sca_resets').set(set).where('id', '=', id).where(guard('platform_id', platformId)).execute();
}

// ── Trusted beneficiaries ────────────────────────────────────────────────────────────────────

export async function isTrusted(db: Db, platformId: string, externalAccountId: string): Promise<boolean> {
  const row = await db
    .selectFrom('sca_trusted_beneficiaries')
    .select('external_account_id')
    .where('platform_id', '=', platformId)
    .where('external_account_id', '=', externalAccountId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function setTrusted(db: Db, platformId: string, externalAccountId: string, customerId: string, at: string): Promise<void> {
  await db
    .insertInto('sca_trusted_beneficiaries')
    .values({ platform_id: platformId, external_account_id: externalAccountId, customer_id: customerId, trusted_at: at })
    .execute();
}

export async function clearTrusted(db: Db, platformId: string, externalAccountId: string): Promise<void> {
  await db
    .deleteFrom('sca_trusted_beneficiaries')
    .where('platform_id', '=', platformId)
    .where('external_account_id', '=', externalAccountId)
    .execute();
}
