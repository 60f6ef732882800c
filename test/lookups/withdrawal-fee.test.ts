/** POST /crypto/estimate-withdrawal-fee: the sandbox network fees, every refusal, permissions; nothing is held. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Res } from '../helpers/http.ts';
import { balances, fund } from '../helpers/payments.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
const accounts: Record<string, string> = {};
let otherUsdc: string;

const CRYPTO = ['USDC', 'USDT', 'BTC', 'USDB'];

async function withCurrencies(q: PlatformHandle): Promise<Record<string, string>> {
  const entry = (currencyCode: string) => ({
    currencyCode,
    minAmount: 1,
    maxAmount: 100_000_000,
    requiredCounterpartyFields: [],
    enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
  });
  const cfg = await q.api.patch('/config', { supportedCurrencies: ['USD', ...CRYPTO].map(entry) });
  expect(cfg.status, cfg.text).toBe(200);
  const out: Record<string, string> = {};
  for (const code of ['USD', ...CRYPTO]) {
    const res = await q.api.get('/platform/internal-accounts', { query: { currency: code } });
    expect(res.status, res.text).toBe(200);
    out[code] = res.body.data[0].id;
  }
  return out;
}

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Withdrawal fees' });
  other = await srv.newPlatform({ name: 'Withdrawal fees, other platform' });
  Object.assign(accounts, await withCurrencies(p));
  otherUsdc = (await withCurrencies(other)).USDC!;
});
afterAll(async () => srv.close());

const SOLANA_ADDRESS = '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU';
const EVM_ADDRESS = '0x742d35Cc6634C0532925a3b844Bc454e4438f44e';
const TRON_ADDRESS = 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8';
const SPARK_ADDRESS = 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6d0001';
const INVOICE = 'lnbc10u1pjqxyzsp5qqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqqqsyqcyq5rqwzqfqypq';

const body = (over: Record<string, unknown> = {}) => ({
  internalAccountId: accounts.USDC,
  currency: 'USDC',
  cryptoNetwork: 'SOLANA',
  amount: 1_000_000,
  destinationAddress: SOLANA_ADDRESS,
  ...over,
});

const estimate = (b: unknown) => p.api.post('/crypto/estimate-withdrawal-fee', b);
const fieldsOf = (res: Res): string[] => (res.body.details?.errors ?? []).map((e: { field: string }) => e.field);

describe('POST /crypto/estimate-withdrawal-fee', () => {
  it("answers the live docs' example exactly (USDC on Solana)", async () => {
    const res = await estimate(body());
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ networkFee: 5000, networkFeeAsset: 'SOL', applicationFee: 0, totalFee: 5000, netAmount: 995_000 });
  });

  it('each network: its fee asset, its raw fee, and that fee in the withdrawal currency', async () => {
    const cases: [string, string, string, { networkFee: number; networkFeeAsset: string; totalFee: number }][] = [
      ['USDC', 'ETHEREUM', EVM_ADDRESS, { networkFee: 1_300_000_000_000_000, networkFeeAsset: 'ETH', totalFee: 4_160_000 }],
      ['USDT', 'ETHEREUM', EVM_ADDRESS, { networkFee: 1_300_000_000_000_000, networkFeeAsset: 'ETH', totalFee: 4_160_000 }],
      ['USDC', 'BASE', EVM_ADDRESS, { networkFee: 3_000_000_000_000, networkFeeAsset: 'ETH', totalFee: 9_600 }],
      ['USDC', 'POLYGON', EVM_ADDRESS, { networkFee: 5_000_000_000_000_000, networkFeeAsset: 'POL', totalFee: 2_000 }],
      ['USDT', 'TRON', TRON_ADDRESS, { networkFee: 14_000_000, networkFeeAsset: 'TRX', totalFee: 3_500_000 }],
      ['USDT', 'PLASMA', EVM_ADDRESS, { networkFee: 0, networkFeeAsset: 'XPL', totalFee: 0 }],
      ['USDT', 'SOLANA', SOLANA_ADDRESS, { networkFee: 5_000, networkFeeAsset: 'SOL', totalFee: 5_000 }],
      ['USDB', 'SPARK', SPARK_ADDRESS, { networkFee: 0, networkFeeAsset: 'BTC', totalFee: 0 }],
      ['BTC', 'SPARK', SPARK_ADDRESS, { networkFee: 0, networkFeeAsset: 'BTC', totalFee: 0 }],
      // Bitcoin fees on Bitcoin assets are the raw fee: 10 sats.
      ['BTC', 'LIGHTNING', INVOICE, { networkFee: 10, networkFeeAsset: 'BTC', totalFee: 10 }],
      ['BTC', 'LIGHTNING', 'alice@example.com', { networkFee: 10, networkFeeAsset: 'BTC', totalFee: 10 }],
    ];
    for (const [code, network, address, want] of cases) {
      const amount = 10_000_000;
      const res = await estimate(
        body({ internalAccountId: accounts[code], currency: code, cryptoNetwork: network, amount, destinationAddress: address }),
      );
      expect(res.status, `${code} on ${network}: ${res.text}`).toBe(200);
      expect(res.body, `${code} on ${network}`).toEqual({ ...want, applicationFee: 0, netAmount: amount - want.totalFee });
    }
  });

  it('holds nothing: balances and the ledger are unchanged', async () => {
    await fund(p, accounts.USDC!, 2_000_000);
    const before = await balances(p, accounts.USDC!);
    expect((await estimate(body({ amount: 1_500_000 }))).status).toBe(200);
    // More than the balance is still an estimate.
    expect((await estimate(body({ amount: 50_000_000 }))).status).toBe(200);
    expect(await balances(p, accounts.USDC!)).toEqual(before);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('400 AMOUNT_OUT_OF_RANGE when the fee takes it all; one unit more leaves one unit', async () => {
    const res = expectError(await estimate(body({ amount: 5_000 })), 400, 'AMOUNT_OUT_OF_RANGE');
    expect(fieldsOf(res)).toEqual(['amount']);
    expect((await estimate(body({ amount: 5_001 }))).body).toMatchObject({ totalFee: 5_000, netAmount: 1 });
  });

  it("404 for an unknown account and for another platform's, alike", async () => {
    const unknown = expectError(
      await estimate(body({ internalAccountId: 'InternalAccount:019542f5-b3e7-7d02-8000-000000000999' })),
      404,
      'REFERENCE_NOT_FOUND',
    );
    const foreign = expectError(await estimate(body({ internalAccountId: otherUsdc })), 404, 'REFERENCE_NOT_FOUND');
    expect(foreign.body.message.replace(otherUsdc, 'X')).toBe(unknown.body.message.replace(/InternalAccount:\S+/, 'X'));
  });

  it('400 INVALID_CURRENCY for a fiat or unknown currency, or one the account does not hold', async () => {
    const cases: Record<string, unknown>[] = [
      { internalAccountId: accounts.USD, currency: 'USD' },
      { currency: 'XYZ' },
      { currency: 'USDT' },
      { internalAccountId: accounts.USD, currency: 'USDC' },
    ];
    for (const c of cases) {
      const res = expectError(await estimate(body(c)), 400, 'INVALID_CURRENCY');
      expect(fieldsOf(res), JSON.stringify(c)).toEqual(['currency']);
    }
  });

  it('400 naming cryptoNetwork for an asset the network does not carry or a network Corridor has no wallets on', async () => {
    for (const c of [
      { cryptoNetwork: 'TRON', destinationAddress: TRON_ADDRESS },
      { cryptoNetwork: 'SPARK', destinationAddress: SPARK_ADDRESS },
      { internalAccountId: accounts.BTC, currency: 'BTC', cryptoNetwork: 'SOLANA' },
      { cryptoNetwork: 'BITCOIN' },
      { cryptoNetwork: 'solana' },
    ]) {
      const res = expectError(await estimate(body(c)), 400, 'INVALID_INPUT');
      expect(fieldsOf(res), JSON.stringify(c)).toEqual(['cryptoNetwork']);
    }
  });

  it("400 naming destinationAddress for an address of another network's shape", async () => {
    for (const c of [
      { destinationAddress: EVM_ADDRESS },
      { destinationAddress: 'not an address' },
      { cryptoNetwork: 'ETHEREUM', destinationAddress: '0x1234' },
      { cryptoNetwork: 'TRON', currency: 'USDT', internalAccountId: accounts.USDT, destinationAddress: EVM_ADDRESS },
      { internalAccountId: accounts.BTC, currency: 'BTC', cryptoNetwork: 'LIGHTNING', destinationAddress: SOLANA_ADDRESS },
    ]) {
      const res = expectError(await estimate(body(c)), 400, 'INVALID_INPUT');
      expect(fieldsOf(res), JSON.stringify(c)).toEqual(['destinationAddress']);
    }
  });

  it('400 INVALID_INPUT for missing, mistyped and unknown fields', async () => {
    const { amount: _a, ...noAmount } = body();
    const cases: [unknown, string][] = [
      [noAmount, 'amount'],
      [body({ amount: 0 }), 'amount'],
      [body({ amount: 1.5 }), 'amount'],
      [body({ amount: '1000' }), 'amount'],
      [body({ amount: 2 ** 53 }), 'amount'],
      [body({ destinationAddress: '' }), 'destinationAddress'],
      [body({ memo: 'x' }), 'memo'],
    ];
    for (const [b, field] of cases) {
      const res = expectError(await estimate(b), 400, 'INVALID_INPUT');
      expect(fieldsOf(res).join(' '), JSON.stringify(b)).toContain(field);
    }
    expectError(await p.api.post('/crypto/estimate-withdrawal-fee'), 400, 'INVALID_INPUT');
  });

  it('401 without or with wrong credentials, 403 without VIEW, 200 with VIEW alone', async () => {
    const token = async (permissions: string[]) => {
      const t = await p.api.post('/tokens', { name: `fees ${permissions.join('+')}`, permissions });
      expect(t.status, t.text).toBe(201);
      return p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    };
    const path = '/crypto/estimate-withdrawal-fee';
    expectError(await srv.anon.post(path, body()), 401, 'UNAUTHORIZED');
    expectError(await p.api.with({ basic: { id: p.creds.id, secret: 'nope' } }).post(path, body()), 401, 'UNAUTHORIZED');
    expectError(await (await token(['TRANSACT', 'MANAGE'])).post(path, body()), 403, 'FORBIDDEN');
    expect((await (await token(['VIEW'])).post(path, body())).status).toBe(200);
  });
});
