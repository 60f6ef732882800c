/** SQL of stablecoin issuance. Every query filters on platform_id. */
import { sql, type Kysely, type Updateable } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database } from '../../store/schema.ts';
import type {
  OperationRow,
  OperationStatus,
  ProviderAccountRow,
  StablecoinOperationsTable,
  StablecoinProviderAccountsTable,
  StablecoinRow,
} from './stablecoins.tables.ts';
import { guard } from '../../store/guard.ts';

type Db = Kysely<Database>;

/** A page's rows (`limit + 1` of them) and the total matching the filter. */
export interface Rows<R> {
  rows: R[];
  totalCount: number;
}

// ── provider account links ───────────────────────────────────────────────────────────────────

/** Inserts the link unless one of the same provider account exists (false then). */
export async function insertLink(db: Db, row: ProviderAccountRow): Promise<boolean> {
  const r = await db
    .insertInto('stablecoin_provider_accounts')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function findLink(db: Db, platformId: string, id: string, opts?: LockOptions): Promise<ProviderAccountRow | undefined> {
  const q = db.selectFrom('stablecoin_provider_accounts').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

export async function findLinkByAccount(
  db: Db,
  platformId: string,
  provider: string,
  environment: string,
  providerAccountId: string,
  opts?: LockOptions,
): Promise<ProviderAccountRow | undefined> {
  const q = db
    .selectFrom('stablecoin_provider_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('provider', '=', provider)
    .where('provider_environment', '=', environment)
    .where('provider_account_id', '=', providerAccountId);
  return lockRows(db, q, opts).executeTakeFirst();
}

/** The platform's links of a provider and environment, newest first (at most `limit`). */
export async function linksOf(
  db: Db,
  platformId: string,
  provider: string,
  environment: string,
  limit: number,
): Promise<ProviderAccountRow[]> {
  return db
    .selectFrom('stablecoin_provider_accounts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('provider', '=', provider)
    .where('provider_environment', '=', environment)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function updateLink(
  db: Db,
  platformId: string,
  id: string,
  set: Updateable<StablecoinProviderAccountsTable>,
  onlyIf?: { status?: string; lastVerifiedAt?: string },
): Promise<boolean> {
  let q = db.updateTable('stablecoin_provider_accounts').set(set).where('id', '=', id).where(guard('platform_id', platformId));
  if (onlyIf?.status !== undefined) q = q.where('status', '=', onlyIf.status as ProviderAccountRow['status']);
  if (onlyIf?.lastVerifiedAt !== undefined) q = q.where('last_verified_at', '=', onlyIf.lastVerifiedAt);
  const r = await q.executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function listLinks(
  db: Db,
  platformId: string,
  f: { provider?: string | undefined; status?: string | undefined },
  limit: number,
  afterId: string | undefined,
): Promise<Rows<ProviderAccountRow>> {
  let q = db.selectFrom('stablecoin_provider_accounts').where('platform_id', '=', platformId);
  if (f.provider !== undefined) q = q.where('provider', '=', f.provider);
  if (f.status !== undefined) q = q.where('status', '=', f.status as ProviderAccountRow['status']);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId !== undefined) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}

// ── stablecoins ──────────────────────────────────────────────────────────────────────────────

/** Inserts the stablecoin unless its token is registered on the platform already (false then). */
export async function insertStablecoin(db: Db, row: StablecoinRow): Promise<boolean> {
  const r = await db
    .insertInto('stablecoins')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .executeTakeFirst();
  return Number(r.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function findStablecoin(db: Db, platformId: string, id: string, opts?: LockOptions): Promise<StablecoinRow | undefined> {
  const q = db.selectFrom('stablecoins').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

/** The platform's stablecoin of this token, by either of its identifiers. */
export async function findStablecoinByToken(
  db: Db,
  platformId: string,
  providerTokenIdentifier: string,
  network: string,
  networkTokenIdentifier: string,
): Promise<StablecoinRow | undefined> {
  return db
    .selectFrom('stablecoins')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where((eb) =>
      eb.or([
        eb('provider_token_identifier', '=', providerTokenIdentifier),
        eb.and([eb('network', '=', network), eb('network_token_identifier', '=', networkTokenIdentifier)]),
      ]),
    )
    .executeTakeFirst();
}

/** Moves the issuance status on from `from`; false when it is no longer `from`. */
export async function advanceIssuance(db: Db, platformId: string, id: string, from: string, to: string, at: string): Promise<boolean> {
  const r = await db
    .updateTable('stablecoins')
    .set({ issuance_status: to as StablecoinRow['issuance_status'], updated_at: at })
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where('issuance_status', '=', from as StablecoinRow['issuance_status'])
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function listStablecoins(
  db: Db,
  platformId: string,
  f: { issuanceStatus?: string | undefined; gridOperationsStatus?: string | undefined; provider?: string | undefined },
  limit: number,
  afterId: string | undefined,
): Promise<Rows<StablecoinRow>> {
  let q = db.selectFrom('stablecoins').where('platform_id', '=', platformId);
  if (f.issuanceStatus !== undefined) q = q.where('issuance_status', '=', f.issuanceStatus as StablecoinRow['issuance_status']);
  if (f.gridOperationsStatus !== undefined) {
    q = q.where('grid_operations_status', '=', f.gridOperationsStatus as StablecoinRow['grid_operations_status']);
  }
  if (f.provider !== undefined) q = q.where('provider', '=', f.provider);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId !== undefined) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}

/**
 * Reserves `amount` for a new mint (`mints_in_flight`) while the supply with every mint in flight
 * stays a safe integer; false when it would not. One conditional UPDATE: concurrent mints cannot
 * both pass the bound.
 */
export async function reserveMint(db: Db, platformId: string, id: string, amount: number): Promise<boolean> {
  const r = await db
    .updateTable('stablecoins')
    .set({ mints_in_flight: sql<number>`mints_in_flight + ${amount}` })
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where(sql<boolean>`supply + mints_in_flight <= ${Number.MAX_SAFE_INTEGER - amount}`)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * Reserves `amount` of the supply for a new burn (`burns_in_flight`) while the burns in flight
 * stay within the outstanding supply; false when they would not. One conditional UPDATE, so
 * concurrent burns can never promise more than the supply.
 */
export async function reserveBurn(db: Db, platformId: string, id: string, amount: number): Promise<boolean> {
  const r = await db
    .updateTable('stablecoins')
    .set({ burns_in_flight: sql<number>`burns_in_flight + ${amount}` })
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where(sql<boolean>`supply - burns_in_flight >= ${amount}`)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

/**
 * Ends an operation's reservation: a completed mint adds its amount to the supply, a completed
 * burn takes it off; a failed or expired one only releases the reservation. The bounds hold the
 * supply within [0, 2^53−1] whatever a stale read let through (false: refused).
 */
export async function settleSupply(
  db: Db,
  platformId: string,
  id: string,
  type: 'MINT' | 'BURN',
  amount: number,
  completed: boolean,
  at: string,
): Promise<boolean> {
  const delta = completed ? (type === 'MINT' ? amount : -amount) : 0;
  const inFlight = type === 'MINT' ? 'mints_in_flight' : 'burns_in_flight';
  let q = db
    .updateTable('stablecoins')
    .set({
      supply: sql<number>`supply + ${delta}`,
      [inFlight]: sql<number>`${sql.ref(inFlight)} - ${amount}`,
      updated_at: at,
    })
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where(sql.ref(inFlight), '>=', amount);
  if (delta < 0) q = q.where('supply', '>=', -delta);
  if (delta > 0) q = q.where('supply', '<=', Number.MAX_SAFE_INTEGER - delta);
  const r = await q.executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

// ── operations ───────────────────────────────────────────────────────────────────────────────

export async function insertOperation(db: Db, row: OperationRow): Promise<void> {
  await db.insertInto('stablecoin_operations').values(row).execute();
}

export async function findOperation(db: Db, platformId: string, id: string, opts?: LockOptions): Promise<OperationRow | undefined> {
  const q = db.selectFrom('stablecoin_operations').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Moves an operation on from `from`; false when another writer moved it first. */
export async function moveOperation(
  db: Db,
  platformId: string,
  id: string,
  from: OperationStatus,
  set: Updateable<StablecoinOperationsTable>,
): Promise<boolean> {
  const r = await db
    .updateTable('stablecoin_operations')
    .set(set)
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where('status', '=', from)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function listOperations(
  db: Db,
  platformId: string,
  stablecoinId: string,
  operationType: string | undefined,
  limit: number,
  afterId: string | undefined,
): Promise<Rows<OperationRow>> {
  let q = db.selectFrom('stablecoin_operations').where('platform_id', '=', platformId).where('stablecoin_id', '=', stablecoinId);
  if (operationType !== undefined) q = q.where('operation_type', '=', operationType as OperationRow['operation_type']);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId !== undefined) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}
