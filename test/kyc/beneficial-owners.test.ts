/** /beneficial-owners: create, list, get, patch; the lastName KYC table; validation and access. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  businessBody,
  createCustomer,
  createOwner,
  expectFieldError,
  fieldsOf,
  individualBody,
  ownerBody,
  personalInfo,
} from '../helpers/kyc.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let businessId: string;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  other = await srv.newPlatform();
  businessId = (await createCustomer(p.api, businessBody())).id;
});
afterAll(async () => srv.close());

describe('POST /beneficial-owners', () => {
  it('creates an owner of a business with every field', async () => {
    const info = personalInfo({
      middleName: 'Marie',
      email: 'jane.smith@acme.com',
      phoneNumber: '+14155550192',
      countryOfIssuance: 'US',
      address: { line1: '9 Elm Street', line2: 'Apt 2', city: 'Seattle', state: 'WA', postalCode: '98101', country: 'US' },
    });
    const res = await p.api.post('/beneficial-owners', {
      customerId: businessId,
      roles: ['UBO', 'DIRECTOR'],
      ownershipPercentage: 51,
      personalInfo: info,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body.id).toMatch(/^BeneficialOwner:[0-9a-f-]{36}$/);
    expect(res.body).toEqual({
      id: res.body.id,
      customerId: businessId,
      roles: ['UBO', 'DIRECTOR'],
      ownershipPercentage: 51,
      personalInfo: info,
      kycStatus: 'APPROVED',
      createdAt: res.body.createdAt,
      updatedAt: res.body.createdAt,
    });
  });

  it.each([
    ['Smith001', 'PENDING'],
    ['Smith002', 'REJECTED'],
    ['Smith003', 'APPROVED'],
    ['Smith', 'APPROVED'],
    ['X-1002', 'REJECTED'],
    ['01', 'APPROVED'],
  ])('sets kycStatus by the last 3 characters of lastName: %s → %s', async (lastName, status) => {
    const c = await createCustomer(p.api, businessBody());
    const owner = await createOwner(p.api, ownerBody(c.id, { lastName }, { ownershipPercentage: 30 }));
    expect(owner.kycStatus).toBe(status);
    expect((await p.api.get(`/beneficial-owners/${owner.id}`)).body.kycStatus).toBe(status);
  });

  it('only belongs to a BUSINESS customer', async () => {
    const ind = await createCustomer(p.api, individualBody());
    expectFieldError(await p.api.post('/beneficial-owners', ownerBody(ind.id)), 'customerId');
  });

  it("answers 404 USER_NOT_FOUND for an unknown or another platform's customer, 410 for a deleted one", async () => {
    const foreign = await createCustomer(other.api, businessBody());
    expectError(await p.api.post('/beneficial-owners', ownerBody(foreign.id)), 404, 'USER_NOT_FOUND');
    expectError(await p.api.post('/beneficial-owners', ownerBody('Customer:00000000-0000-7000-8000-000000000000')), 404, 'USER_NOT_FOUND');
    const gone = await createCustomer(p.api, businessBody());
    expect((await p.api.delete(`/customers/${gone.id}`)).status).toBe(200);
    expectError(await p.api.post('/beneficial-owners', ownerBody(gone.id)), 410, 'CUSTOMER_DELETED');
  });

  it('validates the body with field paths, including unknown nested fields', async () => {
    const res = await p.api.post('/beneficial-owners', {
      customerId: businessId,
      roles: ['OWNER'],
      ownershipPercentage: 101,
      personalInfo: {
        ...personalInfo({ birthDate: '15/06/1978', nationality: 'usa', phoneNumber: '555' }),
        nickname: 'JJ',
        address: { line1: 'x', postalCode: '1', country: 'US', floor: 3 },
      },
      extra: true,
    });
    expect(res.status).toBe(400);
    expect(fieldsOf(res)).toEqual(
      expect.arrayContaining([
        'roles.0',
        'ownershipPercentage',
        'personalInfo.birthDate',
        'personalInfo.nationality',
        'personalInfo.phoneNumber',
        'personalInfo.nickname',
        'personalInfo.address.floor',
        'extra',
      ]),
    );
    const missing = await p.api.post('/beneficial-owners', { customerId: businessId, personalInfo: { firstName: 'A' } });
    expect(fieldsOf(missing)).toEqual(
      expect.arrayContaining([
        'roles',
        'ownershipPercentage',
        'personalInfo.lastName',
        'personalInfo.birthDate',
        'personalInfo.address',
        'personalInfo.idType',
        'personalInfo.identifier',
      ]),
    );
    expectFieldError(await p.api.post('/beneficial-owners', ownerBody(businessId, {}, { roles: [] })), 'roles');
    expectFieldError(await p.api.post('/beneficial-owners', ownerBody(businessId, {}, { roles: ['UBO', 'UBO'] })), 'roles');
    expectFieldError(await p.api.post('/beneficial-owners', ownerBody(businessId, { birthDate: '2999-01-01' })), 'personalInfo.birthDate');
    expectError(await p.api.post('/beneficial-owners', undefined, { raw: '{"customerId":' }), 400, 'INVALID_INPUT');
  });

  it("keeps a business's ownership shares at 100% or less", async () => {
    const c = await createCustomer(p.api, businessBody());
    await createOwner(p.api, ownerBody(c.id, {}, { ownershipPercentage: 70 }));
    expectFieldError(await p.api.post('/beneficial-owners', ownerBody(c.id, {}, { ownershipPercentage: 31 })), 'ownershipPercentage');
    await createOwner(p.api, ownerBody(c.id, {}, { ownershipPercentage: 30, roles: ['DIRECTOR'] }));
    await createOwner(p.api, ownerBody(c.id, {}, { ownershipPercentage: 0, roles: ['COMPANY_OFFICER'] }));
  });

  it('needs credentials (401) and MANAGE (403)', async () => {
    expectError(await srv.anon.post('/beneficial-owners', ownerBody(businessId)), 401, 'UNAUTHORIZED');
    const t = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
    const viewer = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    expectError(await viewer.post('/beneficial-owners', ownerBody(businessId)), 403, 'FORBIDDEN');
  });
});

describe('GET /beneficial-owners', () => {
  it("lists a customer's owners newest first with cursor pagination", async () => {
    const c = await createCustomer(p.api, businessBody());
    const a = await createOwner(p.api, ownerBody(c.id, { lastName: 'A' }, { ownershipPercentage: 10 }));
    const b = await createOwner(p.api, ownerBody(c.id, { lastName: 'B' }, { ownershipPercentage: 10 }));
    const d = await createOwner(p.api, ownerBody(c.id, { lastName: 'D' }, { ownershipPercentage: 10 }));
    await createOwner(p.api, ownerBody(businessId, { lastName: 'Elsewhere' }, { ownershipPercentage: 1 }));

    const all = await p.api.get('/beneficial-owners', { query: { customerId: c.id } });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ hasMore: false, totalCount: 3 });
    expect(all.body.data.map((o: { id: string }) => o.id)).toEqual([d.id, b.id, a.id]);
    expect(all.body.data[2]).toEqual(a);

    const page1 = await p.api.get('/beneficial-owners', { query: { customerId: c.id, limit: 2 } });
    expect(page1.body).toMatchObject({ hasMore: true, totalCount: 3 });
    const page2 = await p.api.get('/beneficial-owners', { query: { customerId: c.id, limit: 2, cursor: page1.body.nextCursor } });
    expect(page2.body.data.map((o: { id: string }) => o.id)).toEqual([a.id]);
    expect(page2.body.hasMore).toBe(false);
  });

  it('requires customerId and validates the query', async () => {
    expectFieldError(await p.api.get('/beneficial-owners'), 'customerId');
    expectFieldError(await p.api.get('/beneficial-owners', { query: { customerId: businessId, limit: 101 } }), 'limit');
    expectFieldError(await p.api.get('/beneficial-owners', { query: { customerId: businessId, cursor: '!!' } }), 'cursor');
  });

  it("shows nothing of another platform's customer and needs credentials", async () => {
    await createOwner(p.api, ownerBody(businessId, {}, { ownershipPercentage: 1 }));
    expect((await other.api.get('/beneficial-owners', { query: { customerId: businessId } })).body).toMatchObject({
      data: [],
      totalCount: 0,
      hasMore: false,
    });
    expectError(await srv.anon.get('/beneficial-owners', { query: { customerId: businessId } }), 401, 'UNAUTHORIZED');
  });
});

describe('GET /beneficial-owners/{id}', () => {
  it("gets an owner; another platform's or an unknown id is 404 REFERENCE_NOT_FOUND", async () => {
    const o = await createOwner(p.api, ownerBody(businessId, {}, { ownershipPercentage: 1 }));
    const res = await p.api.get(`/beneficial-owners/${o.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(o);
    expectError(await other.api.get(`/beneficial-owners/${o.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get('/beneficial-owners/BeneficialOwner:00000000-0000-7000-8000-000000000000'), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.get(`/beneficial-owners/${o.id}`), 401, 'UNAUTHORIZED');
  });
});

describe('PATCH /beneficial-owners/{id}', () => {
  it('changes only the fields sent', async () => {
    const c = await createCustomer(p.api, businessBody());
    const o = await createOwner(p.api, ownerBody(c.id, { middleName: 'Q' }, { ownershipPercentage: 40 }));
    const res = await p.api.patch(`/beneficial-owners/${o.id}`, {
      roles: ['UBO'],
      ownershipPercentage: 45,
      personalInfo: { firstName: 'Janet', address: { line1: '1 New Road', postalCode: '10001', country: 'US' } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      id: o.id,
      customerId: c.id,
      roles: ['UBO'],
      ownershipPercentage: 45,
      personalInfo: { ...o.personalInfo, firstName: 'Janet', address: { line1: '1 New Road', postalCode: '10001', country: 'US' } },
      kycStatus: 'APPROVED',
      createdAt: o.createdAt,
    });
    expect((await p.api.get(`/beneficial-owners/${o.id}`)).body).toEqual(res.body);

    const same = await p.api.patch(`/beneficial-owners/${o.id}`, {});
    expect(same.status).toBe(200);
    expect(same.body).toEqual(res.body);
  });

  it('re-runs the automatic KYC when the last name changes', async () => {
    const c = await createCustomer(p.api, businessBody());
    const o = await createOwner(p.api, ownerBody(c.id, { lastName: 'Smith' }));
    expect(o.kycStatus).toBe('APPROVED');
    expect((await p.api.patch(`/beneficial-owners/${o.id}`, { personalInfo: { lastName: 'Smith001' } })).body.kycStatus).toBe('PENDING');
    expect((await p.api.patch(`/beneficial-owners/${o.id}`, { personalInfo: { firstName: 'Joan' } })).body.kycStatus).toBe('PENDING');
    expect((await p.api.patch(`/beneficial-owners/${o.id}`, { personalInfo: { lastName: 'Smith002' } })).body.kycStatus).toBe('REJECTED');
    expect((await p.api.patch(`/beneficial-owners/${o.id}`, { personalInfo: { lastName: 'Smythe' } })).body.kycStatus).toBe('APPROVED');
  });

  it('validates the body with field paths and the ownership total', async () => {
    const c = await createCustomer(p.api, businessBody());
    const o = await createOwner(p.api, ownerBody(c.id, {}, { ownershipPercentage: 50 }));
    await createOwner(p.api, ownerBody(c.id, {}, { ownershipPercentage: 50 }));
    const res = await p.api.patch(`/beneficial-owners/${o.id}`, {
      customerId: 'Customer:x',
      personalInfo: { lastName: '', hobby: 'golf' },
    });
    expect(res.status).toBe(400);
    expect(fieldsOf(res)).toEqual(expect.arrayContaining(['customerId', 'personalInfo.lastName', 'personalInfo.hobby']));
    expectFieldError(await p.api.patch(`/beneficial-owners/${o.id}`, { ownershipPercentage: 51 }), 'ownershipPercentage');
    expectFieldError(
      await p.api.patch(`/beneficial-owners/${o.id}`, { personalInfo: { birthDate: '2999-12-31' } }),
      'personalInfo.birthDate',
    );
    expect((await p.api.patch(`/beneficial-owners/${o.id}`, { ownershipPercentage: 50 })).status).toBe(200);
    expectError(await p.api.patch(`/beneficial-owners/${o.id}`), 400, 'INVALID_INPUT');
  });

  it("answers 404 for another platform's owner, 410 when the business is deleted, 401 without credentials", async () => {
    const c = await createCustomer(p.api, businessBody());
    const o = await createOwner(p.api, ownerBody(c.id));
    expectError(await other.api.patch(`/beneficial-owners/${o.id}`, { ownershipPercentage: 1 }), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.patch(`/beneficial-owners/${o.id}`, { ownershipPercentage: 1 }), 401, 'UNAUTHORIZED');
    expect((await p.api.delete(`/customers/${c.id}`)).status).toBe(200);
    expectError(await p.api.patch(`/beneficial-owners/${o.id}`, { ownershipPercentage: 1 }), 410, 'CUSTOMER_DELETED');
  });
});
