/**
 * Agent actions: every money movement an agent starts (quote execution, transfer-out, transfer-in)
 * is an action. It is checked against the policy with the agent row locked, in the same database
 * transaction as the movement and the usage it adds, so concurrent requests cannot together pass
 * a limit (PostgreSQL: `FOR UPDATE` on the agent; SQLite: write transactions are serial). An
 * action needing approval waits as PENDING_APPROVAL (and emits AGENT_ACTION.PENDING_APPROVAL);
 * the platform's approval runs it under the then-current policy and balances.
 */
import { sql, type Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { ApiError, errors } from '../../http/errors.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { iso, normalizeDateTime, platformNowMs } from '../../lib/time.ts';
import { enqueueEvent } from '../../outbox/outbox.ts';
import type { Database, PlatformRow, QuoteRow } from '../../store/schema.ts';
import type { AgentActionRow, AgentRow } from '../../store/schema-agents.ts';
import { transactionToWire } from '../payments/payment-engine.ts';
import type { TransferIn, TransferOut } from '../payments/payments.schemas.ts';
import { executeQuote, quoteToWire } from '../payments/quotes.service.ts';
import { transferIn, transferOut } from '../payments/transfers.service.ts';
import { decideAction, findAction, findAgent, insertAction, listActions, updateAgent } from './agents.repo.ts';
import type { ActionStatus, ActionType, AgentActionWire, AgentPermission, ApprovalListQueryT, TransferDetails } from './agents.schemas.ts';
import { getAgent, policyOf } from './agents.service.ts';
import { countersAt, countMovement, evaluate, requirePermission, type Movement } from './policy.ts';

export interface Caller {
  agent: AgentRow;
  platform: PlatformRow;
}

export const PERMISSION_OF: Record<ActionType, AgentPermission> = {
  EXECUTE_QUOTE: 'EXECUTE_QUOTES',
  TRANSFER_OUT: 'CREATE_TRANSFERS',
  TRANSFER_IN: 'CREATE_TRANSFERS',
};

export function requireActive(agent: AgentRow): void {
  if (agent.is_paused === 1) throw new ApiError(403, 'FORBIDDEN', 'The agent is paused: it can read but cannot start actions');
}

/** Re-reads the agent with its row locked: policy, pause and usage hold for the whole transaction. */
export async function lockAgent(trx: Kysely<Database>, ctx: AppContext, caller: Caller): Promise<AgentRow> {
  const row = await findAgent(trx, caller.platform.id, caller.agent.id, ctx.store.kind);
  // Deleted after this request authenticated: the token no longer works.
  if (!row) throw errors.unauthorized('The agent was deleted; its access token no longer works');
  return row;
}

/** What an action is about, resolved (and scope-checked) with the agent locked. */
export interface ActionSpec {
  movement: Movement;
  quoteId?: string;
  transferDetails?: TransferDetails;
  /** What `runAction` needs to execute it later. */
  request: TransferOut | TransferIn | { walletSignature?: string | undefined };
}

/** Executes an action's movement through the payment services; returns its transaction id. */
async function runAction(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, a: Pick<AgentActionRow, 'type' | 'quote_id' | 'request'>): Promise<string> {
  const request = JSON.parse(a.request) as unknown;
  switch (a.type) {
    case 'EXECUTE_QUOTE':
      return (await executeQuote(trx, ctx, platform, a.quote_id!, (request as { walletSignature?: string }).walletSignature)).transactionId;
    case 'TRANSFER_OUT':
      return (await transferOut(trx, ctx, platform, request as TransferOut)).id;
    default:
      return (await transferIn(trx, ctx, platform, request as TransferIn)).id;
  }
}

/**
 * Starts an action for the calling agent: locks the agent, checks pause and permission (403),
 * lets `resolve` check scope and build the movement, checks the policy (403), then either
 * executes it at once (APPROVED, usage counted) or records it PENDING_APPROVAL and emits the
 * approval webhook.
 */
export async function submitAction(
  trx: Kysely<Database>,
  ctx: AppContext,
  caller: Caller,
  type: ActionType,
  resolve: (agent: AgentRow) => Promise<ActionSpec>,
): Promise<AgentActionWire> {
  const agent = await lockAgent(trx, ctx, caller);
  const { platform } = caller;
  requireActive(agent);
  const policy = policyOf(agent);
  requirePermission(policy, PERMISSION_OF[type]);
  const spec = await resolve(agent);
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  const verdict = evaluate(policy, countersAt(agent, nowMs), spec.movement, nowMs);
  const at = iso(nowMs);
  const customer = await trx.selectFrom('customers').select('platform_customer_id').where('id', '=', agent.customer_id).executeTakeFirst();
  const row: AgentActionRow = {
    id: ctx.deps.ids.next('AgentAction'),
    platform_id: platform.id,
    agent_id: agent.id,
    customer_id: agent.customer_id,
    platform_customer_id: customer?.platform_customer_id ?? agent.customer_id,
    type,
    status: verdict.needsApproval ? 'PENDING_APPROVAL' : 'APPROVED',
    quote_id: spec.quoteId ?? null,
    transfer_details: spec.transferDetails ? JSON.stringify(spec.transferDetails) : null,
    request: JSON.stringify(spec.request),
    transaction_id: null,
    rejection_reason: null,
    failure_reason: null,
    created_at: at,
    updated_at: at,
  };
  if (!verdict.needsApproval) {
    await updateAgent(trx, agent.id, countMovement(agent, verdict.limitAmount, nowMs));
    row.transaction_id = await runAction(trx, ctx, platform, row);
  }
  await insertAction(trx, row);
  const [wire] = await actionsToWire(trx, ctx, platform, [row]);
  if (verdict.needsApproval) {
    await enqueueEvent(trx, { id: ctx.deps.ids.next('Webhook'), platformId: platform.id, type: 'AGENT_ACTION.PENDING_APPROVAL', resourceId: row.id, data: wire, at });
  }
  return wire!;
}

/** The movement of a stored action, as it stands now (a quote's amounts are locked). */
async function movementOf(trx: Kysely<Database>, platform: PlatformRow, a: AgentActionRow): Promise<Movement> {
  if (a.type !== 'EXECUTE_QUOTE') {
    const d = JSON.parse(a.transfer_details!) as TransferDetails;
    const account = a.type === 'TRANSFER_OUT' ? d.sourceAccountId : d.destinationAccountId;
    return { amount: d.amount, currency: d.currency, accountId: account, internalAccountIds: [account] };
  }
  const q = await trx.selectFrom('quotes').selectAll().where('platform_id', '=', platform.id).where('id', '=', a.quote_id!).executeTakeFirstOrThrow();
  return quoteMovement(q);
}

/** A quote's movement: its total sending amount, from its source, naming its internal accounts. */
export function quoteMovement(q: QuoteRow): Movement {
  const src = JSON.parse(q.source) as { accountId?: string };
  const dst = JSON.parse(q.destination) as { accountId?: string };
  const internal = [src.accountId, dst.accountId].filter((id): id is string => id?.startsWith('InternalAccount:') === true);
  const source = src.accountId?.startsWith('InternalAccount:') ? src.accountId : null;
  return { amount: Number(q.total_sending_amount), currency: q.sending_currency, accountId: source, internalAccountIds: internal };
}

async function pendingAction(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, agentId: string, actionId: string): Promise<{ agent: AgentRow; action: AgentActionRow }> {
  const agent = await getAgent(trx, platform.id, agentId, ctx.store.kind);
  const action = await findAction(trx, platform.id, actionId, ctx.store.kind);
  if (!action || action.agent_id !== agent.id) throw errors.notFound('Agent action', actionId);
  if (action.status !== 'PENDING_APPROVAL') throw errors.conflict(`Agent action ${actionId} is ${action.status}, not PENDING_APPROVAL`);
  return { agent, action };
}

/**
 * Approves a pending action and executes it under the current policy (pause, permissions,
 * accounts, limits and usage) and balances, inside a savepoint: if anything refuses it, the
 * partial work is undone and the action is FAILED with the reason; otherwise it is APPROVED with
 * its transaction and counted into the usage.
 */
export async function approveAction(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, agentId: string, actionId: string): Promise<AgentActionWire> {
  const { agent, action } = await pendingAction(trx, ctx, platform, agentId, actionId);
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  const at = iso(nowMs);
  let decided: Partial<AgentActionRow> & { status: ActionStatus };
  await sql`savepoint agent_action`.execute(trx);
  try {
    requireActive(agent);
    const policy = policyOf(agent);
    requirePermission(policy, PERMISSION_OF[action.type as ActionType]);
    const verdict = evaluate(policy, countersAt(agent, nowMs), await movementOf(trx, platform, action), nowMs);
    await updateAgent(trx, agent.id, countMovement(agent, verdict.limitAmount, nowMs));
    decided = { status: 'APPROVED', transaction_id: await runAction(trx, ctx, platform, action) };
    await sql`release savepoint agent_action`.execute(trx);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    await sql`rollback to savepoint agent_action`.execute(trx);
    decided = { status: 'FAILED', failure_reason: err.message };
  }
  const next: AgentActionRow = { ...action, ...decided, updated_at: at };
  if (!(await decideAction(trx, action.id, { ...decided, updated_at: at }))) throw errors.conflict(`Agent action ${actionId} was already decided`);
  const [wire] = await actionsToWire(trx, ctx, platform, [next]);
  return wire!;
}

export async function rejectAction(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, agentId: string, actionId: string, reason: string | undefined): Promise<AgentActionWire> {
  const { action } = await pendingAction(trx, ctx, platform, agentId, actionId);
  const at = iso(platformNowMs(ctx.deps.clock, platform));
  const set = { status: 'REJECTED', rejection_reason: reason ?? null, updated_at: at };
  if (!(await decideAction(trx, action.id, set))) throw errors.conflict(`Agent action ${actionId} was already decided`);
  const [wire] = await actionsToWire(trx, ctx, platform, [{ ...action, ...set }]);
  return wire!;
}

/** The wire shape, with each action's quote and transaction as they are now (read in two queries). */
export async function actionsToWire(db: Kysely<Database>, ctx: AppContext, platform: PlatformRow, rows: AgentActionRow[]): Promise<AgentActionWire[]> {
  const quoteIds = rows.map((r) => r.quote_id).filter((x): x is string => x !== null);
  const txIds = rows.map((r) => r.transaction_id).filter((x): x is string => x !== null);
  const quotes = quoteIds.length ? await db.selectFrom('quotes').selectAll().where('platform_id', '=', platform.id).where('id', 'in', quoteIds).execute() : [];
  const txs = txIds.length ? await db.selectFrom('transactions').selectAll().where('platform_id', '=', platform.id).where('id', 'in', txIds).execute() : [];
  const quoteById = new Map(quotes.map((q) => [q.id, q]));
  const txById = new Map(txs.map((t) => [t.id, t]));
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  return rows.map((r) => {
    const w: AgentActionWire = {
      id: r.id,
      agentId: r.agent_id,
      customerId: r.customer_id,
      platformCustomerId: r.platform_customer_id,
      status: r.status as ActionStatus,
      type: r.type as ActionType,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    };
    const q = r.quote_id ? quoteById.get(r.quote_id) : undefined;
    if (q) w.quote = quoteToWire(q, nowMs);
    if (r.transfer_details) w.transferDetails = JSON.parse(r.transfer_details) as TransferDetails;
    const t = r.transaction_id ? txById.get(r.transaction_id) : undefined;
    if (t) w.transaction = transactionToWire(t);
    if (r.status === 'REJECTED' && r.rejection_reason !== null) w.rejectionReason = r.rejection_reason;
    if (r.status === 'FAILED' && r.failure_reason !== null) w.failureReason = r.failure_reason;
    return w;
  });
}

/** GET /agents/approvals: actions waiting for the platform's decision. */
export async function listApprovals(ctx: AppContext, platform: PlatformRow, q: ApprovalListQueryT) {
  const limit = q.limit ?? 20;
  const { rows, totalCount } = await listActions(
    ctx.db,
    platform.id,
    { agentId: q.agentId, customerId: q.customerId, status: 'PENDING_APPROVAL', startDate: normalizeDateTime(q.startDate), endDate: normalizeDateTime(q.endDate) },
    { limit, afterId: decodeCursor(q.cursor), order: q.sortOrder ?? 'desc' },
  );
  const page = toPage(rows, limit, totalCount, (r) => r);
  return { ...page, data: await actionsToWire(ctx.db, ctx, platform, page.data) };
}

/** GET /agents/me/actions: the agent's own actions, newest first. */
export async function listOwnActions(ctx: AppContext, caller: Caller, q: { status?: string | undefined; limit?: number | undefined; cursor?: string | undefined }) {
  const limit = q.limit ?? 20;
  const { rows, totalCount } = await listActions(ctx.db, caller.platform.id, { agentId: caller.agent.id, status: q.status }, { limit, afterId: decodeCursor(q.cursor), order: 'desc' });
  const page = toPage(rows, limit, totalCount, (r) => r);
  return { ...page, data: await actionsToWire(ctx.db, ctx, caller.platform, page.data) };
}

export async function getOwnAction(ctx: AppContext, caller: Caller, actionId: string): Promise<AgentActionWire> {
  const row = await findAction(ctx.db, caller.platform.id, actionId);
  if (!row || row.agent_id !== caller.agent.id) throw errors.notFound('Agent action', actionId);
  const [wire] = await actionsToWire(ctx.db, ctx, caller.platform, [row]);
  return wire!;
}
