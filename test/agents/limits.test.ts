/**
 * Spending limits over HTTP, each at and just over its edge: per-transaction, daily count, daily
 * amount and monthly amount, a per-account rule's limit, limits in another currency (converted at
 * the sandbox rate; USD→USDC is pegged, so exact), account restrictions, and usage counters that
 * reset when the platform clock passes midnight UTC or the end of the month. A refused movement
 * moves nothing and counts nothing; the ledger stays clean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { expectLedgerClean } from '../helpers/payments.ts';
import {
  advance,
  balanceOf,
  customer,
  installAgent,
  platformNow,
  policy,
  setPolicy,
  transferOut,
  type AgentHandle,
  type CustomerSetup,
} from './util.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

/** Seconds from the platform's now to `target` plus `extra` seconds. */
async function secondsUntil(p: PlatformHandle, target: (now: Date) => number, extra: number): Promise<number> {
  const now = await platformNow(p);
  return Math.ceil((target(new Date(now)) - now) / 1000) + extra;
}
const nextDay = (d: Date) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1);
const nextMonth = (d: Date) => Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);

/**
 * A platform whose clock stands at 01:00 UTC of a fresh day (so a test never straddles midnight),
 * a customer with 1,000,000 cents and an agent with `limits`.
 */
async function setup(
  spendingLimits: Record<string, unknown>,
  over: Record<string, unknown> = {},
): Promise<{ p: PlatformHandle; c: CustomerSetup; agent: AgentHandle }> {
  const p = await srv.newPlatform();
  await advance(p, await secondsUntil(p, nextDay, 3600));
  const c = await customer(p, 1_000_000);
  const agent = await installAgent(srv, p, c.customerId, policy({ spendingLimits, ...over }));
  return { p, c, agent };
}

async function usage(agent: AgentHandle) {
  return (await agent.api.get('/agents/me')).body.usage;
}

function refused(res: Parameters<typeof expectError>[0], limit: string) {
  expectError(res, 403, 'FORBIDDEN');
  expect(res.body.details.limit).toBe(limit);
}

describe('spending limits', () => {
  it('perTransactionLimit: at the limit passes, one over is 403 and moves nothing', async () => {
    const { p, c, agent } = await setup({ currency: 'USD', perTransactionLimit: 5_000 });
    refused(await transferOut(agent, c, 5_001), 'perTransactionLimit');
    expect(await balanceOf(p, c.account)).toBe(1_000_000);
    expect(await usage(agent)).toMatchObject({ dailyTransactionCount: 0, dailySpend: 0, monthlySpend: 0 });
    expect((await agent.api.get('/agents/me/actions')).body.data).toEqual([]);
    const ok = await transferOut(agent, c, 5_000);
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.status).toBe('APPROVED');
    expect(await balanceOf(p, c.account)).toBe(995_000);
    expect(await usage(agent)).toMatchObject({ dailyTransactionCount: 1, dailySpend: 5_000, monthlySpend: 5_000 });
    await expectLedgerClean(srv, p.id);
  });

  it('dailyTransactionLimit: the limit-th movement passes, the next is 403', async () => {
    const { c, agent } = await setup({ currency: 'USD', perTransactionLimit: 5_000, dailyTransactionLimit: 3 });
    for (let i = 0; i < 3; i++) expect((await transferOut(agent, c, 10)).status).toBe(201);
    refused(await transferOut(agent, c, 10), 'dailyTransactionLimit');
    expect(await usage(agent)).toMatchObject({ dailyTransactionCount: 3, dailySpend: 30 });
  });

  it('dailyLimit: spending exactly the limit passes, one more unit is 403', async () => {
    const { c, agent } = await setup({ currency: 'USD', perTransactionLimit: 100_000, dailyLimit: 10_000 });
    expect((await transferOut(agent, c, 4_000)).status).toBe(201);
    refused(await transferOut(agent, c, 6_001), 'dailyLimit');
    expect((await transferOut(agent, c, 6_000)).status).toBe(201);
    refused(await transferOut(agent, c, 1), 'dailyLimit');
    expect(await usage(agent)).toMatchObject({ dailyTransactionCount: 2, dailySpend: 10_000 });
  });

  it('monthlyLimit: exactly the limit passes, one more unit is 403', async () => {
    const { c, agent } = await setup({ currency: 'USD', perTransactionLimit: 100_000, dailyLimit: null, monthlyLimit: 7_000 });
    expect((await transferOut(agent, c, 7_000)).status).toBe(201);
    refused(await transferOut(agent, c, 1), 'monthlyLimit');
    expect(await usage(agent)).toMatchObject({ monthlySpend: 7_000 });
  });

  it('limits in another currency convert the movement at the sandbox rate (USD→USDC)', async () => {
    // 50 USDC = 50,000,000 micro-USDC = 5,000 cents.
    const { p, c, agent } = await setup({ currency: 'USDC', perTransactionLimit: 50_000_000, dailyLimit: 80_000_000 });
    refused(await transferOut(agent, c, 5_001), 'perTransactionLimit');
    expect((await transferOut(agent, c, 5_000)).status).toBe(201);
    expect(await usage(agent)).toMatchObject({ dailySpend: 50_000_000, monthlySpend: 50_000_000 });
    refused(await transferOut(agent, c, 3_001), 'dailyLimit');
    expect((await transferOut(agent, c, 3_000)).status).toBe(201);
    // Recasting the limits into USD recasts the usage too.
    await setPolicy(p, agent.id, { spendingLimits: { currency: 'USD' } });
    const after = (await agent.api.get('/agents/me')).body;
    expect(after.policy.spendingLimits).toMatchObject({ currency: 'USD', perTransactionLimit: 5_000, dailyLimit: 8_000 });
    expect(after.usage).toMatchObject({ dailyTransactionCount: 2, dailySpend: 8_000, monthlySpend: 8_000 });
    refused(await transferOut(agent, c, 1), 'dailyLimit');
  });

  it("an account rule's perTransactionLimit overrides the policy's; null inherits it", async () => {
    const { p, c, agent } = await setup({ currency: 'USD', perTransactionLimit: 1_000_000 });
    await setPolicy(p, agent.id, { accountRestrictions: { accountRules: [{ accountId: c.account, perTransactionLimit: 2_000 }] } });
    refused(await transferOut(agent, c, 2_001), 'accountRules.perTransactionLimit');
    expect((await transferOut(agent, c, 2_000)).status).toBe(201);
    await setPolicy(p, agent.id, {
      spendingLimits: { perTransactionLimit: 3_000 },
      accountRestrictions: { accountRules: [{ accountId: c.account, perTransactionLimit: null }] },
    });
    refused(await transferOut(agent, c, 3_001), 'perTransactionLimit');
    expect((await transferOut(agent, c, 3_000)).status).toBe(201);
  });

  it('allowedAccountIds: an account outside the list is 403 for movements and quotes', async () => {
    const { p, c, agent } = await setup({ currency: 'USD', perTransactionLimit: 1_000_000 });
    const other = await customer(p, 0);
    // Only the customer's own accounts may be listed.
    expectError(
      await p.api.patch(`/agents/${agent.id}/policy`, { accountRestrictions: { allowedAccountIds: [other.account] } }),
      400,
      'INVALID_INPUT',
    );
    await setPolicy(p, agent.id, { accountRestrictions: { allowedAccountIds: [] } });
    const res = expectError(await transferOut(agent, c, 10), 403, 'FORBIDDEN');
    expect(res.body.details.accountId).toBe(c.account);
    const quote = {
      source: { sourceType: 'ACCOUNT', accountId: c.account },
      destination: { destinationType: 'ACCOUNT', accountId: c.external },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 10,
    };
    expectError(await agent.api.post('/agents/me/quotes', quote), 403, 'FORBIDDEN');
    await setPolicy(p, agent.id, { accountRestrictions: { allowedAccountIds: [c.account] } });
    expect((await transferOut(agent, c, 10)).status).toBe(201);
    expect((await agent.api.post('/agents/me/quotes', quote)).status).toBe(201);
  });

  it('limits apply to quote executions by their total sending amount', async () => {
    const { c, agent } = await setup({ currency: 'USD', perTransactionLimit: 5_000 });
    const body = (amount: number) => ({
      source: { sourceType: 'ACCOUNT', accountId: c.account },
      destination: { destinationType: 'ACCOUNT', accountId: c.external },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: amount,
    });
    const over = (await agent.api.post('/agents/me/quotes', body(5_001))).body;
    const at = (await agent.api.post('/agents/me/quotes', body(5_000))).body;
    refused(await agent.api.post(`/agents/me/quotes/${over.id}/execute`), 'perTransactionLimit');
    expect((await agent.api.get(`/agents/me/quotes/${over.id}`)).body.status).toBe('PENDING');
    const ok = await agent.api.post(`/agents/me/quotes/${at.id}/execute`);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.status).toBe('APPROVED');
  });
});

describe('limits recast into another currency stay exact integers (hostile review, defect 8)', () => {
  it('a limit that would pass 2^53−1 in the new currency is capped there', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 0);
    const created = await p.api.post('/agents', {
      name: 'big limits',
      customerId: c.customerId,
      policy: policy({
        spendingLimits: { currency: 'BTC', perTransactionLimit: 9_000_000_000_000_000, dailyLimit: 5_000_000_000_000_000 },
      }),
    });
    expect(created.status, created.text).toBe(201);
    // BTC satoshis to IDR cents multiply by about 10^5: far past 2^53−1.
    const res = await p.api.patch(`/agents/${created.body.agent.id}/policy`, { spendingLimits: { currency: 'IDR' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.policy.spendingLimits).toMatchObject({
      currency: 'IDR',
      perTransactionLimit: Number.MAX_SAFE_INTEGER,
      dailyLimit: Number.MAX_SAFE_INTEGER,
    });
    expect(JSON.parse(res.text).policy.spendingLimits.perTransactionLimit).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('usage resets on the platform clock', () => {
  it('daily counters reset after midnight UTC', async () => {
    const { p, c, agent } = await setup({ currency: 'USD', perTransactionLimit: 5_000, dailyLimit: 1_000, dailyTransactionLimit: 1 });
    const day = (await usage(agent)).dailyResetDate;
    expect((await transferOut(agent, c, 1_000)).status).toBe(201);
    refused(await transferOut(agent, c, 1), 'dailyTransactionLimit');
    await advance(p, await secondsUntil(p, nextDay, 60));
    const fresh = await usage(agent);
    expect(fresh).toMatchObject({ dailyTransactionCount: 0, dailySpend: 0, monthlySpend: expect.any(Number) });
    expect(fresh.dailyResetDate > day).toBe(true);
    expect((await transferOut(agent, c, 1_000)).status).toBe(201);
    expect(await usage(agent)).toMatchObject({ dailyTransactionCount: 1, dailySpend: 1_000 });
  });

  it('the monthly counter resets when the month ends', async () => {
    const { p, c, agent } = await setup({ currency: 'USD', perTransactionLimit: 5_000, monthlyLimit: 3_000 });
    // Start on the first of a month, so the month does not end mid-test.
    await advance(p, await secondsUntil(p, nextMonth, 3600));
    const month = (await usage(agent)).monthlyResetMonth;
    expect((await transferOut(agent, c, 3_000)).status).toBe(201);
    await advance(p, 2 * 24 * 3600);
    refused(await transferOut(agent, c, 1), 'monthlyLimit');
    expect((await usage(agent)).monthlySpend).toBe(3_000);
    await advance(p, await secondsUntil(p, nextMonth, 60));
    const fresh = await usage(agent);
    expect(fresh).toMatchObject({ monthlySpend: 0, dailySpend: 0 });
    expect(fresh.monthlyResetMonth > month).toBe(true);
    expect((await transferOut(agent, c, 3_000)).status).toBe(201);
    await expectLedgerClean(srv, p.id);
  });
});
