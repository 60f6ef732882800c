/**
 * The agent policy's pure rules (src/modules/agents/policy.ts) as properties: usage counters over
 * UTC day and month windows on the platform clock, the verdict on one movement against a model of
 * the limits (which limit refuses it, whether it needs approval), limits counted in another
 * currency never undercounted, and the partial merge of a policy update (a recast limit never
 * allows more). fast-check prints the seed of a failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.ts';
import { CURRENCY_CODES } from '../../src/lib/currencies.ts';
import { sandboxRate } from '../../src/lib/rates.ts';
import {
  countersAt,
  countMovement,
  dayOf,
  evaluate,
  inCurrency,
  mergePolicy,
  monthOf,
  usageToWire,
  type Counters,
  type Movement,
} from '../../src/modules/agents/policy.ts';
import type { Policy } from '../../src/modules/agents/agents.schemas.ts';
import type { AgentRow } from '../../src/store/schema-agents.ts';

const MAX = Number.MAX_SAFE_INTEGER;
const DAY = 86_400_000;
/** Instants from 2025 to 2030 (leap day and year ends included). */
const instant = fc.integer({ min: Date.UTC(2025, 0, 1), max: Date.UTC(2030, 11, 31, 23, 59, 59, 999) });
const counter = fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constant(MAX), fc.integer({ min: 0, max: MAX }));
const amount = fc.oneof(fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 1, max: MAX }));
const currency = fc.constantFrom(...CURRENCY_CODES);

const utcDay = (ms: number) => Math.floor(ms / DAY);
const utcMonth = (ms: number) => new Date(ms).getUTCFullYear() * 12 + new Date(ms).getUTCMonth();

/** The counter fields of an agent row, last written at `at`. */
function row(at: number, count: number, daily: number, monthly: number): AgentRow {
  return { usage_day: dayOf(at), daily_count: count, daily_spend: daily, usage_month: monthOf(at), monthly_spend: monthly } as AgentRow;
}

describe('usage windows', () => {
  it('counters read as written within the UTC day (month), and as zero from the next one on', () => {
    fc.assert(
      fc.property(instant, fc.nat({ max: 400 * DAY }), counter, counter, counter, (at, later, count, daily, monthly) => {
        const now = at + later;
        const c = countersAt(row(at, count, daily, monthly), now);
        const sameDay = utcDay(now) === utcDay(at);
        const sameMonth = utcMonth(now) === utcMonth(at);
        expect(c).toEqual({ count: sameDay ? count : 0, daily: sameDay ? daily : 0, monthly: sameMonth ? monthly : 0 });
      }),
    );
  });

  it('the window turns exactly at UTC midnight and on the first of the month', () => {
    const lastMs = Date.UTC(2028, 1, 29, 23, 59, 59, 999); // a leap day, the month's last millisecond
    const r = row(lastMs, 3, 300, 900);
    expect(countersAt(r, lastMs)).toEqual({ count: 3, daily: 300, monthly: 900 });
    expect(countersAt(r, lastMs + 1)).toEqual({ count: 0, daily: 0, monthly: 0 });
    const midMonth = row(Date.UTC(2028, 2, 14, 23, 59, 59, 999), 2, 20, 70);
    expect(countersAt(midMonth, Date.UTC(2028, 2, 15))).toEqual({ count: 0, daily: 0, monthly: 70 });
  });

  it('folding movements over time: the counters are the sums of the movements in the current day and month, saturated', () => {
    const steps = fc.array(fc.tuple(fc.oneof(fc.nat({ max: 3 * 3_600_000 }), fc.nat({ max: 40 * DAY })), amount), {
      minLength: 1,
      maxLength: 30,
    });
    fc.assert(
      fc.property(instant, steps, fc.nat({ max: 40 * DAY }), (start, moves, after) => {
        let r = row(start, 0, 0, 0);
        let t = start;
        const done: { at: number; amount: number }[] = [];
        for (const [gap, amt] of moves) {
          t += gap;
          r = { ...r, ...countMovement(r, amt, t) };
          done.push({ at: t, amount: amt });
        }
        const now = t + after;
        const today = done.filter((m) => utcDay(m.at) === utcDay(now));
        const month = done.filter((m) => utcMonth(m.at) === utcMonth(now));
        const sum = (ms: typeof done) =>
          Math.min(
            MAX,
            ms.reduce((s, m) => s + m.amount, 0),
          );
        expect(countersAt(r, now)).toEqual({ count: today.length, daily: sum(today), monthly: sum(month) });
      }),
    );
  });

  it('usage on the wire names the next UTC day and month the counters reset', () => {
    fc.assert(
      fc.property(instant, instant, counter, (at, now0, n) => {
        const now = Math.max(at, now0);
        const u = usageToWire(row(at, 1, n, n), now);
        const reset = Date.parse(`${u.dailyResetDate}T00:00:00.000Z`);
        expect(reset > now && reset - now <= DAY).toBe(true);
        const monthStart = Date.parse(`${u.monthlyResetMonth}-01T00:00:00.000Z`);
        expect(utcMonth(monthStart)).toBe(utcMonth(now) + 1);
        expect(u.dailySpend).toBe(utcDay(now) === utcDay(at) ? n : 0);
      }),
    );
  });
});

// ---- the verdict on one movement

const ACCOUNTS = ['InternalAccount:a', 'InternalAccount:b', 'InternalAccount:c'];
const nullableLimit = fc.option(amount, { nil: null });

/** Policies in USD with every optional part present or not (thresholds in USD too: the model needs no rates). */
const policy: fc.Arbitrary<Policy> = fc.record(
  {
    permissions: fc.constant(['CREATE_TRANSFERS'] as Policy['permissions']),
    defaultExecutionMode: fc.constantFrom('AUTO', 'APPROVAL_REQUIRED'),
    spendingLimits: fc.record(
      {
        currency: fc.constant('USD'),
        perTransactionLimit: amount,
        dailyLimit: nullableLimit,
        dailyTransactionLimit: fc.integer({ min: 0, max: 20 }),
        monthlyLimit: nullableLimit,
      },
      { requiredKeys: ['currency', 'perTransactionLimit'] },
    ),
    accountRestrictions: fc.record(
      {
        allowedAccountIds: fc.option(fc.subarray(ACCOUNTS), { nil: null }),
        accountRules: fc.uniqueArray(
          fc.record(
            {
              accountId: fc.constantFrom(...ACCOUNTS),
              executionMode: fc.constantFrom('AUTO', 'APPROVAL_REQUIRED'),
              perTransactionLimit: nullableLimit,
            },
            { requiredKeys: ['accountId'] },
          ),
          { selector: (r) => r.accountId },
        ),
      },
      { requiredKeys: [] },
    ),
    approvalThresholds: fc.record({ currency: fc.constant('USD'), amount: nullableLimit }, { requiredKeys: [] }),
  },
  { requiredKeys: ['permissions', 'defaultExecutionMode', 'spendingLimits'] },
) as fc.Arbitrary<Policy>;

const movement: fc.Arbitrary<Movement> = fc
  .tuple(amount, fc.option(fc.constantFrom(...ACCOUNTS), { nil: null }), fc.subarray(ACCOUNTS))
  .map(([amt, accountId, others]) => ({
    amount: amt,
    currency: 'USD',
    accountId,
    internalAccountIds: [...new Set([...(accountId ? [accountId] : []), ...others])],
  }));

const counters: fc.Arbitrary<Counters> = fc.record({ count: fc.nat({ max: 25 }), daily: counter, monthly: counter });

/** One unit below, at or above the value a limit is compared with; or the limit as drawn. */
const edge = fc.option(fc.integer({ min: -1, max: 1 }), { nil: undefined, freq: 2 });

/**
 * A policy, counters and a movement, with each limit often moved to the edge the movement meets it
 * at (random limits alone would almost never be met exactly).
 */
const scenario = fc
  .tuple(policy, counters, movement, fc.array(edge, { minLength: 6, maxLength: 6 }))
  .map(([p0, c, m, [perTx, count, daily, monthly, threshold, rule]]) => {
    const p = structuredClone(p0);
    const at = (v: number, off: number | undefined, min: number) => (off === undefined ? undefined : Math.max(min, Math.min(MAX, v + off)));
    const l = p.spendingLimits;
    l.perTransactionLimit = at(m.amount, perTx, 1) ?? l.perTransactionLimit;
    if (count !== undefined) l.dailyTransactionLimit = at(c.count + 1, count, 0);
    if (daily !== undefined && l.dailyLimit != null) l.dailyLimit = at(c.daily + m.amount, daily, 1)!;
    if (monthly !== undefined && l.monthlyLimit != null) l.monthlyLimit = at(c.monthly + m.amount, monthly, 1)!;
    if (threshold !== undefined && p.approvalThresholds?.amount != null) p.approvalThresholds.amount = at(m.amount, threshold, 1)!;
    const r = p.accountRestrictions?.accountRules?.find((x) => x.accountId === m.accountId);
    if (rule !== undefined && r?.perTransactionLimit != null) r.perTransactionLimit = at(m.amount, rule, 1)!;
    return { p, c, m };
  });

/** The model: which check refuses the movement first (as `details.limit`, or 'account'), else the verdict. */
function model(p: Policy, c: Counters, m: Movement): { refused: string } | { needsApproval: boolean } {
  const allowed = p.accountRestrictions?.allowedAccountIds;
  if (allowed != null && m.internalAccountIds.some((id) => !allowed.includes(id))) return { refused: 'account' };
  const rule = m.accountId ? p.accountRestrictions?.accountRules?.find((r) => r.accountId === m.accountId) : undefined;
  const l = p.spendingLimits;
  if (rule?.perTransactionLimit != null) {
    if (m.amount > rule.perTransactionLimit) return { refused: 'accountRules.perTransactionLimit' };
  } else if (m.amount > l.perTransactionLimit) return { refused: 'perTransactionLimit' };
  if (l.dailyTransactionLimit !== undefined && c.count + 1 > l.dailyTransactionLimit) return { refused: 'dailyTransactionLimit' };
  if (l.dailyLimit != null && c.daily + m.amount > l.dailyLimit) return { refused: 'dailyLimit' };
  if (l.monthlyLimit != null && c.monthly + m.amount > l.monthlyLimit) return { refused: 'monthlyLimit' };
  const mode = rule?.executionMode ?? p.defaultExecutionMode;
  const t = p.approvalThresholds;
  return { needsApproval: mode === 'APPROVAL_REQUIRED' || (t?.amount != null && t.currency !== undefined && m.amount > t.amount) };
}

function outcome(p: Policy, c: Counters, m: Movement, now: number): { refused: string } | { needsApproval: boolean } {
  try {
    const v = evaluate(p, c, m, now);
    expect(v.limitAmount).toBe(m.amount);
    return { needsApproval: v.needsApproval };
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(403);
    expect(e.code).toBe('FORBIDDEN');
    const details = e.details as { limit?: string; accountId?: string };
    return { refused: details.limit ?? (details.accountId ? 'account' : '?') };
  }
}

describe('evaluate: one movement against the policy', () => {
  it('refuses with the first limit the model says is crossed (403 naming it), else says whether approval is needed', () => {
    fc.assert(
      fc.property(scenario, instant, ({ p, c, m }, now) => {
        expect(outcome(p, c, m, now)).toEqual(model(p, c, m));
      }),
      { numRuns: 3_000 },
    );
  });

  it('a movement exactly at each limit passes it; one unit more is refused', () => {
    const p: Policy = {
      permissions: ['CREATE_TRANSFERS'],
      defaultExecutionMode: 'AUTO',
      spendingLimits: { currency: 'USD', perTransactionLimit: 500, dailyLimit: 1_000, dailyTransactionLimit: 3, monthlyLimit: 5_000 },
    };
    const m = (amt: number): Movement => ({ amount: amt, currency: 'USD', accountId: null, internalAccountIds: [] });
    const now = Date.UTC(2027, 5, 1);
    expect(evaluate(p, { count: 0, daily: 0, monthly: 0 }, m(500), now).needsApproval).toBe(false);
    expect(outcome(p, { count: 0, daily: 0, monthly: 0 }, m(501), now)).toEqual({ refused: 'perTransactionLimit' });
    expect(outcome(p, { count: 2, daily: 500, monthly: 500 }, m(500), now)).toEqual({ needsApproval: false });
    expect(outcome(p, { count: 3, daily: 0, monthly: 0 }, m(1), now)).toEqual({ refused: 'dailyTransactionLimit' });
    expect(outcome(p, { count: 0, daily: 501, monthly: 501 }, m(500), now)).toEqual({ refused: 'dailyLimit' });
    expect(outcome(p, { count: 0, daily: 0, monthly: 4_501 }, m(500), now)).toEqual({ refused: 'monthlyLimit' });
  });

  it('an amount in another currency is counted rounded up: never less than its exact value, never a unit more', () => {
    fc.assert(
      fc.property(amount, currency, currency, instant, (amt, from, to, now) => {
        const counted = inCurrency(amt, from, to, now);
        if (from === to) return void expect(counted).toBe(amt);
        const r = sandboxRate(from, to, now);
        const exact = BigInt(amt) * r.units; // × 10^-scale
        const scale = 10n ** BigInt(r.scale);
        if (counted === MAX) return void expect(BigInt(MAX) * scale <= exact + scale).toBe(true);
        expect(BigInt(counted) * scale >= exact).toBe(true);
        expect((BigInt(counted) - 1n) * scale < exact).toBe(true);
      }),
    );
  });
});

// ---- a policy update

describe('mergePolicy', () => {
  it('an empty update changes nothing, and the current policy is never modified', () => {
    fc.assert(
      fc.property(policy, instant, (p, now) => {
        const before = structuredClone(p);
        expect(mergePolicy(p, {}, now)).toEqual(p);
        mergePolicy(p, { spendingLimits: { currency: 'EUR', dailyLimit: null }, accountRestrictions: { allowedAccountIds: null } }, now);
        expect(p).toEqual(before);
      }),
    );
  });

  it('given fields replace, null clears, nested objects merge field by field', () => {
    fc.assert(
      fc.property(policy, nullableLimit, amount, fc.constantFrom('AUTO', 'APPROVAL_REQUIRED'), instant, (p, daily, perTx, mode, now) => {
        const next = mergePolicy(p, { defaultExecutionMode: mode, spendingLimits: { dailyLimit: daily, perTransactionLimit: perTx } }, now);
        expect(next.defaultExecutionMode).toBe(mode);
        expect(next.spendingLimits).toEqual({ ...p.spendingLimits, dailyLimit: daily, perTransactionLimit: perTx });
        expect(next.accountRestrictions).toEqual(p.accountRestrictions);
        const restricted = mergePolicy(p, { accountRestrictions: { allowedAccountIds: ['InternalAccount:z'] } }, now);
        expect(restricted.accountRestrictions).toEqual({ ...p.accountRestrictions, allowedAccountIds: ['InternalAccount:z'] });
      }),
    );
  });

  it('a new limit currency recasts the limits not given, rounded down: a recast limit never allows more', () => {
    fc.assert(
      fc.property(policy, currency, instant, fc.option(amount, { nil: undefined }), (p, to, now, givenPerTx) => {
        fc.pre(to !== p.spendingLimits.currency);
        const update = { spendingLimits: { currency: to, ...(givenPerTx !== undefined ? { perTransactionLimit: givenPerTx } : {}) } };
        const next = mergePolicy(p, update, now).spendingLimits;
        expect(next.currency).toBe(to);
        const r = sandboxRate(p.spendingLimits.currency, to, now);
        const scale = 10n ** BigInt(r.scale);
        const recastOk = (before: number, after: number) => {
          const exact = BigInt(before) * r.units;
          expect(BigInt(after) * scale <= exact, `${before} → ${after}`).toBe(true);
          if (after < MAX) expect((BigInt(after) + 1n) * scale > exact).toBe(true);
        };
        if (givenPerTx !== undefined) expect(next.perTransactionLimit).toBe(givenPerTx);
        else recastOk(p.spendingLimits.perTransactionLimit, next.perTransactionLimit);
        for (const k of ['dailyLimit', 'monthlyLimit'] as const) {
          const v = p.spendingLimits[k];
          if (typeof v === 'number') recastOk(v, next[k] as number);
          else expect(next[k]).toBe(v);
        }
        expect(next.dailyTransactionLimit).toBe(p.spendingLimits.dailyTransactionLimit);
      }),
    );
  });
});
