/**
 * The agent policy: usage counters on the platform clock, the check of one money movement against
 * permissions, account restrictions and spending limits, whether it needs approval, and the
 * partial merge of a policy update. Pure functions; the service runs them with the agent row
 * locked in the same transaction as the movement.
 */
import { errors } from '../../http/errors.ts';
import { cappedAmount } from '../../lib/amounts.ts';
import { convert } from '../../lib/rates.ts';
import { iso } from '../../lib/time.ts';
import type { AgentRow } from '../../store/schema-agents.ts';
import type { AgentPermission, Policy, PolicyUpdate, Usage } from './agents.schemas.ts';

export const dayOf = (ms: number): string => iso(ms).slice(0, 10);
export const monthOf = (ms: number): string => iso(ms).slice(0, 7);

/** Counters as they stand at `nowMs`: a new UTC day (month) starts them from zero. */
export interface Counters {
  count: number;
  daily: number;
  monthly: number;
}

export function countersAt(
  row: Pick<AgentRow, 'usage_day' | 'daily_count' | 'daily_spend' | 'usage_month' | 'monthly_spend'>,
  nowMs: number,
): Counters {
  const sameDay = row.usage_day === dayOf(nowMs);
  return {
    count: sameDay ? Number(row.daily_count) : 0,
    daily: sameDay ? Number(row.daily_spend) : 0,
    monthly: row.usage_month === monthOf(nowMs) ? Number(row.monthly_spend) : 0,
  };
}

export function usageToWire(row: AgentRow, nowMs: number): Usage {
  const c = countersAt(row, nowMs);
  const d = new Date(nowMs);
  return {
    dailyTransactionCount: c.count,
    dailySpend: c.daily,
    dailyResetDate: iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)).slice(0, 10),
    monthlySpend: c.monthly,
    monthlyResetMonth: iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)).slice(0, 7),
  };
}

/**
 * `amount` of `from` in `to` at the sandbox rate of `nowMs`, rounded up (a limit is never
 * undercounted); capped at 2^53−1, which is past every limit.
 */
export function inCurrency(amount: number, from: string, to: string, nowMs: number): number {
  return from === to ? amount : cappedAmount(convert(amount, from, to, nowMs, 'ceil'));
}

export function requirePermission(policy: Policy, permission: AgentPermission): void {
  if (!policy.permissions.includes(permission)) throw errors.agentPermissionMissing(permission);
}

/** One money movement an agent asks for. */
export interface Movement {
  amount: number;
  currency: string;
  /** The agent's internal account the money moves on (source, or destination of a pull), if any. */
  accountId: string | null;
  /** Every internal account the request names (allowedAccountIds applies to each). */
  internalAccountIds: string[];
}

export interface Verdict {
  needsApproval: boolean;
  /** The amount in spendingLimits.currency, as counted into the usage. */
  limitAmount: number;
}

/** Throws 403 when the policy forbids the account; used by reads and quote creation too. */
export function requireAllowedAccounts(policy: Policy, ids: string[]): void {
  const allowed = policy.accountRestrictions?.allowedAccountIds;
  if (allowed === undefined || allowed === null) return;
  for (const id of ids) {
    if (!allowed.includes(id)) throw errors.agentAccountNotAllowed(id);
  }
}

/**
 * Checks a movement against the account restrictions and the spending limits given the counters
 * so far (403 naming the limit), and says whether it needs the platform's approval.
 */
export function evaluate(policy: Policy, counters: Counters, m: Movement, nowMs: number): Verdict {
  requireAllowedAccounts(policy, m.internalAccountIds);
  const limits = policy.spendingLimits;
  const limitAmount = inCurrency(m.amount, m.currency, limits.currency, nowMs);
  const rule = m.accountId ? policy.accountRestrictions?.accountRules?.find((r) => r.accountId === m.accountId) : undefined;

  // A rule's per-transaction limit is in the currency of its account, which is the movement's.
  if (rule?.perTransactionLimit !== undefined && rule.perTransactionLimit !== null) {
    if (m.amount > rule.perTransactionLimit)
      throw errors.agentLimitExceeded('accountRules.perTransactionLimit', rule.perTransactionLimit, m.amount, m.currency);
  } else if (limitAmount > limits.perTransactionLimit) {
    throw errors.agentLimitExceeded('perTransactionLimit', limits.perTransactionLimit, limitAmount, limits.currency);
  }
  if (limits.dailyTransactionLimit !== undefined && counters.count + 1 > limits.dailyTransactionLimit) {
    throw errors.agentLimitExceeded('dailyTransactionLimit', limits.dailyTransactionLimit, counters.count + 1, 'transactions');
  }
  if (limits.dailyLimit !== undefined && limits.dailyLimit !== null && counters.daily + limitAmount > limits.dailyLimit) {
    throw errors.agentLimitExceeded('dailyLimit', limits.dailyLimit, counters.daily + limitAmount, limits.currency);
  }
  if (limits.monthlyLimit !== undefined && limits.monthlyLimit !== null && counters.monthly + limitAmount > limits.monthlyLimit) {
    throw errors.agentLimitExceeded('monthlyLimit', limits.monthlyLimit, counters.monthly + limitAmount, limits.currency);
  }

  const mode = rule?.executionMode ?? policy.defaultExecutionMode;
  const threshold = policy.approvalThresholds;
  const aboveThreshold =
    threshold?.amount !== undefined &&
    threshold.amount !== null &&
    threshold.currency !== undefined &&
    inCurrency(m.amount, m.currency, threshold.currency, nowMs) > threshold.amount;
  return { needsApproval: mode === 'APPROVAL_REQUIRED' || aboveThreshold, limitAmount };
}

/** The counters after a movement of `limitAmount`, as row fields. */
export function countMovement(row: AgentRow, limitAmount: number, nowMs: number) {
  const c = countersAt(row, nowMs);
  return {
    usage_day: dayOf(nowMs),
    daily_count: c.count + 1,
    // Running totals saturate: past 2^53−1 they are past every limit anyway.
    daily_spend: cappedAmount(c.daily + limitAmount),
    usage_month: monthOf(nowMs),
    monthly_spend: cappedAmount(c.monthly + limitAmount),
  };
}

/**
 * Applies a partial update. Nested objects merge field by field (a given field replaces, null
 * clears); a new limit currency recasts the amount limits not given in the same update at the
 * current rate (rounded down, so a recast limit never allows more).
 */
export function mergePolicy(current: Policy, update: PolicyUpdate, nowMs: number): Policy {
  const next: Policy = structuredClone(current);
  if (update.permissions !== undefined) next.permissions = update.permissions;
  if (update.defaultExecutionMode !== undefined) next.defaultExecutionMode = update.defaultExecutionMode;
  const s = update.spendingLimits;
  if (s !== undefined) {
    const limits = next.spendingLimits;
    if (s.currency !== undefined && s.currency !== limits.currency) {
      const recast = (v: number) => cappedAmount(convert(v, limits.currency, s.currency!, nowMs, 'floor'));
      limits.perTransactionLimit = recast(limits.perTransactionLimit);
      if (typeof limits.dailyLimit === 'number') limits.dailyLimit = recast(limits.dailyLimit);
      if (typeof limits.monthlyLimit === 'number') limits.monthlyLimit = recast(limits.monthlyLimit);
      limits.currency = s.currency;
    }
    if (s.perTransactionLimit !== undefined) limits.perTransactionLimit = s.perTransactionLimit;
    if (s.dailyLimit !== undefined) limits.dailyLimit = s.dailyLimit;
    if (s.dailyTransactionLimit !== undefined) limits.dailyTransactionLimit = s.dailyTransactionLimit;
    if (s.monthlyLimit !== undefined) limits.monthlyLimit = s.monthlyLimit;
  }
  if (update.accountRestrictions !== undefined) next.accountRestrictions = { ...next.accountRestrictions, ...update.accountRestrictions };
  if (update.approvalThresholds !== undefined) next.approvalThresholds = { ...next.approvalThresholds, ...update.approvalThresholds };
  return next;
}
