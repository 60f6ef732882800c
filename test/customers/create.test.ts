/** POST /customers: both variants, generated fields, the sandbox KYC table, events, conflicts, validation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { business, create, eventsOf, expectFieldError, fieldsOf, individual, setCurrencies, type Wire } from '../helpers/customers.ts';

let srv: TestServer;
let p: PlatformHandle;
let umaDomain: string;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  umaDomain = (await p.api.get('/config')).body.umaDomain;
});
afterAll(async () => srv.close());

describe('POST /customers — individual', () => {
  it('creates an individual with every field, omitting the write-only identifier', async () => {
    const body = individual({
      platformCustomerId: 'ind-full',
      region: 'US',
      currencies: ['USD'],
      idType: 'SSN',
      identifier: '123-45-6789',
      sourceOfFundsCategories: ['SALARY', 'OTHER'],
      sourceOfFundsOtherDescription: 'Contest winnings',
      sourceOfWealthCategories: ['SAVINGS'],
      purposeOfAccount: 'P2P_TRANSFERS',
      expectedMonthlyTransactionCount: 'COUNT_UNDER_10',
      expectedMonthlyTransactionVolume: 'VOLUME_UNDER_10K',
      annualIncomeRange: 'RANGE_50K_100K',
      netWorthRange: 'UNDER_100K',
      pepStatus: 'NONE',
      endUserTermsConsent: {
        acceptedAt: '2025-07-21T17:32:28Z',
        ipAddress: '198.51.100.24',
        termsVersion: 'V1',
        acceptanceMethod: 'CHECKBOX',
      },
    });
    const res = await p.api.post('/customers', body);
    expect(res.status, res.text).toBe(201);
    const c = res.body;
    expect(c.id).toMatch(/^Customer:[0-9a-f-]{36}$/);
    expect(c).toMatchObject({
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'ind-full',
      region: 'US',
      currencies: ['USD'],
      kycStatus: 'APPROVED',
      fullName: 'Jane Smith',
      birthDate: '1990-01-15',
      nationality: 'US',
      email: 'jane.smith@example.com',
      phoneNumber: '+14155551234',
      address: body.address,
      idType: 'SSN',
      countryOfIssuance: 'US',
      sourceOfFundsCategories: ['SALARY', 'OTHER'],
      sourceOfFundsOtherDescription: 'Contest winnings',
      pepStatus: 'NONE',
      endUserTermsConsent: body.endUserTermsConsent,
      umaAddress: `$ind-full@${umaDomain}`,
      isDeleted: false,
    });
    expect(c).not.toHaveProperty('identifier');
    expect(c).not.toHaveProperty('beneficialOwners');
    expect(c.createdAt).toBe(c.updatedAt);
    const got = await p.api.get(`/customers/${c.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(c);
  });

  it('needs only customerType: generates platformCustomerId, umaAddress and the currency list', async () => {
    const c = await create(p.api, { customerType: 'INDIVIDUAL' });
    expect(c.platformCustomerId).toMatch(/^[0-9a-f]{16}$/);
    expect(c.umaAddress).toBe(`$${c.platformCustomerId}@${umaDomain}`);
    expect(c.currencies).toEqual(['USD']);
    expect(c.kycStatus).toBe('APPROVED');
    expect(c).not.toHaveProperty('endUserTermsConsent');
  });

  it('derives the generated UMA username from platformCustomerId, de-duplicating when taken', async () => {
    const a = await create(p.api, { customerType: 'INDIVIDUAL', platformCustomerId: 'User #42/X' });
    expect(a.umaAddress).toBe(`$user-42-x@${umaDomain}`);
    const b = await create(p.api, { customerType: 'INDIVIDUAL', platformCustomerId: 'user-42-x' });
    expect(b.umaAddress).toMatch(new RegExp(`^\\$user-42-x-[0-9a-f]{6}@${umaDomain.replace(/\./g, '\\.')}$`));
  });

  it('accepts a platform-chosen UMA address, case-insensitively stored lowercase', async () => {
    const c = await create(p.api, individual({ umaAddress: `$Jane.Smith+1@${umaDomain.toUpperCase()}` }));
    expect(c.umaAddress).toBe(`$jane.smith+1@${umaDomain}`);
  });
});

describe('POST /customers — sandbox KYC magic values (last 3 characters of fullName)', () => {
  const rows: [string, string, string | undefined][] = [
    ['Kyc Pending 001', 'PENDING', 'CUSTOMER.KYC_PENDING'],
    ['Kyc Rejected 002', 'REJECTED', 'CUSTOMER.KYC_REJECTED'],
    ['Kyc Unverified 003', 'UNVERIFIED', undefined],
    ['Kyc Approved 004', 'APPROVED', 'CUSTOMER.KYC_APPROVED'],
    ['Plain Name', 'APPROVED', 'CUSTOMER.KYC_APPROVED'],
  ];
  for (const [fullName, status, event] of rows) {
    it(`${fullName} → ${status}${event ? ` and ${event}` : ', no event'}`, async () => {
      const q = await srv.newPlatform();
      const c = await create(q.api, individual({ fullName }));
      expect(c.kycStatus).toBe(status);
      const events = await eventsOf(srv, q.id);
      if (event) {
        expect(events.map((e) => e.type)).toEqual([event]);
        expect(events[0]!.resourceId).toBe(c.id);
        expect(events[0]!.data).toEqual(c);
      } else {
        expect(events).toEqual([]);
      }
    });
  }

  it('a customer without fullName is APPROVED', async () => {
    const c = await create(p.api, { customerType: 'INDIVIDUAL', email: 'x@example.com' });
    expect(c.kycStatus).toBe('APPROVED');
  });

  it('production platforms ignore the magic suffix: unregulated customers start UNVERIFIED, no event', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const c = await create(prod.api, individual({ fullName: 'Kyc Pending 001' }));
    expect(c.kycStatus).toBe('UNVERIFIED');
    expect(await eventsOf(srv, prod.id)).toEqual([]);
  });
});

describe('POST /customers — business', () => {
  it('creates a business that starts kybStatus UNVERIFIED, with no event', async () => {
    const q = await srv.newPlatform();
    const body = business(
      { platformCustomerId: 'biz-acme-001', region: 'US', currencies: ['USD'], phoneNumber: '+14155559876' },
      {
        registrationNumber: 'REG-001',
        naicsCode: '541511',
        sourceOfFundsCategories: ['OPERATING_REVENUE'],
        expectedRecipientJurisdictions: ['US', 'MX'],
        primaryContactFirstName: 'Jane',
        primaryContactLastName: 'Smith',
      },
    );
    const res = await q.api.post('/customers', body);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      customerType: 'BUSINESS',
      platformCustomerId: 'biz-acme-001',
      kybStatus: 'UNVERIFIED',
      businessInfo: body.businessInfo,
      address: body.address,
      email: 'finance@acme.com',
      phoneNumber: '+14155559876',
      currencies: ['USD'],
      isDeleted: false,
      beneficialOwners: [],
    });
    expect(res.body).not.toHaveProperty('kycStatus');
    expect(res.body).not.toHaveProperty('fullName');
    expect(await eventsOf(srv, q.id)).toEqual([]);
  });

  it('requires businessInfo with legalName, country, taxId and incorporatedOn', async () => {
    expectFieldError(await p.api.post('/customers', { customerType: 'BUSINESS' }), 'businessInfo');
    const res = await p.api.post('/customers', { customerType: 'BUSINESS', businessInfo: { doingBusinessAs: 'Acme' } });
    expect(fieldsOf(expectFieldError(res, 'businessInfo.legalName'))).toEqual(
      expect.arrayContaining(['businessInfo.legalName', 'businessInfo.country', 'businessInfo.taxId', 'businessInfo.incorporatedOn']),
    );
  });

  it('rejects individual fields on a business, and bad business field values, with paths', async () => {
    expectFieldError(await p.api.post('/customers', business({ fullName: 'Jane' })), 'fullName');
    expectFieldError(await p.api.post('/customers', business({}, { naicsCode: '1' })), 'businessInfo.naicsCode');
    expectFieldError(await p.api.post('/customers', business({}, { entityType: 'GUILD' })), 'businessInfo.entityType');
    expectFieldError(await p.api.post('/customers', business({}, { taxId: '12345' })), 'businessInfo.taxId');
    expectFieldError(await p.api.post('/customers', business({}, { incorporatedOn: '2999-01-01' })), 'businessInfo.incorporatedOn');
    expectFieldError(
      await p.api.post('/customers', business({}, { sourceOfFundsCategories: ['OTHER'] })),
      'businessInfo.sourceOfFundsOtherDescription',
    );
    expectFieldError(
      await p.api.post('/customers', business({}, { purposeOfAccount: 'OTHER' })),
      'businessInfo.purposeOfAccountOtherDescription',
    );
    expectFieldError(
      await p.api.post('/customers', business({}, { countriesOfOperation: ['usa'] })),
      'businessInfo.countriesOfOperation.0',
    );
  });
});

describe('POST /customers — conflicts', () => {
  it('409 CONFLICT on a platformCustomerId already used by an active customer; free again after delete', async () => {
    const first = await create(p.api, individual({ platformCustomerId: 'dup-1' }));
    const res = await p.api.post('/customers', business({ platformCustomerId: 'dup-1' }));
    expectError(res, 409, 'CONFLICT');
    expect(fieldsOf(res)).toEqual(['platformCustomerId']);
    expect((await p.api.delete(`/customers/${first.id}`)).status).toBe(200);
    const again = await create(p.api, individual({ platformCustomerId: 'dup-1' }));
    expect(again.id).not.toBe(first.id);
  });

  it('the same platformCustomerId on another platform is fine', async () => {
    await create(p.api, individual({ platformCustomerId: 'shared-id' }));
    const q = await srv.newPlatform();
    await create(q.api, individual({ platformCustomerId: 'shared-id' }));
  });

  it('409 UMA_ADDRESS_EXISTS on a taken UMA address, in any letter case', async () => {
    await create(p.api, individual({ umaAddress: `$taken@${umaDomain}` }));
    expectError(await p.api.post('/customers', individual({ umaAddress: `$taken@${umaDomain}` })), 409, 'UMA_ADDRESS_EXISTS');
    expectError(await p.api.post('/customers', business({ umaAddress: `$TAKEN@${umaDomain}` })), 409, 'UMA_ADDRESS_EXISTS');
  });

  it('concurrent creates with one platformCustomerId: exactly one wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        p.api.post('/customers', individual({ platformCustomerId: 'race-1', umaAddress: `$race-${i}@${umaDomain}` })),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expectError(r, 409, 'CONFLICT');
  });

  it('concurrent creates with one UMA address: exactly one wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        p.api.post('/customers', individual({ platformCustomerId: `uma-race-${i}`, umaAddress: `$uma-race@${umaDomain}` })),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expectError(r, 409, 'UMA_ADDRESS_EXISTS');
  });
});

describe('POST /customers — Idempotency-Key', () => {
  it('a replay returns the first response and creates nothing new; another body with the key is 409', async () => {
    const q = await srv.newPlatform();
    const headers = { 'idempotency-key': 'create-cust-1' };
    const first = await q.api.post('/customers', individual({ fullName: 'Once 001' }), { headers });
    expect(first.status, first.text).toBe(201);
    const again = await q.api.post('/customers', individual({ fullName: 'Once 001' }), { headers });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-hit')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await q.api.get('/customers')).body.totalCount).toBe(1);
    expect((await eventsOf(srv, q.id)).map((e) => e.type)).toEqual(['CUSTOMER.KYC_PENDING']);
    expectError(await q.api.post('/customers', individual({ fullName: 'Other' }), { headers }), 409, 'CONFLICT');
    // A failed request leaves no key behind: fixing the body and retrying with the key works.
    const bad = await q.api.post('/customers', individual({ currencies: ['EUR'] }), { headers: { 'idempotency-key': 'create-cust-2' } });
    expect(bad.status).toBe(400);
    expect(
      (await q.api.post('/customers', individual({ currencies: ['USD'] }), { headers: { 'idempotency-key': 'create-cust-2' } })).status,
    ).toBe(201);
  });
});

describe('POST /customers — UMA address rules', () => {
  it('400 INVALID_UMA_ADDRESS for a bad shape, a foreign domain or a too-long username', async () => {
    for (const uma of [
      `jane@${umaDomain}`,
      `$jane smith@${umaDomain}`,
      '$jane@other.example.com',
      '$jane',
      `$${'a'.repeat(64)}@${umaDomain}`,
    ]) {
      const res = await p.api.post('/customers', individual({ umaAddress: uma }));
      expectFieldError(res, 'umaAddress', 'INVALID_UMA_ADDRESS');
    }
    // 63 characters after the `$` is the longest allowed username.
    await create(p.api, individual({ umaAddress: `$${'b'.repeat(63)}@${umaDomain}` }));
  });
});

describe('POST /customers — currencies and accounts', () => {
  it('400 INVALID_CURRENCY for a currency the platform does not support, naming the index', async () => {
    const res = await p.api.post('/customers', individual({ currencies: ['USD', 'EUR'] }));
    expectFieldError(res, 'currencies.1', 'INVALID_CURRENCY');
    expectFieldError(await p.api.post('/customers', individual({ currencies: ['ZZZ'] })), 'currencies.0', 'INVALID_CURRENCY');
  });

  it('400 for a malformed, duplicated or empty currency list', async () => {
    expectFieldError(await p.api.post('/customers', individual({ currencies: ['usd'] })), 'currencies.0');
    expectFieldError(await p.api.post('/customers', individual({ currencies: ['USD', 'USD'] })), 'currencies');
    expectFieldError(await p.api.post('/customers', individual({ currencies: [] })), 'currencies');
  });

  it('creates one holding account per currency, holder name = customer name', async () => {
    const q = await srv.newPlatform();
    await setCurrencies(q.api, ['USD', 'EUR', 'USDC']);
    const c = await create(q.api, individual({ fullName: 'Holder Name', currencies: ['USD', 'EUR', 'USDC'] }));
    const res = await q.api.get('/customers/internal-accounts', { query: { customerId: c.id } });
    expect(res.status, res.text).toBe(200);
    const accounts = res.body.data as Wire[];
    expect(accounts.map((a) => `${a.type}:${a.balance.currency.code}`).sort()).toEqual([
      'INTERNAL_CRYPTO:USDC',
      'INTERNAL_FIAT:EUR',
      'INTERNAL_FIAT:USD',
    ]);
    for (const a of accounts) {
      expect(a.customerId).toBe(c.id);
      expect(a.status).toBe('ACTIVE');
      expect(a.balance.amount).toBe(0);
    }
    const usd = accounts.find((a) => a.balance.currency.code === 'USD');
    expect(usd.fundingPaymentInstructions[0].accountOrWalletInfo).toMatchObject({
      accountType: 'US_ACCOUNT',
      accountHolderName: 'Holder Name',
    });
    const biz = await create(q.api, business({ currencies: ['EUR'] }));
    const bizAccounts = (await q.api.get('/customers/internal-accounts', { query: { customerId: biz.id } })).body.data;
    expect(bizAccounts).toHaveLength(1);
    expect(bizAccounts[0].fundingPaymentInstructions[0].accountOrWalletInfo.accountHolderName).toBe('Acme Corporation');
    expect((await srv.ledger(q.id)).ok).toBe(true);
  });

  it('gives every customer an EMBEDDED_WALLET in USDB when the platform supports USDB', async () => {
    const q = await srv.newPlatform();
    await setCurrencies(q.api, ['USD', 'USDB']);
    const a = await create(q.api, individual({ currencies: ['USD'] }));
    const b = await create(q.api, individual({ currencies: ['USD', 'USDB'] }));
    const c = await create(q.api, business()); // currencies omitted: every supported currency
    expect(c.currencies).toEqual(['USD', 'USDB']);
    for (const cust of [a, b, c]) {
      const accounts = (await q.api.get('/customers/internal-accounts', { query: { customerId: cust.id } })).body.data as Wire[];
      expect(accounts.map((x) => `${x.type}:${x.balance.currency.code}`).sort()).toEqual(['EMBEDDED_WALLET:USDB', 'INTERNAL_FIAT:USD']);
      const wallet = accounts.find((x) => x.type === 'EMBEDDED_WALLET');
      expect(wallet.privateEnabled).toBe(false);
      expect(wallet.fundingPaymentInstructions[0].accountOrWalletInfo.accountType).toBe('LAYER2_WALLET');
    }
    // Without USDB support there is no wallet.
    const r = await create(p.api, individual());
    const accounts = (await p.api.get('/customers/internal-accounts', { query: { customerId: r.id } })).body.data as Wire[];
    expect(accounts.map((x) => x.type)).toEqual(['INTERNAL_FIAT']);
  });
});

describe('POST /customers — validation', () => {
  it('rejects unknown fields at every depth, naming the path', async () => {
    expectFieldError(await p.api.post('/customers', individual({ nickname: 'J' })), 'nickname');
    expectFieldError(
      await p.api.post('/customers', individual({ address: { line1: 'x', postalCode: '1', country: 'US', planet: 'Earth' } })),
      'address.planet',
    );
    expectFieldError(await p.api.post('/customers', business({}, { ceo: 'Wile E.' })), 'businessInfo.ceo');
    expectFieldError(
      await p.api.post(
        '/customers',
        individual({
          endUserTermsConsent: {
            acceptedAt: '2025-07-21T17:32:28Z',
            ipAddress: '1.2.3.4',
            termsVersion: 'V1',
            acceptanceMethod: 'CHECKBOX',
            extra: 1,
          },
        }),
      ),
      'endUserTermsConsent.extra',
    );
  });

  it('rejects read-only fields the live request schema does not declare (id, isDeleted) as unknown', async () => {
    expectFieldError(await p.api.post('/customers', individual({ id: 'Customer:x' })), 'id');
    expectFieldError(await p.api.post('/customers', individual({ isDeleted: false })), 'isDeleted');
    // The verification status is declared there: accepted and ignored (test/wire/live-requests.test.ts).
    expectFieldError(await p.api.post('/customers', individual({ kycStatus: 'VERIFIED' })), 'kycStatus');
  });

  it('requires a known customerType', async () => {
    expectFieldError(await p.api.post('/customers', {}), 'customerType');
    expectFieldError(await p.api.post('/customers', { customerType: 'ROBOT' }), 'customerType');
    expectFieldError(await p.api.post('/customers', { customerType: 7 }), 'customerType');
  });

  it('checks each field format', async () => {
    expectFieldError(await p.api.post('/customers', individual({ email: 'not-an-email' })), 'email');
    expectFieldError(await p.api.post('/customers', individual({ phoneNumber: '4155551234' })), 'phoneNumber');
    expectFieldError(await p.api.post('/customers', individual({ birthDate: '15/01/1990' })), 'birthDate');
    expectFieldError(await p.api.post('/customers', individual({ birthDate: '2999-01-01' })), 'birthDate');
    expectFieldError(await p.api.post('/customers', individual({ nationality: 'USA' })), 'nationality');
    expectFieldError(await p.api.post('/customers', individual({ region: 'us' })), 'region');
    expectFieldError(await p.api.post('/customers', individual({ fullName: '' })), 'fullName');
    expectFieldError(await p.api.post('/customers', individual({ platformCustomerId: '' })), 'platformCustomerId');
    expectFieldError(await p.api.post('/customers', individual({ address: { line1: 'x' } })), 'address.postalCode');
    expectFieldError(await p.api.post('/customers', individual({ pepStatus: 'MAYBE' })), 'pepStatus');
  });

  it('checks identity documents: SSN/ITIN only, ###-##-####, issued in the US', async () => {
    expectFieldError(await p.api.post('/customers', individual({ idType: 'EIN', identifier: '12-3456789' })), 'idType');
    expectFieldError(await p.api.post('/customers', individual({ identifier: '123-45-6789' })), 'idType');
    expectFieldError(await p.api.post('/customers', individual({ idType: 'SSN', identifier: '123456789' })), 'identifier');
    expectFieldError(await p.api.post('/customers', individual({ idType: 'ITIN', identifier: '123-45-6789' })), 'identifier');
    expectFieldError(
      await p.api.post('/customers', individual({ idType: 'SSN', identifier: '123-45-6789', countryOfIssuance: 'CA' })),
      'countryOfIssuance',
    );
    const itin = await create(p.api, individual({ idType: 'ITIN', identifier: '912-70-1234' }));
    expect(itin.idType).toBe('ITIN');
  });

  it('requires the OTHER descriptions of the due-diligence fields', async () => {
    expectFieldError(await p.api.post('/customers', individual({ sourceOfFundsCategories: ['OTHER'] })), 'sourceOfFundsOtherDescription');
    expectFieldError(await p.api.post('/customers', individual({ sourceOfWealthCategories: ['OTHER'] })), 'sourceOfWealthOtherDescription');
    expectFieldError(await p.api.post('/customers', individual({ purposeOfAccount: 'OTHER' })), 'purposeOfAccountOtherDescription');
  });

  it('400 END_USER_TERMS_VERSION_NOT_FOUND for an unknown terms version', async () => {
    const res = await p.api.post(
      '/customers',
      individual({
        endUserTermsConsent: { acceptedAt: '2025-07-21T17:32:28Z', ipAddress: '1.2.3.4', termsVersion: 'V9', acceptanceMethod: 'CHECKBOX' },
      }),
    );
    expectFieldError(res, 'endUserTermsConsent.termsVersion', 'END_USER_TERMS_VERSION_NOT_FOUND');
  });

  it('400 (never 500) for bodies that are not an object', async () => {
    for (const raw of ['[]', '"x"', 'null', '42', '{"customerType":', '']) {
      const res = await p.api.post('/customers', undefined, { raw, headers: { 'content-type': 'application/json' } });
      expect(res.status, `${raw} → ${res.text}`).toBe(400);
      expect(res.body.code).toBe('INVALID_INPUT');
    }
  });

  it('creates nothing when it fails', async () => {
    const q = await srv.newPlatform();
    await q.api.post('/customers', individual({ currencies: ['EUR'] }));
    await q.api.post('/customers', individual({ umaAddress: '$x@elsewhere.example' }));
    expect((await q.api.get('/customers')).body.totalCount).toBe(0);
    expect((await q.api.get('/customers/internal-accounts')).body.totalCount).toBe(0);
  });
});

describe('POST /customers — auth', () => {
  it('401 without or with wrong credentials', async () => {
    expectError(await srv.anon.post('/customers', individual()), 401, 'UNAUTHORIZED');
    const wrong = p.api.with({ basic: { id: p.creds.id, secret: 'wrong' } });
    expectError(await wrong.post('/customers', individual()), 401, 'UNAUTHORIZED');
  });

  it('403 with a VIEW-only token; VIEW is enough to read', async () => {
    const t = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
    expect(t.status).toBe(201);
    const viewer = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    expectError(await viewer.post('/customers', individual()), 403, 'FORBIDDEN');
    expect((await viewer.get('/customers')).status).toBe(200);
  });
});
