/** Every accountInfo variant: one valid and one invalid example each, aliases, nested unknown fields. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACCEPTED_ACCOUNT_TYPES, canonicalAccountType } from '../../src/modules/external-accounts/account-info.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { ADDRESS, EXAMPLES, expectFieldError, fieldsOf, newCustomer, person } from './util.ts';

let srv: TestServer;
let p: PlatformHandle;
let customerId: string;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  customerId = await newCustomer(p.api);
});
afterAll(async () => srv.close());

const create = (body: Record<string, unknown>) => p.api.post('/customers/external-accounts', { customerId, ...body });

describe('accountInfo variants', () => {
  it('has an example for every accountType Corridor offers', () => {
    const canonical = new Set(ACCEPTED_ACCOUNT_TYPES.map((t) => canonicalAccountType(t)));
    expect([...canonical].sort()).toEqual(Object.keys(EXAMPLES).sort());
  });

  for (const [type, ex] of Object.entries(EXAMPLES)) {
    it(`${type}: accepts a valid example and emits it with the server's rails`, async () => {
      const res = await create({ currency: ex.currency, accountInfo: ex.accountInfo });
      expect(res.status, res.text).toBe(201);
      expect(res.body).toMatchObject({ customerId, status: 'ACTIVE', currency: ex.currency });
      const { accountInfo } = res.body;
      expect(accountInfo.accountType).toBe(type);
      for (const [k, v] of Object.entries(ex.accountInfo)) if (k !== 'accountType') expect(accountInfo[k]).toEqual(v);
      if (ex.rails) expect(accountInfo.paymentRails).toEqual(ex.rails);
      else expect(accountInfo.paymentRails).toBeUndefined();
      const got = await p.api.get(`/customers/external-accounts/${res.body.id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);
    });

    it(`${type}: rejects an invalid example naming ${ex.invalid.field}`, async () => {
      expectFieldError(await create({ currency: ex.currency, accountInfo: ex.invalid.accountInfo }), ex.invalid.field);
    });
  }

  it('INR: NEFT/RTGS need accountNumber, ifsc and rail together; both rails may be offered', async () => {
    const neft = await create({
      currency: 'INR',
      accountInfo: { accountType: 'INR_ACCOUNT', accountNumber: '000111222333', ifsc: 'HDFC0001234', rail: 'RTGS', beneficiary: person() },
    });
    expect(neft.status, neft.text).toBe(201);
    expect(neft.body.accountInfo.paymentRails).toEqual(['RTGS']);
    const both = await create({
      currency: 'INR',
      accountInfo: {
        accountType: 'INR_ACCOUNT',
        vpa: 'ravi@okaxis',
        accountNumber: '000111222444',
        ifsc: 'HDFC0001234',
        rail: 'NEFT',
        beneficiary: person(),
      },
    });
    expect(both.body.accountInfo.paymentRails).toEqual(['UPI', 'NEFT']);
    const partial = await create({
      currency: 'INR',
      accountInfo: { accountType: 'INR_ACCOUNT', accountNumber: '000111222555', beneficiary: person() },
    });
    expect(fieldsOf(expectFieldError(partial, 'accountInfo.ifsc'))).toContain('accountInfo.rail');
    expectFieldError(
      await create({ currency: 'INR', accountInfo: { accountType: 'INR_ACCOUNT', beneficiary: person() } }),
      'accountInfo.vpa',
    );
    expectFieldError(
      await create({
        currency: 'INR',
        accountInfo: {
          accountType: 'INR_ACCOUNT',
          accountNumber: '000111222666',
          ifsc: 'HDFC0001234',
          rail: 'IMPS',
          beneficiary: person(),
        },
      }),
      'accountInfo.rail',
    );
    // `rail` is a string as in the live schema (1–32 characters): any case names the rail.
    const lower = await create({
      currency: 'INR',
      accountInfo: { accountType: 'INR_ACCOUNT', accountNumber: '000111222777', ifsc: 'HDFC0001234', rail: 'neft', beneficiary: person() },
    });
    expect(lower.status, lower.text).toBe(201);
    expect(lower.body.accountInfo).toMatchObject({ rail: 'neft', paymentRails: ['NEFT'] });
    expectFieldError(
      await create({
        currency: 'INR',
        accountInfo: {
          accountType: 'INR_ACCOUNT',
          accountNumber: '000111222888',
          ifsc: 'HDFC0001234',
          rail: 'R'.repeat(33),
          beneficiary: person(),
        },
      }),
      'accountInfo.rail',
    );
  });

  it('BRL: checks the PIX key against its type and the tax id check digits', async () => {
    const base = { accountType: 'BRL_ACCOUNT', taxId: '52998224725', beneficiary: person('Maria Silva') };
    const ok = async (pixKeyType: string, pixKey: string) => {
      const res = await create({ currency: 'BRL', accountInfo: { ...base, pixKeyType, pixKey } });
      expect(res.status, `${pixKeyType} ${pixKey}: ${res.text}`).toBe(201);
    };
    await ok('CPF', '52998224725');
    await ok('CNPJ', '11222333000181');
    await ok('PHONE', '+5511987654321');
    await ok('RANDOM', '123e4567-e89b-42d3-a456-426614174000');
    expectFieldError(
      await create({ currency: 'BRL', accountInfo: { ...base, pixKeyType: 'CNPJ', pixKey: '11222333000182' } }),
      'accountInfo.pixKey',
    );
    expectFieldError(
      await create({ currency: 'BRL', accountInfo: { ...base, pixKeyType: 'EMAIL', pixKey: 'not-an-email' } }),
      'accountInfo.pixKey',
    );
    expectFieldError(
      await create({ currency: 'BRL', accountInfo: { ...base, pixKeyType: 'PHONE', pixKey: '+14155550123' } }),
      'accountInfo.pixKey',
    );
    expectFieldError(
      await create({ currency: 'BRL', accountInfo: { ...base, pixKeyType: 'RANDOM', pixKey: 'abc' } }),
      'accountInfo.pixKey',
    );
    expectFieldError(
      await create({ currency: 'BRL', accountInfo: { ...base, pixKeyType: 'EMAIL', pixKey: 'x@example.com', taxId: '12345678901' } }),
      'accountInfo.taxId',
    );
    expectFieldError(
      await create({ currency: 'BRL', accountInfo: { ...base, pixKeyType: 'TAX', pixKey: 'x@example.com' } }),
      'accountInfo.pixKeyType',
    );
  });

  it('EUR: requires the beneficiary country and a registry-length IBAN', async () => {
    const iban = 'FR1420041010050500013M02606';
    const res = await create({
      currency: 'EUR',
      accountInfo: { accountType: 'EUR_ACCOUNT', iban, beneficiary: person('Jean Dupont', { countryOfResidence: 'FR' }) },
    });
    expect(res.status, res.text).toBe(201);
    expectFieldError(
      await create({
        currency: 'EUR',
        accountInfo: {
          accountType: 'EUR_ACCOUNT',
          iban: 'FR14200410100505000130260',
          beneficiary: person('J', { countryOfResidence: 'FR' }),
        },
      }),
      'accountInfo.iban',
    );
    expectFieldError(
      await create({ currency: 'EUR', accountInfo: { accountType: 'EUR_ACCOUNT', iban, beneficiary: person('Jean Dupont') } }),
      'accountInfo.beneficiary.countryOfResidence',
    );
  });

  it('bank accounts require a beneficiary; businesses need legalName; beneficiary fields are checked', async () => {
    const info = (beneficiary?: unknown) => ({
      accountType: 'US_ACCOUNT',
      accountNumber: '555000111',
      routingNumber: '021000021',
      ...(beneficiary ? { beneficiary } : {}),
    });
    expectFieldError(await create({ currency: 'USD', accountInfo: info() }), 'accountInfo.beneficiary');
    expectFieldError(
      await create({ currency: 'USD', accountInfo: info({ beneficiaryType: 'BUSINESS', fullName: 'Acme' }) }),
      'accountInfo.beneficiary.legalName',
    );
    expectFieldError(
      await create({ currency: 'USD', accountInfo: info({ beneficiaryType: 'TRUST', fullName: 'X' }) }),
      'accountInfo.beneficiary.beneficiaryType',
    );
    expectFieldError(
      await create({ currency: 'USD', accountInfo: info(person('A B', { birthDate: '15/01/1990' })) }),
      'accountInfo.beneficiary.birthDate',
    );
    expectFieldError(
      await create({ currency: 'USD', accountInfo: info(person('A B', { address: { line1: 'x', country: 'US' } })) }),
      'accountInfo.beneficiary.address.postalCode',
    );
    const biz = await create({
      currency: 'USD',
      accountInfo: info({
        beneficiaryType: 'BUSINESS',
        legalName: 'Acme Corp',
        registrationNumber: 'C-123',
        address: { line1: '1 Main', postalCode: '10001', country: 'US' },
      }),
    });
    expect(biz.status, biz.text).toBe(201);
    expect(biz.body.accountInfo.beneficiary).toEqual({
      beneficiaryType: 'BUSINESS',
      legalName: 'Acme Corp',
      registrationNumber: 'C-123',
      address: { line1: '1 Main', postalCode: '10001', country: 'US' },
    });
  });

  it('Lightning needs exactly one destination; invoices and offers are accepted', async () => {
    expectFieldError(await create({ currency: 'BTC', accountInfo: { accountType: 'LIGHTNING' } }), 'accountInfo.invoice');
    const invoice = 'lnbcrt15u1p3xnhl2pp5jptserfk3zk4qy42tlucycrfwxhydvlemu9pqr93tuzlv9cc7g3s';
    const res = await create({ currency: 'BTC', accountInfo: { accountType: 'LIGHTNING', invoice } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.accountInfo).toEqual({ accountType: 'LIGHTNING', invoice });
    const offer = await create({ currency: 'BTC', accountInfo: { accountType: 'LIGHTNING', bolt12: 'lno1qcp4256ypqpq86q2pucnq42ngssx' } });
    expect(offer.status, offer.text).toBe(201);
  });
});

describe('accountType names', () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ['USD_ACCOUNT', 'US_ACCOUNT', { accountNumber: '777000111', routingNumber: '021000021', beneficiary: person() }, 'USD'],
    ['SPARK_WALLET', 'LAYER2_WALLET', { address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhx' }, 'BTC'],
    ['SOLANA_WALLET', 'CHAIN2_WALLET', { address: '7Nd1m6Qkq7RfKuE5vQ9qP9Tn6H94Ueqb4xXHzsAbd8Wg' }, 'USDT'],
    ['LIGHTNING_ACCOUNT', 'LIGHTNING', { lightningAddress: 'bob@wallet.example.com' }, 'BTC'],
  ];
  for (const [alias, canonical, fields, currency] of cases) {
    it(`accepts ${alias} and emits ${canonical}`, async () => {
      const res = await create({ currency, accountInfo: { accountType: alias, ...fields } });
      expect(res.status, res.text).toBe(201);
      expect(res.body.accountInfo.accountType).toBe(canonical);
      const list = await p.api.get('/customers/external-accounts', { query: { customerId, currency, limit: 100 } });
      expect(list.body.data.find((a: { id: string }) => a.id === res.body.id).accountInfo.accountType).toBe(canonical);
    });
  }

  it('rejects an unknown or missing accountType, and legacy names that are not types', async () => {
    for (const accountType of ['IBAN', 'CLABE', 'PIX', 'UPI', 'ARS_ACCOUNT', 'BITCOIN_L1']) {
      expectFieldError(await create({ currency: 'USD', accountInfo: { accountType, accountNumber: '1' } }), 'accountInfo.accountType');
    }
    expectFieldError(await create({ currency: 'USD', accountInfo: { accountNumber: '1' } }), 'accountInfo.accountType');
    expectFieldError(await create({ currency: 'USD', accountInfo: 'US_ACCOUNT' }), 'accountInfo');
    expectFieldError(await create({ currency: 'USD' }), 'accountInfo');
  });
});

describe('unknown and misplaced fields', () => {
  it('names unknown fields at every depth', async () => {
    const us = EXAMPLES.US_ACCOUNT!;
    expectFieldError(await create({ currency: 'USD', accountInfo: us.accountInfo, nickname: 'x' }), 'nickname');
    expectFieldError(
      await create({ currency: 'USD', accountInfo: { ...us.accountInfo, iban: 'DE89370400440532013000' } }),
      'accountInfo.iban',
    );
    // paymentRails is accepted on create (the live SDK sends it; issue #21), but only the type's rails.
    expectFieldError(
      await create({ currency: 'USD', accountInfo: { ...us.accountInfo, paymentRails: ['SEPA'] } }),
      'accountInfo.paymentRails.0',
    );
    expectFieldError(
      await create({ currency: 'USD', accountInfo: { ...us.accountInfo, beneficiary: person('A B', { ssn: '1' }) } }),
      'accountInfo.beneficiary.ssn',
    );
    expectFieldError(
      await create({
        currency: 'USD',
        accountInfo: { ...us.accountInfo, beneficiary: person('A B', { address: { ...ADDRESS, planet: 'Mars' } }) },
      }),
      'accountInfo.beneficiary.address.planet',
    );
    expectFieldError(
      await create({
        currency: 'BTC',
        accountInfo: {
          accountType: 'LAYER2_WALLET',
          address: 'spark1pgssyuuuhnrrdjswal5c3s3rafw9w3y5dd4cjy3duxlf7hjzkp0rqx6dj6mrhu',
          memo: 'x',
        },
      }),
      'accountInfo.memo',
    );
    expectFieldError(
      await create({
        currency: 'USDC',
        accountInfo: {
          accountType: 'BASE_WALLET',
          address: '0xAbCDEF1234567890aBCdEf1234567890ABcDef99',
          beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'A', countryOfResidence: 'US', birthDate: '1990-01-01' },
        },
      }),
      'accountInfo.beneficiary.birthDate',
    );
  });

  it('rejects wrong JSON types without a 500', async () => {
    for (const body of [
      [],
      'x',
      42,
      null,
      { currency: 5, accountInfo: {} },
      { currency: 'USD', accountInfo: [] },
      { currency: 'USD', accountInfo: { accountType: 7 } },
    ]) {
      const res = await p.api.post('/customers/external-accounts', body);
      expectError(res, 400, 'INVALID_INPUT');
    }
  });
});

describe('currency consistency', () => {
  it('refuses a currency the accountType does not hold', async () => {
    const us = EXAMPLES.US_ACCOUNT!;
    expectFieldError(await create({ currency: 'EUR', accountInfo: us.accountInfo }), 'currency', 'INVALID_CURRENCY');
    expectFieldError(await create({ currency: 'USD', accountInfo: EXAMPLES.EUR_ACCOUNT!.accountInfo }), 'currency', 'INVALID_CURRENCY');
    expectFieldError(await create({ currency: 'USDC', accountInfo: EXAMPLES.LAYER2_WALLET!.accountInfo }), 'currency', 'INVALID_CURRENCY');
    expectFieldError(await create({ currency: 'BTC', accountInfo: EXAMPLES.CHAIN2_WALLET!.accountInfo }), 'currency', 'INVALID_CURRENCY');
    expectFieldError(await create({ currency: 'USDC', accountInfo: EXAMPLES.LIGHTNING!.accountInfo }), 'currency', 'INVALID_CURRENCY');
    expectFieldError(await create({ currency: 'BTC', accountInfo: EXAMPLES.SWIFT_ACCOUNT!.accountInfo }), 'currency', 'INVALID_CURRENCY');
  });

  it('refuses a currency Corridor does not know, and a malformed one', async () => {
    expectFieldError(await create({ currency: 'XYZ', accountInfo: EXAMPLES.SWIFT_ACCOUNT!.accountInfo }), 'currency', 'INVALID_CURRENCY');
    expectFieldError(await create({ currency: 'usd', accountInfo: EXAMPLES.US_ACCOUNT!.accountInfo }), 'currency');
  });
});
