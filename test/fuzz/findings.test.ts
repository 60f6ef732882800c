/**
 * Regression tests for what the hostile-input fuzzer found (test/fuzz/operations.test.ts finds
 * them again at random; these pin each one down by name):
 * - a union body field (`OneOf`) accepted null, booleans, numbers, strings and arrays, which then
 *   crashed the service (500) — e.g. `POST /quotes` with `"source": true`, `POST /auth/credentials`
 *   with the body `null`;
 * - NUL (U+0000) in a path id, query value, body string, form field or Basic client id was a 500
 *   on PostgreSQL (text cannot hold it) and stored as-is on SQLite;
 * - operations without query parameters ignored unknown ones (a misspelt parameter on a POST
 *   still created the resource), and operations that validate input did not document 400;
 * - a querystring-level validation error named its field `(body)`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../src/config.ts';
import { basicHeader, expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { PDF, sendForm, businessBody } from '../helpers/kyc.ts';
import { closeClient, loopBlocks, send, type RawResponse } from './client.ts';
import { operationsOf, type Operation } from '../helpers/api/operations.ts';
import { check } from './oracle.ts';
import { diff, snapshot } from '../helpers/api/state.ts';

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
});
afterAll(async () => {
  closeClient();
  await srv?.close();
});

const fieldsOf = (res: Res): string[] => (res.body?.details?.errors ?? []).map((e: { field: string }) => e.field);

async function count(table: 'api_tokens' | 'customers' | 'documents'): Promise<number> {
  const r = await srv.app.ctx.db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('platform_id', '=', p.id)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

describe('union (OneOf) fields refuse non-objects', () => {
  it('POST /auth/credentials with a body that is not an object: 400, not 500', async () => {
    for (const raw of ['null', 'true', '1', '"EMAIL_OTP"', '[]', '[{"type":"EMAIL_OTP"}]']) {
      expectError(await p.api.post('/auth/credentials', undefined, { raw }), 400, 'INVALID_INPUT');
    }
  });

  it('POST /quotes with source or destination that is not an object: 400 naming it', async () => {
    const base = {
      source: { sourceType: 'ACCOUNT', accountId: 'InternalAccount:x' },
      destination: { destinationType: 'ACCOUNT', accountId: 'ExternalAccount:x' },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 100,
    };
    for (const bad of [true, null, 5, 'ACCOUNT', [], [{ sourceType: 'ACCOUNT' }]]) {
      const s = expectError(await p.api.post('/quotes', { ...base, source: bad }), 400, 'INVALID_INPUT');
      expect(fieldsOf(s)).toContain('source');
      const d = expectError(await p.api.post('/quotes', { ...base, destination: bad }), 400, 'INVALID_INPUT');
      expect(fieldsOf(d)).toContain('destination');
    }
  });

  it('a beneficiary that is not an object: 400 naming it', async () => {
    const customerId = (await p.api.post('/customers', businessBody())).body.id as string;
    const info = {
      accountType: 'US_ACCOUNT',
      accountNumber: '445566001',
      routingNumber: '021000021',
      bankName: 'Chase Bank',
      bankAccountType: 'CHECKING',
    };
    for (const bad of [true, null, 7, 'INDIVIDUAL', [], [{ beneficiaryType: 'INDIVIDUAL' }]]) {
      const res = expectError(
        await p.api.post('/customers/external-accounts', { customerId, currency: 'USD', accountInfo: { ...info, beneficiary: bad } }),
        400,
        'INVALID_INPUT',
      );
      expect(fieldsOf(res)).toContain('accountInfo.beneficiary');
    }
  });

  it('the OpenAPI document shows every discriminated union as an object', async () => {
    const doc = (await srv.anon.get('/openapi.json')).body;
    const unions: Record<string, unknown>[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object') {
        const o = v as Record<string, unknown>;
        if (o.discriminator && o.oneOf) unions.push(o);
        Object.values(o).forEach(walk);
      }
    };
    walk(doc.paths);
    expect(unions.length).toBeGreaterThan(3);
    for (const u of unions) expect(u.type).toBe('object');
  });
});

describe('NUL characters are refused everywhere (400), on both stores', () => {
  it('in a path id, a query value, a body string at any depth and a JSON key', async () => {
    const tokens = await count('api_tokens');
    const customers = await count('customers');
    expect(fieldsOf(expectError(await p.api.get('/tokens/Token%3Aabc%00'), 400, 'INVALID_INPUT'))).toEqual(['tokenId']);
    expect(fieldsOf(expectError(await p.api.get('/customers/%00'), 400, 'INVALID_INPUT'))).toEqual(['customerId']);
    expect(
      fieldsOf(expectError(await p.api.get('/customers', { query: { platformCustomerId: 'a\u0000b' } }), 400, 'INVALID_INPUT')),
    ).toEqual(['platformCustomerId']);
    expect(fieldsOf(expectError(await p.api.post('/tokens', { name: 'a\u0000b', permissions: ['VIEW'] }), 400, 'INVALID_INPUT'))).toEqual([
      'name',
    ]);
    const nested = expectError(
      await p.api.post('/customers', {
        ...businessBody(),
        address: { line1: '1 Main\u0000 Street', city: 'Seattle', postalCode: '98101', country: 'US' },
      }),
      400,
      'INVALID_INPUT',
    );
    expect(fieldsOf(nested)).toEqual(['address.line1']);
    expectError(await p.api.post('/tokens', undefined, { raw: '{"name":"ok","permissions":["VIEW"],"\\u0000":1}' }), 400, 'INVALID_INPUT');
    expect(await count('api_tokens')).toBe(tokens);
    expect(await count('customers')).toBe(customers);
  });

  it('in a multipart form field', async () => {
    const owner = (await p.api.post('/customers', businessBody())).body.id as string;
    const documents = await count('documents');
    const res = await sendForm(
      p.api.base,
      'POST',
      '/documents',
      { documentHolder: owner, documentType: 'UTILITY_BILL', country: 'US', issuingAuthority: 'City\u0000Hall' },
      { bytes: PDF },
      p.creds,
    );
    expect(fieldsOf(expectError(res, 400, 'INVALID_INPUT'))).toEqual(['issuingAuthority']);
    expect(await count('documents')).toBe(documents);
  });

  it('in a Basic client id: an unknown token (401), not a store error', async () => {
    for (const id of ['\u0000', `${p.creds.id}\u0000`]) {
      const res = await send(srv.origin, {
        method: 'GET',
        path: `${BASE_PATH}/config`,
        headers: { authorization: basicHeader({ id, secret: p.creds.secret }) },
      });
      expect(res.status, res.text).toBe(401);
      expect((res.json as { code: string }).code).toBe('UNAUTHORIZED');
    }
  });
});

describe('operations take only the query parameters they document, and document 400', () => {
  it('an unknown query parameter on an operation without any is a 400 naming it, and nothing is created', async () => {
    const tokens = await count('api_tokens');
    const res = expectError(await p.api.post('/tokens?fuzz=1', { name: 'typo', permissions: ['VIEW'] }), 400, 'INVALID_INPUT');
    expect(fieldsOf(res)).toEqual(['fuzz']);
    expect(await count('api_tokens')).toBe(tokens);
    expectError(await p.api.get('/config', { query: { verbose: 'true' } }), 400, 'INVALID_INPUT');
    expect((await p.api.get('/config')).status).toBe(200);
  });

  it('a querystring-level error is named (querystring), not (body)', async () => {
    const res = expectError(await p.api.get('/customers?=1'), 400, 'INVALID_INPUT');
    expect(fieldsOf(res)).toEqual(['(querystring)']);
  });

  it('every operation with path, query, header or body input documents a 400', async () => {
    const ops = operationsOf((await srv.anon.get('/openapi.json')).body);
    const missing = ops
      .filter((o) => (o.pathParams.length || o.query.length || o.headers.length || o.body) && !o.documented.has(400))
      .map((o) => o.key);
    expect(missing).toEqual([]);
  });
});

describe("the fuzzer's oracle fails when it should", () => {
  const op: Operation = {
    key: 'GET /x/{id}',
    operationId: 'x',
    method: 'GET',
    path: '/x/{id}',
    auth: 'basic',
    pathParams: [],
    query: [],
    headers: [],
    documented: new Set([200, 401, 404, 500]),
  };
  const res = (status: number, body: unknown, contentType = 'application/json; charset=utf-8'): RawResponse => ({
    status,
    headers: { 'content-type': contentType },
    text: typeof body === 'string' ? body : JSON.stringify(body),
    json: typeof body === 'string' ? undefined : body,
  });
  const reject = { mustReject: true };

  it('accepts a documented 4xx with the spec body', () => {
    expect(check(op, reject, res(404, { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'x not found' }))).toEqual([]);
  });

  it('flags a 5xx, an acceptance, an undocumented 4xx, a wrong body and leaks', () => {
    expect(check(op, reject, res(500, { status: 500, code: 'INTERNAL_ERROR', message: 'x' })).join()).toMatch(/5xx/);
    expect(check(op, reject, res(200, {})).join()).toMatch(/accepted/);
    expect(check(op, reject, res(409, { status: 409, code: 'CONFLICT', message: 'x' })).join()).toMatch(/not in the expected set/);
    expect(check(op, reject, res(404, { status: 400, code: 'REFERENCE_NOT_FOUND', message: 'x' })).join()).toMatch(/body.status/);
    expect(check(op, reject, res(404, { status: 404, code: 'INVALID_INPUT', message: 'x' })).join()).toMatch(/not in the catalogue/);
    expect(check(op, reject, res(404, { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'x', stack: 'y' })).join()).toMatch(
      /unknown key/,
    );
    expect(check(op, reject, res(404, { error: 'Not Found', statusCode: 404 })).join()).toMatch(/body.code/);
    expect(check(op, reject, res(404, 'Not Found', 'text/plain')).join()).toMatch(/not a JSON object/);
    expect(
      check(
        op,
        reject,
        res(404, { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'Error: x\n    at f (/work/main/src/a.ts:1:2)' }),
      ).join(),
    ).toMatch(/leaks/);
    // A path the request did not send is a leak even where the request's own echo is forgiven.
    const req = { method: 'GET', path: '/x/abc%4A%3A%5Cdef', headers: {} };
    const echoed = res(404, { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'Credential abcJ:\\def not found' });
    expect(check(op, reject, echoed, req)).toEqual([]);
    expect(check(op, reject, echoed).join()).toMatch(/leaks filesystem path/);
    expect(
      check(
        op,
        reject,
        res(404, { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'abcJ:\\def not found in C:\\srv\\app.ts' }),
        req,
      ).join(),
    ).toMatch(/leaks filesystem path/);
    expect(
      check(op, { mustReject: true, exact: 401 }, res(404, { status: 404, code: 'REFERENCE_NOT_FOUND', message: 'x' })).join(),
    ).toMatch(/expected status 401/);
  });

  it('the state snapshot sees an update of one field, not only row counts', async () => {
    const customer = (await p.api.post('/customers', businessBody())).body.id as string;
    const before = await snapshot(srv, p.id);
    expect(diff(before, await snapshot(srv, p.id))).toEqual([]);
    expect(
      (
        await p.api.patch(`/customers/${customer}`, {
          customerType: 'BUSINESS',
          address: { line1: '2 Market Street', city: 'Seattle', postalCode: '98101', country: 'US' },
        })
      ).status,
    ).toBe(200);
    expect(diff(before, await snapshot(srv, p.id)).join()).toMatch(/^customers \(\d+ → \d+ rows\)/);
  });
});

describe('the event loop', () => {
  it('no request above blocked it for more than 200 ms', async () => {
    expect(await loopBlocks()).toEqual([]);
  });
});
