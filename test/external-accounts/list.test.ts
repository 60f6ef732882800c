/** GET /customers/external-accounts and GET /platform/external-accounts: filters, cursor pagination, totalCount. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { EXAMPLES, expectFieldError, newCustomer, usAccount } from './util.ts';

let srv: TestServer;
let p: PlatformHandle;
let alice: string;
let bob: string;
const ids = { alice: [] as string[], aliceEur: '', bob: [] as string[], platform: [] as string[] };

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  alice = await newCustomer(p.api, 'Alice Example');
  bob = await newCustomer(p.api, 'Bob Example');
  const post = async (path: string, body: unknown) => {
    const res = await p.api.post(path, body);
    if (res.status !== 201) throw new Error(`${res.status} ${res.text}`);
    return res.body.id as string;
  };
  for (let i = 0; i < 5; i++) ids.alice.push(await post('/customers/external-accounts', usAccount(alice, `1000000${i}`)));
  ids.aliceEur = await post('/customers/external-accounts', {
    customerId: alice,
    currency: 'EUR',
    accountInfo: EXAMPLES.EUR_ACCOUNT!.accountInfo,
  });
  for (let i = 0; i < 2; i++) ids.bob.push(await post('/customers/external-accounts', usAccount(bob, `2000000${i}`)));
  for (let i = 0; i < 3; i++) ids.platform.push(await post('/platform/external-accounts', usAccount(undefined, `3000000${i}`)));
  ids.platform.push(await post('/platform/external-accounts', { currency: 'BTC', accountInfo: EXAMPLES.LAYER2_WALLET!.accountInfo }));
});
afterAll(async () => srv.close());

const idsOf = (res: { body: { data: { id: string }[] } }) => res.body.data.map((a) => a.id);

/** Walks every page of a list; returns the ids in order and the totals seen. */
async function walk(path: string, query: Record<string, string | number>) {
  const seen: string[] = [];
  const totals: number[] = [];
  let cursor: string | undefined;
  for (let guard = 0; guard < 50; guard++) {
    const res = await p.api.get(path, { query: { ...query, ...(cursor ? { cursor } : {}) } });
    expect(res.status, res.text).toBe(200);
    seen.push(...idsOf(res));
    totals.push(res.body.totalCount);
    if (!res.body.hasMore) {
      expect(res.body.nextCursor).toBeUndefined();
      return { seen, totals };
    }
    expect(typeof res.body.nextCursor).toBe('string');
    cursor = res.body.nextCursor;
  }
  throw new Error('pagination did not end');
}

describe('GET /customers/external-accounts', () => {
  it('lists every account of the platform, newest first, with totalCount', async () => {
    const res = await p.api.get('/customers/external-accounts');
    expect(res.status).toBe(200);
    const all = [...ids.alice, ids.aliceEur, ...ids.bob, ...ids.platform];
    expect(res.body.totalCount).toBe(all.length);
    expect(res.body.hasMore).toBe(false);
    expect(idsOf(res)).toEqual([...all].reverse());
  });

  it('filters by customerId and currency', async () => {
    const a = await p.api.get('/customers/external-accounts', { query: { customerId: alice } });
    expect(idsOf(a)).toEqual([ids.aliceEur, ...[...ids.alice].reverse()]);
    expect(a.body.totalCount).toBe(6);
    const aUsd = await p.api.get('/customers/external-accounts', { query: { customerId: alice, currency: 'USD' } });
    expect(idsOf(aUsd)).toEqual([...ids.alice].reverse());
    const eur = await p.api.get('/customers/external-accounts', { query: { currency: 'EUR' } });
    expect(idsOf(eur)).toEqual([ids.aliceEur]);
    const none = await p.api.get('/customers/external-accounts', {
      query: { customerId: 'Customer:019542f5-b3e7-7d02-8000-000000000009' },
    });
    expect(none.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
    const jpy = await p.api.get('/customers/external-accounts', { query: { currency: 'JPY' } });
    expect(jpy.body.totalCount).toBe(0);
  });

  it('pages with limit and cursor without gaps or repeats', async () => {
    const { seen, totals } = await walk('/customers/external-accounts', { customerId: alice, limit: 2 });
    expect(seen).toEqual([ids.aliceEur, ...[...ids.alice].reverse()]);
    expect(new Set(totals)).toEqual(new Set([6]));
    const first = await p.api.get('/customers/external-accounts', { query: { customerId: alice, limit: 2 } });
    expect(first.body.data).toHaveLength(2);
    expect(first.body.hasMore).toBe(true);
  });

  it('keeps the cursor stable while accounts are added and leaves deleted ones out', async () => {
    const first = await p.api.get('/customers/external-accounts', { query: { customerId: bob, limit: 1 } });
    expect(idsOf(first)).toEqual([ids.bob[1]]);
    const added = (await p.api.post('/customers/external-accounts', usAccount(bob, '20000009'))).body.id;
    const second = await p.api.get('/customers/external-accounts', { query: { customerId: bob, limit: 1, cursor: first.body.nextCursor } });
    expect(idsOf(second)).toEqual([ids.bob[0]]);
    expect(second.body.totalCount).toBe(3);
    expect((await p.api.delete(`/customers/external-accounts/${added}`)).status).toBe(204);
    expect((await p.api.get('/customers/external-accounts', { query: { customerId: bob } })).body.totalCount).toBe(2);
  });

  it('400 for bad query values', async () => {
    expectFieldError(await p.api.get('/customers/external-accounts', { query: { limit: 0 } }), 'limit');
    expectFieldError(await p.api.get('/customers/external-accounts', { query: { limit: 101 } }), 'limit');
    expectFieldError(await p.api.get('/customers/external-accounts', { query: { limit: 'ten' } }), 'limit');
    expectFieldError(await p.api.get('/customers/external-accounts', { query: { cursor: 'not-a-cursor' } }), 'cursor');
    expectFieldError(await p.api.get('/customers/external-accounts', { query: { currency: 'us dollars' } }), 'currency');
    expectFieldError(await p.api.get('/customers/external-accounts', { query: { sortOrder: 'asc' } }), 'sortOrder');
  });
});

describe('GET /platform/external-accounts', () => {
  it('lists only platform-owned accounts', async () => {
    const res = await p.api.get('/platform/external-accounts');
    expect(res.status).toBe(200);
    expect(idsOf(res)).toEqual([...ids.platform].reverse());
    expect(res.body.totalCount).toBe(4);
    for (const a of res.body.data) expect(a.customerId).toBeUndefined();
  });

  it('filters by currency and pages', async () => {
    const btc = await p.api.get('/platform/external-accounts', { query: { currency: 'BTC' } });
    expect(idsOf(btc)).toEqual([ids.platform[3]]);
    expect(btc.body.data[0].accountInfo.accountType).toBe('LAYER2_WALLET');
    const { seen } = await walk('/platform/external-accounts', { currency: 'USD', limit: 1 });
    expect(seen).toEqual(ids.platform.slice(0, 3).reverse());
  });

  it('takes no customerId filter', async () => {
    expectFieldError(await p.api.get('/platform/external-accounts', { query: { customerId: alice } }), 'customerId');
    expectError(await p.api.get('/platform/external-accounts', { query: { cursor: '%%%' } }), 400, 'INVALID_INPUT');
  });
});
