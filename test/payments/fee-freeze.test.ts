/**
 * Hostile review, defect 1: a platform set `variableFeeBps: 10000` (accepted: the live schema allows
 * 0..10000) and asked for a RECEIVING-locked cross-currency quote; pricing looked for a total whose
 * 100 % fee leaves the locked amount and never stopped, freezing the whole server (health, other
 * platforms, jobs, webhooks). Now: a 400 naming the amount and the fee, answered at once, and the
 * server never stops answering. The watchdog kills this test file instead of letting it hang if the
 * loop blocks for good.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopWatchdog } from '../helpers/loop-watchdog.ts';
import { Client, expectError } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { fund, platformUsdAccount } from '../helpers/payments.ts';

const watchdog = startLoopWatchdog({ hangMs: 10_000 });
let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.close();
  await watchdog.stop();
});

const fee = (variableFeeBps: number, amount = 0) => ({
  feeType: 'CROSS_CURRENCY_TRANSACTION',
  sourceCurrency: 'USD',
  variableFeeBps,
  fixedFee: { amount, currency: 'USD' },
});

describe('a 100 % variable fee', () => {
  it('is accepted in the configuration, and a RECEIVING-locked quote under it is a 400, not a frozen server', async () => {
    const p = await srv.newPlatform();
    const bystander = await srv.newPlatform();
    const account = await platformUsdAccount(p);
    await fund(p, account, 1_000_000);
    expect((await p.api.patch('/config', { feeConfigs: [fee(10_000, 25)] })).status).toBe(200);
    const quote = (lockedCurrencySide: string) => {
      watchdog.note(`POST /quotes ${lockedCurrencySide} under a 100 % fee`);
      return p.api.post('/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: account },
        destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$success.eur@sandbox.uma.money' },
        lockedCurrencySide,
        lockedCurrencyAmount: 1_000,
      });
    };
    const [receiving, health, other] = await Promise.all([
      quote('RECEIVING'),
      new Client(srv.origin).get('/healthz'),
      bystander.api.get('/platform/internal-accounts'),
    ]);
    const err = expectError(receiving, 400, 'AMOUNT_OUT_OF_RANGE');
    expect(err.body.details.errors[0].field).toBe('lockedCurrencyAmount');
    expect(err.body.message).toMatch(/10000 bps/);
    expect(health.status).toBe(200);
    expect(other.status).toBe(200);
    // The sending side has nothing left to convert: the same 400, also at once.
    expectError(await quote('SENDING'), 400, 'AMOUNT_OUT_OF_RANGE');
    // A fee just under 100 % prices (a large total), or is out of range; never hangs.
    await p.api.patch('/config', { feeConfigs: [fee(9_999)] });
    const near = await quote('RECEIVING');
    expect([201, 400]).toContain(near.status);
    watchdog.note('harness: checks');
    // Start-up (before the first note) and the checks are the harness's; the requests must not block.
    expect((await watchdog.take()).filter((b) => !b.during.startsWith('harness'))).toEqual([]);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});
