/**
 * `beneficialOwners` on business customers (live `BusinessCustomer.beneficialOwners`): in the create,
 * GET, list, PATCH and DELETE responses and in the CUSTOMER.KYB_* webhooks, in the order the owners
 * were added, each as GET /beneficial-owners/{id} returns it, and `[]` for a business with none. An
 * individual has no such field. A list page reads its businesses' owners in one query.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { businessBody, createCustomer, createOwner, individualBody, ownerBody } from '../helpers/kyc.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let rec: Receiver;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  rec = await startReceiver();
  p = await srv.newPlatform();
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

// biome-ignore lint/suspicious/noExplicitAny: `any`: a wire resource the assertions inspect field by field.
async function get(platform: PlatformHandle, path: string): Promise<any> {
  const res = await platform.api.get(path);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** A business with two owners added one after the other: a majority UBO named Zoe Young, then a director named Adam Abbott. */
async function businessWithTwoOwners(platform: PlatformHandle, info: Record<string, unknown> = {}) {
  const c = await createCustomer(platform.api, businessBody(info));
  const zoe = await createOwner(
    platform.api,
    ownerBody(c.id, { firstName: 'Zoe', lastName: 'Young' }, { roles: ['UBO', 'CONTROL_PERSON'], ownershipPercentage: 60 }),
  );
  const adam = await createOwner(
    platform.api,
    ownerBody(c.id, { firstName: 'Adam', lastName: 'Abbott', identifier: '987-65-4321' }, { roles: ['DIRECTOR'], ownershipPercentage: 0 }),
  );
  return { c, zoe, adam };
}

describe('beneficialOwners on a business customer', () => {
  it('is [] on a new business, in the create response and in GET', async () => {
    const c = await createCustomer(p.api, businessBody());
    expect(c.beneficialOwners).toEqual([]);
    expect(await get(p, `/customers/${c.id}`)).toEqual(c);
  });

  it('lists both owners of a business in the order they were added, each as GET /beneficial-owners/{id} returns it', async () => {
    const { c, zoe, adam } = await businessWithTwoOwners(p);
    const got = await get(p, `/customers/${c.id}`);
    // Added first, listed first: the order is not by name, role or share.
    expect(got.beneficialOwners).toEqual([zoe, adam]);
    expect(got.beneficialOwners).toEqual([await get(p, `/beneficial-owners/${zoe.id}`), await get(p, `/beneficial-owners/${adam.id}`)]);
    expect(got.beneficialOwners.map((o: { personalInfo: { firstName: string } }) => o.personalInfo.firstName)).toEqual(['Zoe', 'Adam']);
    expect(got.beneficialOwners[1]).toMatchObject({
      customerId: c.id,
      roles: ['DIRECTOR'],
      ownershipPercentage: 0,
      kycStatus: 'APPROVED',
      personalInfo: { lastName: 'Abbott', identifier: '987-65-4321' },
    });
    // The owners are resources of their own: adding them does not move the customer's updatedAt.
    expect(got.updatedAt).toBe(c.updatedAt);

    // Reading again gives the same order, and an owner's update changes its entry in place.
    const patched = await p.api.patch(`/beneficial-owners/${zoe.id}`, {
      ownershipPercentage: 40,
      personalInfo: { lastName: 'Young-Smith' },
    });
    expect(patched.status, patched.text).toBe(200);
    const again = await get(p, `/customers/${c.id}`);
    expect(again.beneficialOwners).toEqual([patched.body, adam]);
    expect(again.beneficialOwners[0]).toMatchObject({ ownershipPercentage: 40, personalInfo: { lastName: 'Young-Smith' } });
  });

  it('carries them on PATCH (a change or none) and on DELETE, where they stay readable', async () => {
    const { c, zoe, adam } = await businessWithTwoOwners(p);
    const changed = await p.api.patch(`/customers/${c.id}`, {
      customerType: 'BUSINESS',
      address: { line1: '2 Market Street', city: 'Seattle', postalCode: '98101', country: 'US' },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body.beneficialOwners).toEqual([zoe, adam]);
    const unchanged = await p.api.patch(`/customers/${c.id}`, { customerType: 'BUSINESS' });
    expect(unchanged.status, unchanged.text).toBe(200);
    expect(unchanged.body).toEqual(changed.body);

    const deleted = await p.api.delete(`/customers/${c.id}`);
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toMatchObject({ isDeleted: true, beneficialOwners: [zoe, adam] });
    expect(await get(p, `/customers/${c.id}`)).toEqual(deleted.body);
  });

  it('is not on an individual: create, GET, PATCH and the list', async () => {
    const ind = await createCustomer(p.api, individualBody({ platformCustomerId: 'ind-no-owners' }));
    expect(ind).not.toHaveProperty('beneficialOwners');
    expect(await get(p, `/customers/${ind.id}`)).not.toHaveProperty('beneficialOwners');
    const patched = await p.api.patch(`/customers/${ind.id}`, { customerType: 'INDIVIDUAL', fullName: 'Jane Q Smith' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body).not.toHaveProperty('beneficialOwners');
    const listed = await get(p, '/customers?platformCustomerId=ind-no-owners');
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).not.toHaveProperty('beneficialOwners');
  });
});

describe('beneficialOwners on a list page', () => {
  it("carries each business's own owners, page by page, read in one query per page", async () => {
    const q = await srv.newPlatform();
    const other = await srv.newPlatform();
    // Another platform's business with an owner: never mixed in.
    await businessWithTwoOwners(other);
    const two = await businessWithTwoOwners(q, { legalName: 'Two Owners LLC' });
    const ind = await createCustomer(q.api, individualBody());
    const none = await createCustomer(q.api, businessBody({ legalName: 'No Owners LLC' }));
    const oneBiz = await createCustomer(q.api, businessBody({ legalName: 'One Owner LLC' }));
    const solo = await createOwner(q.api, ownerBody(oneBiz.id, { firstName: 'Sol', lastName: 'Owner' }, { ownershipPercentage: 100 }));
    const expected = new Map<string, unknown[] | undefined>([
      [oneBiz.id, [solo]],
      [none.id, []],
      [ind.id, undefined],
      [two.c.id, [two.zoe, two.adam]],
    ]);

    const selectFrom = vi.spyOn(srv.app.ctx.db, 'selectFrom');
    let page: { data: { id: string; beneficialOwners?: unknown[] }[] };
    try {
      page = await get(q, '/customers');
      const ownerReads = selectFrom.mock.calls.filter(([from]) => from === 'beneficial_owners');
      expect(ownerReads).toHaveLength(1);
    } finally {
      selectFrom.mockRestore();
    }
    expect(page.data.map((d) => d.id)).toEqual([...expected.keys()]);
    for (const item of page.data) expect(item.beneficialOwners, item.id).toEqual(expected.get(item.id));

    // Two to a page: each page carries the owners of its own businesses.
    const first = await q.api.get('/customers', { query: { limit: 2 } });
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ hasMore: true, totalCount: 4 });
    const second = await q.api.get('/customers', { query: { limit: 2, cursor: first.body.nextCursor } });
    expect(second.status, second.text).toBe(200);
    expect(second.body.hasMore).toBe(false);
    const walked = [...first.body.data, ...second.body.data];
    expect(walked.map((d: { id: string }) => d.id)).toEqual([...expected.keys()]);
    for (const item of walked) expect(item.beneficialOwners, item.id).toEqual(expected.get(item.id));

    const businesses = await get(q, '/customers?customerType=BUSINESS');
    expect(businesses.data.map((d: { beneficialOwners: unknown[] }) => d.beneficialOwners)).toEqual([[solo], [], [two.zoe, two.adam]]);
  });
});

describe('beneficialOwners in CUSTOMER.* webhooks', () => {
  it('a KYB decision carries the business as GET returns it, owners included; a KYC one has none', async () => {
    const w = await srv.newPlatform();
    const set = await w.api.patch('/config', { webhookEndpoint: rec.url });
    expect(set.status, set.text).toBe(200);
    // On a sandbox platform a registration number ending in 3 digits decides the verification on its own (100: APPROVED).
    const { c, zoe, adam } = await businessWithTwoOwners(w, { registrationNumber: 'REG-100' });
    const v = await w.api.post('/verifications', { customerId: c.id });
    expect(v.status, v.text).toBe(200);
    expect(v.body.verificationStatus).toBe('APPROVED');
    const hook = await waitFor(() => rec.received.find((r) => r.body?.type === 'CUSTOMER.KYB_APPROVED' && r.body.data?.id === c.id));
    expect(hook.body.data.beneficialOwners).toEqual([zoe, adam]);
    expect(hook.body.data).toEqual(await get(w, `/customers/${c.id}`));

    const ind = await createCustomer(w.api, individualBody({ fullName: 'Ann Approved' }));
    const kyc = await waitFor(() => rec.received.find((r) => r.body?.type === 'CUSTOMER.KYC_APPROVED' && r.body.data?.id === ind.id));
    expect(kyc.body.data).not.toHaveProperty('beneficialOwners');
    expect(kyc.body.data).toEqual(ind);
  });
});

describe('the served OpenAPI document', () => {
  it('declares beneficialOwners on BusinessCustomer as an array of BeneficialOwner', async () => {
    const doc = (await srv.anon.get('/openapi.json')).body;
    const schema = doc.paths['/2025-10-13/customers/{customerId}'].get.responses['200'].content['application/json'].schema;
    const biz = schema.oneOf.find((s: { title?: string }) => s.title === 'BusinessCustomer');
    const ind = schema.oneOf.find((s: { title?: string }) => s.title === 'IndividualCustomer');
    expect(biz.required).toContain('beneficialOwners');
    expect(biz.properties.beneficialOwners).toMatchObject({ type: 'array', items: { title: 'BeneficialOwner', type: 'object' } });
    expect(ind.properties).not.toHaveProperty('beneficialOwners');
  });
});
