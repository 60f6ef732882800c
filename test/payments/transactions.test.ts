import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { startReceiver } from '../helpers/receiver.ts';
import {
  advance,
  balances,
  eventsFor,
  expectLedgerClean,
  fund,
  platformExternal,
  platformUsdAccount,
  tx,
  type Wire,
} from '../helpers/payments.ts';
import { uniqueId } from '../helpers/random.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

async function customerWithUsd(p: PlatformHandle, name = 'Jane Smith'): Promise<{ customer: Wire; account: string }> {
  const res = await p.api.post('/customers', {
    customerType: 'INDIVIDUAL',
    platformCustomerId: uniqueId('pc'),
    fullName: name,
    birthDate: '1990-01-15',
    nationality: 'US',
    address: { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
  });
  if (res.status !== 201) throw new Error(`customer: ${res.status} ${res.text}`);
  const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: res.body.id, currency: 'USD' } });
  return { customer: res.body, account: accounts.body.data[0].id };
}

describe('GET /transactions', () => {
  it('lists with filters, both sort orders and cursor pagination', async () => {
    const p = await srv.newPlatform();
    const platformAcct = await platformUsdAccount(p);
    await fund(p, platformAcct, 100_000);
    const { customer, account } = await customerWithUsd(p);
    await fund(p, account, 50_000);
    const ext1 = await platformExternal(p, '001');
    const ext2 = await platformExternal(p, '005');
    const a = (await p.api.post('/transfer-out', { source: { accountId: platformAcct }, destination: { accountId: ext1 }, amount: 100 }))
      .body;
    const b = (await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext2 }, amount: 200 })).body;
    const c = (await p.api.post('/transfer-in', { source: { accountId: ext1 }, destination: { accountId: account }, amount: 300 })).body;
    await advance(p, 1);

    const all = await p.api.get('/transactions');
    expect(all.status).toBe(200);
    expect(all.body.totalCount).toBe(3);
    expect(all.body.data.map((t: Wire) => t.id)).toEqual([c.id, b.id, a.id]);
    const asc = await p.api.get('/transactions', { query: { sortOrder: 'asc' } });
    expect(asc.body.data.map((t: Wire) => t.id)).toEqual([a.id, b.id, c.id]);

    const byCustomer = await p.api.get('/transactions', { query: { customerId: customer.id } });
    expect(byCustomer.body.data.map((t: Wire) => t.id).sort()).toEqual([b.id, c.id].sort());
    const platformOwn = await p.api.get('/transactions', { query: { customerId: p.id } });
    expect(platformOwn.body.data.map((t: Wire) => t.id)).toEqual([a.id]);
    expect((await p.api.get('/transactions', { query: { platformCustomerId: customer.platformCustomerId } })).body.totalCount).toBe(2);
    expect((await p.api.get('/transactions', { query: { type: 'INCOMING' } })).body.data.map((t: Wire) => t.id)).toEqual([c.id]);
    expect((await p.api.get('/transactions', { query: { status: 'PENDING' } })).body.data.map((t: Wire) => t.id)).toEqual([b.id]);
    expect((await p.api.get('/transactions', { query: { accountIdentifier: ext1 } })).body.totalCount).toBe(2);
    expect((await p.api.get('/transactions', { query: { senderAccountIdentifier: ext1 } })).body.data.map((t: Wire) => t.id)).toEqual([
      c.id,
    ]);
    expect((await p.api.get('/transactions', { query: { receiverAccountIdentifier: ext2 } })).body.data.map((t: Wire) => t.id)).toEqual([
      b.id,
    ]);
    expect(
      (await p.api.get('/transactions', { query: { reference: a.reconciliationInstructions.reference } })).body.data.map((t: Wire) => t.id),
    ).toEqual([a.id]);
    expect(
      (await p.api.get('/transactions', { query: { startDate: b.createdAt, endDate: b.createdAt } })).body.data.map((t: Wire) => t.id),
    ).toEqual([b.id]);

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await p.api.get('/transactions', { query: { limit: 1, cursor } });
      seen.push(...page.body.data.map((t: Wire) => t.id));
      if (!page.body.hasMore) break;
      cursor = page.body.nextCursor;
    }
    expect(seen).toEqual([c.id, b.id, a.id]);

    expectError(await p.api.get('/transactions', { query: { status: 'DONE' } }), 400, 'INVALID_INPUT');
    expectError(await p.api.get('/transactions', { query: { limit: 101 } }), 400, 'INVALID_INPUT');
    expectError(await p.api.get('/transactions', { query: { nope: 1 } }), 400, 'INVALID_INPUT');
    expectError(await p.api.get('/transactions', { query: { cursor: 'garbage' } }), 400, 'INVALID_INPUT');
    // Another platform sees none of them.
    const other = await srv.newPlatform();
    expect((await other.api.get('/transactions')).body.totalCount).toBe(0);
    expectError(await other.api.get(`/transactions/${a.id}`), 404, 'TRANSACTION_NOT_FOUND');
    expectError(await srv.anon.get('/transactions'), 401, 'UNAUTHORIZED');
    await expectLedgerClean(srv, p.id);
  });

  it('confirms receipt delivery (and overwrites on a second call)', async () => {
    const p = await srv.newPlatform();
    const acct = await platformUsdAccount(p);
    await fund(p, acct, 1_000);
    const ext = await platformExternal(p, '001');
    const t = (await p.api.post('/transfer-out', { source: { accountId: acct }, destination: { accountId: ext }, amount: 100 })).body;
    const first = await p.api.post(`/transactions/${t.id}/confirm`, { receiptDeliveryConfirmedAt: '2026-01-01T00:00:00Z' });
    expect(first.status).toBe(200);
    expect(first.body.receiptDeliveryConfirmedAt).toBe('2026-01-01T00:00:00.000Z');
    const second = await p.api.post(`/transactions/${t.id}/confirm`);
    expect(second.status).toBe(200);
    expect(second.body.receiptDeliveryConfirmedAt).not.toBe('2026-01-01T00:00:00.000Z');
    expectError(await p.api.post(`/transactions/${t.id}/confirm`, { receiptDeliveryConfirmedAt: 'yesterday' }), 400, 'INVALID_INPUT');
  });
});

describe('incoming UMA payments (POST /sandbox/uma/receive)', () => {
  it('without a webhook endpoint the payment is approved and credited at once', async () => {
    const p = await srv.newPlatform();
    const { customer, account } = await customerWithUsd(p);
    const res = await p.api.post('/sandbox/uma/receive', {
      senderUmaAddress: '$success.usd@sandbox.uma.money',
      customerId: customer.id,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 2_500,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      type: 'INCOMING',
      status: 'COMPLETED',
      receivedAmount: { amount: 2_500 },
      source: { sourceType: 'UMA_ADDRESS' },
    });
    expect(await balances(p, account)).toEqual({ balance: 2_500, total: 2_500 });
    expect(await eventsFor(srv, res.body.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.COMPLETED']);
    // By UMA address as well.
    const byUma = await p.api.post('/sandbox/uma/receive', {
      senderUmaAddress: '$success.eur@sandbox.uma.money',
      receiverUmaAddress: customer.umaAddress,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 100,
    });
    expect(byUma.status).toBe(200);
    expect(byUma.body.sentAmount.currency.code).toBe('EUR');
    await expectLedgerClean(srv, p.id);
  });

  it('with a webhook endpoint it waits for approve or reject, and times out after 5 seconds', async () => {
    const p = await srv.newPlatform();
    // The receiver answers the approval request with 202: the decision comes from the API calls below.
    const hooks = await startReceiver();
    onTestFinished(() => hooks.close());
    hooks.respond = () => ({ status: 202 });
    await p.api.patch('/config', { webhookEndpoint: hooks.url });
    const { customer, account } = await customerWithUsd(p);
    const receive = (amount: number) =>
      p.api.post('/sandbox/uma/receive', {
        senderUmaAddress: '$success.usd@sandbox.uma.money',
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: amount,
      });

    const approved = (await receive(1_000)).body;
    expect(approved.status).toBe('PENDING');
    const ok = await p.api.post(`/transactions/${approved.id}/approve`, { receiverCustomerInfo: { FULL_NAME: 'Jane Smith' } });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('COMPLETED');
    expectError(await p.api.post(`/transactions/${approved.id}/approve`), 409, 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');

    const rejected = (await receive(2_000)).body;
    const no = await p.api.post(`/transactions/${rejected.id}/reject`, { reason: 'RESTRICTED_JURISDICTION' });
    expect(no.body).toMatchObject({ status: 'REJECTED' });
    expect(no.body).not.toHaveProperty('failureReason');

    const timedOut = (await receive(4_000)).body;
    await advance(p, 5);
    expect(await tx(p.api, timedOut.id)).toMatchObject({ status: 'FAILED', failureReason: 'PAYMENT_APPROVAL_TIMED_OUT' });
    expectError(await p.api.post(`/transactions/${timedOut.id}/reject`), 409, 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL');

    expect(await balances(p, account)).toEqual({ balance: 1_000, total: 1_000 });
    await expectLedgerClean(srv, p.id);
  });

  it("an amount past 2^53−1 or the platform's bounds is a 400 and credits nothing (hostile review, defect 8)", async () => {
    const p = await srv.newPlatform();
    const { customer, account } = await customerWithUsd(p);
    const receive = (sender: string, amount: number) =>
      p.api.post('/sandbox/uma/receive', {
        senderUmaAddress: `${sender}@sandbox.uma.money`,
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: amount,
      });
    for (const [sender, amount] of [
      ['$success.usd', Number.MAX_SAFE_INTEGER],
      ['$success.eur', Number.MAX_SAFE_INTEGER],
      ['$success.usd', 100_000_001],
    ] as const) {
      const res = expectError(await receive(sender, amount), 400, 'AMOUNT_OUT_OF_RANGE');
      expect(res.body.details.errors[0].field).toBe('receivingCurrencyAmount');
    }
    // The platform's own maximum (USD: 100,000,000 by default) and no more; every stored amount stays exact.
    const top = await receive('$success.eur', 100_000_000);
    expect(top.status, top.text).toBe(200);
    expect(Number.isSafeInteger(top.body.sentAmount.amount)).toBe(true);
    expect(await balances(p, account)).toEqual({ balance: 100_000_000, total: 100_000_000 });
    await p.api.patch('/config', {
      supportedCurrencies: [
        {
          currencyCode: 'USD',
          minAmount: 10,
          maxAmount: 5_000,
          requiredCounterpartyFields: [],
          enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
        },
      ],
    });
    expectError(await receive('$success.usd', 5_001), 400, 'AMOUNT_OUT_OF_RANGE');
    expectError(await receive('$success.usd', 9), 400, 'AMOUNT_OUT_OF_RANGE');
    expect((await receive('$success.usd', 5_000)).status).toBe(200);
    expect((await p.api.get('/transactions', { query: { customerId: customer.id } })).body.totalCount).toBe(2);
    await expectLedgerClean(srv, p.id);
  });

  it('a compliance failure from the sender credits nothing; unknown parties are 404', async () => {
    const p = await srv.newPlatform();
    const { customer, account } = await customerWithUsd(p);
    const res = await p.api.post('/sandbox/uma/receive', {
      senderUmaAddress: '$fail.compliance.usd@sandbox.uma.money',
      customerId: customer.id,
      receivingCurrencyCode: 'USD',
      receivingCurrencyAmount: 100,
    });
    expect(res.body).toMatchObject({ status: 'FAILED', failureReason: 'COMPLIANCE_REJECTED' });
    expect(await balances(p, account)).toEqual({ balance: 0, total: 0 });
    expectError(
      await p.api.post('/sandbox/uma/receive', {
        senderUmaAddress: '$nobody@sandbox.uma.money',
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 100,
      }),
      404,
      'UMA_NOT_FOUND',
    );
    expectError(
      await p.api.post('/sandbox/uma/receive', {
        senderUmaAddress: '$success.usd@sandbox.uma.money',
        customerId: 'Customer:nope',
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 100,
      }),
      404,
      'USER_NOT_FOUND',
    );
    expectError(
      await p.api.post('/sandbox/uma/receive', {
        senderUmaAddress: '$success.usd@sandbox.uma.money',
        customerId: customer.id,
        receivingCurrencyCode: 'EUR',
        receivingCurrencyAmount: 100,
      }),
      400,
      'INVALID_CURRENCY',
    );
    expectError(
      await p.api.post('/sandbox/uma/receive', {
        senderUmaAddress: '$success.usd@sandbox.uma.money',
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 100,
      }),
      400,
      'INVALID_INPUT',
    );
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    expectError(
      await prod.api.post('/sandbox/uma/receive', {
        senderUmaAddress: '$success.usd@sandbox.uma.money',
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 100,
      }),
      403,
      'FORBIDDEN',
    );
    expectError(await prod.api.post('/sandbox/send', { quoteId: 'Quote:x', currencyCode: 'USD' }), 403, 'FORBIDDEN');
  });
});
