/**
 * Agent management (platform side) and installation: create, read, update, pause, delete, the
 * policy, device codes and their redemption for an access token. Device codes and access tokens
 * are random secrets stored only as SHA-256 hashes; each is shown once, in the response that
 * creates it.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { hashSecret } from '../../http/auth.ts';
import { ApiError, errors, type FieldError } from '../../http/errors.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { findCurrency } from '../../lib/currencies.ts';
import { iso, normalizeDateTime, platformNowMs } from '../../lib/time.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import type { AgentRow } from '../../store/schema-agents.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { getPlatform } from '../platforms/platforms.repo.ts';
import {
  customerAccountIds,
  deleteCredentials,
  findAgent,
  findDeviceCode,
  insertAgent,
  insertDeviceCode,
  insertToken,
  listAgents,
  redeemDeviceCode,
  rejectPendingActions,
  supersedeDeviceCodes,
  updateAgent,
} from './agents.repo.ts';
import type { AgentCreate, AgentListQueryT, AgentWire, Policy, PolicyUpdate } from './agents.schemas.ts';
import { countersAt, dayOf, inCurrency, mergePolicy, monthOf, usageToWire } from './policy.ts';

/** Device codes are valid for 24 hours (the live API's examples). */
export const DEVICE_CODE_TTL_MS = 24 * 3600_000;
/** 32 unambiguous characters (no I, O, 0, 1): 5 random bits each. */
const CODE_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export interface DeviceCodeWire {
  code: string;
  agentId: string;
  expiresAt: string;
  redeemed: boolean;
}

export function agentToWire(row: AgentRow, nowMs: number): AgentWire {
  return {
    id: row.id,
    name: row.name,
    customerId: row.customer_id,
    isPaused: row.is_paused === 1,
    isConnected: row.is_connected === 1,
    policy: JSON.parse(row.policy) as Policy,
    usage: usageToWire(row, nowMs),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export const policyOf = (row: AgentRow): Policy => JSON.parse(row.policy) as Policy;

const agentNotFound = (id: string) => errors.notFound('Agent', id);
const codeNotFound = () => new ApiError(404, 'NOT_FOUND', 'Device code not found');

export async function getAgent(db: Kysely<Database>, platformId: string, id: string, lock?: AppContext['store']['kind']): Promise<AgentRow> {
  const row = await findAgent(db, platformId, id, lock);
  if (!row) throw agentNotFound(id);
  return row;
}

/**
 * Checks what the schema cannot: known currencies, a threshold currency when a threshold amount
 * is set, and account restrictions naming only internal accounts of the agent's customer.
 */
async function checkPolicy(db: Kysely<Database>, platformId: string, customerId: string, policy: Policy, prefix: string): Promise<void> {
  const problems: FieldError[] = [];
  if (!findCurrency(policy.spendingLimits.currency)) throw errors.invalidCurrency(policy.spendingLimits.currency, `${prefix}spendingLimits.currency`);
  const th = policy.approvalThresholds;
  if (th?.currency !== undefined && !findCurrency(th.currency)) throw errors.invalidCurrency(th.currency, `${prefix}approvalThresholds.currency`);
  if (th?.amount !== undefined && th.amount !== null && th.currency === undefined) {
    problems.push({ field: `${prefix}approvalThresholds.currency`, message: 'is required when amount is set' });
  }
  const r = policy.accountRestrictions;
  const allowed = r?.allowedAccountIds ?? [];
  const rules = r?.accountRules ?? [];
  const owned = await customerAccountIds(db, platformId, customerId, [...new Set([...allowed, ...rules.map((x) => x.accountId)])]);
  allowed.forEach((id, i) => {
    if (!owned.has(id)) problems.push({ field: `${prefix}accountRestrictions.allowedAccountIds.${i}`, message: `${id} is not an internal account of customer ${customerId}` });
  });
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    const field = `${prefix}accountRestrictions.accountRules.${i}.accountId`;
    if (!owned.has(rule.accountId)) problems.push({ field, message: `${rule.accountId} is not an internal account of customer ${customerId}` });
    else if (seen.has(rule.accountId)) problems.push({ field, message: `a rule for ${rule.accountId} is already given` });
    seen.add(rule.accountId);
  });
  if (problems.length) throw errors.invalidInput(`Invalid agent policy: ${problems[0]!.field} ${problems[0]!.message}`, problems);
}

function newDeviceCode(ctx: AppContext): string {
  const bytes = ctx.deps.rng.bytes(12);
  const chars = [...bytes].map((b) => CODE_ALPHABET[b & 31]).join('');
  return `AGENT-${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}`;
}

/** Codes are typed by people: case and surrounding spaces do not matter. */
const codeHash = (code: string): string => hashSecret(code.trim().toUpperCase());

async function issueDeviceCode(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, agentId: string, nowMs: number): Promise<DeviceCodeWire> {
  const code = newDeviceCode(ctx);
  const expiresAt = iso(nowMs + DEVICE_CODE_TTL_MS);
  await supersedeDeviceCodes(trx, agentId, iso(nowMs));
  await insertDeviceCode(trx, {
    code_hash: codeHash(code),
    platform_id: platform.id,
    agent_id: agentId,
    expires_at: expiresAt,
    redeemed_at: null,
    superseded_at: null,
    created_at: iso(nowMs),
  });
  return { code, agentId, expiresAt, redeemed: false };
}

export async function createAgent(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, body: AgentCreate): Promise<{ agent: AgentWire; deviceCode: DeviceCodeWire }> {
  const customer = await findCustomer(trx, platform.id, body.customerId);
  if (!customer) throw errors.customerNotFound(body.customerId);
  if (customer.deleted_at !== null) throw errors.customerDeleted(body.customerId);
  await checkPolicy(trx, platform.id, customer.id, body.policy, 'policy.');
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  const at = iso(nowMs);
  const row: AgentRow = {
    id: ctx.deps.ids.next('Agent'),
    platform_id: platform.id,
    customer_id: customer.id,
    name: body.name,
    is_paused: 0,
    is_connected: 0,
    policy: JSON.stringify(body.policy),
    usage_day: dayOf(nowMs),
    daily_count: 0,
    daily_spend: 0,
    usage_month: monthOf(nowMs),
    monthly_spend: 0,
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
  await insertAgent(trx, row);
  const deviceCode = await issueDeviceCode(trx, ctx, platform, row.id, nowMs);
  return { agent: agentToWire(row, nowMs), deviceCode };
}

export async function listAgentPage(ctx: AppContext, platform: PlatformRow, q: AgentListQueryT) {
  const limit = q.limit ?? 20;
  const { rows, totalCount } = await listAgents(
    ctx.db,
    platform.id,
    {
      customerId: q.customerId,
      isPaused: q.isPaused,
      isConnected: q.isConnected,
      createdAfter: normalizeDateTime(q.createdAfter),
      createdBefore: normalizeDateTime(q.createdBefore),
      updatedAfter: normalizeDateTime(q.updatedAfter),
      updatedBefore: normalizeDateTime(q.updatedBefore),
    },
    limit,
    decodeCursor(q.cursor),
  );
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  return toPage(rows, limit, totalCount, (r) => agentToWire(r, nowMs));
}

export async function updateAgentFields(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, id: string, body: { name?: string | undefined; isPaused?: boolean | undefined }): Promise<AgentWire> {
  const row = await getAgent(trx, platform.id, id, ctx.store.kind);
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  const next: AgentRow = {
    ...row,
    name: body.name ?? row.name,
    is_paused: body.isPaused === undefined ? row.is_paused : body.isPaused ? 1 : 0,
    updated_at: iso(nowMs),
  };
  await updateAgent(trx, id, { name: next.name, is_paused: next.is_paused, updated_at: next.updated_at });
  return agentToWire(next, nowMs);
}

/** Partial policy update; takes effect for the agent's next request (its row is locked meanwhile). */
export async function updateAgentPolicy(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, id: string, body: PolicyUpdate): Promise<AgentWire> {
  const row = await getAgent(trx, platform.id, id, ctx.store.kind);
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  const current = policyOf(row);
  const newCurrency = body.spendingLimits?.currency;
  // Checked before the merge, which converts the limits into it.
  if (newCurrency !== undefined && !findCurrency(newCurrency)) throw errors.invalidCurrency(newCurrency, 'spendingLimits.currency');
  const next = mergePolicy(current, body, nowMs);
  await checkPolicy(trx, platform.id, row.customer_id, next, '');
  const updated: AgentRow = { ...row, policy: JSON.stringify(next), updated_at: iso(nowMs) };
  const from = current.spendingLimits.currency;
  const to = next.spendingLimits.currency;
  if (from !== to) {
    // Usage is kept in the limit currency: recast it with the limits.
    const c = countersAt(row, nowMs);
    Object.assign(updated, {
      usage_day: dayOf(nowMs),
      daily_count: c.count,
      daily_spend: inCurrency(c.daily, from, to, nowMs),
      usage_month: monthOf(nowMs),
      monthly_spend: inCurrency(c.monthly, from, to, nowMs),
    });
  }
  await updateAgent(trx, id, {
    policy: updated.policy,
    updated_at: updated.updated_at,
    usage_day: updated.usage_day,
    daily_count: updated.daily_count,
    daily_spend: updated.daily_spend,
    usage_month: updated.usage_month,
    monthly_spend: updated.monthly_spend,
  });
  return agentToWire(updated, nowMs);
}

/**
 * Deletes the agent for good: its token stops working at once, its codes can no longer be
 * redeemed, and actions still waiting for approval are rejected. Its history stays readable
 * through the transactions it made.
 */
export async function deleteAgent(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, id: string): Promise<void> {
  const row = await getAgent(trx, platform.id, id, ctx.store.kind);
  const at = iso(platformNowMs(ctx.deps.clock, platform));
  await updateAgent(trx, row.id, { deleted_at: at, updated_at: at });
  await deleteCredentials(trx, row.id);
  await rejectPendingActions(trx, row.id, 'The agent was deleted', at);
}

/** A new device code; earlier unredeemed ones stop working. 409 once the agent is connected. */
export async function regenerateDeviceCode(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, id: string): Promise<DeviceCodeWire> {
  const row = await getAgent(trx, platform.id, id, ctx.store.kind);
  if (row.is_connected === 1) throw errors.conflict(`Agent ${id} already has an active connection; delete it and create a new agent to reinstall`);
  return issueDeviceCode(trx, ctx, platform, row.id, platformNowMs(ctx.deps.clock, platform));
}

export async function deviceCodeStatus(ctx: AppContext, platform: PlatformRow, code: string): Promise<{ code: string; redeemed: boolean }> {
  const row = await findDeviceCode(ctx.db, codeHash(code));
  if (!row || row.platform_id !== platform.id || !(await findAgent(ctx.db, platform.id, row.agent_id))) throw codeNotFound();
  return { code: code.trim().toUpperCase(), redeemed: row.redeemed_at !== null };
}

/**
 * Redeems a device code (the code is the only credential): once, before it expires and before a
 * newer code replaced it. Returns the access token, stored only as its hash, and marks the agent
 * connected.
 */
export async function redeem(ctx: AppContext, code: string) {
  const hash = codeHash(code);
  return ctx.db.transaction().execute(async (trx) => {
    const row = await findDeviceCode(trx, hash);
    const platform = row ? await getPlatform(trx, row.platform_id) : undefined;
    // The agent row is locked: a redeem and a delete of the same agent do not interleave.
    const agent = row && platform ? await findAgent(trx, platform.id, row.agent_id, ctx.store.kind) : undefined;
    if (!row || !platform || !agent) throw codeNotFound();
    const nowMs = platformNowMs(ctx.deps.clock, platform);
    const at = iso(nowMs);
    if (row.redeemed_at !== null) throw errors.invalidInput('This device code was already redeemed');
    if (row.superseded_at !== null) throw errors.invalidInput('This device code was replaced by a newer one; use the latest code');
    if (at >= row.expires_at) throw errors.invalidInput(`This device code expired at ${row.expires_at}; generate a new one`);
    if (!(await redeemDeviceCode(trx, hash, at))) throw errors.invalidInput('This device code was already redeemed');
    const accessToken = `gat_${ctx.deps.rng.bytes(20).toString('hex')}`;
    await insertToken(trx, { token_hash: hashSecret(accessToken), platform_id: platform.id, agent_id: agent.id, created_at: at });
    await updateAgent(trx, agent.id, { is_connected: 1, updated_at: at });
    return { agentId: agent.id, agentName: agent.name, accessToken, policy: policyOf(agent) };
  });
}
