/**
 * Requests as the live API's own clients send them (issue #21): the TypeScript SDK's types require
 * `countries` and `paymentRails` on an external account's accountInfo, it joins a list query
 * parameter with commas, and the live request schemas declare `platformFeeOverride` and
 * `scaFactor` on quotes. Each was refused before (unknown field, unknown currency "MXN,EUR").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { fund, platformUsdAccount, usAccountInfo, type Wire } from '../helpers/payments.ts';
import { uniqueAccountNumber } from '../helpers/random.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.close();
});

/** A US account as the SDK's `UsdExternalAccountInfo` type has it (countries and paymentRails included). */
const sdkUsdAccount = (suffix: string, extra: Record<string, unknown> = {}) => ({
  ...usAccountInfo(suffix),
  accountType: 'USD_ACCOUNT',
  accountNumber: uniqueAccountNumber(suffix),
  countries: ['US'],
  paymentRails: ['ACH'],
  ...extra,
});

describe('external accounts created with the SDK’s accountInfo', () => {
  it('are accepted with countries and paymentRails; the rails offered are the ones the fields support, and neither is stored', async () => {
    const p = await srv.newPlatform();
    const res = await p.api.post('/platform/external-accounts', { currency: 'USD', accountInfo: sdkUsdAccount('001') });
    expect(res.status, res.text).toBe(201);
    expect(res.body.accountInfo.accountType).toBe('US_ACCOUNT'); // the spec's name (the live one is accepted)
    expect(res.body.accountInfo.paymentRails).toEqual(['ACH', 'WIRE', 'RTP', 'FEDNOW']);
    expect(res.body.accountInfo).not.toHaveProperty('countries');
    const again = await p.api.get(`/platform/external-accounts/${res.body.id}`);
    expect(again.body.accountInfo).toEqual(res.body.accountInfo);
  });

  it('accept the rails the SDK names for a type besides the ones Corridor offers (INR: IMPS), and refuse another type’s rail', async () => {
    const p = await srv.newPlatform();
    const inr = await p.api.post('/platform/external-accounts', {
      currency: 'INR',
      accountInfo: {
        accountType: 'INR_ACCOUNT',
        vpa: `corridor${uniqueAccountNumber('1')}@upi`,
        countries: ['IN'],
        paymentRails: ['UPI', 'IMPS'],
        beneficiary: {
          beneficiaryType: 'INDIVIDUAL',
          fullName: 'Asha Rao',
          address: { line1: '1 MG Road', city: 'Pune', postalCode: '411001', country: 'IN' },
        },
      },
    });
    expect(inr.status, inr.text).toBe(201);
    expect(inr.body.accountInfo.paymentRails).toEqual(['UPI']);

    const wrongRail = await p.api.post('/platform/external-accounts', {
      currency: 'USD',
      accountInfo: sdkUsdAccount('001', { paymentRails: ['SEPA'] }),
    });
    const err = expectError(wrongRail, 400, 'INVALID_INPUT');
    expect(JSON.stringify(err.body)).toContain('paymentRails');
    const badCountry = await p.api.post('/platform/external-accounts', {
      currency: 'USD',
      accountInfo: sdkUsdAccount('001', { countries: ['usa'] }),
    });
    expect(JSON.stringify(expectError(badCountry, 400, 'INVALID_INPUT').body)).toContain('countries');
    // Fields no live schema declares stay refused.
    expectError(
      await p.api.post('/platform/external-accounts', { currency: 'USD', accountInfo: sdkUsdAccount('001', { bogus: true }) }),
      400,
      'INVALID_INPUT',
    );
  });
});

describe('GET /exchange-rates with the SDK’s comma-joined destinationCurrency', () => {
  it('answers one rate per currency, as repeated keys do', async () => {
    const p = await srv.newPlatform();
    const joined = await p.api.get('/exchange-rates', { query: { sourceCurrency: 'USD', destinationCurrency: 'MXN,EUR' } });
    expect(joined.status, joined.text).toBe(200);
    const codes = (r: Wire) => r.body.data.map((x: Wire) => x.destinationCurrency.code);
    expect(codes(joined)).toEqual(['MXN', 'EUR']);
    const repeated = await p.api.get('/exchange-rates?sourceCurrency=USD&destinationCurrency=MXN&destinationCurrency=EUR');
    expect(codes(repeated)).toEqual(codes(joined));
    const bad = expectError(await p.api.get('/exchange-rates', { query: { destinationCurrency: 'MXN,XXX' } }), 400, 'INVALID_CURRENCY');
    expect(JSON.stringify(bad.body)).toContain('XXX');
  });
});

describe('POST /quotes with the live request fields', () => {
  const quote = (account: string, extra: Record<string, unknown>) => ({
    source: { sourceType: 'ACCOUNT', accountId: account },
    destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$success.usd@sandbox.uma.money' },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 10_000,
    ...extra,
  });

  it('platformFeeOverride replaces the configured fees for that quote, same currency included', async () => {
    const p = await srv.newPlatform();
    const account = await platformUsdAccount(p);
    await fund(p, account, 1_000_000);
    const override = { platformFixedFee: { amount: 50, currency: 'USD' }, platformVariableFeeBps: 30 };
    const res = await p.api.post('/quotes', quote(account, { platformFeeOverride: override }));
    expect(res.status, res.text).toBe(201);
    // 50 fixed + 30 bps of 10,000 = 30: 80 in fees, 9,920 arrive (USD to USD, rate 1).
    expect(res.body.feesIncluded).toBe(80);
    expect(res.body.totalReceivingAmount).toBe(9_920);
    const plain = await p.api.post('/quotes', quote(account, {}));
    expect(plain.body.feesIncluded).toBe(0);
  });

  it('platformFeeOverride is refused for a non-USD source and a fixed fee in another currency, naming the field', async () => {
    const usd = await srv.newPlatform();
    const account = await platformUsdAccount(usd);
    const wrongFee = await usd.api.post(
      '/quotes',
      quote(account, { platformFeeOverride: { platformFixedFee: { amount: 1, currency: 'EUR' }, platformVariableFeeBps: 0 } }),
    );
    expect(expectError(wrongFee, 400, 'INVALID_INPUT').body.details.errors[0].field).toBe('platformFeeOverride.platformFixedFee.currency');

    const eur = await srv.newPlatform({ currency: 'EUR' });
    const accounts = await eur.api.get('/platform/internal-accounts', { query: { currency: 'EUR' } });
    const eurAccount = accounts.body.data[0].id as string;
    await fund(eur, eurAccount, 1_000_000);
    const res = await eur.api.post(
      '/quotes',
      quote(eurAccount, { platformFeeOverride: { platformFixedFee: { amount: 1, currency: 'EUR' }, platformVariableFeeBps: 0 } }),
    );
    expect(expectError(res, 400, 'INVALID_INPUT').body.details.errors[0].field).toBe('platformFeeOverride');
    expectError(
      await usd.api.post('/quotes', quote(account, { platformFeeOverride: { platformFixedFee: { amount: 1, currency: 'USD' } } })),
      400,
      'INVALID_INPUT',
    );
  });

  it('scaFactor is accepted on create and on execute (TOTP included): no SCA region applies in Corridor yet', async () => {
    const p = await srv.newPlatform();
    const account = await platformUsdAccount(p);
    await fund(p, account, 1_000_000);
    const created = await p.api.post('/quotes', quote(account, { scaFactor: 'PASSKEY' }));
    expect(created.status, created.text).toBe(201);
    const executed = await p.api.post(`/quotes/${created.body.id}/execute`, { scaFactor: 'TOTP' });
    expect(executed.status, executed.text).toBe(200);
    expect(executed.body.status).toBe('PROCESSING');
    expectError(await p.api.post('/quotes', quote(account, { scaFactor: 'FINGERPRINT' })), 400, 'INVALID_INPUT');
  });

  it('the spec’s sandbox UMA domain (sandbox.grid.uma.money) steers the sandbox as the docs’ one does', async () => {
    const p = await srv.newPlatform();
    const account = await platformUsdAccount(p);
    await fund(p, account, 1_000_000);
    const res = await p.api.post(
      '/quotes',
      quote(account, {
        destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$success.usd@sandbox.grid.uma.money' },
        immediatelyExecute: true,
      }),
    );
    expect(res.status, res.text).toBe(201);
    expectError(
      await p.api.post(
        '/quotes',
        quote(account, { destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$non.existent.usd@sandbox.grid.uma.money' } }),
      ),
      404,
      'UMA_NOT_FOUND',
    );
  });
});

describe('isPlatformAccount on payment instructions (a live response field Corridor knows)', () => {
  it('is true on the platform’s internal accounts’ funding instructions and false on a customer’s', async () => {
    const p = await srv.newPlatform();
    const own = await p.api.get('/platform/internal-accounts', { query: { currency: 'USD' } });
    expect(own.body.data[0].fundingPaymentInstructions[0].isPlatformAccount).toBe(true);
    const c = await p.api.post('/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'wire-1', fullName: 'Wire Tester' });
    expect(c.status, c.text).toBe(201);
    const theirs = await p.api.get('/customers/internal-accounts', { query: { customerId: c.body.id } });
    expect(theirs.body.data.length).toBeGreaterThan(0);
    for (const a of theirs.body.data) for (const i of a.fundingPaymentInstructions) expect(i.isPlatformAccount).toBe(false);
  });
});

describe('a customer sent back with its verification status (the live request schemas declare it)', () => {
  it('is accepted on create and update, and the status stays the one Corridor decides', async () => {
    const p = await srv.newPlatform();
    // Suffix 001: PENDING at creation in the sandbox, whatever the client claims.
    const c = await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Claims Approved 001', kycStatus: 'APPROVED' });
    expect(c.status, c.text).toBe(201);
    expect(c.body.kycStatus).toBe('PENDING');
    const patched = await p.api.patch(`/customers/${c.body.id}`, {
      customerType: 'INDIVIDUAL',
      kycStatus: 'APPROVED',
      fullName: 'Still Pending 001',
    });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).toMatchObject({ kycStatus: 'PENDING', fullName: 'Still Pending 001' });
    const b = await p.api.post('/customers', {
      customerType: 'BUSINESS',
      businessInfo: { legalName: 'Status Co', country: 'US', incorporatedOn: '2018-03-14', taxId: '47-7654321' },
      kybStatus: 'APPROVED',
    });
    expect(b.status, b.text).toBe(201);
    expect(b.body.kybStatus).toBe('UNVERIFIED');
    expectError(
      await p.api.post('/customers', { customerType: 'INDIVIDUAL', fullName: 'Bad Status', kycStatus: 'VERIFIED' }),
      400,
      'INVALID_INPUT',
    );
  });
});
