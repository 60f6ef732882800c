/**
 * /verifications: the fix-and-resubmit loop (RESOLVE_ERRORS listing every missing item), the KYB
 * registrationNumber table (on a complete business, and alone on the spec's minimal submission in the
 * sandbox), the individual fullName rules, events, listing, validation and access.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Client } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  businessBody,
  createCustomer,
  createOwner,
  eventsOf,
  expectFieldError,
  fieldsOf,
  individualBody,
  JPEG,
  ownerBody,
  PNG,
  sendForm,
  upload,
} from '../helpers/kyc.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  other = await srv.newPlatform();
});
afterAll(async () => srv.close());

const IDENTITY = ['PASSPORT', 'DRIVERS_LICENSE', 'NATIONAL_ID'];
const LEGAL = ['CERTIFICATE_OF_INCORPORATION', 'ARTICLES_OF_INCORPORATION', 'ARTICLES_OF_ASSOCIATION', 'STATE_REGISTRY_EXCERPT'];
const OWNERSHIP = ['SHAREHOLDER_REGISTER', 'TRUST_AGREEMENT', 'PARTNERSHIP_AGREEMENT'];
const ADDRESS_PROOF = ['UTILITY_BILL', 'RENT_OR_LEASE_AGREEMENT', 'ELECTRICITY_BILL', 'BANK_STATEMENT', 'TAX_RETURN'];

async function verify(api: Client, customerId: string) {
  const res = await api.post('/verifications', { customerId });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** A business with everything KYB needs: full data, a US control person and the three documents. */
async function completeBusiness(h: PlatformHandle, registrationNumber: string | undefined) {
  const body = businessBody(registrationNumber === undefined ? {} : { registrationNumber });
  if (registrationNumber === undefined) delete (body.businessInfo as Record<string, unknown>).registrationNumber;
  const c = await createCustomer(h.api, body);
  await finishBusiness(h, c.id);
  return c;
}

async function finishBusiness(h: PlatformHandle, customerId: string) {
  await createOwner(h.api, ownerBody(customerId));
  await upload(srv.baseUrl, h.creds, customerId, 'CERTIFICATE_OF_INCORPORATION');
  await upload(srv.baseUrl, h.creds, customerId, 'SHAREHOLDER_REGISTER', { bytes: PNG });
  await upload(srv.baseUrl, h.creds, customerId, 'BANK_STATEMENT', { bytes: JPEG });
}

function types(v: { errors: { type: string }[] }): string[] {
  return v.errors.map((e) => e.type);
}

describe('KYB: the fix-and-resubmit loop', () => {
  it('lists every missing item, then moves on once the business, its owners and documents are complete', async () => {
    const c = await createCustomer(p.api, {
      customerType: 'BUSINESS',
      businessInfo: {
        legalName: 'Loop Ltd',
        country: 'US',
        incorporatedOn: '2020-01-01',
        taxId: '12-3456789',
        // No 3-digit ending: not a sandbox magic value, so the completeness checks run.
        registrationNumber: 'REG-777-TX',
      },
    });
    expect(c.kybStatus).toBe('UNVERIFIED');

    // 1. Nothing but the create-time basics.
    const v1 = await verify(p.api, c.id);
    expect(v1.id).toMatch(/^Verification:[0-9a-f-]{36}$/);
    expect(v1).toMatchObject({ customerId: c.id, verificationStatus: 'RESOLVE_ERRORS' });
    expect(v1.errors).toEqual([
      { resourceId: c.id, type: 'MISSING_FIELD', field: 'customer.businessInfo.countriesOfOperation', reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_FIELD', field: 'customer.address.line1', reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_FIELD', field: 'customer.address.city', reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_FIELD', field: 'customer.address.postalCode', reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_FIELD', field: 'customer.address.country', reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_LEGAL_PRESENCE_DOCUMENT', acceptedDocumentTypes: LEGAL, reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT', acceptedDocumentTypes: OWNERSHIP, reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_PROOF_OF_ADDRESS_DOCUMENT', acceptedDocumentTypes: ADDRESS_PROOF, reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_BENEFICIAL_OWNER', reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_CONTROL_PERSON', reason: expect.any(String) },
    ]);
    expect((await p.api.get(`/customers/${c.id}`)).body.kybStatus).toBe('UNVERIFIED');

    // 2. Fix some: business data, two documents, a non-US owner without a city and not the control person.
    const patched = await p.api.patch(`/customers/${c.id}`, {
      customerType: 'BUSINESS',
      businessInfo: { countriesOfOperation: ['US', 'CA'] },
      address: { line1: '1 Loop Road', city: 'Austin', postalCode: '73301', country: 'US' },
    });
    expect(patched.status, patched.text).toBe(200);
    const legal = await upload(srv.baseUrl, p.creds, c.id, 'ARTICLES_OF_ASSOCIATION');
    await upload(srv.baseUrl, p.creds, c.id, 'TRUST_AGREEMENT', { bytes: PNG });
    const owner = await createOwner(
      p.api,
      ownerBody(
        c.id,
        {
          nationality: 'GB',
          idType: 'NON_US_TAX_ID',
          identifier: 'AB123456C',
          address: { line1: '10 Downing St', postalCode: 'SW1A 2AA', country: 'GB' },
        },
        { roles: ['UBO'] },
      ),
    );
    const v2 = await verify(p.api, c.id);
    expect(v2.id).not.toBe(v1.id);
    expect(v2.verificationStatus).toBe('RESOLVE_ERRORS');
    expect(v2.errors).toEqual([
      { resourceId: c.id, type: 'MISSING_PROOF_OF_ADDRESS_DOCUMENT', acceptedDocumentTypes: ADDRESS_PROOF, reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_CONTROL_PERSON', reason: expect.any(String) },
      {
        resourceId: owner.id,
        type: 'MISSING_FIELD',
        field: 'personalInfo.address.city',
        reason: expect.stringContaining('beneficial owners'),
      },
      { resourceId: owner.id, type: 'MISSING_IDENTITY_DOCUMENT', acceptedDocumentTypes: ['PASSPORT'], reason: expect.any(String) },
      {
        resourceId: owner.id,
        type: 'MISSING_IDENTITY_DOCUMENT',
        acceptedDocumentTypes: ['DRIVERS_LICENSE', 'NATIONAL_ID'],
        reason: expect.any(String),
      },
    ]);
    // Nothing was submitted yet: documents can still be deleted.
    const spare = await upload(srv.baseUrl, p.creds, c.id, 'OTHER');
    expect((await p.api.delete(`/documents/${spare.id}`)).status).toBe(204);

    // 3. Fix the rest.
    await upload(srv.baseUrl, p.creds, c.id, 'ELECTRICITY_BILL');
    const fixed = await p.api.patch(`/beneficial-owners/${owner.id}`, {
      roles: ['UBO', 'CONTROL_PERSON'],
      personalInfo: { address: { line1: '10 Downing St', city: 'London', postalCode: 'SW1A 2AA', country: 'GB' } },
    });
    expect(fixed.status, fixed.text).toBe(200);
    await upload(srv.baseUrl, p.creds, owner.id, 'PASSPORT', { bytes: JPEG });
    await upload(srv.baseUrl, p.creds, owner.id, 'DRIVERS_LICENSE', { bytes: PNG });

    const v3 = await verify(p.api, c.id);
    expect(v3).toMatchObject({ customerId: c.id, verificationStatus: 'APPROVED', errors: [] });
    expect(v3.createdAt).toBe(v3.updatedAt);
    expect((await p.api.get(`/customers/${c.id}`)).body.kybStatus).toBe('APPROVED');

    // Events: one VERIFICATION.* per submission (the resource as GET returns it) and the KYB decision.
    const verEvents = await eventsOf(srv, p.id, 'VERIFICATION.');
    const mine = verEvents.filter((e) => e.data.customerId === c.id);
    expect(mine.map((e) => e.type)).toEqual(['VERIFICATION.RESOLVE_ERRORS', 'VERIFICATION.RESOLVE_ERRORS', 'VERIFICATION.APPROVED']);
    expect(mine.map((e) => e.resourceId)).toEqual([v1.id, v2.id, v3.id]);
    expect(mine[2]!.data).toEqual((await p.api.get(`/verifications/${v3.id}`)).body);
    const custEvents = (await eventsOf(srv, p.id, 'CUSTOMER.KYB_')).filter((e) => e.resourceId === c.id);
    expect(custEvents.map((e) => e.type)).toEqual(['CUSTOMER.KYB_APPROVED']);
    expect(custEvents[0]!.data).toMatchObject({ id: c.id, customerType: 'BUSINESS', kybStatus: 'APPROVED' });

    // A decided customer cannot be submitted again.
    expectFieldError(await p.api.post('/verifications', { customerId: c.id }), 'customerId');

    // Submitted documents can no longer be deleted, but may be replaced (which unsubmits them).
    expectError(await p.api.delete(`/documents/${legal.id}`), 409, 'CONFLICT');
    const replaced = await sendForm(
      srv.baseUrl,
      'PUT',
      `/documents/${legal.id}`,
      { documentType: 'ARTICLES_OF_ASSOCIATION', country: 'US' },
      { bytes: PNG, name: 'aoa.png' },
      p.creds,
    );
    expect(replaced.status).toBe(200);
    expect((await p.api.delete(`/documents/${legal.id}`)).status).toBe(204);
  });
});

describe('KYB: registrationNumber magic values (on a complete business)', () => {
  it.each([
    ['5523001', 'PENDING_MANUAL_REVIEW', 'PENDING'],
    ['5523002', 'REJECTED', 'REJECTED'],
    ['5523003', 'APPROVED', 'APPROVED'],
    ['5523000', 'APPROVED', 'APPROVED'],
    ['ABC-102', 'APPROVED', 'APPROVED'],
    [undefined, 'APPROVED', 'APPROVED'],
  ])('registrationNumber %s → %s, kybStatus %s', async (reg, verificationStatus, kybStatus) => {
    const c = await completeBusiness(p, reg);
    const v = await verify(p.api, c.id);
    expect(v).toMatchObject({ verificationStatus, errors: [] });
    const customer = (await p.api.get(`/customers/${c.id}`)).body;
    expect(customer.kybStatus).toBe(kybStatus);
    const events = (await eventsOf(srv, p.id, 'CUSTOMER.KYB_')).filter((e) => e.resourceId === c.id);
    expect(events.map((e) => e.type)).toEqual([`CUSTOMER.KYB_${kybStatus}`]);
    expect(events[0]!.data.kybStatus).toBe(kybStatus);
    const ver = (await eventsOf(srv, p.id, 'VERIFICATION.')).filter((e) => e.resourceId === v.id);
    expect(ver.map((e) => e.type)).toEqual([`VERIFICATION.${verificationStatus}`]);
  });

  it('a PENDING business may be submitted again (still under review, no new CUSTOMER event); a REJECTED one may not', async () => {
    const pending = await completeBusiness(p, 'R-001');
    expect((await verify(p.api, pending.id)).verificationStatus).toBe('PENDING_MANUAL_REVIEW');
    const again = await verify(p.api, pending.id);
    expect(again.verificationStatus).toBe('PENDING_MANUAL_REVIEW');
    expect((await eventsOf(srv, p.id, 'CUSTOMER.KYB_')).filter((e) => e.resourceId === pending.id)).toHaveLength(1);

    const rejected = await completeBusiness(p, 'R-002');
    expect((await verify(p.api, rejected.id)).verificationStatus).toBe('REJECTED');
    expectFieldError(await p.api.post('/verifications', { customerId: rejected.id }), 'customerId');
  });

  it('a US owner must be identified by SSN or ITIN', async () => {
    const c = await createCustomer(p.api, businessBody());
    const o = await createOwner(p.api, ownerBody(c.id, { idType: 'EIN', identifier: '12-3456789' }));
    await upload(srv.baseUrl, p.creds, c.id, 'CERTIFICATE_OF_INCORPORATION');
    await upload(srv.baseUrl, p.creds, c.id, 'SHAREHOLDER_REGISTER');
    await upload(srv.baseUrl, p.creds, c.id, 'UTILITY_BILL');
    const v = await verify(p.api, c.id);
    expect(v.errors).toEqual([{ resourceId: o.id, type: 'INVALID_FIELD', field: 'personalInfo.idType', reason: expect.any(String) }]);
    await p.api.patch(`/beneficial-owners/${o.id}`, { personalInfo: { idType: 'ITIN', identifier: '912-34-5678' } });
    expect((await verify(p.api, c.id)).verificationStatus).toBe('APPROVED');
  });
});

/** The spec's minimal business (§4.12): the create request's required fields and, when given, a registrationNumber. */
function minimalBusiness(registrationNumber: string | undefined): Record<string, unknown> {
  return {
    customerType: 'BUSINESS',
    businessInfo: {
      legalName: 'Minimal Ltd',
      country: 'US',
      incorporatedOn: '2021-05-01',
      taxId: '98-7654321',
      ...(registrationNumber === undefined ? {} : { registrationNumber }),
    },
  };
}

/** What the completeness checks find missing on a minimal business: 5 fields, 3 documents, the owners. */
const MINIMAL_BUSINESS_ERRORS = [
  ...Array<string>(5).fill('MISSING_FIELD'),
  'MISSING_LEGAL_PRESENCE_DOCUMENT',
  'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT',
  'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
  'MISSING_BENEFICIAL_OWNER',
  'MISSING_CONTROL_PERSON',
];

describe("KYB: registrationNumber magic values on the spec's minimal submission (sandbox)", () => {
  it.each([
    ['5523001', 'PENDING_MANUAL_REVIEW', 'PENDING'],
    ['5523002', 'REJECTED', 'REJECTED'],
    ['5523123', 'APPROVED', 'APPROVED'],
    ['REG-003', 'APPROVED', 'APPROVED'],
  ])('registrationNumber %s decides alone: %s, kybStatus %s', async (reg, verificationStatus, kybStatus) => {
    const c = await createCustomer(p.api, minimalBusiness(reg));
    expect(c.kybStatus).toBe('UNVERIFIED');
    const v = await verify(p.api, c.id);
    expect(v).toMatchObject({ customerId: c.id, verificationStatus, errors: [] });
    expect((await p.api.get(`/customers/${c.id}`)).body.kybStatus).toBe(kybStatus);
    const kyb = (await eventsOf(srv, p.id, 'CUSTOMER.KYB_')).filter((e) => e.resourceId === c.id);
    expect(kyb.map((e) => e.type)).toEqual([`CUSTOMER.KYB_${kybStatus}`]);
    expect(kyb[0]!.data).toMatchObject({ id: c.id, customerType: 'BUSINESS', kybStatus });
    const ver = (await eventsOf(srv, p.id, 'VERIFICATION.')).filter((e) => e.resourceId === v.id);
    expect(ver.map((e) => e.type)).toEqual([`VERIFICATION.${verificationStatus}`]);
    expect(ver[0]!.data).toEqual((await p.api.get(`/verifications/${v.id}`)).body);
  });

  it('001 stays PENDING: the spec names no later transition, so a clock advance changes nothing', async () => {
    const q = await srv.newPlatform();
    const c = await createCustomer(q.api, minimalBusiness('HR-7001'));
    expect((await verify(q.api, c.id)).verificationStatus).toBe('PENDING_MANUAL_REVIEW');
    const advanced = await q.api.post('/sandbox/clock/advance', { seconds: 7 * 24 * 3600 });
    expect(advanced.status, advanced.text).toBe(200);
    expect((await q.api.get(`/customers/${c.id}`)).body.kybStatus).toBe('PENDING');
    expect((await eventsOf(srv, q.id, 'CUSTOMER.KYB_')).map((e) => e.type)).toEqual(['CUSTOMER.KYB_PENDING']);
    // Still under review: it may be submitted again, with the same answer.
    expect((await verify(q.api, c.id)).verificationStatus).toBe('PENDING_MANUAL_REVIEW');
  });

  it.each([
    ['no registrationNumber', undefined],
    ['one not ending in 3 digits', 'REG-55A'],
  ])('%s: the completeness checks still apply (RESOLVE_ERRORS, kybStatus unchanged)', async (_what, reg) => {
    const c = await createCustomer(p.api, minimalBusiness(reg));
    const v = await verify(p.api, c.id);
    expect(v.verificationStatus).toBe('RESOLVE_ERRORS');
    expect(types(v)).toEqual(MINIMAL_BUSINESS_ERRORS);
    expect(v.errors.filter((e: { field?: string }) => e.field).map((e: { field: string }) => e.field)).toEqual([
      'customer.businessInfo.countriesOfOperation',
      'customer.address.line1',
      'customer.address.city',
      'customer.address.postalCode',
      'customer.address.country',
    ]);
    expect((await p.api.get(`/customers/${c.id}`)).body.kybStatus).toBe('UNVERIFIED');
    expect((await eventsOf(srv, p.id, 'CUSTOMER.KYB_')).filter((e) => e.resourceId === c.id)).toEqual([]);
    const ver = (await eventsOf(srv, p.id, 'VERIFICATION.')).filter((e) => e.resourceId === v.id);
    expect(ver.map((e) => e.type)).toEqual(['VERIFICATION.RESOLVE_ERRORS']);
  });

  it('PRODUCTION platforms keep the completeness checks for magic values too', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const c = await createCustomer(prod.api, minimalBusiness('9999002'));
    const v = await verify(prod.api, c.id);
    expect(v.verificationStatus).toBe('RESOLVE_ERRORS');
    expect(types(v)).toEqual(MINIMAL_BUSINESS_ERRORS);
    expect((await prod.api.get(`/customers/${c.id}`)).body.kybStatus).toBe('UNVERIFIED');
    expect(await eventsOf(srv, prod.id, 'CUSTOMER.KYB_')).toEqual([]);
  });

  it("KYC already follows its suffix on a minimal submission: an owner's lastName, an individual's fullName", async () => {
    const c = await createCustomer(p.api, minimalBusiness('REG-55A'));
    for (const [suffix, kycStatus] of Object.entries({ '001': 'PENDING', '002': 'REJECTED', '': 'APPROVED' })) {
      const o = await createOwner(p.api, ownerBody(c.id, { lastName: `Doe${suffix}` }, { ownershipPercentage: 10 }));
      expect(o.kycStatus).toBe(kycStatus);
      const person = await createCustomer(p.api, { customerType: 'INDIVIDUAL', fullName: `Min Doe${suffix}` });
      expect(person.kycStatus).toBe(kycStatus);
    }
  });
});

describe('KYC: individuals', () => {
  it('001: lists the missing id and document, then goes to PENDING_MANUAL_REVIEW', async () => {
    const body = individualBody({ fullName: 'Jane Doe001' });
    delete body.idType;
    delete body.identifier;
    delete body.nationality;
    const c = await createCustomer(p.api, body);
    expect(c.kycStatus).toBe('PENDING');

    const v1 = await verify(p.api, c.id);
    expect(v1.verificationStatus).toBe('RESOLVE_ERRORS');
    expect(v1.errors).toEqual([
      { resourceId: c.id, type: 'MISSING_FIELD', field: 'customer.nationality', reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_FIELD', field: 'customer.idType', reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_FIELD', field: 'customer.identifier', reason: expect.any(String) },
      { resourceId: c.id, type: 'MISSING_IDENTITY_DOCUMENT', acceptedDocumentTypes: IDENTITY, reason: expect.any(String) },
    ]);

    const patched = await p.api.patch(`/customers/${c.id}`, {
      customerType: 'INDIVIDUAL',
      nationality: 'US',
      idType: 'SSN',
      identifier: '123-45-6789',
    });
    expect(patched.status, patched.text).toBe(200);
    const v2 = await verify(p.api, c.id);
    expect(v2.errors.map((e: { type: string }) => e.type)).toEqual(['MISSING_IDENTITY_DOCUMENT']);

    await upload(srv.baseUrl, p.creds, c.id, 'DRIVERS_LICENSE', { bytes: JPEG });
    const v3 = await verify(p.api, c.id);
    expect(v3).toMatchObject({ verificationStatus: 'PENDING_MANUAL_REVIEW', errors: [] });
    expect((await p.api.get(`/customers/${c.id}`)).body.kycStatus).toBe('PENDING');
    // kycStatus was PENDING from creation: no second CUSTOMER.KYC_PENDING.
    expect((await eventsOf(srv, p.id, 'CUSTOMER.KYC_')).filter((e) => e.resourceId === c.id).map((e) => e.type)).toEqual([
      'CUSTOMER.KYC_PENDING',
    ]);
    const ver = (await eventsOf(srv, p.id, 'VERIFICATION.')).filter((e) => e.data.customerId === c.id);
    expect(ver.map((e) => e.type)).toEqual([
      'VERIFICATION.RESOLVE_ERRORS',
      'VERIFICATION.RESOLVE_ERRORS',
      'VERIFICATION.PENDING_MANUAL_REVIEW',
    ]);
  });

  it('003: complete data still gets RESOLVE_ERRORS with POOR_QUALITY_DOCUMENT on the identity document', async () => {
    const c = await createCustomer(p.api, individualBody({ fullName: 'Jane Doe003' }));
    expect(c.kycStatus).toBe('UNVERIFIED');
    const doc = await upload(srv.baseUrl, p.creds, c.id, 'PASSPORT');
    const v = await verify(p.api, c.id);
    expect(v).toMatchObject({ verificationStatus: 'RESOLVE_ERRORS' });
    expect(v.errors).toEqual([
      { resourceId: doc.id, type: 'POOR_QUALITY_DOCUMENT', acceptedDocumentTypes: IDENTITY, reason: expect.any(String) },
    ]);
    expect((await p.api.get(`/customers/${c.id}`)).body.kycStatus).toBe('UNVERIFIED');
    // The document was not accepted, so it is not locked.
    expect((await p.api.delete(`/documents/${doc.id}`)).status).toBe(204);
  });

  it('APPROVED (any other name) and REJECTED (002) individuals cannot be submitted', async () => {
    const approved = await createCustomer(p.api, individualBody({ fullName: 'Jane Smith' }));
    expect(approved.kycStatus).toBe('APPROVED');
    const res = await p.api.post('/verifications', { customerId: approved.id });
    expectFieldError(res, 'customerId');
    expect(res.body.message).toMatch(/APPROVED/);
    const rejected = await createCustomer(p.api, individualBody({ fullName: 'Jane Smith002' }));
    expect(rejected.kycStatus).toBe('REJECTED');
    expectFieldError(await p.api.post('/verifications', { customerId: rejected.id }), 'customerId');
  });

  it('an UNVERIFIED individual (unregulated production platform) is decided by the same name rule', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const ok = await createCustomer(prod.api, individualBody({ fullName: 'Jane Smith' }));
    expect(ok.kycStatus).toBe('UNVERIFIED');
    await upload(srv.baseUrl, prod.creds, ok.id, 'NATIONAL_ID');
    expect((await verify(prod.api, ok.id)).verificationStatus).toBe('APPROVED');
    expect((await prod.api.get(`/customers/${ok.id}`)).body.kycStatus).toBe('APPROVED');
    const approvedEvents = (await eventsOf(srv, prod.id, 'CUSTOMER.KYC_')).filter((e) => e.resourceId === ok.id);
    expect(approvedEvents.map((e) => e.type)).toEqual(['CUSTOMER.KYC_APPROVED']);
    expect(approvedEvents[0]!.data).toMatchObject({ id: ok.id, kycStatus: 'APPROVED' });

    const no = await createCustomer(prod.api, individualBody({ fullName: 'John Roe002' }));
    await upload(srv.baseUrl, prod.creds, no.id, 'PASSPORT');
    expect((await verify(prod.api, no.id)).verificationStatus).toBe('REJECTED');
    expect((await prod.api.get(`/customers/${no.id}`)).body.kycStatus).toBe('REJECTED');
  });

  it('documents of the customer only count for that customer', async () => {
    const c = await createCustomer(p.api, individualBody({ fullName: 'Ann Lee001' }));
    const someoneElse = await createCustomer(p.api, individualBody({ fullName: 'Bob Lee001' }));
    await upload(srv.baseUrl, p.creds, someoneElse.id, 'PASSPORT');
    expect(types(await verify(p.api, c.id))).toEqual(['MISSING_IDENTITY_DOCUMENT']);
  });
});

describe('POST /verifications: input and access', () => {
  it('validates the body with field paths', async () => {
    expectFieldError(await p.api.post('/verifications', {}), 'customerId');
    const c = await createCustomer(p.api, businessBody());
    const res = await p.api.post('/verifications', { customerId: c.id, force: true });
    expect(fieldsOf(res)).toEqual(['force']);
    expectFieldError(await p.api.post('/verifications', { customerId: 42 }), 'customerId');
  });

  it("answers 404 USER_NOT_FOUND for an unknown or another platform's customer, 410 for a deleted one", async () => {
    const foreign = await createCustomer(other.api, businessBody());
    expectError(await p.api.post('/verifications', { customerId: foreign.id }), 404, 'USER_NOT_FOUND');
    expectError(await p.api.post('/verifications', { customerId: 'Customer:00000000-0000-7000-8000-000000000000' }), 404, 'USER_NOT_FOUND');
    const gone = await createCustomer(p.api, businessBody());
    await p.api.delete(`/customers/${gone.id}`);
    expectError(await p.api.post('/verifications', { customerId: gone.id }), 410, 'CUSTOMER_DELETED');
  });

  it('needs credentials (401) and MANAGE (403)', async () => {
    const c = await createCustomer(p.api, businessBody());
    expectError(await srv.anon.post('/verifications', { customerId: c.id }), 401, 'UNAUTHORIZED');
    const t = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
    const viewer = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    expectError(await viewer.post('/verifications', { customerId: c.id }), 403, 'FORBIDDEN');
    expect((await viewer.get('/verifications')).status).toBe(200);
  });
});

describe('GET /verifications and GET /verifications/{id}', () => {
  it('lists newest first, filters by customer and status, paginates', async () => {
    const q = await srv.newPlatform();
    const a = await createCustomer(q.api, businessBody());
    const b = await completeBusiness(q, '7700001');
    const va1 = await verify(q.api, a.id);
    const vb = await verify(q.api, b.id);
    const va2 = await verify(q.api, a.id);

    const all = await q.api.get('/verifications');
    expect(all.status).toBe(200);
    expect(all.body.data.map((v: { id: string }) => v.id)).toEqual([va2.id, vb.id, va1.id]);
    expect(all.body).toMatchObject({ hasMore: false, totalCount: 3 });

    const ofA = await q.api.get('/verifications', { query: { customerId: a.id } });
    expect(ofA.body.data.map((v: { id: string }) => v.id)).toEqual([va2.id, va1.id]);
    const pending = await q.api.get('/verifications', { query: { verificationStatus: 'PENDING_MANUAL_REVIEW' } });
    expect(pending.body.data.map((v: { id: string }) => v.id)).toEqual([vb.id]);
    const both = await q.api.get('/verifications', { query: { customerId: a.id, verificationStatus: 'APPROVED' } });
    expect(both.body).toMatchObject({ data: [], totalCount: 0, hasMore: false });

    const page1 = await q.api.get('/verifications', { query: { limit: 2 } });
    expect(page1.body).toMatchObject({ hasMore: true, totalCount: 3 });
    const page2 = await q.api.get('/verifications', { query: { limit: 2, cursor: page1.body.nextCursor } });
    expect(page2.body.data.map((v: { id: string }) => v.id)).toEqual([va1.id]);

    const one = await q.api.get(`/verifications/${va1.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(va1);

    expectError(await p.api.get(`/verifications/${va1.id}`), 404, 'REFERENCE_NOT_FOUND');
    expect((await p.api.get('/verifications', { query: { customerId: a.id } })).body).toMatchObject({ data: [], totalCount: 0 });
    expectError(await q.api.get('/verifications/Verification:00000000-0000-7000-8000-000000000000'), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.get(`/verifications/${va1.id}`), 401, 'UNAUTHORIZED');
    expectError(await srv.anon.get('/verifications'), 401, 'UNAUTHORIZED');
  });

  it('validates the query', async () => {
    expectFieldError(await p.api.get('/verifications', { query: { verificationStatus: 'DONE' } }), 'verificationStatus');
    expectFieldError(await p.api.get('/verifications', { query: { limit: 'ten' } }), 'limit');
    expectFieldError(await p.api.get('/verifications', { query: { status: 'APPROVED' } }), 'status');
  });
});
