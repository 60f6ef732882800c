/** GET, PATCH and DELETE /customers/{customerId}, and GET /customers/end-user-terms. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { business, create, eventsOf, expectFieldError, individual, manualClock, setCurrencies, type Wire } from '../helpers/customers.ts';

const clock = manualClock();
let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let umaDomain: string;

beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
  p = await srv.newPlatform();
  other = await srv.newPlatform();
  umaDomain = (await p.api.get('/config')).body.umaDomain;
  await setCurrencies(p.api, ['USD', 'EUR', 'USDC']);
});
afterAll(async () => srv.close());

async function accountsOf(customerId: string): Promise<Wire[]> {
  const res = await p.api.get('/customers/internal-accounts', { query: { customerId, limit: 100 } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

describe('GET /customers/{customerId}', () => {
  it('returns the customer; accepts a percent-encoded id', async () => {
    const c = await create(p.api, individual());
    const res = await p.api.get(`/customers/${c.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(c);
    expect((await p.api.get(`/customers/${encodeURIComponent(c.id)}`)).body).toEqual(c);
  });

  it("404 USER_NOT_FOUND for an unknown id and for another platform's customer", async () => {
    expectError(await p.api.get('/customers/Customer:019542f5-b3e7-7d02-8000-000000000001'), 404, 'USER_NOT_FOUND');
    expectError(await p.api.get('/customers/nonsense'), 404, 'USER_NOT_FOUND');
    const theirs = await create(other.api, individual());
    expectError(await p.api.get(`/customers/${theirs.id}`), 404, 'USER_NOT_FOUND');
    expectError(await p.api.patch(`/customers/${theirs.id}`, { customerType: 'INDIVIDUAL', fullName: 'Mine' }), 404, 'USER_NOT_FOUND');
    expectError(await p.api.delete(`/customers/${theirs.id}`), 404, 'USER_NOT_FOUND');
    expect((await other.api.get(`/customers/${theirs.id}`)).body.fullName).toBe('Jane Smith');
  });

  it('401 without credentials', async () => {
    const c = await create(p.api, individual());
    expectError(await srv.anon.get(`/customers/${c.id}`), 401, 'UNAUTHORIZED');
    expectError(await srv.anon.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL' }), 401, 'UNAUTHORIZED');
    expectError(await srv.anon.delete(`/customers/${c.id}`), 401, 'UNAUTHORIZED');
  });
});

describe('PATCH /customers/{customerId}', () => {
  it('updates the given fields only, moves updatedAt, keeps kycStatus', async () => {
    const c = await create(p.api, individual({ fullName: 'Kyc Pending 001', idType: 'SSN', identifier: '123-45-6789' }));
    expect(c.kycStatus).toBe('PENDING');
    clock.advance(60_000);
    const res = await p.api.patch(`/customers/${c.id}`, {
      customerType: 'INDIVIDUAL',
      fullName: 'John Smith',
      birthDate: '1985-06-15',
      address: { line1: '456 Market St', city: 'Seattle', state: 'WA', postalCode: '98101', country: 'US' },
      pepStatus: 'DOMESTIC',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      ...c,
      fullName: 'John Smith',
      birthDate: '1985-06-15',
      address: { line1: '456 Market St', city: 'Seattle', state: 'WA', postalCode: '98101', country: 'US' },
      pepStatus: 'DOMESTIC',
      updatedAt: clock.iso(),
    });
    expect(res.body.createdAt).toBe(c.createdAt);
    expect((await p.api.get(`/customers/${c.id}`)).body).toEqual(res.body);
  });

  it('a request that changes nothing leaves updatedAt alone', async () => {
    const c = await create(p.api, individual());
    clock.advance(60_000);
    const res = await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', fullName: c.fullName, currencies: c.currencies });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual(c);
    expect((await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL' })).body).toEqual(c);
  });

  it('currencies replaces the list and opens accounts for new currencies, keeping the old ones', async () => {
    const c = await create(p.api, individual({ currencies: ['USD'] }));
    expect((await accountsOf(c.id)).map((a) => a.balance.currency.code)).toEqual(['USD']);
    const res = await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', currencies: ['EUR', 'USDC'] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.currencies).toEqual(['EUR', 'USDC']);
    const after = await accountsOf(c.id);
    expect(after.map((a) => `${a.type}:${a.balance.currency.code}`).sort()).toEqual([
      'INTERNAL_CRYPTO:USDC',
      'INTERNAL_FIAT:EUR',
      'INTERNAL_FIAT:USD',
    ]);
    // Putting USD back re-uses its account rather than opening a second one.
    const back = await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', currencies: ['USD', 'EUR'] });
    expect(back.body.currencies).toEqual(['USD', 'EUR']);
    expect(await accountsOf(c.id)).toHaveLength(3);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('adds the EMBEDDED_WALLET when the platform has started supporting USDB', async () => {
    const q = await srv.newPlatform();
    const c = await create(q.api, individual());
    await setCurrencies(q.api, ['USD', 'USDB']);
    const res = await q.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', currencies: ['USD'] });
    expect(res.status, res.text).toBe(200);
    const accounts = (await q.api.get('/customers/internal-accounts', { query: { customerId: c.id } })).body.data as Wire[];
    expect(accounts.map((a) => `${a.type}:${a.balance.currency.code}`).sort()).toEqual(['EMBEDDED_WALLET:USDB', 'INTERNAL_FIAT:USD']);
  });

  it('400 INVALID_CURRENCY for an unsupported currency, changing nothing', async () => {
    const c = await create(p.api, individual({ currencies: ['USD'] }));
    expectFieldError(
      await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', currencies: ['USD', 'MXN'] }),
      'currencies.1',
      'INVALID_CURRENCY',
    );
    expect((await p.api.get(`/customers/${c.id}`)).body).toEqual(c);
  });

  it('merges businessInfo field by field', async () => {
    const b = await create(p.api, business());
    const res = await p.api.patch(`/customers/${b.id}`, {
      customerType: 'BUSINESS',
      businessInfo: { legalName: 'New Tech Solutions LLC', registrationNumber: 'BRN-987654321' },
      address: { line1: '100 Technology Parkway', city: 'Bellevue', state: 'WA', postalCode: '98004', country: 'US' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.businessInfo).toEqual({ ...b.businessInfo, legalName: 'New Tech Solutions LLC', registrationNumber: 'BRN-987654321' });
    expect(res.body.address).toEqual({
      line1: '100 Technology Parkway',
      city: 'Bellevue',
      state: 'WA',
      postalCode: '98004',
      country: 'US',
    });
    expect(res.body.kybStatus).toBe('UNVERIFIED');
    expectFieldError(
      await p.api.patch(`/customers/${b.id}`, { customerType: 'BUSINESS', businessInfo: { taxId: 'EIN-123' } }),
      'businessInfo.taxId',
    );
    expectFieldError(
      await p.api.patch(`/customers/${b.id}`, { customerType: 'BUSINESS', businessInfo: { purposeOfAccount: 'OTHER' } }),
      'businessInfo.purposeOfAccountOtherDescription',
    );
    const ok = await p.api.patch(`/customers/${b.id}`, {
      customerType: 'BUSINESS',
      businessInfo: { purposeOfAccount: 'OTHER', purposeOfAccountOtherDescription: 'Escrow' },
    });
    expect(ok.status, ok.text).toBe(200);
  });

  it('changes the UMA address; 409 UMA_ADDRESS_EXISTS when taken; 400 when malformed', async () => {
    const a = await create(p.api, individual({ umaAddress: `$patch-a@${umaDomain}` }));
    const b = await create(p.api, individual({ umaAddress: `$patch-b@${umaDomain}` }));
    const res = await p.api.patch(`/customers/${a.id}`, { customerType: 'INDIVIDUAL', umaAddress: `$Patch-A2@${umaDomain}` });
    expect(res.status, res.text).toBe(200);
    expect(res.body.umaAddress).toBe(`$patch-a2@${umaDomain}`);
    expectError(
      await p.api.patch(`/customers/${a.id}`, { customerType: 'INDIVIDUAL', umaAddress: `$patch-b@${umaDomain}` }),
      409,
      'UMA_ADDRESS_EXISTS',
    );
    expectFieldError(
      await p.api.patch(`/customers/${a.id}`, { customerType: 'INDIVIDUAL', umaAddress: 'patch-c' }),
      'umaAddress',
      'INVALID_UMA_ADDRESS',
    );
    // Setting its own address again is not a conflict; the freed address can be taken by another.
    expect((await p.api.patch(`/customers/${a.id}`, { customerType: 'INDIVIDUAL', umaAddress: `$patch-a2@${umaDomain}` })).status).toBe(
      200,
    );
    expect((await p.api.patch(`/customers/${b.id}`, { customerType: 'INDIVIDUAL', umaAddress: `$patch-a@${umaDomain}` })).status).toBe(200);
  });

  it('records End User Terms consent later on', async () => {
    const c = await create(p.api, individual());
    const consent = {
      acceptedAt: '2031-03-01T12:00:00Z',
      ipAddress: '2001:db8::1',
      termsVersion: 'V1',
      acceptanceMethod: 'CLICK_TO_ACCEPT',
    };
    const res = await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', endUserTermsConsent: consent });
    expect(res.status, res.text).toBe(200);
    expect(res.body.endUserTermsConsent).toEqual(consent);
    expectFieldError(
      await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', endUserTermsConsent: { ...consent, termsVersion: 'V0' } }),
      'endUserTermsConsent.termsVersion',
      'END_USER_TERMS_VERSION_NOT_FOUND',
    );
  });

  it('changes email or phone, but not both in one request', async () => {
    const c = await create(p.api, individual());
    expect((await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', email: 'new@example.com' })).body.email).toBe(
      'new@example.com',
    );
    expect((await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', phoneNumber: '+14155559876' })).body.phoneNumber).toBe(
      '+14155559876',
    );
    const both = await p.api.patch(`/customers/${c.id}`, {
      customerType: 'INDIVIDUAL',
      email: 'a@example.com',
      phoneNumber: '+14155550000',
    });
    expectFieldError(both, 'email');
    expectFieldError(both, 'phoneNumber');
  });

  it('400 with field paths for bad input', async () => {
    const c = await create(p.api, individual());
    const b = await create(p.api, business());
    expectFieldError(await p.api.patch(`/customers/${c.id}`, { fullName: 'No Type' }), 'customerType');
    expectFieldError(
      await p.api.patch(`/customers/${c.id}`, { customerType: 'BUSINESS', businessInfo: { legalName: 'X' } }),
      'customerType',
    );
    expectFieldError(await p.api.patch(`/customers/${b.id}`, { customerType: 'INDIVIDUAL', fullName: 'X' }), 'customerType');
    expectFieldError(
      await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', platformCustomerId: 'new' }),
      'platformCustomerId',
    );
    expectFieldError(await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', region: 'US' }), 'region');
    expectFieldError(await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', kycStatus: 'VERIFIED' }), 'kycStatus');
    expectFieldError(
      await p.api.patch(`/customers/${c.id}`, {
        customerType: 'INDIVIDUAL',
        address: { line1: 'x', postalCode: '1', country: 'US', zip: '1' },
      }),
      'address.zip',
    );
    expectFieldError(
      await p.api.patch(`/customers/${b.id}`, { customerType: 'BUSINESS', businessInfo: { motto: 'x' } }),
      'businessInfo.motto',
    );
    expectFieldError(
      await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', idType: 'SSN', identifier: '12-345' }),
      'identifier',
    );
    expectFieldError(
      await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', sourceOfWealthCategories: ['OTHER'] }),
      'sourceOfWealthOtherDescription',
    );
    expectFieldError(await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', currencies: [] }), 'currencies');
    const raw = await p.api.patch(`/customers/${c.id}`, undefined, {
      raw: '{"customerType":"INDIVIDUAL",',
      headers: { 'content-type': 'application/json' },
    });
    expectError(raw, 400, 'INVALID_INPUT');
    expect((await p.api.get(`/customers/${c.id}`)).body).toEqual(c);
  });

  it('403 with a VIEW-only token', async () => {
    const c = await create(p.api, individual());
    const t = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
    const viewer = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    expectError(await viewer.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', fullName: 'X' }), 403, 'FORBIDDEN');
    expectError(await viewer.delete(`/customers/${c.id}`), 403, 'FORBIDDEN');
    expect((await viewer.get(`/customers/${c.id}`)).status).toBe(200);
  });
});

describe('DELETE /customers/{customerId}', () => {
  it('soft-deletes: returns the customer with isDeleted; a second delete is 410 CUSTOMER_DELETED', async () => {
    const c = await create(p.api, individual({ platformCustomerId: 'to-delete', umaAddress: `$to-delete@${umaDomain}` }));
    clock.advance(60_000);
    const res = await p.api.delete(`/customers/${c.id}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ ...c, isDeleted: true, updatedAt: clock.iso() });
    expectError(await p.api.delete(`/customers/${c.id}`), 410, 'CUSTOMER_DELETED');
    // Still readable by id, marked deleted; no longer changeable.
    const got = await p.api.get(`/customers/${c.id}`);
    expect(got.status).toBe(200);
    expect(got.body.isDeleted).toBe(true);
    expectError(await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', fullName: 'Back' }), 410, 'CUSTOMER_DELETED');
    // Its platformCustomerId and UMA address are free again.
    const again = await create(p.api, individual({ platformCustomerId: 'to-delete', umaAddress: `$to-delete@${umaDomain}` }));
    expect(again.id).not.toBe(c.id);
    // Its accounts stay (they may hold money).
    expect(await accountsOf(c.id)).toHaveLength(c.currencies.length);
    expect(c.currencies).toEqual(['USD', 'EUR', 'USDC']);
  });

  it('concurrent deletes: one 200, the rest 410', async () => {
    const c = await create(p.api, business());
    const results = await Promise.all(Array.from({ length: 4 }, () => p.api.delete(`/customers/${c.id}`)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 410, 410, 410]);
  });

  it('404 for an unknown customer', async () => {
    expectError(await p.api.delete('/customers/Customer:019542f5-b3e7-7d02-8000-00000000dead'), 404, 'USER_NOT_FOUND');
  });

  it('writes no customer events', async () => {
    const q = await srv.newPlatform();
    const c = await create(q.api, individual({ fullName: 'Kyc Unverified 003' }));
    await q.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', fullName: 'Renamed 001' });
    await q.api.delete(`/customers/${c.id}`);
    expect(await eventsOf(srv, q.id)).toEqual([]);
  });
});

describe('GET /customers/end-user-terms', () => {
  it('returns the current version and its URL', async () => {
    const res = await p.api.get('/customers/end-user-terms');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ version: 'V1', url: expect.stringMatching(/^https:\/\//) });
  });

  it('401 without credentials', async () => {
    expectError(await srv.anon.get('/customers/end-user-terms'), 401, 'UNAUTHORIZED');
  });
});
