/**
 * GET/PATCH /config: the default document and the merge rules (replace, partial merge, fee upsert
 * and removal), currency validation, internal accounts for new currencies, read-only fields, and
 * the TEST webhook event queued when the endpoint changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { checkEnvelope, expectFieldError } from './util.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

const usd = {
  currencyCode: 'USD',
  minAmount: 1,
  maxAmount: 100_000_000,
  requiredCounterpartyFields: [],
  enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
};
const eur = {
  currencyCode: 'EUR',
  minAmount: 100,
  maxAmount: 5_000_000,
  requiredCounterpartyFields: [{ name: 'FULL_NAME', mandatory: true }],
  enabledTransactionTypes: ['OUTGOING'],
};
const fee = (variableFeeBps: number, amount: number, sourceCurrency = 'USD') => ({
  feeType: 'CROSS_CURRENCY_TRANSACTION',
  sourceCurrency,
  variableFeeBps,
  fixedFee: { amount, currency: sourceCurrency },
});

async function testEvents(platformId: string) {
  return srv.app.ctx.db.selectFrom('outbox_events').selectAll().where('platform_id', '=', platformId).where('type', '=', 'TEST').execute();
}

describe('GET /config', () => {
  it('returns the default configuration', async () => {
    const p = await srv.newPlatform();
    const res = await p.api.get('/config');
    expect(res.status).toBe(200);
    checkEnvelope(res);
    const c = res.body;
    expect(c.id).toMatch(/^PlatformConfig:[0-9a-f-]{36}$/);
    expect(c.id.slice('PlatformConfig:'.length)).toBe(p.id.slice('Platform:'.length));
    expect(typeof c.umaDomain).toBe('string');
    expect(typeof c.proxyUmaSubdomain).toBe('string');
    expect(c.supportedCurrencies.map((x: { currencyCode: string }) => x.currencyCode)).toEqual(['USD']);
    expect(c.supportedCurrencies[0]).toMatchObject({
      currencyCode: 'USD',
      requiredCounterpartyFields: [],
      enabledTransactionTypes: expect.any(Array),
    });
    expect(c.feeConfigs).toEqual([]);
    expect(c.isRegulatedFinancialInstitution).toBe(false);
    expect(c.webhookEndpoint).toBeUndefined();
    expect(c.embeddedWalletConfig).toBeUndefined();
    expect(Number.isNaN(Date.parse(c.createdAt))).toBe(false);
    expect(Number.isNaN(Date.parse(c.updatedAt))).toBe(false);
  });

  it('is per platform', async () => {
    const [a, b] = await Promise.all([srv.newPlatform(), srv.newPlatform()]);
    await a.api.patch('/config', { umaDomain: 'a-only.example.com' });
    const ca = (await a.api.get('/config')).body;
    const cb = (await b.api.get('/config')).body;
    expect(ca.umaDomain).toBe('a-only.example.com');
    expect(cb.umaDomain).not.toBe('a-only.example.com');
    expect(ca.id).not.toBe(cb.id);
  });
});

describe('PATCH /config merge rules', () => {
  let p: PlatformHandle;
  beforeAll(async () => {
    p = await srv.newPlatform();
  });

  it('an empty patch changes nothing', async () => {
    const before = (await p.api.get('/config')).body;
    const res = await p.api.patch('/config', {});
    expect(res.status).toBe(200);
    const { updatedAt: _a, ...rest } = res.body;
    const { updatedAt: _b, ...restBefore } = before;
    expect(rest).toEqual(restBefore);
  });

  it('umaDomain and webhookEndpoint replace; the response is the new document', async () => {
    const res = await p.api.patch('/config', { umaDomain: 'pay.example.com', webhookEndpoint: 'https://hooks.example.com/a' });
    expect(res.status).toBe(200);
    expect(res.body.umaDomain).toBe('pay.example.com');
    expect(res.body.webhookEndpoint).toBe('https://hooks.example.com/a');
    const res2 = await p.api.patch('/config', { umaDomain: 'pay2.example.com' });
    expect(res2.body.umaDomain).toBe('pay2.example.com');
    expect(res2.body.webhookEndpoint).toBe('https://hooks.example.com/a');
    expect((await p.api.get('/config')).body).toEqual(res2.body);
  });

  it('embeddedWalletConfig merges field by field', async () => {
    const r1 = await p.api.patch('/config', { embeddedWalletConfig: { otpLength: 8 } });
    expect(r1.body.embeddedWalletConfig).toEqual({ otpLength: 8 });
    const r2 = await p.api.patch('/config', { embeddedWalletConfig: { appName: 'Corridor Wallet' } });
    expect(r2.body.embeddedWalletConfig).toEqual({ otpLength: 8, appName: 'Corridor Wallet' });
    const r3 = await p.api.patch('/config', { embeddedWalletConfig: { otpLength: 6, alphanumeric: true } });
    expect(r3.body.embeddedWalletConfig).toEqual({ otpLength: 6, appName: 'Corridor Wallet', alphanumeric: true });
    // Omitting the object leaves it untouched.
    const r4 = await p.api.patch('/config', { umaDomain: 'pay3.example.com' });
    expect(r4.body.embeddedWalletConfig).toEqual(r3.body.embeddedWalletConfig);
    expect((await p.api.get('/config')).body.embeddedWalletConfig).toEqual(r3.body.embeddedWalletConfig);
  });

  it('embeddedWalletConfig bounds are enforced', async () => {
    expectFieldError(await p.api.patch('/config', { embeddedWalletConfig: { otpLength: 3 } }), 'embeddedWalletConfig.otpLength');
    expectFieldError(
      await p.api.patch('/config', { embeddedWalletConfig: { expirationSeconds: 86401 } }),
      'embeddedWalletConfig.expirationSeconds',
    );
    expectFieldError(
      await p.api.patch('/config', { embeddedWalletConfig: { sendFromEmailAddress: 'not-an-email' } }),
      'embeddedWalletConfig.sendFromEmailAddress',
    );
  });

  it('cardTokenization2faConfig merges, nested objects too', async () => {
    const r1 = await p.api.patch('/config', { cardTokenization2faConfig: { displayName: 'Corridor', email: { subject: 'Your code' } } });
    expect(r1.body.cardTokenization2faConfig).toEqual({ displayName: 'Corridor', email: { subject: 'Your code' } });
    const r2 = await p.api.patch('/config', { cardTokenization2faConfig: { email: { fromName: 'Corridor' } } });
    expect(r2.body.cardTokenization2faConfig).toEqual({ displayName: 'Corridor', email: { subject: 'Your code', fromName: 'Corridor' } });
    expectFieldError(
      await p.api.patch('/config', { cardTokenization2faConfig: { logoUrl: 'http://insecure.example.com/logo.png' } }),
      'cardTokenization2faConfig.logoUrl',
    );
  });

  it('feeConfigs upsert by (feeType, sourceCurrency) and are removed when both fees are 0', async () => {
    const r1 = await p.api.patch('/config', { feeConfigs: [fee(50, 25)] });
    expect(r1.status).toBe(200);
    expect(r1.body.feeConfigs).toEqual([fee(50, 25)]);
    const r2 = await p.api.patch('/config', { feeConfigs: [fee(75, 0)] });
    expect(r2.body.feeConfigs).toEqual([fee(75, 0)]);
    // Omitting feeConfigs leaves them as they are.
    const r3 = await p.api.patch('/config', { umaDomain: 'pay4.example.com' });
    expect(r3.body.feeConfigs).toEqual([fee(75, 0)]);
    // Both fees 0 removes the config.
    const r4 = await p.api.patch('/config', { feeConfigs: [fee(0, 0)] });
    expect(r4.body.feeConfigs).toEqual([]);
    expect((await p.api.get('/config')).body.feeConfigs).toEqual([]);
    // Removing one that does not exist is fine.
    const r5 = await p.api.patch('/config', { feeConfigs: [fee(0, 0)] });
    expect(r5.status).toBe(200);
    expect(r5.body.feeConfigs).toEqual([]);
  });

  it('a non-USD fee source currency is 501 NOT_IMPLEMENTED and changes nothing', async () => {
    await p.api.patch('/config', { feeConfigs: [fee(10, 1)] });
    const res = await p.api.patch('/config', { feeConfigs: [fee(10, 1, 'EUR')] });
    expectError(res, 501, 'NOT_IMPLEMENTED');
    checkEnvelope(res);
    const mixed = await p.api.patch('/config', { umaDomain: 'never.example.com', feeConfigs: [fee(20, 2), fee(10, 1, 'GBP')] });
    expectError(mixed, 501, 'NOT_IMPLEMENTED');
    const cfg = (await p.api.get('/config')).body;
    expect(cfg.feeConfigs).toEqual([fee(10, 1)]);
    expect(cfg.umaDomain).not.toBe('never.example.com');
  });

  it('fee validation', async () => {
    expectFieldError(await p.api.patch('/config', { feeConfigs: [fee(10001, 0)] }), 'feeConfigs.0.variableFeeBps');
    expectFieldError(await p.api.patch('/config', { feeConfigs: [{ ...fee(1, 1), feeType: 'OTHER' }] }), 'feeConfigs.0.feeType');
    expectFieldError(
      await p.api.patch('/config', { feeConfigs: [{ ...fee(1, 1), fixedFee: { amount: 1, currency: 'EUR' } }] }),
      'feeConfigs.0.fixedFee.currency',
    );
  });

  it('read-only fields cannot be patched', async () => {
    const before = (await p.api.get('/config')).body;
    expectFieldError(await p.api.patch('/config', { isRegulatedFinancialInstitution: true }), 'isRegulatedFinancialInstitution');
    expectFieldError(await p.api.patch('/config', { proxyUmaSubdomain: 'mine' }), 'proxyUmaSubdomain');
    expectFieldError(await p.api.patch('/config', { id: 'PlatformConfig:x' }), 'id');
    expectFieldError(await p.api.patch('/config', { createdAt: '2030-01-01T00:00:00Z' }), 'createdAt');
    expect((await p.api.get('/config')).body).toEqual(before);
  });

  it('umaDomain and webhookEndpoint are validated', async () => {
    expectFieldError(await p.api.patch('/config', { umaDomain: 'not a domain' }), 'umaDomain');
    expectFieldError(await p.api.patch('/config', { webhookEndpoint: 'ftp://hooks.example.com' }), 'webhookEndpoint');
    expectFieldError(await p.api.patch('/config', { webhookEndpoint: 'not a url' }), 'webhookEndpoint');
  });
});

describe('supportedCurrencies', () => {
  it('an unknown currency is 400 INVALID_CURRENCY and changes nothing', async () => {
    const p = await srv.newPlatform();
    const before = (await p.api.get('/config')).body;
    const res = await p.api.patch('/config', { supportedCurrencies: [usd, { ...eur, currencyCode: 'XYZ' }] });
    expectError(res, 400, 'INVALID_CURRENCY');
    checkEnvelope(res);
    expect(res.body.details.errors[0].field).toBe('supportedCurrencies.1.currencyCode');
    expect((await p.api.get('/config')).body).toEqual(before);
    expect((await p.api.get('/platform/internal-accounts')).body.data).toHaveLength(1);
  });

  it('other list problems are 400 INVALID_INPUT naming the field', async () => {
    const p = await srv.newPlatform();
    expectFieldError(await p.api.patch('/config', { supportedCurrencies: [usd, usd] }), 'supportedCurrencies.1.currencyCode');
    expectFieldError(
      await p.api.patch('/config', { supportedCurrencies: [{ ...usd, minAmount: 10, maxAmount: 5 }] }),
      'supportedCurrencies.0.minAmount',
    );
    expectFieldError(await p.api.patch('/config', { supportedCurrencies: [] }), 'supportedCurrencies');
    expectFieldError(
      await p.api.patch('/config', { supportedCurrencies: [{ ...usd, currencyCode: 'usd' }] }),
      'supportedCurrencies.0.currencyCode',
    );
  });

  it('adding EUR creates one EUR platform internal account; re-sending does not add another', async () => {
    const p = await srv.newPlatform();
    const res = await p.api.patch('/config', { supportedCurrencies: [usd, eur] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.supportedCurrencies).toEqual([usd, eur]);

    const eurAccounts = await p.api.get('/platform/internal-accounts', { query: { currency: 'EUR' } });
    expect(eurAccounts.status).toBe(200);
    expect(eurAccounts.body.data).toHaveLength(1);
    const acc = eurAccounts.body.data[0];
    expect(acc).toMatchObject({ type: 'INTERNAL_FIAT', status: 'ACTIVE' });
    expect(acc.balance).toEqual({ amount: 0, currency: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 } });
    expect(acc).not.toHaveProperty('customerId');

    const again = await p.api.patch('/config', { supportedCurrencies: [eur, usd] });
    expect(again.status).toBe(200);
    expect(again.body.supportedCurrencies).toEqual([eur, usd]);
    const all = await p.api.get('/platform/internal-accounts');
    expect(all.body.data.map((a: { balance: { currency: { code: string } } }) => a.balance.currency.code).sort()).toEqual(['EUR', 'USD']);
    expect((await p.api.get('/platform/internal-accounts', { query: { currency: 'EUR' } })).body.data[0].id).toBe(acc.id);

    // Replacing the list without EUR keeps the account (it may hold money); adding it back reuses it.
    const dropped = await p.api.patch('/config', { supportedCurrencies: [usd] });
    expect(dropped.body.supportedCurrencies).toEqual([usd]);
    await p.api.patch('/config', { supportedCurrencies: [usd, eur] });
    const eurAgain = await p.api.get('/platform/internal-accounts', { query: { currency: 'EUR' } });
    expect(eurAgain.body.data.map((a: { id: string }) => a.id)).toEqual([acc.id]);
  });

  it('a crypto currency gets an INTERNAL_CRYPTO account', async () => {
    const p = await srv.newPlatform();
    const res = await p.api.patch('/config', { supportedCurrencies: [usd, { ...usd, currencyCode: 'USDC' }] });
    expect(res.status).toBe(200);
    const list = await p.api.get('/platform/internal-accounts', { query: { currency: 'USDC' } });
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].type).toBe('INTERNAL_CRYPTO');
    expect(list.body.data[0].balance.currency.decimals).toBe(6);
  });

  it('concurrent patches adding the same currency create one account', async () => {
    const p = await srv.newPlatform();
    const results = await Promise.all(Array.from({ length: 5 }, () => p.api.patch('/config', { supportedCurrencies: [usd, eur] })));
    for (const r of results) expect(r.status, r.text).toBe(200);
    const eurAccounts = await p.api.get('/platform/internal-accounts', { query: { currency: 'EUR' } });
    expect(eurAccounts.body.data).toHaveLength(1);
  });
});

describe('webhookEndpoint TEST event', () => {
  it('a new or changed endpoint queues exactly one TEST event; an unchanged one none', async () => {
    const p = await srv.newPlatform();
    expect(await testEvents(p.id)).toHaveLength(0);

    await p.api.patch('/config', { webhookEndpoint: 'https://hooks.example.com/one' });
    let events = await testEvents(p.id);
    expect(events).toHaveLength(1);
    expect(events[0]!.id).toMatch(/^Webhook:[0-9a-f-]{36}$/);
    // Queued as PENDING; the webhook worker may already have tried it (this endpoint does not resolve).
    expect(['PENDING', 'DELIVERING', 'FAILED']).toContain(events[0]!.status);

    await p.api.patch('/config', { webhookEndpoint: 'https://hooks.example.com/one' });
    await p.api.patch('/config', { umaDomain: 'other.example.com' });
    expect(await testEvents(p.id)).toHaveLength(1);

    await p.api.patch('/config', { webhookEndpoint: 'https://hooks.example.com/two' });
    events = await testEvents(p.id);
    expect(events).toHaveLength(2);

    // A rejected patch queues nothing.
    expectError(
      await p.api.patch('/config', { webhookEndpoint: 'https://hooks.example.com/three', feeConfigs: [fee(1, 1, 'EUR')] }),
      501,
      'NOT_IMPLEMENTED',
    );
    expect(await testEvents(p.id)).toHaveLength(2);
    expect((await p.api.get('/config')).body.webhookEndpoint).toBe('https://hooks.example.com/two');
  });
});
