import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.ts';
import { advance, balances, expectLedgerClean, fund, platformExternal, platformUsdAccount } from '../helpers/payments.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

describe('concurrent spending of one account', () => {
  it('200 concurrent transfers against funds for exactly 100: exactly 100 succeed, the rest are refused', async () => {
    const p = await srv.newPlatform();
    const account = await platformUsdAccount(p);
    await fund(p, account, 100 * 500);
    const ext = await platformExternal(p, '001');
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 500 }),
      ),
    );
    const ok = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status !== 201);
    expect(ok).toHaveLength(100);
    expect(refused).toHaveLength(100);
    for (const r of refused)
      expect(r.body).toMatchObject({ status: 400, code: 'INVALID_AMOUNT', details: { reason: 'INSUFFICIENT_FUNDS' } });
    await advance(p, 1);
    expect(await balances(p, account)).toEqual({ balance: 0, total: 0 });
    await expectLedgerClean(srv, p.id);
  });

  it('200 concurrent quote executions against funds for exactly 100', async () => {
    const p = await srv.newPlatform();
    const account = await platformUsdAccount(p);
    await fund(p, account, 100 * 700);
    const ext = await platformExternal(p, '001');
    const quotes = await Promise.all(
      Array.from({ length: 200 }, () =>
        p.api.post('/quotes', {
          source: { sourceType: 'ACCOUNT', accountId: account },
          destination: { destinationType: 'ACCOUNT', accountId: ext },
          lockedCurrencySide: 'SENDING',
          lockedCurrencyAmount: 700,
        }),
      ),
    );
    expect(quotes.every((q) => q.status === 201)).toBe(true);
    const results = await Promise.all(quotes.map((q) => p.api.post(`/quotes/${q.body.id}/execute`)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(100);
    expect(results.filter((r) => r.status === 400 && r.body.code === 'INVALID_AMOUNT')).toHaveLength(100);
    await advance(p, 1);
    expect(await balances(p, account)).toEqual({ balance: 0, total: 0 });
    await expectLedgerClean(srv, p.id);
  });
});
