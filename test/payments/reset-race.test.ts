/**
 * POST /sandbox/reset while the platform's payments, funding, transfers and clock advances are in
 * flight (hostile review, defect 5): every reset answers 204 (a conflict is retried, never a 500),
 * whatever else was in flight answers a 2xx or a 4xx, and afterwards the ledger is clean — no
 * posting on a deleted account, no balance without its postings. A reset keeps the platform's own
 * internal account ids and puts its sandbox clock back to real time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { ADDRESS, advance, expectLedgerClean, fund, platformExternal, platformUsdAccount, usAccountInfo } from '../helpers/payments.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

/** A customer with a funded USD account and an external account of its own to pay. */
async function customerWithMoney(p: PlatformHandle, n: number): Promise<{ account: string; ext: string }> {
  const c = await p.api.post('/customers', {
    customerType: 'INDIVIDUAL',
    platformCustomerId: `race-${n}-${Date.now()}`,
    fullName: 'Jane Smith',
    birthDate: '1990-01-15',
    nationality: 'US',
    address: ADDRESS,
  });
  expect(c.status, c.text).toBe(201);
  const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: c.body.id, currency: 'USD' } });
  const account = accounts.body.data[0].id as string;
  await fund(p, account, 1_000_000);
  const ext = await p.api.post('/customers/external-accounts', {
    customerId: c.body.id,
    currency: 'USD',
    accountInfo: { ...usAccountInfo('001'), accountNumber: `${700_000 + n}001` },
  });
  expect(ext.status, ext.text).toBe(201);
  return { account, ext: ext.body.id as string };
}

/** Money-moving traffic on one customer's account and the platform's, ~40 requests, all at once. */
function traffic(p: PlatformHandle, platformAccount: string, platformExt: string, c: { account: string; ext: string }): Promise<Res>[] {
  const out: Promise<Res>[] = [];
  for (let i = 0; i < 8; i++) {
    out.push(
      p.api.post('/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: c.account },
        destination: { destinationType: 'ACCOUNT', accountId: c.ext },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 1_000 + i,
        immediatelyExecute: true,
      }),
    );
    out.push(p.api.post('/transfer-out', { source: { accountId: c.account }, destination: { accountId: c.ext }, amount: 500 + i }));
    out.push(
      p.api.post('/transfer-out', { source: { accountId: platformAccount }, destination: { accountId: platformExt }, amount: 300 + i }),
    );
    out.push(p.api.post(`/sandbox/internal-accounts/${c.account}/fund`, { amount: 100 + i }));
    out.push(p.api.post(`/sandbox/internal-accounts/${platformAccount}/fund`, { amount: 100 + i }));
  }
  out.push(p.api.post('/sandbox/clock/advance', { seconds: 31 }));
  return out;
}

describe('POST /sandbox/reset under concurrent writes', () => {
  it('every reset succeeds, nothing answers 5xx, and the ledger is clean after any interleaving', async () => {
    const p = await srv.newPlatform({ name: 'Reset race' });
    const platformAccount = await platformUsdAccount(p);
    const resets: Res[] = [];
    const others: Res[] = [];
    for (let round = 0; round < 6; round++) {
      await fund(p, platformAccount, 1_000_000);
      const platformExt = await platformExternal(p, '001');
      const c = await customerWithMoney(p, round);
      const inFlight = traffic(p, platformAccount, platformExt, c);
      // The reset lands in the middle of the burst; a second one right behind it.
      await new Promise((r) => setTimeout(r, 5 * (round % 3)));
      const reset = p.api.post('/sandbox/reset');
      const second = round % 2 === 0 ? p.api.post('/sandbox/reset') : undefined;
      others.push(...(await Promise.all(inFlight)));
      resets.push(await reset);
      if (second) resets.push(await second);
      // Delayed outcomes of payments that slipped in after the reset run too.
      await advance(p, 400);
      await expectLedgerClean(srv, p.id);
    }
    for (const r of resets) expect(r.status, r.text).toBe(204);
    for (const r of others) expect(r.status, `${r.status} ${r.text}`).toBeLessThan(500);
    await expectLedgerClean(srv);
  });

  it("keeps the platform's internal account ids and resets the sandbox clock", async () => {
    const p = await srv.newPlatform();
    const account = await platformUsdAccount(p);
    await fund(p, account, 5_000);
    await advance(p, 3_600);
    expect((await p.api.get('/sandbox/clock')).body.offsetMs).toBeGreaterThanOrEqual(3_600_000);
    expect((await p.api.post('/sandbox/reset')).status).toBe(204);
    expect(await platformUsdAccount(p)).toBe(account);
    const after = (await p.api.get('/platform/internal-accounts')).body.data[0];
    expect(after).toMatchObject({ id: account, balance: { amount: 0 }, totalBalance: { amount: 0 } });
    expect((await p.api.get('/sandbox/clock')).body.offsetMs).toBe(0);
    // The README's `$ACCOUNT` still works: funding it after the reset is an ordinary credit.
    await fund(p, account, 250);
    expect((await p.api.get('/platform/internal-accounts')).body.data[0].balance.amount).toBe(250);
    await expectLedgerClean(srv, p.id);
  });
});
