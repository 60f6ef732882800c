/** SQL for API tokens. */
import { type CompiledQuery, type Kysely, sql } from 'kysely';
import { bumpAuthEpoch } from '../../http/auth-cache.ts';
import { isPostgres } from '../../store/row-lock.ts';
import type { ApiTokenRow, Database, PlatformRow } from '../../store/schema.ts';
import { guard } from '../../store/guard.ts';

export async function insertToken(db: Kysely<Database>, row: ApiTokenRow): Promise<void> {
  await db.insertInto('api_tokens').values(row).execute();
}

/** Columns of the token + platform join, aliased so the two tables' names do not collide. */
function tokenWithPlatformQuery(db: Kysely<Database>, clientId: string) {
  return db
    .selectFrom('api_tokens as t')
    .innerJoin('platforms as p', 'p.id', 't.platform_id')
    .select([
      't.id as t_id',
      't.platform_id as t_platform_id',
      't.name as t_name',
      't.client_id as t_client_id',
      't.secret_hash as t_secret_hash',
      't.permissions as t_permissions',
      't.is_bootstrap as t_is_bootstrap',
      't.created_at as t_created_at',
      't.updated_at as t_updated_at',
      'p.id as p_id',
      'p.name as p_name',
      'p.environment as p_environment',
      'p.fiat_currency as p_fiat_currency',
      'p.config as p_config',
      'p.clock_offset_ms as p_clock_offset_ms',
      'p.created_at as p_created_at',
      'p.updated_at as p_updated_at',
    ])
    .where('t.client_id', '=', clientId);
}

type TokenWithPlatformRow = Awaited<ReturnType<ReturnType<typeof tokenWithPlatformQuery>['executeTakeFirstOrThrow']>>;

// Authentication runs this on every request: compile it once per database handle and reuse the
// SQL with the caller's parameter (building a query costs more than running it on SQLite).
const compiledLookup = new WeakMap<Kysely<Database>, CompiledQuery<TokenWithPlatformRow>>();

/** The token with this client id and its platform (the Basic-auth lookup). */
export async function findTokenWithPlatform(
  db: Kysely<Database>,
  clientId: string,
): Promise<{ token: ApiTokenRow; platform: PlatformRow } | undefined> {
  // No client id holds NUL, and PostgreSQL text cannot: such a Basic header is simply unknown (401).
  if (clientId.includes('\u0000')) return undefined;
  const r = isPostgres(db) ? await batchedLookup(db, clientId) : await lookupOne(db, clientId);
  return r ? tokenAndPlatform(r) : undefined;
}

async function lookupOne(db: Kysely<Database>, clientId: string): Promise<TokenWithPlatformRow | undefined> {
  let compiled = compiledLookup.get(db);
  if (!compiled) {
    compiled = tokenWithPlatformQuery(db, '').compile();
    compiledLookup.set(db, compiled);
  }
  return (await db.executeQuery<TokenWithPlatformRow>({ ...compiled, parameters: [clientId] })).rows[0];
}

/**
 * On PostgreSQL the lookups of requests that arrive together (read in one turn of the event loop)
 * are one SELECT of all their client ids: one round trip for them all, each answered from the
 * database as of that SELECT, which runs after every one of those requests arrived.
 */
type Waiter = { resolve: (r: TokenWithPlatformRow | undefined) => void; reject: (err: unknown) => void };
/** Lookups waiting for the next batch, by database handle and client id. */
const batches = new WeakMap<Kysely<Database>, Map<string, Waiter[]>>();

function batchedLookup(db: Kysely<Database>, clientId: string): Promise<TokenWithPlatformRow | undefined> {
  return new Promise((resolve, reject) => {
    let batch = batches.get(db);
    if (!batch) {
      const opened = new Map<string, Waiter[]>();
      batches.set(db, opened);
      batch = opened;
      setImmediate(() => {
        batches.delete(db);
        void runLookups(db, opened);
      });
    }
    const waiters = batch.get(clientId);
    if (waiters) waiters.push({ resolve, reject });
    else batch.set(clientId, [{ resolve, reject }]);
  });
}

async function runLookups(db: Kysely<Database>, batch: Map<string, Waiter[]>): Promise<void> {
  try {
    const ids = [...batch.keys()];
    const rows =
      ids.length === 1
        ? [await lookupOne(db, ids[0]!)]
        : await tokenWithPlatformQuery(db, '').clearWhere().where(sql<boolean>`t.client_id = any(${ids}::text[])`).execute();
    const byId = new Map<string, TokenWithPlatformRow>();
    for (const r of rows) if (r) byId.set(r.t_client_id, r);
    for (const [id, waiters] of batch) for (const w of waiters) w.resolve(byId.get(id));
  } catch (err) {
    for (const waiters of batch.values()) for (const w of waiters) w.reject(err);
  }
}

function tokenAndPlatform(r: TokenWithPlatformRow): { token: ApiTokenRow; platform: PlatformRow } {
  return {
    token: {
      id: r.t_id,
      platform_id: r.t_platform_id,
      name: r.t_name,
      client_id: r.t_client_id,
      secret_hash: r.t_secret_hash,
      permissions: r.t_permissions,
      is_bootstrap: r.t_is_bootstrap,
      created_at: r.t_created_at,
      updated_at: r.t_updated_at,
    },
    platform: {
      id: r.p_id,
      name: r.p_name,
      environment: r.p_environment,
      fiat_currency: r.p_fiat_currency,
      config: r.p_config,
      clock_offset_ms: Number(r.p_clock_offset_ms),
      created_at: r.p_created_at,
      updated_at: r.p_updated_at,
    },
  };
}

export async function findToken(db: Kysely<Database>, platformId: string, id: string): Promise<ApiTokenRow | undefined> {
  return db.selectFrom('api_tokens').selectAll().where('id', '=', id).where(guard('platform_id', platformId)).executeTakeFirst();
}

export async function findBootstrapToken(db: Kysely<Database>, platformId: string): Promise<ApiTokenRow | undefined> {
  return db.selectFrom('api_tokens').selectAll().where('platform_id', '=', platformId).where('is_bootstrap', '=', 1).executeTakeFirst();
}

export async function updateTokenCredentials(
  db: Kysely<Database>,
  id: string,
  clientId: string,
  secretHash: string,
  at: string,
): Promise<void> {
  await db.updateTable('api_tokens').set({ client_id: clientId, secret_hash: secretHash, updated_at: at }).where('id', '=', id).execute();
  bumpAuthEpoch();
}

export async function deleteToken(db: Kysely<Database>, platformId: string, id: string): Promise<boolean> {
  const r = await db.deleteFrom('api_tokens').where('id', '=', id).where(guard('platform_id', platformId)).executeTakeFirst();
  bumpAuthEpoch();
  return r.numDeletedRows > 0n;
}

export interface TokenFilter {
  name?: string | undefined;
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  updatedAfter?: string | undefined;
  updatedBefore?: string | undefined;
}

/** One page of tokens, newest first, plus the total that match the filter. */
export async function listTokens(db: Kysely<Database>, platformId: string, f: TokenFilter, limit: number, afterId: string | undefined) {
  let q = db.selectFrom('api_tokens').where('platform_id', '=', platformId);
  if (f.name !== undefined) q = q.where('name', '=', f.name);
  if (f.createdAfter) q = q.where('created_at', '>=', f.createdAfter);
  if (f.createdBefore) q = q.where('created_at', '<=', f.createdBefore);
  if (f.updatedAfter) q = q.where('updated_at', '>=', f.updatedAfter);
  if (f.updatedBefore) q = q.where('updated_at', '<=', f.updatedBefore);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}
