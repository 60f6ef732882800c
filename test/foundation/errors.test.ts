/**
 * Every error class over real HTTP: bad JSON, wrong types, missing and unknown fields at any depth,
 * unknown query parameters, oversized bodies, unsupported content types, unknown routes, wrong
 * methods, and unexpected exceptions (500 that leaks nothing and writes nothing). Every response
 * carries x-request-id and every error body matches the catalogue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cryptoRng, systemClock, uuidV7Ids, type Ids } from '../../src/deps.ts';
import { ERROR_CATALOGUE, isCatalogued } from '../../src/http/errors.ts';
import { Client, expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { checkEnvelope, expectFieldError, fieldsOf } from './util.ts';

let srv: TestServer;
let p: PlatformHandle;
let accountId: string;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  accountId = (await p.api.get('/platform/internal-accounts')).body.data[0].id;
});
afterAll(async () => srv.close());

describe('400 INVALID_INPUT', () => {
  it('invalid JSON', async () => {
    for (const raw of ['{bad json', '{"name": "x",}', '[1, 2', 'nul']) {
      const res = await p.api.post('/tokens', undefined, { raw });
      expectError(res, 400, 'INVALID_INPUT');
      checkEnvelope(res);
    }
  });

  it('prototype-poisoning keys are refused', async () => {
    const res = await p.api.post('/tokens', undefined, { raw: '{"name":"x","permissions":["VIEW"],"__proto__":{"polluted":true}}' });
    expectError(res, 400, 'INVALID_INPUT');
    checkEnvelope(res);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('wrong types name each field', async () => {
    const res = await p.api.post('/tokens', { name: 5, permissions: 'VIEW' });
    expectError(res, 400, 'INVALID_INPUT');
    checkEnvelope(res);
    expect(fieldsOf(res).sort()).toEqual(['name', 'permissions']);
    for (const e of res.body.details.errors) expect(typeof e.message).toBe('string');

    // Bodies are not coerced: "100" is not an integer, nor is 1.5.
    expectFieldError(await p.api.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: '100' }), 'amount');
    expectFieldError(await p.api.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: 1.5 }), 'amount');
    expectFieldError(await p.api.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: 0 }), 'amount');
    expectFieldError(await p.api.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: 2 ** 53 }), 'amount');
    expectFieldError(await p.api.patch('/config', { embeddedWalletConfig: { otpLength: 'six' } }), 'embeddedWalletConfig.otpLength');
    expectFieldError(
      await p.api.patch('/config', {
        supportedCurrencies: [
          { currencyCode: 'USD', minAmount: -1, maxAmount: 10, requiredCounterpartyFields: [], enabledTransactionTypes: [] },
        ],
      }),
      'supportedCurrencies.0.minAmount',
    );
  });

  it('a non-object body', async () => {
    for (const raw of ['[]', '"text"', '42', 'null']) {
      const res = await p.api.post('/tokens', undefined, { raw });
      expectError(res, 400, 'INVALID_INPUT');
      checkEnvelope(res);
    }
    // No body at all where one is required.
    const none = await p.api.post('/tokens');
    expectError(none, 400, 'INVALID_INPUT');
    const empty = await p.api.post('/tokens', undefined, { raw: '', headers: { 'content-type': 'application/json' } });
    expectError(empty, 400, 'INVALID_INPUT');
  });

  it('missing required fields', async () => {
    const res = await p.api.post('/tokens', { name: 'x' });
    expectFieldError(res, 'permissions');
    expect(res.body.details.errors.find((e: { field: string }) => e.field === 'permissions').message).toBe('is required');
    expectFieldError(await p.api.post(`/sandbox/internal-accounts/${accountId}/fund`, {}), 'amount');
    const nested = await p.api.patch('/config', {
      feeConfigs: [{ feeType: 'CROSS_CURRENCY_TRANSACTION', sourceCurrency: 'USD', variableFeeBps: 10 }],
    });
    expectFieldError(nested, 'feeConfigs.0.fixedFee');
  });

  it('unknown top-level fields', async () => {
    const res = await p.api.post('/tokens', { name: 'x', permissions: ['VIEW'], extra: 1 });
    expectFieldError(res, 'extra');
    expect(res.body.details.errors).toEqual([{ field: 'extra', message: 'is not a known field' }]);
    expectFieldError(await p.api.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: 1, currency: 'USD' }), 'currency');
    // Nothing was created by the rejected request.
    const list = await p.api.get('/tokens', { query: { name: 'x' } });
    expect(list.body.totalCount).toBe(0);
  });

  it('unknown nested fields, at any depth', async () => {
    expectFieldError(await p.api.patch('/config', { embeddedWalletConfig: { nope: 1 } }), 'embeddedWalletConfig.nope');
    expectFieldError(
      await p.api.patch('/config', { cardTokenization2faConfig: { email: { subject: 'hi', cc: 'x' } } }),
      'cardTokenization2faConfig.email.cc',
    );
    expectFieldError(
      await p.api.patch('/config', {
        feeConfigs: [
          {
            feeType: 'CROSS_CURRENCY_TRANSACTION',
            sourceCurrency: 'USD',
            variableFeeBps: 1,
            fixedFee: { amount: 0, currency: 'USD', note: 'x' },
          },
        ],
      }),
      'feeConfigs.0.fixedFee.note',
    );
    expectFieldError(
      await p.api.patch('/config', {
        supportedCurrencies: [
          {
            currencyCode: 'USD',
            minAmount: 1,
            maxAmount: 10,
            requiredCounterpartyFields: [{ name: 'EMAIL', mandatory: true, why: 1 }],
            enabledTransactionTypes: [],
          },
        ],
      }),
      'supportedCurrencies.0.requiredCounterpartyFields.0.why',
    );
    // The config is untouched by all of the above.
    const cfg = await p.api.get('/config');
    expect(cfg.body.embeddedWalletConfig).toBeUndefined();
    expect(cfg.body.feeConfigs).toEqual([]);
  });

  it('reports every problem at once', async () => {
    const res = await p.api.post('/tokens', { permissions: ['NOPE'], extra: true });
    expect(fieldsOf(res).sort()).toEqual(['extra', 'name', 'permissions.0'].sort());
    // A union of literals is one entry listing the allowed values, not one per branch.
    expect(res.body.details.errors.find((e: { field: string }) => e.field === 'permissions.0')).toEqual({
      field: 'permissions.0',
      message: 'must be one of VIEW, TRANSACT, MANAGE',
      constraint: { enum: ['VIEW', 'TRANSACT', 'MANAGE'] },
    });
  });

  it('unknown and malformed query parameters', async () => {
    expectFieldError(await p.api.get('/tokens', { query: { bogus: '1' } }), 'bogus');
    expectFieldError(await p.api.get('/platform/internal-accounts', { query: { page: 2 } }), 'page');
    expectFieldError(await p.api.get('/tokens', { query: { limit: 'abc' } }), 'limit');
    expectFieldError(await p.api.get('/platform/internal-accounts', { query: { currency: 'us dollars' } }), 'currency');
  });

  it('a body over 1 MiB is a JSON 400', async () => {
    const raw = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 16), permissions: ['VIEW'] });
    const res = await p.api.post('/tokens', undefined, { raw });
    expectError(res, 400, 'INVALID_INPUT');
    checkEnvelope(res);
    expect(res.body.message).toContain('1048576');
  });

  it('a body just under the limit reaches validation', async () => {
    const raw = JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 100), permissions: ['VIEW'] });
    const res = await p.api.post('/tokens', undefined, { raw });
    // Parsed, then refused by the schema's maxLength on name.
    expectFieldError(res, 'name');
  });

  it('unsupported content types are a JSON 400', async () => {
    const body = JSON.stringify({ name: 'ct', permissions: ['VIEW'] });
    for (const type of ['application/xml', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await p.api.post('/tokens', undefined, { raw: body, headers: { 'content-type': type } });
      expectError(res, 400, 'INVALID_INPUT');
      checkEnvelope(res);
      expect(res.body.message, type).toMatch(/Content-Type/);
    }
    // application/json with parameters is fine.
    const ok = await p.api.post('/tokens', undefined, { raw: body, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(ok.status).toBe(201);
  });
});

describe('404 and 405', () => {
  it('an unknown route is a JSON 404 REFERENCE_NOT_FOUND', async () => {
    for (const [client, path] of [
      [p.api, '/nope'],
      [srv.anon, '/definitely-not-a-route/Thing:x'],
      [new Client(srv.origin), '/not-here'],
      [new Client(srv.origin), '/2025-01-01/config'],
    ] as const) {
      const res = await client.get(path);
      expectError(res, 404, 'REFERENCE_NOT_FOUND');
      checkEnvelope(res);
    }
  });

  it('a known path with the wrong method is 405 with Allow', async () => {
    const cases: [string, string, string[]][] = [
      ['PUT', '/config', ['GET', 'PATCH']],
      ['DELETE', '/config', ['GET', 'PATCH']],
      ['POST', '/platform/internal-accounts', ['GET']],
      ['PATCH', '/tokens', ['GET', 'POST']],
      ['POST', '/tokens/Token:abc', ['GET', 'DELETE']],
      ['GET', `/sandbox/internal-accounts/${accountId}/fund`, ['POST']],
    ];
    for (const [method, path, allowed] of cases) {
      const res = await p.api.request(method, path, method === 'GET' ? undefined : {});
      expectError(res, 405, 'METHOD_NOT_ALLOWED');
      checkEnvelope(res);
      const allow = (res.headers.get('allow') ?? '').split(/,\s*/).sort();
      expect(allow, `${method} ${path}`).toEqual([...allowed].sort());
      expect([...res.body.details.allowed].sort()).toEqual([...allowed].sort());
    }
    // Also without credentials: the method is wrong whoever asks.
    const anon = await srv.anon.put('/config', {});
    expectError(anon, 405, 'METHOD_NOT_ALLOWED');
  });
});

describe('envelope on every response', () => {
  it('success responses carry x-request-id, unique per request', async () => {
    const a = checkEnvelope(await p.api.get('/config'));
    const b = checkEnvelope(await p.api.get('/config'));
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
    checkEnvelope(await new Client(srv.origin).get('/healthz'));
    checkEnvelope(await srv.anon.get('/openapi.json'));
    checkEnvelope(await p.api.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount: 1 }));
    const del = await p.api.post('/tokens', { name: 'to-delete', permissions: ['VIEW'] });
    checkEnvelope(await p.api.delete(`/tokens/${del.body.id}`));
  });

  it('an incoming x-request-id is not trusted', async () => {
    const res = await p.api.get('/config', { headers: { 'x-request-id': 'Request:attacker' } });
    expect(res.headers.get('x-request-id')).not.toBe('Request:attacker');
    checkEnvelope(res);
  });

  it('the catalogue itself is consistent with isCatalogued', () => {
    for (const [status, codes] of Object.entries(ERROR_CATALOGUE)) {
      for (const code of codes) expect(isCatalogued(Number(status), code)).toBe(true);
    }
    expect(isCatalogued(400, 'REFERENCE_NOT_FOUND')).toBe(false);
    expect(isCatalogued(418, 'INVALID_INPUT')).toBe(false);
  });
});

describe('500 INTERNAL_ERROR', () => {
  const SECRET_DETAIL = 'kaboom-internal-detail /var/lib/corridor/secret.db';
  const failOn = new Set<string>();
  const real = uuidV7Ids(systemClock, cryptoRng);
  const ids: Ids = {
    uuid: () => real.uuid(),
    next: (prefix) => {
      if (failOn.has(prefix)) throw new Error(`${SECRET_DETAIL} while making a ${prefix} id`);
      return real.next(prefix);
    },
  };
  let bad: TestServer;
  let q: PlatformHandle;
  let qAccount: string;

  beforeAll(async () => {
    bad = await startServer({ deps: { ids } });
    q = await bad.newPlatform();
    qAccount = (await q.api.get('/platform/internal-accounts')).body.data[0].id;
  });
  afterAll(async () => {
    failOn.clear();
    await bad.close();
  });

  function expectOpaque500(res: Res): void {
    expectError(res, 500, 'INTERNAL_ERROR');
    checkEnvelope(res);
    expect(res.text).not.toContain('kaboom');
    expect(res.text).not.toContain('secret.db');
    expect(res.text).not.toMatch(/\bat \S+ \(|\.ts:\d+|stack/i);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'message', 'status']);
    expect(res.body.details).toEqual({ requestId: res.headers.get('x-request-id') });
    expect(res.body.message).toContain(res.headers.get('x-request-id'));
  }

  it('an exception in a handler is an opaque 500 and writes nothing', async () => {
    const before = (await q.api.get('/tokens')).body.totalCount;
    failOn.add('Token');
    try {
      expectOpaque500(await q.api.post('/tokens', { name: 'doomed', permissions: ['VIEW'] }));
    } finally {
      failOn.delete('Token');
    }
    const after = await q.api.get('/tokens');
    expect(after.body.totalCount).toBe(before);
    expect(after.body.data.some((t: { name: string }) => t.name === 'doomed')).toBe(false);
  });

  it('a failure late in a transaction rolls back its earlier writes', async () => {
    const cfgBefore = (await q.api.get('/config')).body;
    failOn.add('Webhook');
    try {
      // Adds an EUR account first, then fails making the TEST webhook event.
      const res = await q.api.patch('/config', {
        webhookEndpoint: 'https://hooks.example.com/corridor',
        supportedCurrencies: [
          ...cfgBefore.supportedCurrencies,
          { currencyCode: 'EUR', minAmount: 1, maxAmount: 1000, requiredCounterpartyFields: [], enabledTransactionTypes: ['OUTGOING'] },
        ],
      });
      expectOpaque500(res);

      // Money movement: the posting is applied, then the event id fails; all of it rolls back,
      // and the Idempotency-Key is not burned.
      const fund = await q.api.post(
        `/sandbox/internal-accounts/${qAccount}/fund`,
        { amount: 700 },
        { headers: { 'Idempotency-Key': 'late-failure' } },
      );
      expectOpaque500(fund);
    } finally {
      failOn.delete('Webhook');
    }
    expect((await q.api.get('/config')).body).toEqual(cfgBefore);
    const accounts = await q.api.get('/platform/internal-accounts');
    expect(accounts.body.data).toHaveLength(1);
    expect(accounts.body.data[0].balance.amount).toBe(0);
    const events = await bad.app.ctx.db.selectFrom('outbox_events').select('id').where('platform_id', '=', q.id).execute();
    expect(events).toHaveLength(0);
    expect((await bad.ledger(q.id)).ok).toBe(true);
    const entries = await bad.app.ctx.db.selectFrom('ledger_entries').select('id').where('platform_id', '=', q.id).execute();
    expect(entries).toHaveLength(0);

    const retry = await q.api.post(
      `/sandbox/internal-accounts/${qAccount}/fund`,
      { amount: 700 },
      { headers: { 'Idempotency-Key': 'late-failure' } },
    );
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotency-hit')).toBeNull();
    expect(retry.body.balance.amount).toBe(700);
    expect((await bad.ledger(q.id)).ok).toBe(true);
  });

  it('the server keeps serving after a 500', async () => {
    expect((await q.api.get('/config')).status).toBe(200);
    expect((await new Client(bad.origin).get('/healthz')).status).toBe(200);
  });
});
