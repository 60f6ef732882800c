/** GET /customers/internal-accounts: filters, limit=1 pagination, isolation, bad queries. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { business, create, expectFieldError, individual, setCurrencies, walk, type Wire } from '../helpers/customers.ts';

let srv: TestServer;
let p: PlatformHandle;
let ann: Wire;
let acme: Wire;
let all: Wire[];

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  await setCurrencies(p.api, ['USD', 'EUR', 'USDC', 'USDB']);
  ann = await create(p.api, individual({ fullName: 'Ann Lee', currencies: ['USD', 'USDC'] }));
  acme = await create(p.api, business({ currencies: ['EUR'] }));
  const other = await srv.newPlatform();
  await create(other.api, individual());
  all = (await p.api.get('/customers/internal-accounts', { query: { limit: 100 } })).body.data;
});
afterAll(async () => srv.close());

const key = (a: Wire) => `${a.customerId}|${a.type}|${a.balance.currency.code}`;

describe('GET /customers/internal-accounts', () => {
  it("lists every customer account of the platform (not the platform's own), newest first", async () => {
    const res = await p.api.get('/customers/internal-accounts');
    expect(res.status, res.text).toBe(200);
    expect(res.body.totalCount).toBe(5);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.data.map(key).sort()).toEqual(
      [
        `${ann.id}|INTERNAL_FIAT|USD`,
        `${ann.id}|INTERNAL_CRYPTO|USDC`,
        `${ann.id}|EMBEDDED_WALLET|USDB`,
        `${acme.id}|INTERNAL_FIAT|EUR`,
        `${acme.id}|EMBEDDED_WALLET|USDB`,
      ].sort(),
    );
    const ids = res.body.data.map((a: Wire) => a.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    const platformAccounts = (await p.api.get('/platform/internal-accounts')).body.data.map((a: Wire) => a.id);
    for (const id of platformAccounts) expect(ids).not.toContain(id);
  });

  it('walks pages of one with the cursor', async () => {
    const { ids, totals } = await walk(p.api, '/customers/internal-accounts');
    expect(ids).toEqual(all.map((a) => a.id));
    expect(new Set(totals)).toEqual(new Set([5]));
  });

  it('filters by customerId, currency and type, alone and together', async () => {
    const byCustomer = await p.api.get('/customers/internal-accounts', { query: { customerId: ann.id } });
    expect(byCustomer.body.totalCount).toBe(3);
    expect(byCustomer.body.data.every((a: Wire) => a.customerId === ann.id)).toBe(true);
    const usdb = await p.api.get('/customers/internal-accounts', { query: { currency: 'USDB' } });
    expect(usdb.body.data.map(key).sort()).toEqual([`${acme.id}|EMBEDDED_WALLET|USDB`, `${ann.id}|EMBEDDED_WALLET|USDB`].sort());
    const wallets = await p.api.get('/customers/internal-accounts', { query: { type: 'EMBEDDED_WALLET' } });
    expect(wallets.body.totalCount).toBe(2);
    expect(wallets.body.data.every((a: Wire) => a.privateEnabled === false)).toBe(true);
    const both = await p.api.get('/customers/internal-accounts', {
      query: { customerId: acme.id, type: 'INTERNAL_FIAT', currency: 'EUR' },
    });
    expect(both.body.data.map(key)).toEqual([`${acme.id}|INTERNAL_FIAT|EUR`]);
    expect(both.body.data[0].fundingPaymentInstructions[0].accountOrWalletInfo).toMatchObject({
      accountType: 'EUR_ACCOUNT',
      accountHolderName: 'Acme Corporation',
    });
    const none = await p.api.get('/customers/internal-accounts', { query: { customerId: ann.id, currency: 'EUR' } });
    expect(none.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
    const walked = await walk(p.api, '/customers/internal-accounts', { customerId: ann.id });
    expect(walked.ids).toHaveLength(3);
  });

  it("shows nothing of another platform's customer", async () => {
    const other = await srv.newPlatform();
    const theirs = await create(other.api, individual());
    const res = await p.api.get('/customers/internal-accounts', { query: { customerId: theirs.id } });
    expect(res.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
  });

  it('400 for bad query values', async () => {
    expectFieldError(await p.api.get('/customers/internal-accounts', { query: { type: 'SAVINGS' } }), 'type');
    expectFieldError(await p.api.get('/customers/internal-accounts', { query: { currency: 'dollars' } }), 'currency');
    expectFieldError(await p.api.get('/customers/internal-accounts', { query: { limit: 1000 } }), 'limit');
    expectFieldError(await p.api.get('/customers/internal-accounts', { query: { cursor: '!!' } }), 'cursor');
    expectFieldError(await p.api.get('/customers/internal-accounts', { query: { status: 'ACTIVE' } }), 'status');
  });

  it('401 without credentials', async () => {
    expectError(await srv.anon.get('/customers/internal-accounts'), 401, 'UNAUTHORIZED');
  });

  it('sandbox funding of a customer account keeps the ledger clean', async () => {
    const usd = all.find((a) => a.customerId === ann.id && a.balance.currency.code === 'USD');
    const res = await p.api.post(`/sandbox/internal-accounts/${usd.id}/fund`, { amount: 12345 });
    expect(res.status, res.text).toBe(200);
    const after = (await p.api.get('/customers/internal-accounts', { query: { customerId: ann.id, currency: 'USD' } })).body.data[0];
    expect(after.balance.amount).toBe(12345);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});
