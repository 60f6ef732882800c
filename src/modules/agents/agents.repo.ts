/** SQL for agents, their device codes, tokens, quotes and actions. Every query filters on platform_id or a hash. */
import { sql, type Kysely, type Updateable } from 'kysely';
import type { AgentAuth } from '../../http/auth.ts';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database, InternalAccountRow } from '../../store/schema.ts';
import type { AgentActionRow, AgentActionsTable, AgentDeviceCodeRow, AgentRow, AgentsTable } from '../../store/schema-agents.ts';
import { guard } from '../../store/guard.ts';

export async function insertAgent(db: Kysely<Database>, row: AgentRow): Promise<void> {
  await db.insertInto('agents').values(row).execute();
}

/** A live (not deleted) agent; `forUpdate` holds its row until the caller's transaction ends. */
export async function findAgent(db: Kysely<Database>, platformId: string, id: string, opts?: LockOptions): Promise<AgentRow | undefined> {
  const q = db
    .selectFrom('agents')
    .selectAll()
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where(guard('deleted_at', null));
  return lockRows(db, q, opts).executeTakeFirst();
}

export async function updateAgent(db: Kysely<Database>, id: string, set: Updateable<AgentsTable>): Promise<void> {
  await db.updateTable('agents').set(set).where('id', '=', id).execute();
}

export interface AgentFilter {
  customerId?: string | undefined;
  isPaused?: boolean | undefined;
  isConnected?: boolean | undefined;
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  updatedAfter?: string | undefined;
  updatedBefore?: string | undefined;
}

/** One page of live agents, newest first, plus the total that match. */
export async function listAgents(db: Kysely<Database>, platformId: string, f: AgentFilter, limit: number, afterId: string | undefined) {
  let q = db.selectFrom('agents').where('platform_id', '=', platformId).where('deleted_at', 'is', null);
  if (f.customerId !== undefined) q = q.where('customer_id', '=', f.customerId);
  if (f.isPaused !== undefined) q = q.where('is_paused', '=', f.isPaused ? 1 : 0);
  if (f.isConnected !== undefined) q = q.where('is_connected', '=', f.isConnected ? 1 : 0);
  if (f.createdAfter !== undefined) q = q.where('created_at', '>=', f.createdAfter);
  if (f.createdBefore !== undefined) q = q.where('created_at', '<=', f.createdBefore);
  if (f.updatedAfter !== undefined) q = q.where('updated_at', '>=', f.updatedAfter);
  if (f.updatedBefore !== undefined) q = q.where('updated_at', '<=', f.updatedBefore);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}

// ---- device codes and tokens

export async function insertDeviceCode(db: Kysely<Database>, row: AgentDeviceCodeRow): Promise<void> {
  await db.insertInto('agent_device_codes').values(row).execute();
}

export async function findDeviceCode(db: Kysely<Database>, codeHash: string): Promise<AgentDeviceCodeRow | undefined> {
  return db.selectFrom('agent_device_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/** Marks the agent's unredeemed codes superseded (a new one replaces them). */
export async function supersedeDeviceCodes(db: Kysely<Database>, agentId: string, at: string): Promise<void> {
  await db
    .updateTable('agent_device_codes')
    .set({ superseded_at: at })
    .where('agent_id', '=', agentId)
    .where('redeemed_at', 'is', null)
    .where('superseded_at', 'is', null)
    .execute();
}

/** Redeems a code once: false when it was redeemed, superseded or expired meanwhile. */
export async function redeemDeviceCode(db: Kysely<Database>, codeHash: string, at: string): Promise<boolean> {
  const r = await db
    .updateTable('agent_device_codes')
    .set({ redeemed_at: at })
    .where('code_hash', '=', codeHash)
    .where('redeemed_at', 'is', null)
    .where('superseded_at', 'is', null)
    .where('expires_at', '>', at)
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function insertToken(
  db: Kysely<Database>,
  row: { token_hash: string; platform_id: string; agent_id: string; created_at: string },
): Promise<void> {
  await db.insertInto('agent_tokens').values(row).execute();
}

/** The live agent holding this token, with its platform (AgentAuth reads it on every request). */
export async function findAgentByTokenHash(db: Kysely<Database>, tokenHash: string): Promise<AgentAuth | undefined> {
  const t = await db.selectFrom('agent_tokens').select(['agent_id', 'platform_id']).where('token_hash', '=', tokenHash).executeTakeFirst();
  if (!t) return undefined;
  const agent = await findAgent(db, t.platform_id, t.agent_id);
  if (!agent) return undefined;
  const platform = await db.selectFrom('platforms').selectAll().where('id', '=', t.platform_id).executeTakeFirst();
  return platform ? { agent, platform } : undefined;
}

/** Deletes an agent's credentials: its tokens stop working and its codes can no longer be redeemed. */
export async function deleteCredentials(db: Kysely<Database>, agentId: string): Promise<void> {
  await db.deleteFrom('agent_tokens').where('agent_id', '=', agentId).execute();
  await db.deleteFrom('agent_device_codes').where('agent_id', '=', agentId).execute();
}

// ---- quotes the agent created

export async function insertAgentQuote(
  db: Kysely<Database>,
  row: { quote_id: string; platform_id: string; agent_id: string; created_at: string },
): Promise<void> {
  await db.insertInto('agent_quotes').values(row).execute();
}

export async function isAgentQuote(db: Kysely<Database>, agentId: string, quoteId: string): Promise<boolean> {
  const r = await db
    .selectFrom('agent_quotes')
    .select('quote_id')
    .where('quote_id', '=', quoteId)
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
  return r !== undefined;
}

// ---- actions

export async function insertAction(db: Kysely<Database>, row: AgentActionRow): Promise<void> {
  await db.insertInto('agent_actions').values(row).execute();
}

/** An action of the platform; `forUpdate` holds its row until the caller's transaction ends. */
export async function findAction(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  opts?: LockOptions,
): Promise<AgentActionRow | undefined> {
  const q = db.selectFrom('agent_actions').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Moves a PENDING_APPROVAL action on; false when it was already decided. */
export async function decideAction(db: Kysely<Database>, id: string, set: Updateable<AgentActionsTable>): Promise<boolean> {
  const r = await db.updateTable('agent_actions').set(set).where('id', '=', id).where('status', '=', 'PENDING_APPROVAL').executeTakeFirst();
  return r.numUpdatedRows > 0n;
}

export async function hasPendingQuoteAction(db: Kysely<Database>, quoteId: string): Promise<boolean> {
  const r = await db
    .selectFrom('agent_actions')
    .select('id')
    .where('quote_id', '=', quoteId)
    .where('status', '=', 'PENDING_APPROVAL')
    .executeTakeFirst();
  return r !== undefined;
}

export async function rejectPendingActions(db: Kysely<Database>, agentId: string, reason: string, at: string): Promise<void> {
  await db
    .updateTable('agent_actions')
    .set({ status: 'REJECTED', rejection_reason: reason, updated_at: at })
    .where('agent_id', '=', agentId)
    .where('status', '=', 'PENDING_APPROVAL')
    .execute();
}

export interface ActionFilter {
  agentId?: string | undefined;
  customerId?: string | undefined;
  status?: string | undefined;
  startDate?: string | undefined;
  endDate?: string | undefined;
}

/** One page of actions in id order, plus the total that match. */
export async function listActions(
  db: Kysely<Database>,
  platformId: string,
  f: ActionFilter,
  page: { limit: number; afterId: string | undefined; order: 'asc' | 'desc' },
) {
  let q = db.selectFrom('agent_actions').where('platform_id', '=', platformId);
  if (f.agentId !== undefined) q = q.where('agent_id', '=', f.agentId);
  if (f.customerId !== undefined) q = q.where('customer_id', '=', f.customerId);
  if (f.status !== undefined) q = q.where('status', '=', f.status);
  if (f.startDate !== undefined) q = q.where('created_at', '>=', f.startDate);
  if (f.endDate !== undefined) q = q.where('created_at', '<=', f.endDate);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let rows = q.selectAll();
  if (page.afterId) rows = rows.where('id', page.order === 'desc' ? '<' : '>', page.afterId);
  const data = await rows
    .orderBy('id', page.order)
    .limit(page.limit + 1)
    .execute();
  return { rows: data, totalCount: Number(total.n) };
}

// ---- the customer's internal accounts, as an agent sees them

/** One page of the customer's internal accounts (only `allowed` ones when set), newest first. */
export async function listAgentAccounts(
  db: Kysely<Database>,
  platformId: string,
  customerId: string,
  f: { currency?: string | undefined; type?: string | undefined; allowed: string[] | null },
  limit: number,
  afterId: string | undefined,
): Promise<{ rows: InternalAccountRow[]; totalCount: number }> {
  if (f.allowed !== null && f.allowed.length === 0) return { rows: [], totalCount: 0 };
  let q = db.selectFrom('internal_accounts').where('platform_id', '=', platformId).where('customer_id', '=', customerId);
  if (f.allowed !== null) q = q.where('id', 'in', f.allowed);
  if (f.currency !== undefined) q = q.where('currency', '=', f.currency);
  if (f.type !== undefined) q = q.where('type', '=', f.type);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = q.selectAll();
  if (afterId) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}

/** Which of `ids` are internal accounts of the customer. */
export async function customerAccountIds(
  db: Kysely<Database>,
  platformId: string,
  customerId: string,
  ids: string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('internal_accounts')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('id', 'in', ids)
    .execute();
  return new Set(rows.map((r) => r.id));
}

// ---- the savepoint an approval runs its action in

/** A savepoint in the caller's transaction: `release` keeps what ran since, `rollback` undoes it. */
export interface Savepoint {
  release(): Promise<void>;
  rollback(): Promise<void>;
}

/** Opens the savepoint an approved action executes in (on both stores). */
export async function openActionSavepoint(db: Kysely<Database>): Promise<Savepoint> {
  await sql`savepoint agent_action`.execute(db);
  return {
    release: async () => {
      await sql`release savepoint agent_action`.execute(db);
    },
    rollback: async () => {
      await sql`rollback to savepoint agent_action`.execute(db);
    },
  };
}
