/**
 * `agentId` on the transactions an agent starts (issue #21, docs/decisions.md "Wire fidelity"): its
 * transfer-out and transfer-in, and the payment of a quote it created and executed — at once or on
 * the platform's approval — in the action, in GET /transactions (platform and agent), and in the
 * payment webhooks; absent from what the platform starts for the same customer. Ledger clean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eurAccountInfo, expectLedgerClean, tx } from '../helpers/payments.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advance,
  customer,
  externalFor,
  installAgent,
  policy,
  transferOut,
  type AgentHandle,
  type CustomerSetup,
  type Wire,
} from './util.ts';

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

/** A platform whose webhooks go to a fresh receiver, a customer with 100,000 cents and an agent with `over`. */
async function setup(over: Record<string, unknown> = {}): Promise<Setup> {
  const r = await startReceiver();
  receivers.push(r);
  const p = await srv.newPlatform();
  expect((await p.api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
  const c = await customer(p, 100_000);
  const agent = await installAgent(srv, p, c.customerId, policy(over));
  return { p, r, c, agent };
}

/** The payment webhooks about transaction `id` received so far. */
const webhooksOf = (r: Receiver, id: string): Wire[] => r.received.filter((x) => x.body?.data?.id === id).map((x) => x.body);

describe('agentId', () => {
  it("is the agent's on its transfer-out, wherever the transaction is read, and absent on the platform's", async () => {
    const s = await setup();
    const res = await transferOut(s.agent, s.c, 700);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ status: 'APPROVED', transaction: { type: 'OUTGOING', agentId: s.agent.id } });
    const id = res.body.transaction.id as string;
    expect((await tx(s.p.api, id)).agentId).toBe(s.agent.id);
    expect((await s.agent.api.get(`/agents/me/transactions/${id}`)).body.agentId).toBe(s.agent.id);

    // The platform moves the same customer's money: no agent.
    const platform = await s.p.api.post('/transfer-out', {
      source: { accountId: s.c.account },
      destination: { accountId: s.c.external },
      amount: 300,
    });
    expect(platform.status).toBe(201);
    expect('agentId' in platform.body).toBe(false);

    await advance(s.p, 1);
    const list = (await s.p.api.get('/transactions', { query: { customerId: s.c.customerId, type: 'OUTGOING' } })).body.data as Wire[];
    expect(list.find((t) => t.id === id)?.agentId).toBe(s.agent.id);
    expect('agentId' in list.find((t) => t.id === platform.body.id)!).toBe(false);
    const own = (await s.agent.api.get('/agents/me/transactions')).body.data as Wire[];
    expect(own.find((t) => t.id === id)?.agentId).toBe(s.agent.id);

    await waitFor(() => webhooksOf(s.r, id).some((w) => w.type === 'OUTGOING_PAYMENT.COMPLETED'));
    const events = webhooksOf(s.r, id);
    expect(events.map((w) => w.type)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.COMPLETED']);
    for (const w of events) expect(w.data.agentId).toBe(s.agent.id);
    await waitFor(() => webhooksOf(s.r, platform.body.id).some((w) => w.type === 'OUTGOING_PAYMENT.COMPLETED'));
    for (const w of webhooksOf(s.r, platform.body.id)) expect('agentId' in w.data).toBe(false);
    await expectLedgerClean(srv, s.p.id);
  });

  it('is on the incoming transaction of its transfer-in (which has none of the outgoing-only fields)', async () => {
    const s = await setup();
    const res = await s.agent.api.post('/agents/me/transfer-in', {
      source: { accountId: s.c.external },
      destination: { accountId: s.c.account },
      amount: 400,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.transaction).toMatchObject({ type: 'INCOMING', agentId: s.agent.id });
    for (const field of ['railSelectionMode', 'expectedSettlementAt', 'settlementTimelineSeconds', 'rateDetails']) {
      expect(field in res.body.transaction).toBe(false);
    }
    await advance(s.p, 1);
    const id = res.body.transaction.id as string;
    expect(await tx(s.p.api, id)).toMatchObject({ status: 'COMPLETED', agentId: s.agent.id });
    await waitFor(() => webhooksOf(s.r, id).some((w) => w.type === 'INCOMING_PAYMENT.COMPLETED'));
    for (const w of webhooksOf(s.r, id)) expect(w.data.agentId).toBe(s.agent.id);
    await expectLedgerClean(srv, s.p.id);
  });

  it('is on the payment of a quote the agent created and executed, with its rate details', async () => {
    const s = await setup();
    const eur = await externalFor(s.p, s.c.customerId, '001', 'EUR', { ...eurAccountInfo(), iban: 'FR1420041010050500013M02606' });
    const created = await s.agent.api.post('/agents/me/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: s.c.account },
      destination: { destinationType: 'ACCOUNT', accountId: eur },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
    });
    expect(created.status, created.text).toBe(201);
    const q = created.body;
    expect(q.rateDetails).toMatchObject({ counterpartyMultiplier: q.exchangeRate, gridApiFixedFee: 0, gridApiVariableFeeAmount: 0 });
    // Its payment is the agent's from the start (the quote is the agent's alone to execute).
    expect((await tx(s.p.api, q.transactionId)).agentId).toBe(s.agent.id);

    const exec = await s.agent.api.post(`/agents/me/quotes/${q.id}/execute`);
    expect(exec.status, exec.text).toBe(200);
    expect(exec.body).toMatchObject({
      type: 'EXECUTE_QUOTE',
      status: 'APPROVED',
      quote: { id: q.id, rateDetails: q.rateDetails },
      transaction: { id: q.transactionId, agentId: s.agent.id, rateDetails: q.rateDetails, railSelectionMode: 'AUTO' },
    });
    await advance(s.p, 1);
    expect(await tx(s.p.api, q.transactionId)).toMatchObject({ status: 'COMPLETED', agentId: s.agent.id });
    await waitFor(() => webhooksOf(s.r, q.transactionId).some((w) => w.type === 'OUTGOING_PAYMENT.COMPLETED'));
    for (const w of webhooksOf(s.r, q.transactionId)) expect(w.data.agentId).toBe(s.agent.id);
    await expectLedgerClean(srv, s.p.id);
  });

  it("stays the agent's when the platform approves the action", async () => {
    const s = await setup({ defaultExecutionMode: 'APPROVAL_REQUIRED' });
    const res = await transferOut(s.agent, s.c, 2_500);
    expect(res.body.status).toBe('PENDING_APPROVAL');
    const approved = await s.p.api.post(`/agents/${s.agent.id}/actions/${res.body.id}/approve`);
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({ status: 'APPROVED', transaction: { type: 'OUTGOING', agentId: s.agent.id } });
    expect((await tx(s.p.api, approved.body.transaction.id)).agentId).toBe(s.agent.id);
    await advance(s.p, 1);
    await expectLedgerClean(srv, s.p.id);
  });
});
