/**
 * The dashboard's server side over real HTTP: its static files (strict CSP, nothing else under
 * /dashboard), the operator's platform list, operator mode on platform routes (admin bearer plus
 * X-Corridor-Platform: every permission on SANDBOX, VIEW on PRODUCTION, refused with any other
 * credential), and the ledger postings behind an internal account (paged, platform-scoped).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../src/config.ts';
import { Client, expectError } from '../helpers/http.ts';
import { fund, platformUsdAccount } from '../helpers/payments.ts';
import { ADMIN_TOKEN, startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let operator: Client;
const as = (platformId: string) => ({ headers: { 'x-corridor-platform': platformId } });

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Dashboard Bank' });
  other = await srv.newPlatform({ name: 'Other Bank' });
  operator = new Client(srv.baseUrl, { bearer: ADMIN_TOKEN });
});
afterAll(async () => srv?.close());

describe('the static dashboard', () => {
  it('serves the page, its script and its stylesheet under a strict CSP', async () => {
    const page = await fetch(`${srv.origin}/dashboard/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/dashboard/app.js">');
    // Nothing from elsewhere: no absolute URL in the page.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const js = await fetch(`${srv.origin}/dashboard/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await js.text()).length).toBeGreaterThan(1000);
    const css = await fetch(`${srv.origin}/dashboard/app.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect(await css.text()).not.toMatch(/@import|url\((https?:)?\/\//);
  });

  it('redirects /dashboard to /dashboard/ and serves nothing else there', async () => {
    const r = await fetch(`${srv.origin}/dashboard`, { redirect: 'manual' });
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('/dashboard/');
    for (const f of ['index.html', 'constructor', '__proto__', 'main.tsx', '..%2Fpackage.json']) {
      const res = await fetch(`${srv.origin}/dashboard/${f}`);
      expect(res.status, f).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe('REFERENCE_NOT_FOUND');
    }
  });

  it('keeps its pages out of the OpenAPI document, which documents its two reads as Corridor operations', async () => {
    const doc = (await srv.anon.get('/openapi.json')).body as {
      paths: Record<string, Record<string, { operationId?: string; tags?: string[] }>>;
    };
    // The static pages are not operations; the two reads the dashboard adds are, under their own tags.
    expect(Object.keys(doc.paths).filter((k) => k.includes('dashboard'))).toEqual([
      `${BASE_PATH}/dashboard/internal-accounts/{accountId}/postings`,
    ]);
    expect(doc.paths[`${BASE_PATH}/dashboard/internal-accounts/{accountId}/postings`]?.get).toMatchObject({
      operationId: 'dashboardListPostings',
      tags: ['Dashboard'],
    });
    expect(Object.keys(doc.paths['/_admin/platforms'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(doc.paths['/_admin/platforms']?.get).toMatchObject({ operationId: 'adminListPlatforms', tags: ['Admin'] });
  });
});

describe('GET /_admin/platforms', () => {
  it('lists platforms newest first, paged with cursors', async () => {
    const first = await srv.admin.get('/_admin/platforms', { query: { limit: 1 } });
    expect(first.status).toBe(200);
    expect(first.body.data).toHaveLength(1);
    expect(first.body.data[0]).toMatchObject({ id: other.id, name: 'Other Bank', environment: 'SANDBOX', fiatCurrency: 'USD' });
    expect(first.body.hasMore).toBe(true);
    expect(first.body.totalCount).toBeGreaterThanOrEqual(2);
    const second = await srv.admin.get('/_admin/platforms', { query: { limit: 1, cursor: first.body.nextCursor } });
    expect(second.body.data[0]).toMatchObject({ id: p.id, name: 'Dashboard Bank' });
  });

  it('needs the operator token; bad input is a 400', async () => {
    expectError(await new Client(srv.origin).get('/_admin/platforms'), 401, 'UNAUTHORIZED');
    expectError(await new Client(srv.origin, { bearer: 'not-the-admin-token-000' }).get('/_admin/platforms'), 401, 'UNAUTHORIZED');
    expectError(await new Client(srv.origin, { basic: p.creds }).get('/_admin/platforms'), 401, 'UNAUTHORIZED');
    expectError(await srv.admin.get('/_admin/platforms', { query: { limit: 0 } }), 400, 'INVALID_INPUT');
    expectError(await srv.admin.get('/_admin/platforms', { query: { cursor: 'nope' } }), 400, 'INVALID_INPUT');
    expectError(await srv.admin.get('/_admin/platforms', { query: { extra: 1 } }), 400, 'INVALID_INPUT');
  });
});

describe('operator mode: the admin bearer with X-Corridor-Platform', () => {
  it('reads and acts on the named SANDBOX platform, and only that one', async () => {
    const c = await p.api.post('/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'op-mode-1',
      fullName: 'Olive Operator',
      birthDate: '1990-01-15',
      nationality: 'US',
    });
    expect(c.status, c.text).toBe(201);
    const mine = await operator.get('/customers', as(p.id));
    expect(mine.status).toBe(200);
    expect(mine.body.data.map((x: { id: string }) => x.id)).toContain(c.body.id);
    const theirs = await operator.get('/customers', as(other.id));
    expect(theirs.body.data.map((x: { id: string }) => x.id)).not.toContain(c.body.id);
    // Another platform's id through the operator acting on `other`: 404, as for its own tokens.
    expectError(await operator.get(`/customers/${c.body.id}`, as(other.id)), 404, 'USER_NOT_FOUND');
    // A write on a SANDBOX platform: the operator holds every permission there.
    const adv = await operator.post('/sandbox/clock/advance', { seconds: 5 }, as(p.id));
    expect(adv.status, adv.text).toBe(200);
    expect(adv.body.offsetMs).toBeGreaterThanOrEqual(5_000);
  });

  it('reads a PRODUCTION platform but moves nothing there (VIEW only)', async () => {
    const prod = await srv.newPlatform({ name: 'Live Bank', environment: 'PRODUCTION' });
    expect((await operator.get('/customers', as(prod.id))).status).toBe(200);
    const account = (await prod.api.get('/platform/internal-accounts')).body.data[0].id as string;
    expectError(await operator.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 100 }, as(prod.id)), 403, 'FORBIDDEN');
    expectError(await operator.post('/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'x' }, as(prod.id)), 403, 'FORBIDDEN');
  });

  it('grants nothing to any other credential', async () => {
    // A platform's own token naming another platform: refused, not silently its own platform.
    expectError(await p.api.get('/customers', as(other.id)), 403, 'FORBIDDEN');
    expectError(await p.api.get('/customers', as(p.id)), 403, 'FORBIDDEN');
    expectError(await new Client(srv.baseUrl).get('/customers', as(p.id)), 401, 'UNAUTHORIZED');
    expectError(await new Client(srv.baseUrl, { bearer: 'not-the-admin-token-000' }).get('/customers', as(p.id)), 401, 'UNAUTHORIZED');
    // The admin bearer alone is not a platform credential.
    expectError(await operator.get('/customers'), 401, 'UNAUTHORIZED');
    expectError(await operator.get('/customers', as('Platform:unknown')), 404, 'REFERENCE_NOT_FOUND');
    expectError(await operator.get('/customers', as('x'.repeat(300))), 404, 'REFERENCE_NOT_FOUND');
  });

  it('is refused when the admin API is disabled', async () => {
    const off = await startServer({ env: { CORRIDOR_ADMIN_TOKEN: '' } });
    try {
      const res = await new Client(`${off.origin}${BASE_PATH}`, { bearer: ADMIN_TOKEN }).get('/customers', as(p.id));
      expectError(res, 404, 'REFERENCE_NOT_FOUND');
    } finally {
      await off.close();
    }
  });
});

describe('GET /dashboard/internal-accounts/:accountId/postings', () => {
  it('lists the postings behind the balance, newest first, paged with cursors', async () => {
    const account = await platformUsdAccount(p);
    await fund(p, account, 1_000);
    await fund(p, account, 2_500);
    const all = await p.api.get(`/dashboard/internal-accounts/${account}/postings`);
    expect(all.status, all.text).toBe(200);
    expect(all.body.totalCount).toBe(2);
    expect(all.body.data.map((x: { amount: number }) => x.amount)).toEqual([2_500, 1_000]);
    expect(all.body.data[0]).toMatchObject({ kind: 'SANDBOX_FUNDING', currency: 'USD', bucket: 'AVAILABLE' });
    expect(all.body.data[0].createdAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const balance = (await p.api.get('/platform/internal-accounts', { query: { currency: 'USD' } })).body.data[0].balance.amount;
    expect(all.body.data.reduce((n: number, x: { amount: number }) => n + x.amount, 0)).toBe(balance);

    const one = await p.api.get(`/dashboard/internal-accounts/${account}/postings`, { query: { limit: 1 } });
    expect(one.body).toMatchObject({ hasMore: true, totalCount: 2 });
    const two = await p.api.get(`/dashboard/internal-accounts/${account}/postings`, { query: { limit: 1, cursor: one.body.nextCursor } });
    expect(two.body.data).toEqual([all.body.data[1]]);
    expect(two.body.hasMore).toBe(false);
    // The operator reads the same postings.
    expect((await operator.get(`/dashboard/internal-accounts/${account}/postings`, as(p.id))).body.data).toEqual(all.body.data);
  });

  it('another platform’s account is 404; bad input 400; no credentials 401', async () => {
    const account = await platformUsdAccount(p);
    expectError(await other.api.get(`/dashboard/internal-accounts/${account}/postings`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await operator.get(`/dashboard/internal-accounts/${account}/postings`, as(other.id)), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get('/dashboard/internal-accounts/InternalAccount:nope/postings'), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get(`/dashboard/internal-accounts/${account}/postings`, { query: { cursor: 'zzz' } }), 400, 'INVALID_INPUT');
    expectError(await p.api.get(`/dashboard/internal-accounts/${account}/postings`, { query: { limit: 101 } }), 400, 'INVALID_INPUT');
    expectError(await p.api.get(`/dashboard/internal-accounts/${account}/postings`, { query: { nope: 1 } }), 400, 'INVALID_INPUT');
    expectError(await srv.anon.get(`/dashboard/internal-accounts/${account}/postings`), 401, 'UNAUTHORIZED');
  });
});
