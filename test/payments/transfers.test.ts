import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advance, balances, eventsFor, expectLedgerClean, fund, platformExternal, platformUsdAccount, tx } from '../helpers/payments.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

async function setup(funded = 10_000): Promise<{ p: PlatformHandle; account: string }> {
  const p = await srv.newPlatform();
  const account = await platformUsdAccount(p);
  if (funded > 0) await fund(p, account, funded);
  return { p, account };
}

describe('POST /transfer-out', () => {
  it('succeeds for an ordinary account: held at once, settled by the rail, ledger clean', async () => {
    const { p, account } = await setup();
    const ext = await platformExternal(p, '001');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 2_500 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: 'PENDING',
      type: 'OUTGOING',
      direction: 'DEBIT',
      sentAmount: { amount: 2_500 },
      paymentRail: 'ACH',
    });
    // Held at once; the rail may already have settled it (the job runner runs due work in the background).
    expect((await balances(p, account)).balance).toBe(7_500);
    await advance(p, 1);
    const done = await tx(p.api, res.body.id);
    expect(done.status).toBe('COMPLETED');
    expect(done.settledAt).toBeDefined();
    expect(await balances(p, account)).toEqual({ balance: 7_500, total: 7_500 });
    expect(await eventsFor(srv, res.body.id)).toEqual(['OUTGOING_PAYMENT.PENDING', 'OUTGOING_PAYMENT.COMPLETED']);
    await expectLedgerClean(srv, p.id);
  });

  for (const [suffix, reason] of [
    ['002', 'LIMIT_EXCEEDED'],
    ['003', 'ACCOUNT_INVALID'],
  ] as const) {
    it(`fails at once for suffix ${suffix} (201, FAILED, money back)`, async () => {
      const { p, account } = await setup();
      const ext = await platformExternal(p, suffix);
      const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 4_000 });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        status: 'FAILED',
        failureReason: reason,
        refund: { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' },
      });
      expect(await balances(p, account)).toEqual({ balance: 10_000, total: 10_000 });
      expect(await eventsFor(srv, res.body.id)).toEqual([
        'OUTGOING_PAYMENT.PENDING',
        'OUTGOING_PAYMENT.FAILED',
        'OUTGOING_PAYMENT.REFUND_PENDING',
        'OUTGOING_PAYMENT.REFUND_COMPLETED',
      ]);
      await expectLedgerClean(srv, p.id);
    });
  }

  it('suffix 004: the bank rejects after the request; held funds return once', async () => {
    const { p, account } = await setup();
    const ext = await platformExternal(p, '004');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 1_000 });
    expect(res.body.status).toBe('PENDING');
    // The rail's answer is due at once: the background runner may already have returned the hold.
    expect([9_000, 10_000]).toContain((await balances(p, account)).balance);
    await advance(p, 1);
    await advance(p, 1);
    expect(await tx(p.api, res.body.id)).toMatchObject({ status: 'FAILED', failureReason: 'ACCOUNT_CANNOT_RECEIVE' });
    expect(await balances(p, account)).toEqual({ balance: 10_000, total: 10_000 });
    // Held once, returned once.
    const entries = await srv.app.ctx.db
      .selectFrom('ledger_entries')
      .select('kind')
      .where('reference_id', '=', res.body.id)
      .orderBy('id')
      .execute();
    expect(entries.map((e) => e.kind)).toEqual(['PAYMENT_HOLD', 'PAYMENT_REFUND']);
    expect(await eventsFor(srv, res.body.id)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
    ]);
    await expectLedgerClean(srv, p.id);
  });

  it('suffix 005: pending about 30 seconds on the sandbox clock, then fails', async () => {
    const { p, account } = await setup();
    const ext = await platformExternal(p, '005');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 1_000 });
    await advance(p, 29);
    expect((await tx(p.api, res.body.id)).status).toBe('PENDING');
    expect(await balances(p, account)).toEqual({ balance: 9_000, total: 10_000 });
    await advance(p, 1);
    expect(await tx(p.api, res.body.id)).toMatchObject({ status: 'FAILED', failureReason: 'ACCOUNT_CANNOT_RECEIVE' });
    expect(await balances(p, account)).toEqual({ balance: 10_000, total: 10_000 });
    expect(await eventsFor(srv, res.body.id)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
    ]);
    await expectLedgerClean(srv, p.id);
  });

  it('a real shortfall is a 400 and nothing moves', async () => {
    const { p, account } = await setup(500);
    const ext = await platformExternal(p, '001');
    const res = expectError(
      await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 501 }),
      400,
      'INVALID_AMOUNT',
    );
    expect(res.body.details.reason).toBe('INSUFFICIENT_FUNDS');
    expect(await balances(p, account)).toEqual({ balance: 500, total: 500 });
    const list = await p.api.get('/transactions');
    expect(list.body.data).toHaveLength(0);
    await expectLedgerClean(srv, p.id);
  });

  it('without an amount moves the whole spendable balance', async () => {
    const { p, account } = await setup(1_234);
    const ext = await platformExternal(p, '001');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext } });
    expect(res.body.sentAmount.amount).toBe(1_234);
    await advance(p, 1);
    expect(await balances(p, account)).toEqual({ balance: 0, total: 0 });
  });

  it('refuses another currency, bad input and unknown or foreign accounts', async () => {
    const { p, account } = await setup();
    const eur = await platformExternal(p, '001', 'EUR', {
      accountType: 'EUR_ACCOUNT',
      iban: 'DE89370400440532013000',
      swiftCode: 'DEUTDEFF',
      beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Hans Müller', countryOfResidence: 'DE' },
    });
    expectError(
      await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: eur }, amount: 100 }),
      400,
      'INVALID_CURRENCY',
    );
    const bad = expectError(
      await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: eur }, amount: '100' }),
      400,
      'INVALID_INPUT',
    );
    expect(bad.body.details.errors[0].field).toBe('amount');
    expectError(
      await p.api.post('/transfer-out', { source: { accountId: account, extra: 1 }, destination: { accountId: eur }, amount: 1 }),
      400,
      'INVALID_INPUT',
    );
    expectError(
      await p.api.post('/transfer-out', { source: { accountId: 'InternalAccount:nope' }, destination: { accountId: eur }, amount: 1 }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    const other = await srv.newPlatform();
    const otherExt = await platformExternal(other, '001');
    expectError(
      await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: otherExt }, amount: 1 }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(
      await srv.anon.post('/transfer-out', { source: { accountId: account }, destination: { accountId: eur }, amount: 1 }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('replays with the same Idempotency-Key move money once', async () => {
    const { p, account } = await setup();
    const ext = await platformExternal(p, '001');
    const body = { source: { accountId: account }, destination: { accountId: ext }, amount: 700 };
    const headers = { 'Idempotency-Key': 'transfer-1' };
    const [a, b] = await Promise.all([p.api.post('/transfer-out', body, { headers }), p.api.post('/transfer-out', body, { headers })]);
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.id).toBe(a.body.id);
    const c = await p.api.post('/transfer-out', body, { headers });
    expect(c.headers.get('idempotency-hit')).toBe('true');
    expect((await balances(p, account)).balance).toBe(9_300);
    expectError(await p.api.post('/transfer-out', { ...body, amount: 701 }, { headers }), 409, 'CONFLICT');
  });

  it('cancels a pending transfer (refund USER_CANCELLATION); a finished one is 409', async () => {
    const { p, account } = await setup();
    const ext = await platformExternal(p, '005');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 3_000 });
    const cancelled = await p.api.post(`/transactions/${res.body.id}/cancel`, { reason: 'REQUESTED_AFTER_HOURS' });
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'FAILED', refund: { status: 'COMPLETED', reason: 'USER_CANCELLATION' } });
    expect(await balances(p, account)).toEqual({ balance: 10_000, total: 10_000 });
    await advance(p, 60); // the rail's own failure later must not refund again
    expect(await balances(p, account)).toEqual({ balance: 10_000, total: 10_000 });
    expectError(await p.api.post(`/transactions/${res.body.id}/cancel`), 409, 'TRANSACTION_NOT_CANCELLABLE');
    expectError(await p.api.post('/transactions/Transaction:unknown/cancel'), 404, 'TRANSACTION_NOT_FOUND');
    await expectLedgerClean(srv, p.id);
  });
});

describe('POST /transfer-in', () => {
  it('pulls from a US bank account: pending in totalBalance, then available', async () => {
    const { p, account } = await setup(0);
    const ext = await platformExternal(p, '001');
    const res = await p.api.post('/transfer-in', { source: { accountId: ext }, destination: { accountId: account }, amount: 5_000 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: 'PENDING', type: 'INCOMING', direction: 'DEBIT', receivedAmount: { amount: 5_000 } });
    // Pending in totalBalance until it settles (the job runner may already have settled it).
    expect((await balances(p, account)).total).toBe(5_000);
    await advance(p, 1);
    expect((await tx(p.api, res.body.id)).status).toBe('COMPLETED');
    expect(await balances(p, account)).toEqual({ balance: 5_000, total: 5_000 });
    expect(await eventsFor(srv, res.body.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.COMPLETED']);
    await expectLedgerClean(srv, p.id);
  });

  for (const [suffix, now] of [
    ['002', true],
    ['003', true],
    ['004', false],
    ['005', false],
  ] as const) {
    it(`suffix ${suffix} fails${now ? ' at once' : ' later'} and credits nothing`, async () => {
      const { p, account } = await setup(0);
      const ext = await platformExternal(p, suffix);
      const res = await p.api.post('/transfer-in', { source: { accountId: ext }, destination: { accountId: account }, amount: 5_000 });
      expect(res.status).toBe(201);
      if (now) expect(res.body).toMatchObject({ status: 'FAILED', failureReason: 'COLLECTION_FAILED' });
      await advance(p, 31);
      expect(await tx(p.api, res.body.id)).toMatchObject({ status: 'FAILED', failureReason: 'COLLECTION_FAILED' });
      expect(await balances(p, account)).toEqual({ balance: 0, total: 0 });
      expect(await eventsFor(srv, res.body.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.FAILED']);
      await expectLedgerClean(srv, p.id);
    });
  }

  it('cancels a pending pull: FAILED with COLLECTION_FAILED, nothing credited', async () => {
    const { p, account } = await setup(0);
    const ext = await platformExternal(p, '005');
    const res = await p.api.post('/transfer-in', { source: { accountId: ext }, destination: { accountId: account }, amount: 5_000 });
    expect(res.body.status).toBe('PENDING');
    const cancelled = await p.api.post(`/transactions/${res.body.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'FAILED', failureReason: 'COLLECTION_FAILED' });
    expect(cancelled.body.refund).toBeUndefined();
    await advance(p, 31); // the rail's own failure later must not move anything again
    expect(await balances(p, account)).toEqual({ balance: 0, total: 0 });
    expect(await eventsFor(srv, res.body.id)).toEqual(['INCOMING_PAYMENT.PENDING', 'INCOMING_PAYMENT.FAILED']);
    await expectLedgerClean(srv, p.id);
  });

  it('refuses accounts that cannot be pulled from and a missing amount', async () => {
    const { p, account } = await setup(0);
    const ext = await platformExternal(p, '001');
    expectError(
      await p.api.post('/transfer-in', { source: { accountId: ext }, destination: { accountId: account } }),
      400,
      'INVALID_INPUT',
    );
  });
});
