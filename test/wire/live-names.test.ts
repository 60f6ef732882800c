/**
 * CORRIDOR_WIRE_NAMES=live (issue #21): responses and webhooks name account types as the live API
 * does (USD_ACCOUNT, SPARK_WALLET, SOLANA_WALLET; LIGHTNING is the same in both), so clients
 * generated from the live schema type-check; either name is accepted on input. The default stays
 * the spec's names (test/wire/live-requests.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { platformUsdAccount, usAccountInfo } from '../helpers/payments.ts';
import { uniqueAccountNumber } from '../helpers/random.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let rec: Receiver;
beforeAll(async () => {
  srv = await startServer({ env: { CORRIDOR_WIRE_NAMES: 'live' } });
  rec = await startReceiver();
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

const SPEC_NAMES = /"accountType":"(US_ACCOUNT|LAYER2_WALLET|CHAIN2_WALLET)"/;

describe('CORRIDOR_WIRE_NAMES=live', () => {
  it('answers with the live names whichever name the request used, in single reads and lists', async () => {
    const p = await srv.newPlatform();
    const spec = await p.api.post('/platform/external-accounts', {
      currency: 'USD',
      accountInfo: { ...usAccountInfo('001'), accountNumber: uniqueAccountNumber('001') },
    });
    expect(spec.status, spec.text).toBe(201);
    expect(spec.body.accountInfo.accountType).toBe('USD_ACCOUNT');
    const spark = await p.api.post('/platform/external-accounts', {
      currency: 'BTC',
      accountInfo: { accountType: 'LAYER2_WALLET', address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhx' },
    });
    expect(spark.status, spark.text).toBe(201);
    expect(spark.body.accountInfo.accountType).toBe('SPARK_WALLET');
    const lightning = await p.api.post('/platform/external-accounts', {
      currency: 'BTC',
      accountInfo: { accountType: 'LIGHTNING_ACCOUNT', lightningAddress: 'alice@wallet.example.com' },
    });
    expect(lightning.status, lightning.text).toBe(201);
    expect(lightning.body.accountInfo.accountType).toBe('LIGHTNING');

    const list = await p.api.get('/platform/external-accounts');
    expect(list.status).toBe(200);
    expect(list.body.data.map((a: { accountInfo: { accountType: string } }) => a.accountInfo.accountType).sort()).toEqual([
      'LIGHTNING',
      'SPARK_WALLET',
      'USD_ACCOUNT',
    ]);
    expect(list.text).not.toMatch(SPEC_NAMES);
    const accounts = await p.api.get('/platform/internal-accounts');
    expect(accounts.text).toContain('"accountType":"USD_ACCOUNT"');
    expect(accounts.text).not.toMatch(SPEC_NAMES);
  });

  it('sends webhooks with the live names, signed over the bytes sent', async () => {
    const p = await srv.newPlatform();
    expect((await p.api.patch('/config', { webhookEndpoint: rec.url })).status).toBe(200);
    const created = await p.api.post('/platform/external-accounts', {
      currency: 'USD',
      accountInfo: { ...usAccountInfo('001'), accountNumber: uniqueAccountNumber('001') },
    });
    expect(created.status, created.text).toBe(201);
    expect((await p.api.delete(`/platform/external-accounts/${created.body.id}`)).status).toBe(204);
    const event = await waitFor(() =>
      rec.received.find((r) => r.body?.type === 'EXTERNAL_ACCOUNT.STATUS_UPDATED' && r.body.data.id === created.body.id),
    );
    expect(event.body.data.accountInfo.accountType).toBe('USD_ACCOUNT');
    expect(event.raw.toString('utf8')).not.toMatch(SPEC_NAMES);
    const key = (await p.api.get('/webhooks/signing-key')).body.publicKey;
    expect(verifyWebhook(event.raw, String(event.headers['x-grid-signature']), key)).toBe(true);
    // The funding instructions of an internal account too (the sandbox fund answers with the account).
    const account = await platformUsdAccount(p);
    const funded = await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 100 });
    expect(funded.status, funded.text).toBe(200);
    expect(funded.body.fundingPaymentInstructions[0].accountOrWalletInfo.accountType).toBe('USD_ACCOUNT');
  });

  it('is spec or live; anything else stops the server from starting, naming the variable', () => {
    expect(readConfig({ DATA_DIR: '/tmp/x' }).wireNames).toBe('spec');
    expect(readConfig({ DATA_DIR: '/tmp/x', CORRIDOR_WIRE_NAMES: 'live' }).wireNames).toBe('live');
    expect(() => readConfig({ DATA_DIR: '/tmp/x', CORRIDOR_WIRE_NAMES: 'LIVE' })).toThrow(
      /CORRIDOR_WIRE_NAMES must be spec or live \(got "LIVE"\)/,
    );
  });
});
