/** The eight external-account routes: happy paths, auth, ownership, duplicates, delete and its event. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { EXAMPLES, expectFieldError, newCustomer, usAccount } from './util.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let customerId: string;
let viewer: Client;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  other = await srv.newPlatform();
  customerId = await newCustomer(p.api);
  const tok = await p.api.post('/tokens', { name: 'read only', permissions: ['VIEW'] });
  expect(tok.status, tok.text).toBe(201);
  viewer = new Client(srv.baseUrl, { basic: { id: tok.body.clientId, secret: tok.body.clientSecret } });
});
afterAll(async () => srv.close());

const events = (platformId: string, resourceId: string) =>
  srv.app.ctx.db
    .selectFrom('outbox_events')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('resource_id', '=', resourceId)
    .execute();

describe('customer external accounts', () => {
  it('creates, reads, lists and deletes a customer account', async () => {
    const body = { ...usAccount(customerId, '12345678901'), platformAccountId: 'ext_acc_1', ownershipType: 'FIRST_PARTY' };
    const res = await p.api.post('/customers/external-accounts', body);
    expect(res.status, res.text).toBe(201);
    const a = res.body;
    expect(a.id).toMatch(/^ExternalAccount:[0-9a-f-]{36}$/);
    expect(a).toMatchObject({
      customerId,
      status: 'ACTIVE',
      currency: 'USD',
      platformAccountId: 'ext_acc_1',
      ownershipType: 'FIRST_PARTY',
      defaultUmaDepositAccount: false,
      beneficiaryVerificationStatus: 'MATCHED',
      beneficiaryVerifiedData: { fullName: 'John Doe' },
      accountInfo: { ...body.accountInfo, paymentRails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'] },
    });
    expect(Date.parse(a.createdAt)).not.toBeNaN();
    expect(a.updatedAt).toBe(a.createdAt);

    const got = await p.api.get(`/customers/external-accounts/${a.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(a);
    // Ids contain ':'; a percent-encoded id finds the same account.
    expect((await p.api.get(`/customers/external-accounts/${encodeURIComponent(a.id)}`)).body).toEqual(a);

    const list = await p.api.get('/customers/external-accounts', { query: { customerId } });
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: { id: string }) => x.id)).toContain(a.id);

    const del = await p.api.delete(`/customers/external-accounts/${a.id}`);
    expect(del.status, del.text).toBe(204);
    expect(del.text).toBe('');
    expectError(await p.api.get(`/customers/external-accounts/${a.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.delete(`/customers/external-accounts/${a.id}`), 404, 'REFERENCE_NOT_FOUND');
    const after = await p.api.get('/customers/external-accounts', { query: { customerId } });
    expect(after.body.data.map((x: { id: string }) => x.id)).not.toContain(a.id);

    const evs = await events(p.id, a.id);
    expect(evs.map((e) => e.type)).toEqual(['EXTERNAL_ACCOUNT.STATUS_UPDATED']);
    const data = JSON.parse(evs[0]!.payload);
    expect(data).toMatchObject({ id: a.id, customerId, status: 'INACTIVE', accountInfo: a.accountInfo });
    expect(evs[0]!.id).toMatch(/^Webhook:/);
  });

  it('deleting frees the account details for a new registration', async () => {
    const first = await p.api.post('/customers/external-accounts', usAccount(customerId, '22223333'));
    expect(first.status).toBe(201);
    expect((await p.api.delete(`/customers/external-accounts/${first.body.id}`)).status).toBe(204);
    const again = await p.api.post('/customers/external-accounts', usAccount(customerId, '22223333'));
    expect(again.status, again.text).toBe(201);
    expect(again.body.id).not.toBe(first.body.id);
  });

  it('without customerId creates a platform account (the live API behaviour)', async () => {
    const res = await p.api.post('/customers/external-accounts', usAccount(undefined, '900000001'));
    expect(res.status, res.text).toBe(201);
    expect(res.body.customerId).toBeUndefined();
    expect(res.body.defaultUmaDepositAccount).toBeUndefined();
    expect((await p.api.get(`/platform/external-accounts/${res.body.id}`)).status).toBe(200);
    expectFieldError(
      await p.api.post('/customers/external-accounts', usAccount(undefined, '900000002', { defaultUmaDepositAccount: true })),
      'defaultUmaDepositAccount',
    );
  });

  it('keeps one default UMA deposit account per customer', async () => {
    const c = await newCustomer(p.api, 'Uma Default');
    const a = await p.api.post('/customers/external-accounts', usAccount(c, '31000001', { defaultUmaDepositAccount: true }));
    expect(a.body.defaultUmaDepositAccount).toBe(true);
    const b = await p.api.post('/customers/external-accounts', usAccount(c, '31000002', { defaultUmaDepositAccount: true }));
    expect(b.body.defaultUmaDepositAccount).toBe(true);
    expect((await p.api.get(`/customers/external-accounts/${a.body.id}`)).body.defaultUmaDepositAccount).toBe(false);
    const c3 = await p.api.post('/customers/external-accounts', usAccount(c, '31000003'));
    expect(c3.body.defaultUmaDepositAccount).toBe(false);
  });

  it('404 USER_NOT_FOUND for an unknown customer or another platform’s, 410 for a deleted one', async () => {
    expectError(
      await p.api.post('/customers/external-accounts', usAccount('Customer:019542f5-b3e7-7d02-8000-000000000001', '41000001')),
      404,
      'USER_NOT_FOUND',
    );
    const theirs = await newCustomer(other.api);
    expectError(await p.api.post('/customers/external-accounts', usAccount(theirs, '41000002')), 404, 'USER_NOT_FOUND');
    const gone = await newCustomer(p.api, 'Gone Soon');
    expect((await p.api.delete(`/customers/${gone}`)).status).toBe(200);
    expectError(await p.api.post('/customers/external-accounts', usAccount(gone, '41000003')), 410, 'CUSTOMER_DELETED');
  });

  it('refuses a duplicate for the same owner with 409 CONFLICT, allows it for another owner', async () => {
    const first = await p.api.post('/customers/external-accounts', usAccount(customerId, '51000001'));
    expect(first.status).toBe(201);
    const dup = expectError(
      await p.api.post('/customers/external-accounts', usAccount(customerId, '51000001', { platformAccountId: 'other-ref' })),
      409,
      'CONFLICT',
    );
    expect(dup.body.details).toEqual({ externalAccountId: first.body.id });
    // Normalised: an IBAN differing only in case is the same account.
    const fr = (iban: string) => ({ customerId, currency: 'EUR', accountInfo: { ...EXAMPLES.EUR_ACCOUNT!.accountInfo, iban } });
    expect((await p.api.post('/customers/external-accounts', fr('FR1420041010050500013M02606'))).status).toBe(201);
    expectError(await p.api.post('/customers/external-accounts', fr('FR1420041010050500013m02606')), 409, 'CONFLICT');
    // Same EVM address in another case: the same wallet.
    const evm = { accountType: 'BASE_WALLET', address: '0x00000000000000000000000000000000000000aB' };
    expect((await p.api.post('/customers/external-accounts', { customerId, currency: 'USDC', accountInfo: evm })).status).toBe(201);
    expectError(
      await p.api.post('/customers/external-accounts', {
        customerId,
        currency: 'USDC',
        accountInfo: { ...evm, address: evm.address.toUpperCase().replace('0X', '0x') },
      }),
      409,
      'CONFLICT',
    );
    // Another customer, or the platform, may register the same account.
    const c2 = await newCustomer(p.api, 'Joint Holder');
    expect((await p.api.post('/customers/external-accounts', usAccount(c2, '51000001'))).status).toBe(201);
    expect((await p.api.post('/platform/external-accounts', usAccount(undefined, '51000001'))).status).toBe(201);
    // Same routing + account number under the alias is the same account.
    const alias = usAccount(customerId, '51000001');
    expectError(
      await p.api.post('/customers/external-accounts', { ...alias, accountInfo: { ...alias.accountInfo, accountType: 'USD_ACCOUNT' } }),
      409,
      'CONFLICT',
    );
  });

  it('concurrent creates of the same account: one 201, the others 409', async () => {
    const c = await newCustomer(p.api, 'Race Runner');
    const results = await Promise.all(
      Array.from({ length: 5 }, () => p.api.post('/customers/external-accounts', usAccount(c, '61000001'))),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expectError(r, 409, 'CONFLICT');
  });
});

describe('platform external accounts', () => {
  it('creates, reads, lists and deletes a platform account', async () => {
    const res = await p.api.post('/platform/external-accounts', {
      currency: 'EUR',
      platformAccountId: 'treasury',
      accountInfo: EXAMPLES.EUR_ACCOUNT!.accountInfo,
    });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      status: 'ACTIVE',
      currency: 'EUR',
      platformAccountId: 'treasury',
      accountInfo: { accountType: 'EUR_ACCOUNT', paymentRails: ['SEPA', 'SEPA_INSTANT'] },
    });
    expect(res.body.customerId).toBeUndefined();
    expect(res.body.defaultUmaDepositAccount).toBeUndefined();
    const id = res.body.id;
    expect((await p.api.get(`/platform/external-accounts/${id}`)).body).toEqual(res.body);
    // The customer namespace sees every account of the platform.
    expect((await p.api.get(`/customers/external-accounts/${id}`)).body).toEqual(res.body);
    const list = await p.api.get('/platform/external-accounts');
    expect(list.body.data.map((x: { id: string }) => x.id)).toContain(id);
    expect((await p.api.delete(`/platform/external-accounts/${id}`)).status).toBe(204);
    expectError(await p.api.get(`/platform/external-accounts/${id}`), 404, 'REFERENCE_NOT_FOUND');
    expect((await events(p.id, id)).map((e) => JSON.parse(e.payload).status)).toEqual(['INACTIVE']);
  });

  it('takes no customerId or defaultUmaDepositAccount', async () => {
    expectFieldError(await p.api.post('/platform/external-accounts', usAccount(customerId, '71000001')), 'customerId');
    expectFieldError(
      await p.api.post('/platform/external-accounts', usAccount(undefined, '71000002', { defaultUmaDepositAccount: false })),
      'defaultUmaDepositAccount',
    );
  });

  it('does not show customer accounts', async () => {
    const res = await p.api.post('/customers/external-accounts', usAccount(customerId, '72000001'));
    expectError(await p.api.get(`/platform/external-accounts/${res.body.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.delete(`/platform/external-accounts/${res.body.id}`), 404, 'REFERENCE_NOT_FOUND');
    expect((await p.api.get(`/customers/external-accounts/${res.body.id}`)).status).toBe(200);
  });
});

describe('auth and ownership', () => {
  let mine: string;
  let minePlatform: string;
  beforeAll(async () => {
    mine = (await p.api.post('/customers/external-accounts', usAccount(customerId, '81000001'))).body.id;
    minePlatform = (await p.api.post('/platform/external-accounts', usAccount(undefined, '81000002'))).body.id;
  });

  const routes = (id: string): [string, string, unknown?][] => [
    ['POST', '/customers/external-accounts', usAccount(undefined, '81000009')],
    ['GET', '/customers/external-accounts'],
    ['GET', `/customers/external-accounts/${id}`],
    ['DELETE', `/customers/external-accounts/${id}`],
    ['POST', '/platform/external-accounts', usAccount(undefined, '81000010')],
    ['GET', '/platform/external-accounts'],
    ['GET', `/platform/external-accounts/${id}`],
    ['DELETE', `/platform/external-accounts/${id}`],
  ];

  it('401 without or with wrong credentials on every route', async () => {
    const wrong = new Client(srv.baseUrl, { basic: { id: p.creds.id, secret: 'nope' } });
    for (const [method, path, body] of routes(mine)) {
      expectError(await srv.anon.request(method, path, body), 401, 'UNAUTHORIZED');
      expectError(await wrong.request(method, path, body), 401, 'UNAUTHORIZED');
    }
  });

  it('403 for writes with a VIEW-only token; reads work', async () => {
    for (const [method, path, body] of routes(mine)) {
      const res = await viewer.request(method, path, body);
      if (method === 'GET') expect(res.status, `${method} ${path}`).not.toBe(403);
      else expectError(res, 403, 'FORBIDDEN');
    }
  });

  it("404 for another platform's account ids, and its lists stay empty", async () => {
    for (const id of [mine, minePlatform]) {
      expectError(await other.api.get(`/customers/external-accounts/${id}`), 404, 'REFERENCE_NOT_FOUND');
      expectError(await other.api.delete(`/customers/external-accounts/${id}`), 404, 'REFERENCE_NOT_FOUND');
      expectError(await other.api.get(`/platform/external-accounts/${id}`), 404, 'REFERENCE_NOT_FOUND');
      expectError(await other.api.delete(`/platform/external-accounts/${id}`), 404, 'REFERENCE_NOT_FOUND');
    }
    expect((await p.api.get(`/customers/external-accounts/${mine}`)).status).toBe(200);
    expect((await other.api.get('/customers/external-accounts', { query: { customerId } })).body).toEqual({
      data: [],
      hasMore: false,
      totalCount: 0,
    });
    expect((await other.api.get('/platform/external-accounts')).body.totalCount).toBe(0);
  });

  it('404 for unknown and malformed ids', async () => {
    for (const id of ['ExternalAccount:019542f5-b3e7-7d02-8000-000000000001', 'nope', 'Customer:x']) {
      expectError(await p.api.get(`/customers/external-accounts/${encodeURIComponent(id)}`), 404, 'REFERENCE_NOT_FOUND');
      expectError(await p.api.delete(`/platform/external-accounts/${encodeURIComponent(id)}`), 404, 'REFERENCE_NOT_FOUND');
    }
  });

  it('405 for methods the paths do not have', async () => {
    expectError(await p.api.patch(`/customers/external-accounts/${mine}`, {}), 405, 'METHOD_NOT_ALLOWED');
    expectError(await p.api.put('/platform/external-accounts', {}), 405, 'METHOD_NOT_ALLOWED');
  });
});
