import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { BASE_PATH, readConfig } from '../../src/config.ts';
import { defaultDeps } from '../../src/deps.ts';
import { Client } from '../helpers/http.ts';
import { ADMIN_TOKEN, bootApp, laneStore, startServer } from '../helpers/server.ts';
import { checkLedger } from '../../src/ledger/ledger.ts';
import { fund, platformExternal, platformUsdAccount, tx } from '../helpers/payments.ts';

const apps: App[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const a of apps) await a.close().catch(() => undefined);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('delayed outcomes survive a restart', () => {
  it('a pending 005 transfer and a slow 003 quote finish after the server restarts on the same store', async () => {
    const srv = await startServer();
    const p = await srv.newPlatform();
    const account = await platformUsdAccount(p);
    await fund(p, account, 10_000);
    const slowDest = await platformExternal(p, '003');
    const failingDest = await platformExternal(p, '005');
    const transfer = (
      await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: failingDest }, amount: 1_000 })
    ).body;
    const quote = (
      await p.api.post('/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: account },
        destination: { destinationType: 'ACCOUNT', accountId: slowDest },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 2_000,
        immediatelyExecute: true,
      })
    ).body;
    // Stop the first server (its store stays), start a new one on the same store.
    await srv.app.close();
    const env: Record<string, string | undefined> = { DATA_DIR: srv.dataDir, LOG_LEVEL: 'silent', CORRIDOR_ADMIN_TOKEN: ADMIN_TOKEN };
    if (laneStore() === 'postgres') env.DATABASE_URL = process.env.TEST_DATABASE_URL;
    const app = await bootApp(readConfig(env), defaultDeps());
    apps.push(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address();
    const api = new Client(`http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}${BASE_PATH}`, { basic: p.creds });
    expect((await tx(api, transfer.id)).status).toBe('PENDING');
    expect((await tx(api, quote.transactionId)).status).toBe('PROCESSING');
    await api.post('/sandbox/clock/advance', { seconds: 30 });
    expect(await tx(api, transfer.id)).toMatchObject({ status: 'FAILED', refund: { status: 'COMPLETED' } });
    await api.post('/sandbox/clock/advance', { seconds: 330 });
    expect((await tx(api, quote.transactionId)).status).toBe('COMPLETED');
    const accounts = (await api.get('/platform/internal-accounts')).body.data;
    expect(accounts[0]).toMatchObject({ balance: { amount: 8_000 }, totalBalance: { amount: 8_000 } });
    const report = await checkLedger(app.ctx.db, p.id);
    expect(report.problems).toEqual([]);
    dirs.push(srv.dataDir);
  });
});
