/**
 * Agent actions: every money movement an agent starts (quote execution, transfer-out, transfer-in)
 * is an action. It is checked against the policy with the agent row locked, in the same unit of
 * work as the movement and the usage it adds, so concurrent requests cannot together pass a limit
 * (PostgreSQL: `FOR UPDATE` on the agent; SQLite: write transactions are serial). An action needing
 * approval waits as PENDING_APPROVAL (and emits AGENT_ACTION.PENDING_APPROVAL); the platform's
 * approval runs it under the then-current policy and balances.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { ApiError, errors } from '../../http/errors.ts';
import { pageOf, type Page, type PageRequest } from '../../lib/paging.ts';
import { normalizeDateTime, platformNowMs } from '../../lib/time.ts';
import type { Database, PlatformRow, QuoteRow } from '../../store/schema.ts';
import type { AgentActionRow, AgentRow } from '../../store/schema-agents.ts';
import type { Unit } from '../../unit.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { transactionToWire } from '../payments/payment-engine.ts';
import { findQuote, findQuotesByIds, findTransactionsByIds } from '../payments/payments.repo.ts';
import type { TransferIn, TransferOut } from '../payments/payments.schemas.ts';
import { executeQuote, quoteToWire } from '../payments/quotes.service.ts';
import { transferIn, transferOut } from '../payments/transfers.service.ts';
import { decideAction, findAction, findAgent, insertAction, listActions, openActionSavepoint, updateAgent } from './agents.repo.ts';
import type { ActionStatus, ActionType, AgentActionWire, AgentPermission, ApprovalListQueryT, TransferDetails } from './agents.schemas.ts';
import { getAgent, policyOf } from './agents.service.ts';
import { countersAt, countMovement, evaluate, requirePermission, type Movement } from './policy.ts';

/** The calling agent and its platform (AgentAuth), for the agent's reads. */
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
  if (agent.is_paused === 1) throw errors.agentPaused();
}

/** Re-reads the agent with its row locked: policy, pause and usage hold for the whole unit. */
export async function lockAgent(u: Unit, agentId: string): Promise<AgentRow> {
  const row = await findAgent(u.trx, u.platform.id, agentId, { forUpdate: true });
  // Deleted after this request authenticated: the token no longer works.
  if (!row) throw errors.unauthorized('The agent was deleted; its access token no longer works');
  await requireLiveCustomer(u.trx, row);
  return row;
}

/**
 * An agent acts for its customer: once the customer is deleted its actions are 410
 * CUSTOMER_DELETED, as the customer's own routes are (the platform can still move what the
 * customer's accounts hold).
 */
export async function requireLiveCustomer(db: Kysely<Database>, agent: Pick<AgentRow, 'platform_id' | 'customer_id'>): Promise<void> {
  const c = await findCustomer(db, agent.platform_id, agent.customer_id);
  if (!c || c.deleted_at !== null) throw errors.customerDeleted(agent.customer_id);
}

/** What an action is about, resolved (and scope-checked) with the agent locked. */
export interface ActionSpec {
  movement: Movement;
  quoteId?: string;
  transferDetails?: TransferDetails;
  /** What `runAction` needs to execute it later. */
  request: TransferOut | TransferIn | { walletSignature?: string | undefined };
}

/**
 * Executes an action's movement through the payment services; returns its transaction id. The
 * transaction carries the action's agent as its `agentId`, whether it runs now or on approval.
 */
async function runAction(u: Unit, a: Pick<AgentActionRow, 'agent_id' | 'type' | 'quote_id' | 'request'>): Promise<string> {
  const request = JSON.parse(a.request) as unknown;
  switch (a.type) {
    case 'EXECUTE_QUOTE':
      return (await executeQuote(u, a.quote_id!, (request as { walletSignature?: string }).walletSignature, a.agent_id)).transactionId;
    case 'TRANSFER_OUT':
      return (await transferOut(u, request as TransferOut, a.agent_id)).id;
    default:
      return (await transferIn(u, request as TransferIn, a.agent_id)).id;
  }
}

/**
 * Starts an action for the calling agent: locks the agent, checks pause and permission (403),
 * lets `resolve` check scope and build the movement, checks the policy (403), then either
 * executes it at once (APPROVED, usage counted) or records it PENDING_APPROVAL and emits the
 * approval webhook.
 */
export async function submitAction(
  u: Unit,
  agentId: string,
  type: ActionType,
  resolve: (agent: AgentRow) => Promise<ActionSpec>,
): Promise<AgentActionWire> {
  const agent = await lockAgent(u, agentId);
  requireActive(agent);
  const policy = policyOf(agent);
  requirePermission(policy, PERMISSION_OF[type]);
  const spec = await resolve(agent);
  const verdict = evaluate(policy, countersAt(agent, u.nowMs), spec.movement, u.nowMs);
  const customer = await findCustomer(u.trx, u.platform.id, agent.customer_id);
  const row: AgentActionRow = {
    id: u.deps.ids.next('AgentAction'),
    platform_id: u.platform.id,
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
    created_at: u.at,
    updated_at: u.at,
  };
  if (!verdict.needsApproval) {
    await updateAgent(u.trx, agent.id, countMovement(agent, verdict.limitAmount, u.nowMs));
    row.transaction_id = await runAction(u, row);
  }
  await insertAction(u.trx, row);
  const [wire] = await actionsToWire(u.trx, u.platform, u.nowMs, [row]);
  if (verdict.needsApproval) u.emit('AGENT_ACTION.PENDING_APPROVAL', row.id, wire);
  return wire!;
}

/** The movement of a stored action, as it stands now (a quote's amounts are locked). */
async function movementOf(u: Unit, a: AgentActionRow): Promise<Movement> {
  if (a.type !== 'EXECUTE_QUOTE') {
    const d = JSON.parse(a.transfer_details!) as TransferDetails;
    const account = a.type === 'TRANSFER_OUT' ? d.sourceAccountId : d.destinationAccountId;
    return { amount: d.amount, currency: d.currency, accountId: account, internalAccountIds: [account] };
  }
  const q = await findQuote(u.trx, u.platform.id, a.quote_id!);
  if (!q) throw new Error(`agent action ${a.id} names quote ${a.quote_id}, which does not exist`);
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

async function pendingAction(u: Unit, agentId: string, actionId: string): Promise<{ agent: AgentRow; action: AgentActionRow }> {
  const agent = await getAgent(u.trx, u.platform.id, agentId, { forUpdate: true });
  const action = await findAction(u.trx, u.platform.id, actionId, { forUpdate: true });
  if (!action || action.agent_id !== agent.id) throw errors.notFound('Agent action', actionId);
  if (action.status !== 'PENDING_APPROVAL') throw errors.conflict(`Agent action ${actionId} is ${action.status}, not PENDING_APPROVAL`);
  return { agent, action };
}

/**
 * Runs `fn` in a savepoint of the unit. When it is refused (an ApiError), what it wrote is undone,
 * and so are the events it emitted: they are held back and emitted through `u` only once the
 * savepoint is released. Any other error ends the unit (its transaction rolls back whole).
 */
async function inSavepoint<T>(u: Unit, fn: (scoped: Unit) => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: ApiError }> {
  const held: Parameters<Unit['emit']>[] = [];
  const scoped: Unit = {
    trx: u.trx,
    platform: u.platform,
    nowMs: u.nowMs,
    at: u.at,
    app: u.app,
    deps: u.deps,
    emit: (...event) => {
      held.push(event);
    },
    // Held until the savepoint is released; the unit writes them with its own.
    flush: async () => {},
    beforeRowLock: async () => {},
    schedule: (kind, payload, delayMs) => u.schedule(kind, payload, delayMs),
    scheduledDueNow: () => u.scheduledDueNow(),
  };
  const savepoint = await openActionSavepoint(u.trx);
  try {
    const value = await fn(scoped);
    await savepoint.release();
    for (const event of held) u.emit(...event);
    return { ok: true, value };
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    await savepoint.rollback();
    return { ok: false, error: err };
  }
}

/**
 * Approves a pending action and executes it under the current policy (pause, permissions,
 * accounts, limits and usage) and balances, inside a savepoint: if anything refuses it, the
 * partial work is undone and the action is FAILED with the reason; otherwise it is APPROVED with
 * its transaction and counted into the usage.
 */
export async function approveAction(u: Unit, agentId: string, actionId: string): Promise<AgentActionWire> {
  const { agent, action } = await pendingAction(u, agentId, actionId);
  const run = await inSavepoint(u, async (s) => {
    requireActive(agent);
    await requireLiveCustomer(s.trx, agent);
    const policy = policyOf(agent);
    requirePermission(policy, PERMISSION_OF[action.type as ActionType]);
    const verdict = evaluate(policy, countersAt(agent, s.nowMs), await movementOf(s, action), s.nowMs);
    await updateAgent(s.trx, agent.id, countMovement(agent, verdict.limitAmount, s.nowMs));
    return runAction(s, action);
  });
  const decided: Partial<AgentActionRow> & { status: ActionStatus } = run.ok
    ? { status: 'APPROVED', transaction_id: run.value }
    : { status: 'FAILED', failure_reason: run.error.message };
  const next: AgentActionRow = { ...action, ...decided, updated_at: u.at };
  if (!(await decideAction(u.trx, action.id, { ...decided, updated_at: u.at })))
    throw errors.conflict(`Agent action ${actionId} was already decided`);
  const [wire] = await actionsToWire(u.trx, u.platform, u.nowMs, [next]);
  return wire!;
}

export async function rejectAction(u: Unit, agentId: string, actionId: string, reason: string | undefined): Promise<AgentActionWire> {
  const { action } = await pendingAction(u, agentId, actionId);
  const set = { status: 'REJECTED', rejection_reason: reason ?? null, updated_at: u.at };
  if (!(await decideAction(u.trx, action.id, set))) throw errors.conflict(`Agent action ${actionId} was already decided`);
  const [wire] = await actionsToWire(u.trx, u.platform, u.nowMs, [{ ...action, ...set }]);
  return wire!;
}

/** The wire shape, with each action's quote and transaction as they are now (read in two queries). */
export async function actionsToWire(
  db: Kysely<Database>,
  platform: Pick<PlatformRow, 'id'>,
  nowMs: number,
  rows: AgentActionRow[],
): Promise<AgentActionWire[]> {
  const quoteIds = rows.map((r) => r.quote_id).filter((x): x is string => x !== null);
  const txIds = rows.map((r) => r.transaction_id).filter((x): x is string => x !== null);
  const quotes = await findQuotesByIds(db, platform.id, quoteIds);
  const txs = await findTransactionsByIds(db, platform.id, txIds);
  const quoteById = new Map(quotes.map((q) => [q.id, q]));
  const txById = new Map(txs.map((t) => [t.id, t]));
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
export async function listApprovals(
  ctx: AppContext,
  platform: PlatformRow,
  q: Omit<ApprovalListQueryT, 'cursor' | 'limit'>,
  { limit, afterId }: PageRequest,
): Promise<Page<AgentActionWire>> {
  const { rows, totalCount } = await listActions(
    ctx.db,
    platform.id,
    {
      agentId: q.agentId,
      customerId: q.customerId,
      status: 'PENDING_APPROVAL',
      startDate: normalizeDateTime(q.startDate),
      endDate: normalizeDateTime(q.endDate),
    },
    { limit, afterId, order: q.sortOrder ?? 'desc' },
  );
  const page = pageOf(rows, limit, totalCount, (r) => r);
  return { ...page, data: await actionsToWire(ctx.db, platform, platformNowMs(ctx.deps.clock, platform), page.data) };
}

/** GET /agents/me/actions: the agent's own actions, newest first. */
export async function listOwnActions(
  ctx: AppContext,
  caller: Caller,
  q: { status?: string | undefined },
  { limit, afterId }: PageRequest,
): Promise<Page<AgentActionWire>> {
  const { rows, totalCount } = await listActions(
    ctx.db,
    caller.platform.id,
    { agentId: caller.agent.id, status: q.status },
    { limit, afterId, order: 'desc' },
  );
  const page = pageOf(rows, limit, totalCount, (r) => r);
  return { ...page, data: await actionsToWire(ctx.db, caller.platform, platformNowMs(ctx.deps.clock, caller.platform), page.data) };
}

export async function getOwnAction(ctx: AppContext, caller: Caller, actionId: string): Promise<AgentActionWire> {
  const row = await findAction(ctx.db, caller.platform.id, actionId);
  if (!row || row.agent_id !== caller.agent.id) throw errors.notFound('Agent action', actionId);
  const [wire] = await actionsToWire(ctx.db, caller.platform, platformNowMs(ctx.deps.clock, caller.platform), [row]);
  return wire!;
}
