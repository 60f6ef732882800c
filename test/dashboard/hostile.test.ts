/**
 * Hostile review of the dashboard's two reads and operator mode (issue #25), over real HTTP on the
 * lane's store: cursors Corridor never issued (a NUL inside the id: PostgreSQL refuses such text, so
 * it must be a 400 before any query), the static route against path traversal, and operator mode
 * with every credential that must not grant it, on PRODUCTION platforms and on admin routes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, expectError, rawGet } from '../helpers/http.ts';
import { fund, platformUsdAccount } from '../helpers/payments.ts';
import { ADMIN_TOKEN, startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let p: PlatformHandle;
let operator: Client;
const as = (platformId: string) => ({ headers: { 'x-corridor-platform': platformId } });
/** A cursor as the API encodes one (base64url JSON), around an id of our choosing. */
const cursorOf = (id: unknown) => Buffer.from(JSON.stringify({ id }), 'utf8').toString('base64url');

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Review Bank' });
  operator = new Client(srv.baseUrl, { bearer: ADMIN_TOKEN });
});
afterAll(async () => srv?.close());

describe('cursors Corridor never issued', () => {
  it('a NUL in the cursor id is a 400 on cursor for the dashboard reads and the API lists, never a 500', async () => {
    const account = await platformUsdAccount(p);
    await fund(p, account, 700);
    const bad = [cursorOf('x\u0000'), cursorOf(`LedgerEntry:\u0000#1`), cursorOf('\u0000#0')];
    for (const cursor of bad) {
      const reads = [
        await p.api.get(`/dashboard/internal-accounts/${account}/postings`, { query: { cursor } }),
        await operator.get(`/dashboard/internal-accounts/${account}/postings`, { query: { cursor }, ...as(p.id) }),
        await srv.admin.get('/_admin/platforms', { query: { cursor } }),
        await p.api.get('/customers', { query: { cursor } }),
        await p.api.get('/transactions', { query: { cursor } }),
      ];
      for (const res of reads) {
        expectError(res, 400, 'INVALID_INPUT');
        expect(res.body.details.errors).toEqual([{ field: 'cursor', message: 'is not a cursor returned by this API' }]);
      }
    }
    // The cursors the API hands out still page.
    const first = await p.api.get(`/dashboard/internal-accounts/${account}/postings`, { query: { limit: 1 } });
    expect(first.status).toBe(200);
    const platforms = await srv.admin.get('/_admin/platforms', { query: { limit: 1 } });
    expect((await srv.admin.get('/_admin/platforms', { query: { limit: 1, cursor: platforms.body.nextCursor } })).status).toBe(200);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});

describe('the static route', () => {
  it('serves its three files and nothing else, whatever the encoding of the path', async () => {
    const paths = [
      '/dashboard/../package.json',
      '/dashboard/%2e%2e/package.json',
      '/dashboard/..%2fpackage.json',
      '/dashboard/%2e%2e%2fpackage.json',
      '/dashboard/..%5cpackage.json',
      '/dashboard//etc/passwd',
      '/dashboard/%2fetc%2fpasswd',
      '/dashboard/app.js/../../package.json',
      '/dashboard/app.js%2f..%2f..%2fpackage.json',
      '/dashboard/app.js%00',
      '/dashboard/APP.JS',
      '/dashboard/index.html',
      '/dashboard/hasOwnProperty',
      '/dashboard/%ff',
    ];
    for (const path of paths) {
      // fetch normalises dot segments itself; a raw request line sends the path as written.
      const res = await rawGet(srv.origin, path);
      expect([400, 404], path).toContain(res.status);
      expect(JSON.parse(res.body), path).toMatchObject({ status: res.status });
      expect(res.body, path).not.toContain('"dependencies"');
    }
  });
});

describe('operator mode grants nothing to other credentials', () => {
  it('an agent bearer, a lower-case or padded bearer, or Basic credentials with the header do not act as the platform', async () => {
    const other = await srv.newPlatform();
    expectError(
      await new Client(srv.baseUrl, { bearer: 'gat_0123456789abcdef0123456789abcdef01234567' }).get('/customers', as(p.id)),
      401,
      'UNAUTHORIZED',
    );
    const lower = await new Client(srv.baseUrl).get('/customers', {
      headers: { authorization: `bearer ${ADMIN_TOKEN}`, ...as(p.id).headers },
    });
    expect(lower.status).toBe(401);
    const padded = await new Client(srv.baseUrl).get('/customers', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}x`, ...as(p.id).headers },
    });
    expectError(padded, 401, 'UNAUTHORIZED');
    // Basic credentials of another platform naming this one: refused, not the caller's own platform.
    expectError(await other.api.get('/customers', as(p.id)), 403, 'FORBIDDEN');
    // Two headers (joined by Node) or a header naming a platform differently spelled: no platform.
    expectError(
      await operator.get('/customers', { headers: { 'x-corridor-platform': `${p.id}, ${other.id}` } }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(await operator.get('/customers', as(p.id.toLowerCase())), 404, 'REFERENCE_NOT_FOUND');
    expectError(await operator.get('/customers', as('')), 404, 'REFERENCE_NOT_FOUND');
  });

  it('on a PRODUCTION platform the operator only reads: no faults, trigger, fixtures or funding', async () => {
    const prod = await srv.newPlatform({ name: 'Live Review Bank', environment: 'PRODUCTION' });
    expect((await operator.get('/platform/internal-accounts', as(prod.id))).status).toBe(200);
    const account = (await prod.api.get('/platform/internal-accounts')).body.data[0].id as string;
    expect((await operator.get(`/dashboard/internal-accounts/${account}/postings`, as(prod.id))).status).toBe(200);
    expectError(await operator.get('/sandbox/faults', as(prod.id)), 403, 'FORBIDDEN');
    expectError(await operator.post('/sandbox/faults', { rules: [{ route: '*', errorRate: 1 }] }, as(prod.id)), 403, 'FORBIDDEN');
    expectError(await operator.delete('/sandbox/faults', as(prod.id)), 403, 'FORBIDDEN');
    expectError(await operator.post('/sandbox/trigger', { eventType: 'CUSTOMER.CREATED' }, as(prod.id)), 403, 'FORBIDDEN');
    expectError(await operator.post('/sandbox/fixtures', { customers: [] }, as(prod.id)), 403, 'FORBIDDEN');
    expectError(await operator.post('/tokens', { name: 'mine', permissions: ['VIEW'] }, as(prod.id)), 403, 'FORBIDDEN');
    expectError(await operator.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 1 }, as(prod.id)), 403, 'FORBIDDEN');
    expect((await srv.ledger(prod.id)).ok).toBe(true);
  });

  it('the header changes nothing on admin and public routes', async () => {
    const listed = await srv.admin.get('/_admin/platforms', { query: { limit: 100 }, ...as(p.id) });
    expect(listed.status).toBe(200);
    expect(listed.body.data.length).toBeGreaterThan(1);
    expectError(await new Client(srv.origin, { basic: p.creds }).get('/_admin/platforms', as(p.id)), 401, 'UNAUTHORIZED');
    expect((await fetch(`${srv.origin}/dashboard/`, as(p.id))).status).toBe(200);
  });
});
