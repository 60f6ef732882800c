/**
 * Incoming-payment approval decided by the receiver's answer to INCOMING_PAYMENT.PENDING, over real
 * HTTP to a real receiver: 200 approves (receiverCustomerInfo kept), 202 defers to the approve and
 * reject API (or the 5-second timeout), 403 rejects with the body's reason, 422 rejects as more
 * information required, anything else fails the payment with PAYMENT_APPROVAL_WEBHOOK_ERROR and is
 * not retried. Each outcome is checked on the transaction, the balance, the events and the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advance, balances, eventsFor, expectLedgerClean, platformExternal, tx, type Wire } from '../helpers/payments.ts';
import { startReceiver, waitFor, type Receiver, type Reply } from '../helpers/receiver.ts';
import { uniqueId } from '../helpers/random.ts';

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
  customerId: string;
  account: string;
}

/**
 * A platform whose endpoint is a fresh receiver (its TEST event delivered), with a customer holding
 * a USD account. `answer` is the receiver's reply to INCOMING_PAYMENT.PENDING; everything else gets 200.
 */
async function setup(answer: (x: Wire) => Reply): Promise<Setup> {
  const r = await startReceiver();
  receivers.push(r);
  r.respond = (x) => (x.body?.type === 'INCOMING_PAYMENT.PENDING' ? answer(x) : { status: 200, body: 'ok' });
  const p = await srv.newPlatform();
  expect((await p.api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
  await waitFor(() => r.received.some((x) => x.body?.type === 'TEST'));
  const c = await p.api.post('/customers', {
    customerType: 'INDIVIDUAL',
    platformCustomerId: uniqueId('pc'),
    fullName: 'Jane Smith',
    birthDate: '1990-01-15',
    nationality: 'US',
    address: { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
  });
  expect(c.status).toBe(201);
  const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: c.body.id, currency: 'USD' } });
  return { p, r, customerId: c.body.id as string, account: accounts.body.data[0].id as string };
}

async function receive(s: Setup, amount: number): Promise<Wire> {
  const res = await s.p.api.post('/sandbox/uma/receive', {
    senderUmaAddress: '$success.usd@sandbox.uma.money',
    customerId: s.customerId,
    receivingCurrencyCode: 'USD',
    receivingCurrencyAmount: amount,
  });
  expect(res.status).toBe(200);
  expect(res.body.status).toBe('PENDING');
  return res.body;
}

/** The INCOMING_PAYMENT.PENDING event of a transaction, once its attempt is recorded. */
async function approvalRequest(txId: string) {
  return waitFor(async () => {
    const e = await srv.app.ctx.db
      .selectFrom('outbox_events')
      .selectAll()
      .where('resource_id', '=', txId)
      .where('type', '=', 'INCOMING_PAYMENT.PENDING')
      .executeTakeFirst();
    return e && (e.status === 'DELIVERED' || e.status === 'FAILED') ? e : undefined;
  });
}

async function extraOf(txId: string): Promise<Record<string, unknown>> {
  const row = await srv.app.ctx.db.selectFrom('transactions').select('extra').where('id', '=', txId).executeTakeFirstOrThrow();
  return JSON.parse(row.extra ?? '{}') as Record<string, unknown>;
}

describe('INCOMING_PAYMENT.PENDING: the answer decides', () => {
  it('200 approves: COMPLETED, credited, receiverCustomerInfo kept, in the transaction that logs the attempt', async () => {
    const s = await setup(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ receiverCustomerInfo: { FULL_NAME: 'Jane Smith', BIRTH_DATE: '1990-01-15' } }),
    }));
    const t = await receive(s, 2_500);
    const ev = await approvalRequest(t.id);
    // Decided by the time the attempt is recorded (same database transaction), with no waiting.
    expect(await tx(s.p.api, t.id)).toMatchObject({ status: 'COMPLETED', receivedAmount: { amount: 2_500 } });
    expect(ev).toMatchObject({ status: 'DELIVERED', attempts: 1 });
    expect(await balances(s.p, s.account)).toEqual({ balance: 2_500, total: 2_500 });
    expect((await extraOf(t.id)).receiverCustomerInfo).toEqual({ FULL_NAME: 'Jane Smith', BIRTH_DATE: '1990-01-15' });
    expect(await eventsFor(srv, t.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.COMPLETED']);
    // The approval request carried the pending transaction; COMPLETED follows it to the receiver.
    const sent = await waitFor(() => {
      const got = s.r.received.filter((x) => x.body?.data?.id === t.id).map((x) => x.body.type as string);
      return got.length === 2 ? got : undefined;
    });
    expect(sent).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.COMPLETED']);
    expect(s.r.received.find((x) => x.body?.type === 'INCOMING_PAYMENT.PENDING')!.body.data.status).toBe('PENDING');
    // Too late for the API now; the timeout changes nothing either.
    expectError(await s.p.api.post(`/transactions/${t.id}/reject`), 409, 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');
    await advance(s.p, 10);
    expect((await tx(s.p.api, t.id)).status).toBe('COMPLETED');
    await expectLedgerClean(srv, s.p.id);
  });

  it('200 with an empty or non-JSON body approves too', async () => {
    const s = await setup((x) => ({ status: 200, body: x.body.data.receivedAmount.amount === 100 ? '' : 'thanks' }));
    const a = await receive(s, 100);
    const b = await receive(s, 200);
    await approvalRequest(a.id);
    await approvalRequest(b.id);
    expect((await tx(s.p.api, a.id)).status).toBe('COMPLETED');
    expect((await tx(s.p.api, b.id)).status).toBe('COMPLETED');
    expect((await extraOf(a.id)).receiverCustomerInfo).toBeUndefined();
    expect(await balances(s.p, s.account)).toEqual({ balance: 300, total: 300 });
    await expectLedgerClean(srv, s.p.id);
  });

  it('202 then POST /transactions/{id}/approve: COMPLETED with the API-given info', async () => {
    const s = await setup(() => ({ status: 202 }));
    const t = await receive(s, 1_000);
    expect(await approvalRequest(t.id)).toMatchObject({ status: 'DELIVERED', attempts: 1 });
    expect((await tx(s.p.api, t.id)).status).toBe('PENDING');
    expect(await balances(s.p, s.account)).toEqual({ balance: 0, total: 0 });
    const ok = await s.p.api.post(`/transactions/${t.id}/approve`, { receiverCustomerInfo: { FULL_NAME: 'Jane Smith' } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('COMPLETED');
    expect((await extraOf(t.id)).receiverCustomerInfo).toEqual({ FULL_NAME: 'Jane Smith' });
    expect(await balances(s.p, s.account)).toEqual({ balance: 1_000, total: 1_000 });
    await expectLedgerClean(srv, s.p.id);
  });

  it('202 then POST /transactions/{id}/reject: REJECTED with the reason', async () => {
    const s = await setup(() => ({ status: 202 }));
    const t = await receive(s, 1_000);
    await approvalRequest(t.id);
    const no = await s.p.api.post(`/transactions/${t.id}/reject`, { reason: 'RESTRICTED_JURISDICTION' });
    expect(no.body).toMatchObject({ status: 'REJECTED' });
    expect(no.body).not.toHaveProperty('failureReason');
    expect(await balances(s.p, s.account)).toEqual({ balance: 0, total: 0 });
    await expectLedgerClean(srv, s.p.id);
  });

  it('202 and no decision within 5 seconds: FAILED with PAYMENT_APPROVAL_TIMED_OUT', async () => {
    const s = await setup(() => ({ status: 202 }));
    const t = await receive(s, 4_000);
    await approvalRequest(t.id);
    await advance(s.p, 4);
    expect((await tx(s.p.api, t.id)).status).toBe('PENDING');
    await advance(s.p, 1);
    expect(await tx(s.p.api, t.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT' });
    expectError(await s.p.api.post(`/transactions/${t.id}/approve`), 409, 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');
    expect(await balances(s.p, s.account)).toEqual({ balance: 0, total: 0 });
    expect(await eventsFor(srv, t.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.FAILED']);
    await expectLedgerClean(srv, s.p.id);
  });

  it("403 rejects: REJECTED, the body's reason kept as the failure reason; without one, none", async () => {
    const s = await setup((x) =>
      x.body.data.receivedAmount.amount === 700
        ? {
            status: 403,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ code: 'FORBIDDEN', message: 'not here', details: {}, reason: 'RESTRICTED_JURISDICTION' }),
          }
        : { status: 403 },
    );
    const t = await receive(s, 700);
    expect(await approvalRequest(t.id)).toMatchObject({ status: 'DELIVERED', attempts: 1 });
    expect(await tx(s.p.api, t.id)).toMatchObject({ status: 'REJECTED' });
    expect(await tx(s.p.api, t.id)).not.toHaveProperty('failureReason');
    const bare = await receive(s, 800);
    await approvalRequest(bare.id);
    const got = await tx(s.p.api, bare.id);
    expect(got.status).toBe('REJECTED');
    expect(got.failureReason).toBeUndefined();
    expect(await balances(s.p, s.account)).toEqual({ balance: 0, total: 0 });
    expect(await eventsFor(srv, t.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.FAILED']);
    await advance(s.p, 10);
    expect((await tx(s.p.api, t.id)).status).toBe('REJECTED');
    await expectLedgerClean(srv, s.p.id);
  });

  it('422 rejects as more information required: MISSING_MANDATORY_PAYEE_DATA, requiredFields kept', async () => {
    const s = await setup(() => ({
      status: 422,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: 'UNPROCESSABLE', message: 'need more', requiredFields: ['TAX_ID', 'REGISTRATION_NUMBER'] }),
    }));
    const t = await receive(s, 900);
    expect(await approvalRequest(t.id)).toMatchObject({ status: 'DELIVERED', attempts: 1 });
    expect(await tx(s.p.api, t.id)).toMatchObject({ status: 'REJECTED', failureReason: 'MISSING_MANDATORY_PAYEE_DATA' });
    expect((await extraOf(t.id)).requiredFields).toEqual(['TAX_ID', 'REGISTRATION_NUMBER']);
    expect(await balances(s.p, s.account)).toEqual({ balance: 0, total: 0 });
    // The delivery log keeps the receiver's answer.
    const log = await s.p.api.get(`/webhooks/deliveries/${(await approvalRequest(t.id)).id}`);
    expect(log.body.attempts).toHaveLength(1);
    expect(log.body.attempts[0]).toMatchObject({ responseStatus: 422 });
    expect(JSON.parse(log.body.attempts[0].responseBody).requiredFields).toEqual(['TAX_ID', 'REGISTRATION_NUMBER']);
    await expectLedgerClean(srv, s.p.id);
  });

  it('500 fails the payment with PAYMENT_APPROVAL_WEBHOOK_ERROR; the request is not retried', async () => {
    const s = await setup(() => ({ status: 500, body: 'boom' }));
    const t = await receive(s, 600);
    const ev = await approvalRequest(t.id);
    expect(ev).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(await tx(s.p.api, t.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' });
    await advance(s.p, 3600);
    expect(s.r.received.filter((x) => x.body?.id === ev.id)).toHaveLength(1);
    expect(await tx(s.p.api, t.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' });
    expect(await balances(s.p, s.account)).toEqual({ balance: 0, total: 0 });
    expect(await eventsFor(srv, t.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.FAILED']);
    await expectLedgerClean(srv, s.p.id);
  });

  it('other answers (a redirect, 409, 204) and no answer at all are webhook errors too', async () => {
    const answers: Record<number, Reply> = {
      301: { status: 302, headers: { location: 'https://elsewhere.example/' } },
      302: { status: 409 },
      303: { status: 204 },
    };
    const s = await setup((x) => answers[x.body.data.receivedAmount.amount as number]!);
    for (const amount of [301, 302, 303]) {
      const t = await receive(s, amount);
      await approvalRequest(t.id);
      expect(await tx(s.p.api, t.id), `answer to ${amount}`).toMatchObject({
        status: 'FAILED',
        failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR',
      });
    }
    // Nothing listening on the endpoint any more.
    await s.r.close();
    const t = await receive(s, 400);
    const ev = await approvalRequest(t.id);
    expect(ev.status).toBe('FAILED');
    const [attempt] = await srv.app.ctx.db.selectFrom('webhook_attempts').selectAll().where('event_id', '=', ev.id).execute();
    expect(attempt!.response_status).toBeNull();
    expect(attempt!.error).toMatch(/ECONNREFUSED/);
    expect(await tx(s.p.api, t.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' });
    expect(await balances(s.p, s.account)).toEqual({ balance: 0, total: 0 });
    await expectLedgerClean(srv, s.p.id);
  });

  it('a bank-rail INCOMING_PAYMENT.PENDING is informational: a 403 changes nothing', async () => {
    const s = await setup(() => ({ status: 403 }));
    const ext = await platformExternal(s.p, '001');
    const res = await s.p.api.post('/transfer-in', { source: { accountId: ext }, destination: { accountId: s.account }, amount: 300 });
    expect(res.status).toBe(201);
    await approvalRequest(res.body.id);
    await advance(s.p, 1);
    expect((await tx(s.p.api, res.body.id)).status).toBe('COMPLETED');
    expect(await balances(s.p, s.account)).toEqual({ balance: 300, total: 300 });
    await expectLedgerClean(srv, s.p.id);
  });
});
