/**
 * Limits hold under concurrency: the policy check, the usage update and the money movement run in
 * one database transaction with the agent row locked, so parallel agent requests cannot together
 * pass a limit, and a pending action is decided once however many decisions race.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { expectLedgerClean } from '../helpers/payments.ts';
import { balanceOf, customer, installAgent, policy, transferOut } from './util.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

describe('concurrent agent requests', () => {
  it('50 concurrent transfers against a daily count limit of 10: exactly 10 succeed', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 1_000_000);
    const agent = await installAgent(
      srv,
      p,
      c.customerId,
      policy({ spendingLimits: { currency: 'USD', perTransactionLimit: 1_000, dailyTransactionLimit: 10 } }),
    );
    const results = await Promise.all(Array.from({ length: 50 }, () => transferOut(agent, c, 100)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 403)).toHaveLength(40);
    expect(
      results.filter((r) => r.status === 403).every((r) => r.body.code === 'FORBIDDEN' && r.body.details.limit === 'dailyTransactionLimit'),
    ).toBe(true);
    expect(await balanceOf(p, c.account)).toBe(1_000_000 - 10 * 100);
    expect((await agent.api.get('/agents/me')).body.usage).toMatchObject({ dailyTransactionCount: 10, dailySpend: 1_000 });
    expect((await agent.api.get('/agents/me/actions', { query: { limit: 100 } })).body.totalCount).toBe(10);
    await expectLedgerClean(srv, p.id);
  });

  it('30 concurrent transfers against a daily amount limit: the total never passes it', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 1_000_000);
    const agent = await installAgent(
      srv,
      p,
      c.customerId,
      policy({ spendingLimits: { currency: 'USD', perTransactionLimit: 1_000, dailyLimit: 2_000 } }),
    );
    const results = await Promise.all(Array.from({ length: 30 }, () => transferOut(agent, c, 300)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(6);
    expect(results.filter((r) => r.status === 403)).toHaveLength(24);
    expect(await balanceOf(p, c.account)).toBe(1_000_000 - 1_800);
    expect((await agent.api.get('/agents/me')).body.usage.dailySpend).toBe(1_800);
    await expectLedgerClean(srv, p.id);
  });

  it('racing approvals and rejections decide a pending action once', async () => {
    const p = await srv.newPlatform();
    const c = await customer(p, 100_000);
    const agent = await installAgent(srv, p, c.customerId, policy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }));
    const action = (await transferOut(agent, c, 5_000)).body;
    const base = `/agents/${agent.id}/actions/${action.id}`;
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => p.api.post(`${base}/${i % 2 === 0 ? 'approve' : 'reject'}`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
    const winner = results.find((r) => r.status === 200)!.body;
    expect(await balanceOf(p, c.account)).toBe(winner.status === 'APPROVED' ? 95_000 : 100_000);
    expect((await agent.api.get(`/agents/me/actions/${action.id}`)).body.status).toBe(winner.status);
    await expectLedgerClean(srv, p.id);
  });
});
