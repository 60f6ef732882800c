/** GET /customers: ordering, limit=1 pagination, every filter, deleted customers, bad queries. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { business, create, expectFieldError, individual, manualClock, setCurrencies, walk, type Wire } from '../helpers/customers.ts';

const clock = manualClock();
const MINUTE = 60_000;
let srv: TestServer;
let p: PlatformHandle;
let umaDomain: string;
const c: Record<string, Wire> = {};
let t: Record<string, string> = {};

beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
  p = await srv.newPlatform();
  umaDomain = (await p.api.get('/config')).body.umaDomain;
  await setCurrencies(p.api, ['USD', 'EUR', 'MXN']);
  // Five customers, one minute apart, then an update and a delete later on.
  clock.advance(MINUTE);
  c.ann = await create(p.api, individual({ platformCustomerId: 'ann', fullName: 'Ann', region: 'US', currencies: ['USD'] }));
  clock.advance(MINUTE);
  c.bob = await create(
    p.api,
    individual({
      platformCustomerId: 'bob',
      fullName: 'Bob',
      region: 'MX',
      currencies: ['MXN', 'USD'],
      umaAddress: `$bob.mx@${umaDomain}`,
    }),
  );
  clock.advance(MINUTE);
  c.acme = await create(p.api, business({ platformCustomerId: 'acme', region: 'US', currencies: ['USD', 'EUR'] }));
  clock.advance(MINUTE);
  c.cat = await create(p.api, individual({ platformCustomerId: 'cat', fullName: 'Cat', currencies: ['EUR'] }));
  clock.advance(MINUTE);
  c.zed = await create(p.api, business({ platformCustomerId: 'zed', region: 'MX', currencies: ['MXN'] }));
  clock.advance(MINUTE);
  const patched = await p.api.patch(`/customers/${c.ann.id}`, { customerType: 'INDIVIDUAL', fullName: 'Ann Updated' });
  expect(patched.status, patched.text).toBe(200);
  c.ann = patched.body;
  clock.advance(MINUTE);
  const deleted = await p.api.delete(`/customers/${c.cat.id}`);
  expect(deleted.status).toBe(200);
  c.cat = deleted.body;
  t = { ann: c.ann.createdAt, bob: c.bob.createdAt, acme: c.acme.createdAt, cat: c.cat.createdAt, zed: c.zed.createdAt };
  // Another platform's customers never show up.
  const other = await srv.newPlatform();
  await create(other.api, individual({ platformCustomerId: 'ann' }));
});
afterAll(async () => srv.close());

const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((d) => d.id);

describe('GET /customers', () => {
  it('lists active customers newest first, with totalCount', async () => {
    const res = await p.api.get('/customers');
    expect(res.status, res.text).toBe(200);
    expect(ids(res)).toEqual([c.zed.id, c.acme.id, c.bob.id, c.ann.id]);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.totalCount).toBe(4);
    expect(res.body).not.toHaveProperty('nextCursor');
    expect(res.body.data[3]).toEqual(c.ann);
  });

  it('walks pages of one with the cursor', async () => {
    const { ids: walked, totals } = await walk(p.api, '/customers');
    expect(walked).toEqual([c.zed.id, c.acme.id, c.bob.id, c.ann.id]);
    expect(new Set(totals)).toEqual(new Set([4]));
  });

  it('isIncludingDeleted=true also lists deleted customers, marked isDeleted', async () => {
    const res = await p.api.get('/customers', { query: { isIncludingDeleted: true } });
    expect(ids(res)).toEqual([c.zed.id, c.cat.id, c.acme.id, c.bob.id, c.ann.id]);
    expect(res.body.data[1].isDeleted).toBe(true);
    expect(res.body.totalCount).toBe(5);
    expect(ids(await p.api.get('/customers', { query: { isIncludingDeleted: false } }))).toHaveLength(4);
    const walked = await walk(p.api, '/customers', { isIncludingDeleted: true });
    expect(walked.ids).toEqual([c.zed.id, c.cat.id, c.acme.id, c.bob.id, c.ann.id]);
  });

  it('filters by platformCustomerId', async () => {
    expect(ids(await p.api.get('/customers', { query: { platformCustomerId: 'bob' } }))).toEqual([c.bob.id]);
    expect(ids(await p.api.get('/customers', { query: { platformCustomerId: 'cat' } }))).toEqual([]);
    expect(ids(await p.api.get('/customers', { query: { platformCustomerId: 'cat', isIncludingDeleted: true } }))).toEqual([c.cat.id]);
    expect(ids(await p.api.get('/customers', { query: { platformCustomerId: 'nobody' } }))).toEqual([]);
  });

  it('filters by customerType', async () => {
    const res = await p.api.get('/customers', { query: { customerType: 'BUSINESS' } });
    expect(ids(res)).toEqual([c.zed.id, c.acme.id]);
    expect(res.body.totalCount).toBe(2);
    expect(ids(await p.api.get('/customers', { query: { customerType: 'INDIVIDUAL' } }))).toEqual([c.bob.id, c.ann.id]);
  });

  it('filters by umaAddress, case-insensitively', async () => {
    expect(ids(await p.api.get('/customers', { query: { umaAddress: `$bob.mx@${umaDomain}` } }))).toEqual([c.bob.id]);
    expect(ids(await p.api.get('/customers', { query: { umaAddress: `$BOB.MX@${umaDomain.toUpperCase()}` } }))).toEqual([c.bob.id]);
    expect(ids(await p.api.get('/customers', { query: { umaAddress: `$ann@${umaDomain}` } }))).toEqual([c.ann.id]);
  });

  it('filters by region', async () => {
    expect(ids(await p.api.get('/customers', { query: { region: 'MX' } }))).toEqual([c.zed.id, c.bob.id]);
    expect(ids(await p.api.get('/customers', { query: { region: 'US' } }))).toEqual([c.acme.id, c.ann.id]);
    expect(ids(await p.api.get('/customers', { query: { region: 'BR' } }))).toEqual([]);
  });

  it('filters by currency (customers whose list contains it)', async () => {
    expect(ids(await p.api.get('/customers', { query: { currency: 'USD' } }))).toEqual([c.acme.id, c.bob.id, c.ann.id]);
    expect(ids(await p.api.get('/customers', { query: { currency: 'MXN' } }))).toEqual([c.zed.id, c.bob.id]);
    expect(ids(await p.api.get('/customers', { query: { currency: 'EUR' } }))).toEqual([c.acme.id]);
    expect(ids(await p.api.get('/customers', { query: { currency: 'GBP' } }))).toEqual([]);
    expectFieldError(await p.api.get('/customers', { query: { currency: 'US' } }), 'currency');
  });

  it('filters by createdAfter / createdBefore, both inclusive', async () => {
    expect(ids(await p.api.get('/customers', { query: { createdAfter: t.bob } }))).toEqual([c.zed.id, c.acme.id, c.bob.id]);
    expect(ids(await p.api.get('/customers', { query: { createdBefore: t.bob } }))).toEqual([c.bob.id, c.ann.id]);
    expect(ids(await p.api.get('/customers', { query: { createdAfter: t.bob, createdBefore: t.acme } }))).toEqual([c.acme.id, c.bob.id]);
    // Other spellings of the same instant compare equal.
    const noMillis = t.bob!.replace('.000Z', 'Z');
    const offset = new Date(Date.parse(t.bob!)).toISOString().replace('T12:', 'T14:').replace('.000Z', '+02:00');
    expect(ids(await p.api.get('/customers', { query: { createdAfter: noMillis, createdBefore: noMillis } }))).toEqual([c.bob.id]);
    expect(ids(await p.api.get('/customers', { query: { createdAfter: offset, createdBefore: offset } }))).toEqual([c.bob.id]);
    // A leap second (RFC 3339 allows :60) is the next second, not a 500.
    const leap = await p.api.get('/customers', { query: { createdBefore: '2016-12-31T23:59:60Z' } });
    expect(leap.status, leap.text).toBe(200);
    expect(ids(leap)).toEqual([]);
  });

  it('filters by updatedAfter / updatedBefore, both inclusive', async () => {
    expect(c.ann.updatedAt > t.zed!).toBe(true);
    expect(ids(await p.api.get('/customers', { query: { updatedAfter: c.ann.updatedAt } }))).toEqual([c.ann.id]);
    expect(ids(await p.api.get('/customers', { query: { updatedBefore: t.acme } }))).toEqual([c.acme.id, c.bob.id]);
    expect(ids(await p.api.get('/customers', { query: { updatedAfter: t.acme, updatedBefore: t.zed } }))).toEqual([c.zed.id, c.acme.id]);
    expect(ids(await p.api.get('/customers', { query: { updatedAfter: c.cat.updatedAt, isIncludingDeleted: true } }))).toEqual([c.cat.id]);
  });

  it('combines filters, and pages through a filtered list', async () => {
    const res = await p.api.get('/customers', { query: { customerType: 'INDIVIDUAL', currency: 'USD', region: 'MX' } });
    expect(ids(res)).toEqual([c.bob.id]);
    const walked = await walk(p.api, '/customers', { currency: 'USD' });
    expect(walked.ids).toEqual([c.acme.id, c.bob.id, c.ann.id]);
    expect(new Set(walked.totals)).toEqual(new Set([3]));
  });

  it('400 for bad query values, naming the parameter', async () => {
    expectFieldError(await p.api.get('/customers', { query: { createdAfter: 'yesterday' } }), 'createdAfter');
    expectFieldError(await p.api.get('/customers', { query: { updatedBefore: '2031-13-01T00:00:00Z' } }), 'updatedBefore');
    expectFieldError(await p.api.get('/customers', { query: { customerType: 'ROBOT' } }), 'customerType');
    expectFieldError(await p.api.get('/customers', { query: { isIncludingDeleted: 'maybe' } }), 'isIncludingDeleted');
    expectFieldError(await p.api.get('/customers', { query: { region: 'usa' } }), 'region');
    expectFieldError(await p.api.get('/customers', { query: { limit: 0 } }), 'limit');
    expectFieldError(await p.api.get('/customers', { query: { limit: 101 } }), 'limit');
    expectFieldError(await p.api.get('/customers', { query: { cursor: 'not-a-cursor' } }), 'cursor');
    expectFieldError(await p.api.get('/customers', { query: { sortOrder: 'asc' } }), 'sortOrder');
  });

  it('401 without credentials', async () => {
    expectError(await srv.anon.get('/customers'), 401, 'UNAUTHORIZED');
  });
});
