/**
 * Fixtures over real HTTP: POST /sandbox/fixtures creates a file's customers, balances and external
 * accounts in one transaction (an invalid entry writes nothing), GET /sandbox/fixtures writes the
 * state back, and that export loaded into a fresh platform exports the same again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { expectLedgerClean, usAccountInfo, type Wire } from '../helpers/payments.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

const ADDRESS = { line1: '1 Fixture Way', city: 'Austin', state: 'TX', postalCode: '73301', country: 'US' };

function fixture(): Wire {
  return {
    version: 1,
    customers: [
      {
        ref: 'alice',
        customer: {
          customerType: 'INDIVIDUAL',
          platformCustomerId: 'alice-1',
          fullName: 'Alice Doe',
          birthDate: '1991-02-03',
          nationality: 'US',
          address: ADDRESS,
          currencies: ['USD'],
        },
        balances: [{ currency: 'USD', amount: 125_000 }],
      },
      {
        ref: 'bob',
        customer: {
          customerType: 'INDIVIDUAL',
          platformCustomerId: 'bob-1',
          fullName: 'Bob Roe 001',
          birthDate: '1985-07-08',
          nationality: 'US',
          address: ADDRESS,
        },
      },
    ],
    externalAccounts: [
      { ref: 'alice-bank', customerRef: 'alice', currency: 'USD', accountInfo: usAccountInfo('001') },
      { ref: 'platform-bank', currency: 'USD', accountInfo: { ...usAccountInfo('009'), accountNumber: '99887766009' } },
    ],
    platformBalances: [{ currency: 'USD', amount: 5_000_000 }],
  };
}

async function counts(p: PlatformHandle): Promise<{ customers: number; external: number }> {
  const c = await p.api.get('/customers');
  const e = await p.api.get('/platform/external-accounts');
  return { customers: c.body.totalCount ?? c.body.data.length, external: e.body.data.length };
}

/** An export with the platform-specific UMA domain taken out, for comparing two platforms' exports. */
function portable(f: Wire): Wire {
  return JSON.parse(JSON.stringify(f).replace(/@[a-z0-9.-]+\.corridor\.localhost/g, '@<domain>'));
}

describe('fixtures', () => {
  it('loads customers, balances and external accounts, and the API shows them', async () => {
    const p = await srv.newPlatform();
    const res = await p.api.post('/sandbox/fixtures', fixture());
    expect(res.status, res.text).toBe(201);
    expect(res.body.customers.map((c: Wire) => c.ref)).toEqual(['alice', 'bob']);
    expect(res.body.externalAccounts.map((c: Wire) => c.ref)).toEqual(['alice-bank', 'platform-bank']);
    const alice = res.body.customers[0].id;
    expect((await p.api.get(`/customers/${alice}`)).body).toMatchObject({ platformCustomerId: 'alice-1', kycStatus: 'APPROVED' });
    expect((await p.api.get(`/customers/${res.body.customers[1].id}`)).body.kycStatus).toBe('PENDING');
    const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: alice } });
    expect(accounts.body.data.find((a: Wire) => a.balance.currency.code === 'USD').balance.amount).toBe(125_000);
    const ext = await p.api.get(`/customers/external-accounts/${res.body.externalAccounts[0].id}`);
    expect(ext.body.customerId).toBe(alice);
    const own = await p.api.get('/platform/internal-accounts', { query: { currency: 'USD' } });
    expect(own.body.data[0].balance.amount).toBe(5_000_000);
    await expectLedgerClean(srv, p.id);
  });

  it('export, then load into a fresh platform: the same state exports again', async () => {
    const a = await srv.newPlatform();
    expect((await a.api.post('/sandbox/fixtures', fixture())).status).toBe(201);
    const first = await a.api.get('/sandbox/fixtures');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      version: 1,
      customers: [
        { ref: 'alice-1', balances: [{ currency: 'USD', amount: 125_000 }] },
        { ref: 'bob-1', customer: { fullName: 'Bob Roe 001' } },
      ],
      platformBalances: [{ currency: 'USD', amount: 5_000_000 }],
    });
    expect(first.body.externalAccounts).toHaveLength(2);
    const b = await srv.newPlatform();
    const loaded = await b.api.post('/sandbox/fixtures', first.body);
    expect(loaded.status, loaded.text).toBe(201);
    const second = await b.api.get('/sandbox/fixtures');
    expect(portable(second.body)).toEqual(portable(first.body));
    expect(second.body.customers[0].customer.umaAddress).toMatch(/@p.*\.corridor\.localhost$/);
    await expectLedgerClean(srv, b.id);
  });

  it('an invalid entry is a 400 naming it, and nothing is written', async () => {
    const p = await srv.newPlatform();
    const bad = fixture();
    bad.customers[1].customer.birthDate = 'not-a-date';
    const before = await counts(p);
    const res = await p.api.post('/sandbox/fixtures', bad);
    expectError(res, 400, 'INVALID_INPUT');
    expect(JSON.stringify(res.body.details)).toContain('birthDate');
    // A problem the service finds (not the schema): the second customer's duplicate platformCustomerId.
    const dup = fixture();
    dup.customers[1].customer.platformCustomerId = 'alice-1';
    const res2 = await p.api.post('/sandbox/fixtures', dup);
    expect(res2.status).toBe(409);
    expect(res2.body.details.errors[0].field).toBe('customers.1.customer.platformCustomerId');
    const unknownRef = fixture();
    unknownRef.externalAccounts[0].customerRef = 'carol';
    const res3 = expectError(await p.api.post('/sandbox/fixtures', unknownRef), 400, 'INVALID_INPUT');
    expect(res3.body.details.errors[0].field).toBe('externalAccounts.0.customerRef');
    const noAccount = fixture();
    noAccount.customers[0].balances = [{ currency: 'EUR', amount: 1 }];
    const res4 = expectError(await p.api.post('/sandbox/fixtures', noAccount), 400, 'INVALID_INPUT');
    expect(res4.body.details.errors[0].field).toBe('customers.0.balances.0.currency');
    expectError(await p.api.post('/sandbox/fixtures', { ...fixture(), extra: true }), 400, 'INVALID_INPUT');
    expectError(await p.api.post('/sandbox/fixtures', { ...fixture(), version: 2 }), 400, 'INVALID_INPUT');
    expect(await counts(p)).toEqual(before);
    const own = await p.api.get('/platform/internal-accounts', { query: { currency: 'USD' } });
    expect(own.body.data[0].balance.amount).toBe(0);
    await expectLedgerClean(srv, p.id);
  });

  it('needs credentials and a sandbox platform', async () => {
    expectError(await srv.anon.get('/sandbox/fixtures'), 401, 'UNAUTHORIZED');
    expectError(await srv.anon.post('/sandbox/fixtures', fixture()), 401, 'UNAUTHORIZED');
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    expectError(await prod.api.get('/sandbox/fixtures'), 403, 'FORBIDDEN');
    expectError(await prod.api.post('/sandbox/fixtures', fixture()), 403, 'FORBIDDEN');
  });
});
