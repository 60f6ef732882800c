/**
 * Balance moves a job batch applies at its end (ledger BalanceBatch): the ledger's own rules hold
 * as if the entries were posted one by one — every running total is bounded, a refused batch moves
 * nothing — and the BALANCE_UPDATED events of a settlement batch show each step's balance in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BalanceBatch, InsufficientFundsError, systemAccount, type Posting } from '../../src/ledger/ledger.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advance, expectLedgerClean, fund, platformExternal, platformUsdAccount, tx, type Wire } from '../helpers/payments.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

/** A USD account-to-issuer entry moving `amount` into (or, negative, out of) `bucket` of the account. */
function move(platformId: string, accountId: string, amount: number, bucket: Posting['bucket'] = 'AVAILABLE'): Posting[] {
  return [
    { accountId, currency: 'USD', bucket, amount },
    { accountId: systemAccount(platformId, 'SANDBOX_ISSUER'), currency: 'USD', bucket: 'AVAILABLE', amount: -amount },
  ];
}

/** Posts `amounts` (one entry each) in one batch and flushes it, in one transaction. */
async function runBatch(p: PlatformHandle, accountId: string, amounts: number[], bucket: Posting['bucket'] = 'AVAILABLE') {
  const { db, deps } = srv.app.ctx;
  return db.transaction().execute(async (trx) => {
    const batch = new BalanceBatch();
    for (const amount of amounts) {
      await batch.post(trx, {
        id: deps.ids.next('LedgerEntry'),
        platformId: p.id,
        kind: 'TEST',
        referenceId: accountId,
        postings: move(p.id, accountId, amount, bucket),
        at: new Date().toISOString(),
      });
    }
    return batch.flush(trx);
  });
}

async function stored(accountId: string): Promise<{ available: number; pending: number }> {
  const row = await srv.app.ctx.db
    .selectFrom('internal_accounts')
    .select(['available', 'pending'])
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { available: Number(row.available), pending: Number(row.pending) };
}

async function entryCount(platformId: string): Promise<number> {
  const r = await srv.app.ctx.db
    .selectFrom('ledger_entries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('platform_id', '=', platformId)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('BalanceBatch', () => {
  it('applies the net change once and returns each entry’s balance after it, in order', async () => {
    const p = await srv.newPlatform();
    const acc = await platformUsdAccount(p);
    await fund(p, acc, 100);
    const moves = await runBatch(p, acc, [-60, 30, -70, 5]);
    expect(moves.map((m) => m.moved.map((r) => Number(r.available)))).toEqual([[40], [70], [0], [5]]);
    expect(moves.every((m) => m.moved[0]!.id === acc)).toBe(true);
    expect(await stored(acc)).toEqual({ available: 5, pending: 0 });
    await expectLedgerClean(srv, p.id);
  });

  it('refuses a batch whose net change is covered but a running total is not, and moves nothing', async () => {
    const p = await srv.newPlatform();
    const acc = await platformUsdAccount(p);
    await fund(p, acc, 50);
    // Net −30 of 50, but after the first entry the balance would be −10.
    await expect(runBatch(p, acc, [-60, 30])).rejects.toBeInstanceOf(InsufficientFundsError);
    // The pending bucket is bounded the same way.
    await expect(runBatch(p, acc, [20, -30, 10], 'PENDING')).rejects.toBeInstanceOf(InsufficientFundsError);
    expect(await stored(acc)).toEqual({ available: 50, pending: 0 });
    expect(await entryCount(p.id)).toBe(1);
    await expectLedgerClean(srv, p.id);
    // The same entries in an order that never goes below zero pass.
    await runBatch(p, acc, [30, -60]);
    expect(await stored(acc)).toEqual({ available: 20, pending: 0 });
  });

  it('refuses a running total above 2^53−1 even when the batch nets to zero', async () => {
    const p = await srv.newPlatform();
    const acc = await platformUsdAccount(p);
    await runBatch(p, acc, [Number.MAX_SAFE_INTEGER - 10]);
    await expect(runBatch(p, acc, [20, -20])).rejects.toMatchObject({ code: 'AMOUNT_OUT_OF_RANGE' });
    await runBatch(p, acc, [-20, 20]);
    expect(await stored(acc)).toEqual({ available: Number.MAX_SAFE_INTEGER - 10, pending: 0 });
    await expectLedgerClean(srv, p.id);
  });

  it('moves several accounts, each by its own entries', async () => {
    const p = await srv.newPlatform();
    const a = await platformUsdAccount(p);
    const customer = await p.api.post('/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: `batch-${Date.now()}`,
      fullName: 'Ada Batch',
      birthDate: '1990-01-15',
      nationality: 'US',
      address: { line1: '1 Main St', city: 'Austin', state: 'TX', postalCode: '73301', country: 'US' },
    });
    expect(customer.status, customer.text).toBe(201);
    const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: customer.body.id, currency: 'USD' } });
    const b = accounts.body.data[0].id as string;
    const { db, deps } = srv.app.ctx;
    const at = new Date().toISOString();
    const moves = await db.transaction().execute(async (trx) => {
      const batch = new BalanceBatch();
      const post = (postings: Posting[]) =>
        batch.post(trx, { id: deps.ids.next('LedgerEntry'), platformId: p.id, kind: 'TEST', referenceId: a, postings, at });
      await post(move(p.id, b, 500));
      await post([
        { accountId: b, currency: 'USD', bucket: 'AVAILABLE', amount: -200 },
        { accountId: a, currency: 'USD', bucket: 'PENDING', amount: 200 },
      ]);
      await post(move(p.id, a, 7));
      return batch.flush(trx);
    });
    const seen = moves.map((m) => m.moved.map((r) => [r.id, Number(r.available), Number(r.pending)]));
    expect(seen).toEqual([
      [[b, 500, 0]],
      [
        [b, 300, 0],
        [a, 0, 200],
      ],
      [[a, 7, 200]],
    ]);
    expect(await stored(a)).toEqual({ available: 7, pending: 200 });
    expect(await stored(b)).toEqual({ available: 300, pending: 0 });
    await expectLedgerClean(srv, p.id);
  });
});

describe('a settlement batch', () => {
  it('emits one BALANCE_UPDATED per settled payment, each with the balance after it, in order', async () => {
    const p = await srv.newPlatform();
    const acc = await platformUsdAccount(p);
    await fund(p, acc, 1_000_000);
    const slow = await platformExternal(p, '003'); // a quote to it completes after 6 minutes
    const failing = await platformExternal(p, '005'); // a transfer to it fails after 30 seconds
    const amounts = Array.from({ length: 12 }, (_, i) => 1_000 + i * 100);
    const quotes: Wire[] = [];
    for (const amount of amounts) {
      const res = await p.api.post('/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: acc },
        destination: { destinationType: 'ACCOUNT', accountId: slow },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: amount,
        immediatelyExecute: true,
      });
      expect(res.status, res.text).toBe(201);
      quotes.push(res.body);
    }
    const out = await p.api.post('/transfer-out', { source: { accountId: acc }, destination: { accountId: failing }, amount: 777 });
    expect(out.status, out.text).toBe(201);
    const held = amounts.reduce((s, a) => s + a, 0) + 777;
    const before = await stored(acc);
    expect(before).toEqual({ available: 1_000_000 - held, pending: held });

    await advance(p, 360);
    for (const q of quotes) expect((await tx(p.api, q.transactionId)).status).toBe('COMPLETED');
    expect((await tx(p.api, out.body.id)).status).toBe('FAILED');

    // The account's events after the holds, in id (delivery) order: each moves pending down by one
    // payment's amount and the failed transfer's refund also returns it to the available balance.
    const rows = await srv.app.ctx.db
      .selectFrom('outbox_events')
      .select(['id', 'payload'])
      .where('resource_id', '=', acc)
      .where('type', '=', 'INTERNAL_ACCOUNT.BALANCE_UPDATED')
      .orderBy('id')
      .execute();
    const states = rows
      .map((r) => JSON.parse(r.payload) as Wire)
      .map((w) => ({ available: w.balance.amount as number, total: w.totalBalance.amount as number }));
    const settled = states.slice(-(amounts.length + 1));
    let prev = { available: before.available, total: before.available + before.pending };
    const steps: number[] = [];
    for (const s of settled) {
      if (s.available === prev.available)
        steps.push(prev.total - s.total); // a settlement leaves the account
      else {
        expect(s.available - prev.available).toBe(777); // the refund
        expect(s.total).toBe(prev.total);
      }
      prev = s;
    }
    expect(steps.sort((x, y) => x - y)).toEqual(amounts);
    const after = await stored(acc);
    expect(prev).toEqual({ available: after.available, total: after.available + after.pending });
    expect(after).toEqual({ available: 1_000_000 - held + 777, pending: 0 });
    await expectLedgerClean(srv, p.id);
  });
});
