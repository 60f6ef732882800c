/**
 * Agent management (platform side) and installation: create, read, update, pause, delete, the
 * policy, device codes and their redemption for an access token. Device codes and access tokens
 * are random secrets stored only as SHA-256 hashes; each is shown once, in the response that
 * creates it.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import type { Deps } from '../../deps.ts';
import { hashSecret } from '../../http/auth.ts';
import { errors, type FieldError } from '../../http/errors.ts';
import { pageOf, type PageRequest } from '../../lib/paging.ts';
import { findCurrency } from '../../lib/currencies.ts';
import { iso, normalizeDateTime, platformNowMs } from '../../lib/time.ts';
import type { LockOptions } from '../../store/row-lock.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import type { AgentRow } from '../../store/schema-agents.ts';
import type { Unit } from '../../unit.ts';
import { requireCustomer } from '../customers/customers.service.ts';
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
import type { AgentCreate, AgentListQueryT, AgentPermission, AgentWire, Policy, PolicyUpdate } from './agents.schemas.ts';
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

/** Agent permissions that move money out of or into the customer's accounts. */
const MONEY_PERMISSIONS: readonly AgentPermission[] = ['CREATE_TRANSFERS', 'EXECUTE_QUOTES'];

/**
 * What the caller's API token may hand an agent: an agent whose policy moves money is a way to move
 * money, so making one (creating it, widening its policy, resuming it, issuing its device code)
 * needs TRANSACT as well as the route's MANAGE.
 */
export interface Grantor {
  canTransact: boolean;
}

function requireGrant(grantor: Grantor, policy: Policy, action: string): void {
  if (!grantor.canTransact && policy.permissions.some((p) => MONEY_PERMISSIONS.includes(p))) throw errors.agentMovesMoney(action);
}

const agentNotFound = (id: string) => errors.notFound('Agent', id);

/** A live agent of the platform (404 otherwise); `forUpdate` holds its row until the unit ends. */
export async function getAgent(db: Kysely<Database>, platformId: string, id: string, opts?: LockOptions): Promise<AgentRow> {
  const row = await findAgent(db, platformId, id, opts);
  if (!row) throw agentNotFound(id);
  return row;
}

/**
 * Checks what the schema cannot: known currencies, a threshold currency when a threshold amount
 * is set, and account restrictions naming only internal accounts of the agent's customer.
 */
async function checkPolicy(db: Kysely<Database>, platformId: string, customerId: string, policy: Policy, prefix: string): Promise<void> {
  const problems: FieldError[] = [];
  if (!findCurrency(policy.spendingLimits.currency))
    throw errors.invalidCurrency(policy.spendingLimits.currency, `${prefix}spendingLimits.currency`);
  const th = policy.approvalThresholds;
  if (th?.currency !== undefined && !findCurrency(th.currency))
    throw errors.invalidCurrency(th.currency, `${prefix}approvalThresholds.currency`);
  if (th?.amount !== undefined && th.amount !== null && th.currency === undefined) {
    problems.push({ field: `${prefix}approvalThresholds.currency`, message: 'is required when amount is set' });
  }
  const r = policy.accountRestrictions;
  const allowed = r?.allowedAccountIds ?? [];
  const rules = r?.accountRules ?? [];
  const owned = await customerAccountIds(db, platformId, customerId, [...new Set([...allowed, ...rules.map((x) => x.accountId)])]);
  allowed.forEach((id, i) => {
    if (!owned.has(id))
      problems.push({
        field: `${prefix}accountRestrictions.allowedAccountIds.${i}`,
        message: `${id} is not an internal account of customer ${customerId}`,
      });
  });
  const seen = new Set<string>();
  rules.forEach((rule, i) => {
    const field = `${prefix}accountRestrictions.accountRules.${i}.accountId`;
    if (!owned.has(rule.accountId))
      problems.push({ field, message: `${rule.accountId} is not an internal account of customer ${customerId}` });
    else if (seen.has(rule.accountId)) problems.push({ field, message: `a rule for ${rule.accountId} is already given` });
    seen.add(rule.accountId);
  });
  if (problems.length) throw errors.invalidInput(`Invalid agent policy: ${problems[0]!.field} ${problems[0]!.message}`, problems);
}

function newDeviceCode(deps: Deps): string {
  const bytes = deps.secretRng.bytes(12);
  const chars = [...bytes].map((b) => CODE_ALPHABET[b & 31]).join('');
  return `AGENT-${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}`;
}

/** Codes are typed by people: case and surrounding spaces do not matter. */
const codeHash = (code: string): string => hashSecret(code.trim().toUpperCase());

async function issueDeviceCode(u: Unit, agentId: string): Promise<DeviceCodeWire> {
  const code = newDeviceCode(u.deps);
  const expiresAt = iso(u.nowMs + DEVICE_CODE_TTL_MS);
  await supersedeDeviceCodes(u.trx, agentId, u.at);
  await insertDeviceCode(u.trx, {
    code_hash: codeHash(code),
    platform_id: u.platform.id,
    agent_id: agentId,
    expires_at: expiresAt,
    redeemed_at: null,
    superseded_at: null,
    created_at: u.at,
  });
  return { code, agentId, expiresAt, redeemed: false };
}

export async function createAgent(u: Unit, body: AgentCreate, grantor: Grantor): Promise<{ agent: AgentWire; deviceCode: DeviceCodeWire }> {
  requireGrant(grantor, body.policy, 'Creating');
  const customer = await requireCustomer(u.trx, u.platform.id, body.customerId);
  await checkPolicy(u.trx, u.platform.id, customer.id, body.policy, 'policy.');
  const row: AgentRow = {
    id: u.deps.ids.next('Agent'),
    platform_id: u.platform.id,
    customer_id: customer.id,
    name: body.name,
    is_paused: 0,
    is_connected: 0,
    policy: JSON.stringify(body.policy),
    usage_day: dayOf(u.nowMs),
    daily_count: 0,
    daily_spend: 0,
    usage_month: monthOf(u.nowMs),
    monthly_spend: 0,
    created_at: u.at,
    updated_at: u.at,
    deleted_at: null,
  };
  await insertAgent(u.trx, row);
  const deviceCode = await issueDeviceCode(u, row.id);
  return { agent: agentToWire(row, u.nowMs), deviceCode };
}

export async function listAgentPage(
  ctx: AppContext,
  platform: PlatformRow,
  q: Omit<AgentListQueryT, 'cursor' | 'limit'>,
  { limit, afterId }: PageRequest,
) {
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
    afterId,
  );
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  return pageOf(rows, limit, totalCount, (r) => agentToWire(r, nowMs));
}

/** Renames, pauses or resumes an agent (resuming one that moves money needs TRANSACT). */
export async function updateAgentFields(
  u: Unit,
  id: string,
  body: { name?: string | undefined; isPaused?: boolean | undefined },
  grantor: Grantor,
): Promise<AgentWire> {
  const row = await getAgent(u.trx, u.platform.id, id, { forUpdate: true });
  if (body.isPaused === false && row.is_paused === 1) requireGrant(grantor, policyOf(row), 'Resuming');
  const next: AgentRow = {
    ...row,
    name: body.name ?? row.name,
    is_paused: body.isPaused === undefined ? row.is_paused : body.isPaused ? 1 : 0,
    updated_at: u.at,
  };
  await updateAgent(u.trx, id, { name: next.name, is_paused: next.is_paused, updated_at: next.updated_at });
  return agentToWire(next, u.nowMs);
}

/** Partial policy update; takes effect for the agent's next request (its row is locked meanwhile). */
export async function updateAgentPolicy(u: Unit, id: string, body: PolicyUpdate, grantor: Grantor): Promise<AgentWire> {
  const row = await getAgent(u.trx, u.platform.id, id, { forUpdate: true });
  const { nowMs } = u;
  const current = policyOf(row);
  const newCurrency = body.spendingLimits?.currency;
  // Checked before the merge, which converts the limits into it.
  if (newCurrency !== undefined && !findCurrency(newCurrency)) throw errors.invalidCurrency(newCurrency, 'spendingLimits.currency');
  const next = mergePolicy(current, body, nowMs);
  requireGrant(grantor, next, 'Updating');
  await checkPolicy(u.trx, u.platform.id, row.customer_id, next, '');
  const updated: AgentRow = { ...row, policy: JSON.stringify(next), updated_at: u.at };
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
  await updateAgent(u.trx, id, {
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
export async function deleteAgent(u: Unit, id: string): Promise<void> {
  const row = await getAgent(u.trx, u.platform.id, id, { forUpdate: true });
  await updateAgent(u.trx, row.id, { deleted_at: u.at, updated_at: u.at });
  await deleteCredentials(u.trx, row.id);
  await rejectPendingActions(u.trx, row.id, 'The agent was deleted', u.at);
}

/** A new device code; earlier unredeemed ones stop working. 409 once the agent is connected. */
export async function regenerateDeviceCode(u: Unit, id: string, grantor: Grantor): Promise<DeviceCodeWire> {
  const row = await getAgent(u.trx, u.platform.id, id, { forUpdate: true });
  requireGrant(grantor, policyOf(row), 'Issuing a device code for');
  if (row.is_connected === 1)
    throw errors.conflict(`Agent ${id} already has an active connection; delete it and create a new agent to reinstall`);
  return issueDeviceCode(u, row.id);
}

export async function deviceCodeStatus(ctx: AppContext, platform: PlatformRow, code: string): Promise<{ code: string; redeemed: boolean }> {
  const row = await findDeviceCode(ctx.db, codeHash(code));
  if (!row || row.platform_id !== platform.id || !(await findAgent(ctx.db, platform.id, row.agent_id))) throw errors.deviceCodeNotFound();
  return { code: code.trim().toUpperCase(), redeemed: row.redeemed_at !== null };
}

/** The platform a device code belongs to: its redemption is a write of that platform (404 for an unknown code). */
export async function deviceCodePlatform(db: Kysely<Database>, code: string): Promise<string> {
  const found = await findDeviceCode(db, codeHash(code));
  if (!found) throw errors.deviceCodeNotFound();
  return found.platform_id;
}

/**
 * Redeems a device code (the code is the only credential), in a unit of its platform
 * (`deviceCodePlatform`): once, before it expires and before a newer code replaced it. Returns the
 * access token, stored only as its hash, and marks the agent connected.
 */
export async function redeem(u: Unit, code: string) {
  const hash = codeHash(code);
  const row = await findDeviceCode(u.trx, hash);
  // The agent row is locked: a redeem and a delete of the same agent do not interleave.
  const agent = row?.platform_id === u.platform.id ? await findAgent(u.trx, u.platform.id, row.agent_id, { forUpdate: true }) : undefined;
  if (!row || !agent) throw errors.deviceCodeNotFound();
  const { at } = u;
  if (row.redeemed_at !== null) throw errors.invalidInput('This device code was already redeemed');
  if (row.superseded_at !== null) throw errors.invalidInput('This device code was replaced by a newer one; use the latest code');
  if (at >= row.expires_at) throw errors.invalidInput(`This device code expired at ${row.expires_at}; generate a new one`);
  if (!(await redeemDeviceCode(u.trx, hash, at))) throw errors.invalidInput('This device code was already redeemed');
  const accessToken = `gat_${u.deps.secretRng.bytes(20).toString('hex')}`;
  await insertToken(u.trx, { token_hash: hashSecret(accessToken), platform_id: u.platform.id, agent_id: agent.id, created_at: at });
  await updateAgent(u.trx, agent.id, { is_connected: 1, updated_at: at });
  return { agentId: agent.id, agentName: agent.name, accessToken, policy: policyOf(agent) };
}
