import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advance,
  balances,
  eurAccountInfo,
  eventsFor,
  expectLedgerClean,
  fund,
  platformExternal,
  platformUsdAccount,
  tx,
  type Wire,
} from '../helpers/payments.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

async function setup(funded = 1_000_000): Promise<{ p: PlatformHandle; account: string }> {
  const p = await srv.newPlatform();
  const account = await platformUsdAccount(p);
  if (funded > 0) await fund(p, account, funded);
  return { p, account };
}

const quoteBody = (account: string, dest: string, amount: number, extra: Record<string, unknown> = {}) => ({
  source: { sourceType: 'ACCOUNT', accountId: account },
  destination: { destinationType: 'ACCOUNT', accountId: dest },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: amount,
  description: 'test payment',
  ...extra,
});

describe('quotes: review flow and immediate execution', () => {
  it('creates a locked quote, reads it, executes it, and completes it', async () => {
    const { p, account } = await setup();
    const dest = await platformExternal(p, '001', 'EUR', eurAccountInfo());
    const created = await p.api.post('/quotes', quoteBody(account, dest, 10_000));
    expect(created.status).toBe(201);
    const q = created.body;
    expect(q).toMatchObject({
      status: 'PENDING',
      totalSendingAmount: 10_000,
      feesIncluded: 0,
      sendingCurrency: { code: 'USD' },
      receivingCurrency: { code: 'EUR' },
    });
    expect(q.id).toMatch(/^Quote:/);
    expect(q.transactionId).toMatch(/^Transaction:/);
    expect(Date.parse(q.expiresAt) - Date.parse(q.createdAt)).toBe(300_000);
    // Amounts agree with the rate (receiving smallest units per sending smallest unit).
    expect(q.totalReceivingAmount).toBe(Math.floor(10_000 * q.exchangeRate + 1e-9));
    expect((await p.api.get(`/quotes/${q.id}`)).body).toEqual(q);
    expect(await balances(p, account)).toEqual({ balance: 1_000_000, total: 1_000_000 });

    const executed = await p.api.post(`/quotes/${q.id}/execute`);
    expect(executed.status).toBe(200);
    expect(executed.body).toMatchObject({ id: q.id, status: 'PROCESSING', transactionId: q.transactionId });
    expect((await balances(p, account)).balance).toBe(990_000);
    expectError(await p.api.post(`/quotes/${q.id}/execute`), 409, 'CONFLICT');
    await advance(p, 1);
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('COMPLETED');
    const t = await tx(p.api, q.transactionId);
    expect(t).toMatchObject({
      status: 'COMPLETED',
      type: 'OUTGOING',
      quoteId: q.id,
      sentAmount: { amount: 10_000 },
      receivedAmount: { amount: q.totalReceivingAmount },
      description: 'test payment',
    });
    expect(await balances(p, account)).toEqual({ balance: 990_000, total: 990_000 });
    expect(await eventsFor(srv, q.transactionId)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
    await expectLedgerClean(srv, p.id);
  });

  it('immediatelyExecute debits in the same request and returns PROCESSING with the transaction', async () => {
    const { p, account } = await setup();
    const dest = await platformExternal(p, '001');
    const res = await p.api.post('/quotes', quoteBody(account, dest, 2_000, { immediatelyExecute: true }));
    expect(res.status).toBe(201);
    expect(res.body.status).toBe('PROCESSING');
    expect((await balances(p, account)).balance).toBe(998_000);
    await advance(p, 1);
    expect((await tx(p.api, res.body.transactionId)).status).toBe('COMPLETED');
    await expectLedgerClean(srv, p.id);
  });

  it('charges the platform fee on cross-currency quotes into the platform account', async () => {
    const { p, account } = await setup();
    const cfg = await p.api.patch('/config', {
      feeConfigs: [
        { feeType: 'CROSS_CURRENCY_TRANSACTION', sourceCurrency: 'USD', variableFeeBps: 100, fixedFee: { amount: 50, currency: 'USD' } },
      ],
    });
    expect(cfg.status).toBe(200);
    const dest = await platformExternal(p, '001', 'EUR', eurAccountInfo());
    const q = (await p.api.post('/quotes', quoteBody(account, dest, 10_000, { immediatelyExecute: true }))).body;
    expect(q.feesIncluded).toBe(150);
    expect(q.platformFeesIncluded).toBe(150);
    expect(q.totalReceivingAmount).toBe(Math.floor(9_850 * q.exchangeRate + 1e-9));
    await advance(p, 1);
    // The platform paid 10,000 from its own account and earned the 150 fee back into it.
    expect(await balances(p, account)).toEqual({ balance: 990_150, total: 990_150 });
    // Same-currency quotes carry no cross-currency fee.
    const usd = await platformExternal(p, '001');
    const same = (await p.api.post('/quotes', quoteBody(account, usd, 10_000))).body;
    expect(same.feesIncluded).toBe(0);
    expect(same.totalReceivingAmount).toBe(10_000);
    await expectLedgerClean(srv, p.id);
  });

  it('a RECEIVING-locked quote delivers at least the locked amount for the least sending amount', async () => {
    const { p, account } = await setup();
    await p.api.patch('/config', {
      feeConfigs: [
        { feeType: 'CROSS_CURRENCY_TRANSACTION', sourceCurrency: 'USD', variableFeeBps: 30, fixedFee: { amount: 25, currency: 'USD' } },
      ],
    });
    const dest = await platformExternal(p, '001', 'EUR', eurAccountInfo());
    const q = (await p.api.post('/quotes', quoteBody(account, dest, 9_200, { lockedCurrencySide: 'RECEIVING' }))).body;
    expect(q.totalReceivingAmount).toBe(9_200);
    const net = (t: number) => t - (25 + Math.floor((t * 30 + 5_000) / 10_000));
    expect(Math.floor(net(q.totalSendingAmount) * q.exchangeRate + 1e-9)).toBeGreaterThanOrEqual(9_200);
    expect(Math.floor(net(q.totalSendingAmount - 1) * q.exchangeRate + 1e-9)).toBeLessThan(9_200);
  });
});

describe('quotes: sandbox outcomes by destination suffix', () => {
  const rows: [string, string, (p: PlatformHandle, q: Wire) => Promise<void>][] = [
    [
      '002',
      'execution fails; refunded',
      async (p, q) => {
        await advance(p, 1);
        expect(await tx(p.api, q.transactionId)).toMatchObject({
          status: 'FAILED',
          failureReason: 'QUOTE_EXECUTION_FAILED',
          refund: { status: 'COMPLETED' },
        });
      },
    ],
    [
      '003',
      'completes after about 6 minutes',
      async (p, q) => {
        await advance(p, 359);
        expect((await tx(p.api, q.transactionId)).status).toBe('PROCESSING');
        await advance(p, 1);
        expect((await tx(p.api, q.transactionId)).status).toBe('COMPLETED');
      },
    ],
    [
      '004',
      'counterparty delivery fails; refunded',
      async (p, q) => {
        await advance(p, 1);
        expect(await tx(p.api, q.transactionId)).toMatchObject({
          status: 'FAILED',
          failureReason: 'ACCOUNT_CANNOT_RECEIVE',
          refund: { status: 'COMPLETED' },
        });
      },
    ],
    [
      '005',
      'completes, then is returned; refunded once',
      async (p, q) => {
        await advance(p, 1);
        expect((await tx(p.api, q.transactionId)).status).toBe('COMPLETED');
        await advance(p, 60);
        expect(await tx(p.api, q.transactionId)).toMatchObject({
          status: 'FAILED',
          failureReason: 'PAYOUT_RETURNED',
          refund: { status: 'COMPLETED' },
        });
        expect(await eventsFor(srv, q.transactionId)).toEqual([
          'OUTGOING_PAYMENT.PENDING',
          'OUTGOING_PAYMENT.PROCESSING',
          'OUTGOING_PAYMENT.COMPLETED',
          'OUTGOING_PAYMENT.FAILED',
          'OUTGOING_PAYMENT.REFUND_PENDING',
          'OUTGOING_PAYMENT.REFUND_COMPLETED',
        ]);
      },
    ],
    [
      '006',
      'user cancellation; refunded',
      async (p, q) => {
        await advance(p, 1);
        expect(await tx(p.api, q.transactionId)).toMatchObject({
          status: 'FAILED',
          refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' },
        });
      },
    ],
    [
      '007',
      'payout and refund both fail; nothing comes back',
      async (p, q) => {
        await advance(p, 1);
        expect(await tx(p.api, q.transactionId)).toMatchObject({ status: 'FAILED', refund: { status: 'FAILED' } });
        expect(await eventsFor(srv, q.transactionId)).toContain('OUTGOING_PAYMENT.REFUND_FAILED');
      },
    ],
  ];
  const failedRefunded = [
    'OUTGOING_PAYMENT.PENDING',
    'OUTGOING_PAYMENT.PROCESSING',
    'OUTGOING_PAYMENT.FAILED',
    'OUTGOING_PAYMENT.REFUND_PENDING',
    'OUTGOING_PAYMENT.REFUND_COMPLETED',
  ];
  const expectedEvents: Record<string, string[]> = {
    '001': ['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.COMPLETED'],
    '002': failedRefunded,
    '003': ['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.COMPLETED'],
    '004': failedRefunded,
    '005': [...['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.PROCESSING', 'OUTGOING_PAYMENT.COMPLETED'], ...failedRefunded.slice(2)],
    '006': failedRefunded,
    '007': [
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_FAILED',
    ],
  };
  rows.push([
    '001',
    'any other suffix succeeds',
    async (p, q) => {
      await advance(p, 1);
      expect(await tx(p.api, q.transactionId)).toMatchObject({ status: 'COMPLETED' });
      expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('COMPLETED');
    },
  ]);
  for (const [suffix, what, check] of rows) {
    it(`suffix ${suffix}: ${what}`, async () => {
      const { p, account } = await setup(100_000);
      const dest = await platformExternal(p, suffix);
      const q = (await p.api.post('/quotes', quoteBody(account, dest, 10_000, { immediatelyExecute: true }))).body;
      expect(q.status).toBe('PROCESSING');
      await check(p, q);
      const refunded = ['002', '004', '005', '006'].includes(suffix);
      const expected = refunded ? 100_000 : 90_000;
      expect(await balances(p, account)).toEqual({ balance: expected, total: expected });
      await advance(p, 3600); // nothing later changes the outcome or refunds twice
      expect(await balances(p, account)).toEqual({ balance: expected, total: expected });
      expect(await eventsFor(srv, q.transactionId)).toEqual(expectedEvents[suffix]);
      // Every balance change of the source was announced.
      const accountEvents = await eventsFor(srv, account);
      expect(accountEvents.length).toBeGreaterThanOrEqual(refunded ? 3 : 2);
      expect(new Set(accountEvents)).toEqual(new Set(['INTERNAL_ACCOUNT.BALANCE_UPDATED']));
      await expectLedgerClean(srv, p.id);
    });
  }
});

describe('quotes: UMA destinations', () => {
  for (const [address, cur] of [
    ['$success.usd', 'USD'],
    ['$success.eur', 'EUR'],
    ['$success.mxn', 'MXN'],
  ] as const) {
    it(`${address} succeeds in ${cur}`, async () => {
      const { p, account } = await setup();
      const res = await p.api.post('/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: account },
        destination: { destinationType: 'UMA_ADDRESS', umaAddress: `${address}@sandbox.uma.money` },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 5_000,
        immediatelyExecute: true,
      });
      expect(res.status).toBe(201);
      expect(res.body.receivingCurrency.code).toBe(cur);
      await advance(p, 1);
      expect((await tx(p.api, res.body.transactionId)).status).toBe('COMPLETED');
      await expectLedgerClean(srv, p.id);
    });
  }

  it('$pending.long.usd stays in flight for a long time, then completes', async () => {
    const { p, account } = await setup();
    const res = await p.api.post('/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: account },
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$pending.long.usd@sandbox.uma.money' },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 5_000,
      immediatelyExecute: true,
    });
    await advance(p, 1800);
    expect((await tx(p.api, res.body.transactionId)).status).toBe('PROCESSING');
    await advance(p, 1800);
    expect((await tx(p.api, res.body.transactionId)).status).toBe('COMPLETED');
  });

  it('$fail.compliance.usd fails the compliance check and refunds', async () => {
    const { p, account } = await setup(10_000);
    const res = await p.api.post('/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: account },
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$fail.compliance.usd@sandbox.uma.money' },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 5_000,
      immediatelyExecute: true,
    });
    await advance(p, 1);
    expect(await tx(p.api, res.body.transactionId)).toMatchObject({ status: 'FAILED', failureReason: 'COMPLIANCE_REJECTED' });
    expect(await balances(p, account)).toEqual({ balance: 10_000, total: 10_000 });
    await expectLedgerClean(srv, p.id);
  });

  it('unknown receivers are 404 UMA_NOT_FOUND and malformed ones 400 INVALID_UMA_ADDRESS', async () => {
    const { p, account } = await setup();
    const base = { source: { sourceType: 'ACCOUNT', accountId: account }, lockedCurrencySide: 'SENDING', lockedCurrencyAmount: 5_000 };
    expectError(
      await p.api.post('/quotes', {
        ...base,
        destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$non.existent.usd@sandbox.uma.money' },
      }),
      404,
      'UMA_NOT_FOUND',
    );
    expectError(
      await p.api.post('/quotes', { ...base, destination: { destinationType: 'UMA_ADDRESS', umaAddress: 'not-an-address' } }),
      400,
      'INVALID_UMA_ADDRESS',
    );
    expectError(
      await p.api.post('/quotes', {
        ...base,
        destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$success.usd@sandbox.uma.money', currency: 'EUR' },
      }),
      400,
      'INVALID_CURRENCY',
    );
  });
});

describe('quotes: refusals, expiry, idempotency, real-time funding', () => {
  it('refuses to execute without funds (400) and moves nothing', async () => {
    const { p, account } = await setup(999);
    const dest = await platformExternal(p, '001');
    const q = (await p.api.post('/quotes', quoteBody(account, dest, 1_000))).body;
    const res = expectError(await p.api.post(`/quotes/${q.id}/execute`), 400, 'INVALID_AMOUNT');
    expect(res.body.details.reason).toBe('INSUFFICIENT_FUNDS');
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('PENDING');
    expect(await balances(p, account)).toEqual({ balance: 999, total: 999 });
    expectError(await p.api.post('/quotes', quoteBody(account, dest, 1_000, { immediatelyExecute: true })), 400, 'INVALID_AMOUNT');
    await expectLedgerClean(srv, p.id);
  });

  it('expires a locked quote after 5 minutes: execute is 409 and the transaction EXPIRED', async () => {
    const { p, account } = await setup();
    const dest = await platformExternal(p, '001');
    const q = (await p.api.post('/quotes', quoteBody(account, dest, 1_000))).body;
    await advance(p, 301);
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('EXPIRED');
    expectError(await p.api.post(`/quotes/${q.id}/execute`), 409, 'CONFLICT');
    expect(await tx(p.api, q.transactionId)).toMatchObject({ status: 'EXPIRED', failureReason: 'QUOTE_EXPIRED' });
    expect(await eventsFor(srv, q.transactionId)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.EXPIRED']);
  });

  it('replays create and execute with Idempotency-Key', async () => {
    const { p, account } = await setup();
    const dest = await platformExternal(p, '001');
    const body = quoteBody(account, dest, 1_000);
    const a = await p.api.post('/quotes', body, { headers: { 'Idempotency-Key': 'q-1' } });
    const b = await p.api.post('/quotes', body, { headers: { 'Idempotency-Key': 'q-1' } });
    expect(b.headers.get('idempotency-hit')).toBe('true');
    expect(b.body.id).toBe(a.body.id);
    const e1 = await p.api.post(`/quotes/${a.body.id}/execute`, undefined, { headers: { 'Idempotency-Key': 'e-1' } });
    const e2 = await p.api.post(`/quotes/${a.body.id}/execute`, undefined, { headers: { 'Idempotency-Key': 'e-1' } });
    expect(e1.status).toBe(200);
    expect(e2.status).toBe(200);
    expect(e2.headers.get('idempotency-hit')).toBe('true');
    expect((await balances(p, account)).balance).toBe(999_000);
  });

  it('rejects bad input with field paths, unknown ids, and missing permission', async () => {
    const { p, account } = await setup();
    const dest = await platformExternal(p, '001');
    const r1 = expectError(
      await p.api.post('/quotes', { ...quoteBody(account, dest, 1), lockedCurrencySide: 'BOTH' }),
      400,
      'INVALID_INPUT',
    );
    expect(r1.body.details.errors.map((e: Wire) => e.field)).toContain('lockedCurrencySide');
    const r2 = expectError(
      await p.api.post('/quotes', { ...quoteBody(account, dest, 1), source: { sourceType: 'ACCOUNT', accountId: account, bogus: true } }),
      400,
      'INVALID_INPUT',
    );
    expect(r2.body.details.errors.map((e: Wire) => e.field)).toContain('source.bogus');
    const r3 = expectError(
      await p.api.post('/quotes', {
        destination: { destinationType: 'ACCOUNT', accountId: dest },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 1,
      }),
      400,
      'INVALID_INPUT',
    );
    expect(r3.body.details.errors.map((e: Wire) => e.field)).toContain('source');
    expectError(await p.api.post('/quotes', quoteBody(account, dest, 0)), 400, 'INVALID_INPUT');
    expectError(await p.api.post('/quotes', quoteBody(account, 'ExternalAccount:nope', 100)), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get('/quotes/Quote:nope'), 404, 'QUOTE_NOT_FOUND');
    expectError(await p.api.post('/quotes/Quote:nope/execute'), 404, 'QUOTE_NOT_FOUND');
    const other = await srv.newPlatform();
    const q = (await p.api.post('/quotes', quoteBody(account, dest, 100))).body;
    expectError(await other.api.get(`/quotes/${q.id}`), 404, 'QUOTE_NOT_FOUND');
    expectError(await other.api.post(`/quotes/${q.id}/execute`), 404, 'QUOTE_NOT_FOUND');
    const view = await p.api.post('/tokens', { name: 'view', permissions: ['VIEW'] });
    const viewer = p.api.with({ basic: { id: view.body.clientId, secret: view.body.clientSecret } });
    expectError(await viewer.post('/quotes', quoteBody(account, dest, 100)), 403, 'FORBIDDEN');
    expectError(await viewer.post(`/quotes/${q.id}/execute`), 403, 'FORBIDDEN');
    // Outside the platform's per-transaction bounds.
    expectError(await p.api.post('/quotes', quoteBody(account, dest, 100_000_001)), 400, 'AMOUNT_OUT_OF_RANGE');
  });

  it('pulls from a US bank account as the source; other external accounts cannot be pulled from', async () => {
    const { p } = await setup(0);
    const pullFrom = await platformExternal(p, '001');
    const dest = await platformExternal(p, '001', 'EUR', eurAccountInfo());
    const q = (
      await p.api.post('/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: pullFrom },
        destination: { destinationType: 'ACCOUNT', accountId: dest },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 4_000,
        immediatelyExecute: true,
      })
    ).body;
    expect(q.status).toBe('PROCESSING');
    await advance(p, 1);
    expect(await tx(p.api, q.transactionId)).toMatchObject({ status: 'COMPLETED', source: { sourceType: 'ACCOUNT', accountId: pullFrom } });
    const r = expectError(
      await p.api.post('/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: dest },
        destination: { destinationType: 'ACCOUNT', accountId: pullFrom },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 100,
      }),
      400,
      'INVALID_INPUT',
    );
    expect(r.body.details.errors[0].field).toBe('source.accountId');
    await expectLedgerClean(srv, p.id);
  });

  it('an embedded-wallet source needs a wallet signature: no immediate execution, execute without one is a 202 challenge', async () => {
    const { p } = await setup(0);
    const usd = {
      minAmount: 1,
      maxAmount: 100_000_000_000,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
    };
    expect(
      (
        await p.api.patch('/config', {
          supportedCurrencies: [
            { currencyCode: 'USD', ...usd },
            { currencyCode: 'USDB', ...usd },
          ],
        })
      ).status,
    ).toBe(200);
    const customer = (
      await p.api.post('/customers', {
        customerType: 'INDIVIDUAL',
        platformCustomerId: 'wallet-1',
        fullName: 'Wally Wallet',
        birthDate: '1990-01-15',
        nationality: 'US',
      })
    ).body;
    const wallet = (await p.api.get('/customers/internal-accounts', { query: { customerId: customer.id, type: 'EMBEDDED_WALLET' } })).body
      .data[0];
    expect(wallet.type).toBe('EMBEDDED_WALLET');
    await fund(p, wallet.id, 5_000_000);
    const dest = await platformExternal(p, '', 'USDB', {
      accountType: 'LAYER2_WALLET',
      address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu',
    });
    const body = {
      source: { sourceType: 'ACCOUNT', accountId: wallet.id },
      destination: { destinationType: 'ACCOUNT', accountId: dest },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000_000,
    };
    expectError(await p.api.post('/quotes', { ...body, immediatelyExecute: true }), 400, 'INVALID_INPUT');
    const q = (await p.api.post('/quotes', body)).body;
    expect(q.paymentInstructions[0].accountOrWalletInfo.accountType).toBe('EMBEDDED_WALLET');
    expect(typeof q.paymentInstructions[0].accountOrWalletInfo.payloadToSign).toBe('string');
    // The signed retry that follows is covered in test/auth/execute.test.ts.
    const challenge = await p.api.post(`/quotes/${q.id}/execute`);
    expect(challenge.status, challenge.text).toBe(202);
    expect(challenge.body.requestId).toMatch(/^Request:/);
    expectError(
      await p.api.post(`/quotes/${q.id}/execute`, undefined, { headers: { 'Service-Wallet-Signature': 'eyJub3QiOiJ2YWxpZCJ9' } }),
      401,
      'WALLET_SIGNATURE_MALFORMED',
    );
    expect((await p.api.get(`/quotes/${q.id}`)).body.status).toBe('PENDING');
    expect((await balances(p, wallet.id)).balance).toBe(5_000_000);
  });

  it('a real-time funded quote carries instructions and executes when /sandbox/send pays them', async () => {
    const { p } = await setup(0);
    const dest = await platformExternal(p, '001', 'EUR', eurAccountInfo());
    const res = await p.api.post('/quotes', {
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD' },
      destination: { destinationType: 'ACCOUNT', accountId: dest },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 3_000,
    });
    expect(res.status).toBe(201);
    const q = res.body;
    expect(q.paymentInstructions[0].accountOrWalletInfo).toMatchObject({ accountType: 'US_ACCOUNT' });
    expect(q.paymentInstructions[0].accountOrWalletInfo.reference).toBeTruthy();
    expectError(await p.api.post(`/quotes/${q.id}/execute`), 400, 'INVALID_INPUT');
    expectError(await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'EUR' }), 400, 'INVALID_CURRENCY');
    const sent = await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'USD' });
    expect(sent.status).toBe(200);
    expect(sent.body).toMatchObject({ id: q.transactionId, status: 'PROCESSING', source: { sourceType: 'REALTIME_FUNDING' } });
    await advance(p, 1);
    expect((await tx(p.api, q.transactionId)).status).toBe('COMPLETED');
    expectError(await p.api.post('/sandbox/send', { quoteId: q.id, currencyCode: 'USD' }), 409, 'CONFLICT');
    await expectLedgerClean(srv, p.id);
  });
});
