/**
 * Approval over HTTP with a real webhook receiver: an action needs approval by the default mode,
 * by an approval threshold (also in another currency) or by a per-account rule; it waits as
 * PENDING_APPROVAL with a signed AGENT_ACTION.PENDING_APPROVAL webhook carrying it; approval runs
 * it under the current policy and balances (APPROVED with its transaction, or FAILED with the
 * reason when the policy got stricter, the agent was paused, the money is gone or the quote
 * expired); rejection records the reason; a second decision is 409. Ledger clean throughout.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { expectLedgerClean } from '../helpers/payments.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import {
  advance,
  balanceOf,
  customer,
  installAgent,
  policy,
  setPolicy,
  transferOut,
  type AgentHandle,
  type CustomerSetup,
  type Wire,
} from './util.ts';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

let srv: TestServer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.close();
  for (const r of receivers) await r.close();
});

interface Setup {
  p: PlatformHandle;
  r: Receiver;
  c: CustomerSetup;
  agent: AgentHandle;
}

/** A platform whose webhook endpoint is a fresh receiver, a customer with 100,000 cents and an agent with `over`. */
async function setup(over: Record<string, unknown>): Promise<Setup> {
  const r = await startReceiver();
  receivers.push(r);
  const p = await srv.newPlatform();
  expect((await p.api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
  await waitFor(() => r.received.some((x) => x.body?.type === 'TEST'));
  const c = await customer(p, 100_000);
  const agent = await installAgent(srv, p, c.customerId, policy(over));
  return { p, r, c, agent };
}

const approvalEvents = (r: Receiver) => r.received.filter((x) => x.body?.type === 'AGENT_ACTION.PENDING_APPROVAL');

async function signingKey(p: PlatformHandle): Promise<string> {
  return (await p.api.get('/webhooks/signing-key')).body.publicKey as string;
}

describe('approval by mode, threshold and account rule', () => {
  it('APPROVAL_REQUIRED: waits with a signed webhook, then approval moves the money', async () => {
    const s = await setup({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const res = await transferOut(s.agent, s.c, 2_500);
    expect(res.status, res.text).toBe(201);
    const action = res.body;
    expect(action).toMatchObject({ status: 'PENDING_APPROVAL', type: 'TRANSFER_OUT', transferDetails: { amount: 2_500, currency: 'USD' } });
    expect(action.transaction).toBeUndefined();
    expect(await balanceOf(s.p, s.c.account)).toBe(100_000);
    expect((await s.agent.api.get('/agents/me')).body.usage).toMatchObject({ dailyTransactionCount: 0, dailySpend: 0 });

    const got = await waitFor(() => approvalEvents(s.r)[0]);
    expect(got.body.data).toEqual(action);
    expect(got.body.id).toMatch(/^Webhook:/);
    expect(verifyWebhook(got.raw, got.headers['x-grid-signature'] as string, await signingKey(s.p))).toBe(true);
    // The envelope is what the served OpenAPI document's agent-action webhook describes.
    const doc = (await srv.anon.get('/openapi.json')).body;
    const ajv = new Ajv({ strict: false, discriminator: true });
    addFormats(ajv);
    const validate = ajv.compile(doc.webhooks['agent-action'].post.requestBody.content['application/json'].schema);
    expect(validate(got.body), JSON.stringify(validate.errors)).toBe(true);

    const queue = await s.p.api.get('/agents/approvals');
    expect(queue.status).toBe(200);
    expect(queue.body.data).toEqual([action]);

    const approved = await s.p.api.post(`/agents/${s.agent.id}/actions/${action.id}/approve`);
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({
      id: action.id,
      status: 'APPROVED',
      transaction: { type: 'OUTGOING', sentAmount: { amount: 2_500 }, customerId: s.c.customerId },
    });
    expect(await balanceOf(s.p, s.c.account)).toBe(97_500);
    expect((await s.agent.api.get(`/agents/me/actions/${action.id}`)).body).toMatchObject({
      status: 'APPROVED',
      transaction: { id: approved.body.transaction.id },
    });
    expect((await s.agent.api.get('/agents/me')).body.usage).toMatchObject({ dailyTransactionCount: 1, dailySpend: 2_500 });
    expect((await s.p.api.get('/agents/approvals')).body.data).toEqual([]);

    expectError(await s.p.api.post(`/agents/${s.agent.id}/actions/${action.id}/approve`), 409, 'CONFLICT');
    expectError(await s.p.api.post(`/agents/${s.agent.id}/actions/${action.id}/reject`, { reason: 'late' }), 409, 'CONFLICT');
    expect(await balanceOf(s.p, s.c.account)).toBe(97_500);
    expect(approvalEvents(s.r)).toHaveLength(1);
    await expectLedgerClean(srv, s.p.id);
  });

  it('an approval threshold sends only movements above it for approval, in its own currency', async () => {
    const s = await setup({ approvalThresholds: { currency: 'USD', amount: 5_000 } });
    expect((await transferOut(s.agent, s.c, 5_000)).body.status).toBe('APPROVED');
    expect((await transferOut(s.agent, s.c, 5_001)).body.status).toBe('PENDING_APPROVAL');
    // 50 USDC is 5,000 cents (pegged).
    await setPolicy(s.p, s.agent.id, { approvalThresholds: { currency: 'USDC', amount: 50_000_000 } });
    expect((await transferOut(s.agent, s.c, 5_000)).body.status).toBe('APPROVED');
    expect((await transferOut(s.agent, s.c, 5_001)).body.status).toBe('PENDING_APPROVAL');
    await setPolicy(s.p, s.agent.id, { approvalThresholds: { amount: null } });
    expect((await transferOut(s.agent, s.c, 50_000)).body.status).toBe('APPROVED');
    await waitFor(() => approvalEvents(s.r).length === 2);
  });

  it("a per-account rule's execution mode overrides the default for its account", async () => {
    const s = await setup({ defaultExecutionMode: 'AUTO' });
    await setPolicy(s.p, s.agent.id, {
      accountRestrictions: { accountRules: [{ accountId: s.c.account, executionMode: 'APPROVAL_REQUIRED' }] },
    });
    expect((await transferOut(s.agent, s.c, 10)).body.status).toBe('PENDING_APPROVAL');
    expect(
      (
        await s.agent.api.post('/agents/me/transfer-in', {
          source: { accountId: s.c.external },
          destination: { accountId: s.c.account },
          amount: 10,
        })
      ).body.status,
    ).toBe('PENDING_APPROVAL');
    await setPolicy(s.p, s.agent.id, {
      defaultExecutionMode: 'APPROVAL_REQUIRED',
      accountRestrictions: { accountRules: [{ accountId: s.c.account, executionMode: 'AUTO' }] },
    });
    expect((await transferOut(s.agent, s.c, 10)).body.status).toBe('APPROVED');
  });
});

describe('decisions', () => {
  it('reject records the reason and moves nothing; a rejection without a reason has none', async () => {
    const s = await setup({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const first = (await transferOut(s.agent, s.c, 1_000)).body;
    const second = (await transferOut(s.agent, s.c, 2_000)).body;
    await waitFor(() => approvalEvents(s.r).length === 2);
    // One webhook per action (two resources: their order between them is not guaranteed).
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(
      approvalEvents(s.r)
        .map((x) => x.body.data)
        .sort(byId),
    ).toEqual([first, second].sort(byId));
    const rejected = await s.p.api.post(`/agents/${s.agent.id}/actions/${first.id}/reject`, { reason: 'Exceeds the customer risk limit' });
    expect(rejected.status, rejected.text).toBe(200);
    expect(rejected.body).toMatchObject({ id: first.id, status: 'REJECTED', rejectionReason: 'Exceeds the customer risk limit' });
    expect(rejected.body.transaction).toBeUndefined();
    const bare = await s.p.api.post(`/agents/${s.agent.id}/actions/${second.id}/reject`);
    expect(bare.body.status).toBe('REJECTED');
    expect(bare.body.rejectionReason).toBeUndefined();
    expectError(await s.p.api.post(`/agents/${s.agent.id}/actions/${first.id}/reject`), 409, 'CONFLICT');
    expectError(await s.p.api.post(`/agents/${s.agent.id}/actions/${first.id}/approve`), 409, 'CONFLICT');
    expect(await balanceOf(s.p, s.c.account)).toBe(100_000);
    expect((await s.agent.api.get(`/agents/me/actions/${first.id}`)).body).toMatchObject({
      status: 'REJECTED',
      rejectionReason: 'Exceeds the customer risk limit',
    });
    expect(
      fields(expectError(await s.p.api.post(`/agents/${s.agent.id}/actions/${first.id}/reject`, { why: 'x' }), 400, 'INVALID_INPUT')),
    ).toContain('why');
  });

  it('approval applies the current policy: a stricter limit, a pause or a lost permission make it FAILED', async () => {
    const s = await setup({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const a1 = (await transferOut(s.agent, s.c, 5_000)).body;
    const a2 = (await transferOut(s.agent, s.c, 5_000)).body;
    const a3 = (await transferOut(s.agent, s.c, 5_000)).body;
    await setPolicy(s.p, s.agent.id, { spendingLimits: { perTransactionLimit: 4_999 } });
    const failed = await s.p.api.post(`/agents/${s.agent.id}/actions/${a1.id}/approve`);
    expect(failed.status, failed.text).toBe(200);
    expect(failed.body).toMatchObject({ status: 'FAILED' });
    expect(failed.body.failureReason).toMatch(/perTransactionLimit/);
    expect(failed.body.transaction).toBeUndefined();
    expectError(await s.p.api.post(`/agents/${s.agent.id}/actions/${a1.id}/approve`), 409, 'CONFLICT');

    await setPolicy(s.p, s.agent.id, { spendingLimits: { perTransactionLimit: 1_000_000 } });
    expect((await s.p.api.patch(`/agents/${s.agent.id}`, { isPaused: true })).status).toBe(200);
    const paused = (await s.p.api.post(`/agents/${s.agent.id}/actions/${a2.id}/approve`)).body;
    expect(paused).toMatchObject({ status: 'FAILED', failureReason: expect.stringMatching(/paused/) });
    expect((await s.p.api.patch(`/agents/${s.agent.id}`, { isPaused: false })).status).toBe(200);

    await setPolicy(s.p, s.agent.id, { permissions: ['VIEW_TRANSACTIONS'] });
    const noPermission = (await s.p.api.post(`/agents/${s.agent.id}/actions/${a3.id}/approve`)).body;
    expect(noPermission).toMatchObject({ status: 'FAILED', failureReason: expect.stringMatching(/CREATE_TRANSFERS/) });

    expect(await balanceOf(s.p, s.c.account)).toBe(100_000);
    expect((await s.agent.api.get('/agents/me')).body.usage).toMatchObject({ dailyTransactionCount: 0, dailySpend: 0 });
    await expectLedgerClean(srv, s.p.id);
  });

  it('approval applies the current balances and usage', async () => {
    const s = await setup({
      defaultExecutionMode: 'APPROVAL_REQUIRED',
      spendingLimits: { currency: 'USD', perTransactionLimit: 1_000_000, dailyTransactionLimit: 1 },
    });
    const big = (await transferOut(s.agent, s.c, 90_000)).body;
    const small = (await transferOut(s.agent, s.c, 100)).body;
    const later = (await transferOut(s.agent, s.c, 100)).body;
    // The platform spends most of the money meanwhile.
    expect(
      (
        await s.p.api.post('/transfer-out', {
          source: { accountId: s.c.account },
          destination: { accountId: s.c.external },
          amount: 50_000,
        })
      ).status,
    ).toBe(201);
    const failed = (await s.p.api.post(`/agents/${s.agent.id}/actions/${big.id}/approve`)).body;
    expect(failed.status).toBe('FAILED');
    expect(failed.failureReason).toBeDefined();
    expect((await s.p.api.post(`/agents/${s.agent.id}/actions/${small.id}/approve`)).body.status).toBe('APPROVED');
    // The day's one movement is used up.
    const over = (await s.p.api.post(`/agents/${s.agent.id}/actions/${later.id}/approve`)).body;
    expect(over).toMatchObject({ status: 'FAILED', failureReason: expect.stringMatching(/dailyTransactionLimit/) });
    expect(await balanceOf(s.p, s.c.account)).toBe(49_900);
    await expectLedgerClean(srv, s.p.id);
  });

  it('quote executions wait too; a quote that expires before approval FAILS', async () => {
    const s = await setup({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const body = (amount: number) => ({
      source: { sourceType: 'ACCOUNT', accountId: s.c.account },
      destination: { destinationType: 'ACCOUNT', accountId: s.c.external },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: amount,
    });
    const q1 = (await s.agent.api.post('/agents/me/quotes', body(1_000))).body;
    const pending = await s.agent.api.post(`/agents/me/quotes/${q1.id}/execute`);
    expect(pending.status, pending.text).toBe(200);
    expect(pending.body).toMatchObject({ type: 'EXECUTE_QUOTE', status: 'PENDING_APPROVAL', quote: { id: q1.id, status: 'PENDING' } });
    expect(pending.body.transaction).toBeUndefined();
    expectError(await s.agent.api.post(`/agents/me/quotes/${q1.id}/execute`), 409, 'CONFLICT');
    const approved = (await s.p.api.post(`/agents/${s.agent.id}/actions/${pending.body.id}/approve`)).body;
    expect(approved).toMatchObject({ status: 'APPROVED', quote: { status: 'PROCESSING' }, transaction: { id: q1.transactionId } });
    expect(await balanceOf(s.p, s.c.account)).toBe(99_000);

    const q2 = (await s.agent.api.post('/agents/me/quotes', body(2_000))).body;
    const waiting = (await s.agent.api.post(`/agents/me/quotes/${q2.id}/execute`)).body;
    await advance(s.p, 301);
    const expired = (await s.p.api.post(`/agents/${s.agent.id}/actions/${waiting.id}/approve`)).body;
    expect(expired).toMatchObject({ status: 'FAILED', failureReason: expect.stringMatching(/EXPIRED|expired/) });
    expect(await balanceOf(s.p, s.c.account)).toBe(99_000);
    await waitFor(() => approvalEvents(s.r).length === 2);
    // Two actions are two resources: webhooks keep order within a resource only.
    expect(
      approvalEvents(s.r)
        .map((x) => x.body.data.quote.id)
        .sort(),
    ).toEqual([q1.id, q2.id].sort());
    await expectLedgerClean(srv, s.p.id);
  });

  it('404 for unknown, mismatched or other platforms’ actions; deleting the agent rejects what waits', async () => {
    const s = await setup({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const action = (await transferOut(s.agent, s.c, 10)).body;
    const other = await installAgent(srv, s.p, s.c.customerId);
    expectError(await s.p.api.post(`/agents/${other.id}/actions/${action.id}/approve`), 404, 'REFERENCE_NOT_FOUND');
    expectError(
      await s.p.api.post(`/agents/${s.agent.id}/actions/AgentAction:019542f5-b3e7-7d02-8000-000000000001/approve`),
      404,
      'REFERENCE_NOT_FOUND',
    );
    const q = await srv.newPlatform();
    expectError(await q.api.post(`/agents/${s.agent.id}/actions/${action.id}/approve`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await q.api.post(`/agents/${s.agent.id}/actions/${action.id}/reject`), 404, 'REFERENCE_NOT_FOUND');
    expect((await q.api.get('/agents/approvals')).body.data).toEqual([]);
    expectError(await srv.anon.post(`/agents/${s.agent.id}/actions/${action.id}/approve`), 401, 'UNAUTHORIZED');
    expectError(await s.agent.api.post(`/agents/${s.agent.id}/actions/${action.id}/approve`), 401, 'UNAUTHORIZED');
    expect(
      fields(expectError(await s.p.api.post(`/agents/${s.agent.id}/actions/${action.id}/approve`, { force: true }), 400, 'INVALID_INPUT')),
    ).toContain('force');

    expect((await s.p.api.delete(`/agents/${s.agent.id}`)).status).toBe(204);
    expect((await s.p.api.get('/agents/approvals')).body.data).toEqual([]);
    const row = await srv.app.ctx.db.selectFrom('agent_actions').selectAll().where('id', '=', action.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ status: 'REJECTED', rejection_reason: 'The agent was deleted' });
  });
});

describe('GET /agents/approvals', () => {
  it('filters by agent, customer and dates, sorts and paginates', async () => {
    const s = await setup({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const c2 = await customer(s.p, 10_000);
    const agent2 = await installAgent(srv, s.p, c2.customerId, policy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }));
    const x1 = (await transferOut(s.agent, s.c, 1)).body;
    const x2 = (await transferOut(agent2, c2, 2)).body;
    const x3 = (await transferOut(s.agent, s.c, 3)).body;
    const ids = async (query: Record<string, string | number>) => {
      const res = await s.p.api.get('/agents/approvals', { query });
      expect(res.status, res.text).toBe(200);
      return res.body.data.map((x: Wire) => x.id);
    };
    expect(await ids({})).toEqual([x3.id, x2.id, x1.id]);
    expect(await ids({ sortOrder: 'asc' })).toEqual([x1.id, x2.id, x3.id]);
    expect(await ids({ agentId: s.agent.id })).toEqual([x3.id, x1.id]);
    expect(await ids({ customerId: c2.customerId })).toEqual([x2.id]);
    expect(await ids({ startDate: x2.createdAt })).toEqual([x3.id, x2.id]);
    expect(await ids({ endDate: x1.createdAt })).toEqual([x1.id]);
    const page = await s.p.api.get('/agents/approvals', { query: { limit: 2, sortOrder: 'asc' } });
    expect(page.body).toMatchObject({ hasMore: true, totalCount: 3 });
    expect(await ids({ limit: 2, sortOrder: 'asc', cursor: page.body.nextCursor })).toEqual([x3.id]);
    expectError(await s.p.api.get('/agents/approvals', { query: { sortOrder: 'sideways' } }), 400, 'INVALID_INPUT');
    expectError(await s.p.api.get('/agents/approvals', { query: { status: 'APPROVED' } }), 400, 'INVALID_INPUT');
  });
});

function fields(res: { body: Wire }): string[] {
  return (res.body.details?.errors ?? []).map((e: { field: string }) => e.field);
}
