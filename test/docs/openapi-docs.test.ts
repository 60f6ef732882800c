/**
 * The OpenAPI document as /docs shows it (src/http/openapi-enrich.ts, openapi-examples.ts,
 * openapi-ui.ts): literal unions carry `enum`, every response has a real description (errors name
 * their catalogue codes), every example validates against its schema, the request examples are
 * accepted by a real server and its answers have the examples' shape, /docs is Corridor's and shows
 * the served document, and the magic values' page is linked and served.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE } from '../../src/http/errors.ts';
import { MAGIC_VALUES_PATH, responseDescription } from '../../src/http/openapi-enrich.ts';
import { OPERATION_EXAMPLES } from '../../src/http/openapi-examples.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** `any`: the document is arbitrary JSON, read field by field; the assertions are the type check. */
// biome-ignore lint/suspicious/noExplicitAny: see the comment above (arbitrary JSON read field by field)
type Json = any;

let srv: TestServer;
let p: PlatformHandle;
let doc: Json;
let docText: string;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Example Bank' });
  const res = await fetch(`${srv.baseUrl}/openapi.json`);
  docText = await res.text();
  doc = JSON.parse(docText);
});
afterAll(async () => srv.close());

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** Every operation of the document (paths and webhooks) with where it is. */
function operations(): { where: string; op: Json }[] {
  const out: { where: string; op: Json }[] = [];
  for (const [section, items] of [
    ['paths', doc.paths],
    ['webhooks', doc.webhooks],
  ] as const) {
    for (const [path, item] of Object.entries<Json>(items ?? {})) {
      for (const m of METHODS) if (item[m]) out.push({ where: `${section} ${m.toUpperCase()} ${path}`, op: item[m] });
    }
  }
  return out;
}

function byOperationId(id: string): Json {
  const found = operations().find((o) => o.op.operationId === id);
  if (!found) throw new Error(`no operation ${id} in the document`);
  return found.op;
}

/** Every node of the document, with its JSON path. */
function* nodes(v: Json, path = '#'): Generator<{ path: string; node: Json }> {
  if (v === null || typeof v !== 'object') return;
  yield { path, node: v };
  for (const [k, child] of Object.entries(v)) yield* nodes(child, `${path}/${k}`);
}

describe('enums', () => {
  it('no union of literals is left as anyOf: each is one enum with its type', () => {
    const literal = (b: Json) =>
      b && typeof b === 'object' && 'type' in b && ('const' in b || (Array.isArray(b.enum) && b.enum.length === 1));
    const left = [...nodes(doc)].filter(({ node }) => Array.isArray(node.anyOf) && node.anyOf.length > 1 && node.anyOf.every(literal));
    expect(left.map((l) => l.path).slice(0, 5)).toEqual([]);
  });

  it('shows the values of the main enums', () => {
    const quote = byOperationId('getQuoteById').responses['200'].content['application/json'].schema;
    expect(quote.properties.status).toMatchObject({ type: 'string' });
    expect(quote.properties.status.enum).toEqual(expect.arrayContaining(['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED']));
    const request = byOperationId('createQuote').requestBody.content['application/json'].schema;
    expect(request.properties.lockedCurrencySide).toMatchObject({ type: 'string', enum: ['SENDING', 'RECEIVING'] });
    const rail =
      byOperationId('createTransferOut').requestBody.content['application/json'].schema.properties.destination.properties.paymentRail;
    expect(rail).toMatchObject({ title: 'PaymentRail', type: 'string' });
    expect(rail.enum).toEqual(expect.arrayContaining(['ACH', 'SEPA', 'SPEI', 'PIX']));
    expect(rail.anyOf).toBeUndefined();
  });

  it('request validation is unchanged: a value outside the enum is still a 400 naming the field', async () => {
    const res = await p.api.post('/quotes', { ...(OPERATION_EXAMPLES.createQuote!.request as object), lockedCurrencySide: 'SIDEWAYS' });
    expectError(res, 400, 'INVALID_INPUT');
    expect(JSON.stringify(res.body.details.errors)).toContain('lockedCurrencySide');
  });
});

describe('response descriptions', () => {
  it('no response keeps "Default Response"; every one has a description', () => {
    for (const { where, op } of operations()) {
      for (const [status, r] of Object.entries<Json>(op.responses ?? {})) {
        expect(r.description, `${where} ${status}`).toBeTruthy();
        expect(r.description, `${where} ${status}`).not.toBe('Default Response');
      }
    }
    expect(docText).not.toContain('Default Response');
  });

  it('a success names what it returns; an error names every code its schema allows', () => {
    const get = byOperationId('getQuoteById').responses;
    expect(get['200'].description).toBe('OK: the Quote.');
    expect(byOperationId('createCustomer').responses['201'].description).toMatch(/^Created: the /);
    expect(responseDescription('204', {})).toBe('No content: no body.');
    for (const status of ['401', '404', '500']) {
      const codes = get[status].content['application/json'].schema.properties.code.enum as string[];
      expect(codes.length).toBeGreaterThan(0);
      for (const code of codes) expect(get[status].description, `${status} ${code}`).toContain(code);
    }
    expect(get['404'].description).toContain('QUOTE_NOT_FOUND');
    // A status whose schema has no enum of its own takes the catalogue's codes.
    for (const code of ERROR_CATALOGUE[400]) expect(get['400'].description).toContain(code);
  });
});

describe('examples', () => {
  // One error is enough to fail; without allErrors and code optimisation the external accounts'
  // 160 kB schemas compile in a quarter of the time.
  const ajv = new Ajv({ strict: false, discriminator: true, validateFormats: true, code: { optimize: false } });
  addFormats(ajv);
  const validators = new Map<string, ValidateFunction>();
  /** Validators by schema text: the same small schemas (ids, currency codes) recur hundreds of times. */
  const check = (where: string, schema: Json, example: Json) => {
    const key = JSON.stringify(schema);
    let v = validators.get(key);
    if (!v) {
      v = ajv.compile(structuredClone(schema));
      validators.set(key, v);
    }
    expect(v(structuredClone(example)), `${where}: ${JSON.stringify(v.errors)?.slice(0, 600)}`).toBe(true);
  };

  it('every example in the document validates against its schema', () => {
    let checked = 0;
    for (const { path, node } of nodes(doc)) {
      // Media type objects: {schema, example}; schemas' own `examples` arrays: each value against the schema.
      if (node.schema && 'example' in node) {
        check(path, node.schema, node.example);
        checked++;
      }
      if (Array.isArray(node.examples) && (node.type !== undefined || node.enum !== undefined) && !path.includes('/properties/examples')) {
        const { examples, ...schema } = node;
        for (const [i, e] of examples.entries()) check(`${path}/examples/${i}`, schema, e);
      }
    }
    // The main operations' request and response examples are all there.
    const expected = Object.values(OPERATION_EXAMPLES).reduce((n, e) => n + (e.request ? 1 : 0) + Object.keys(e.responses ?? {}).length, 0);
    expect(checked).toBeGreaterThanOrEqual(expected);
  });

  it('every example is attached to an operation of the document, and the main areas have one', () => {
    for (const [id, e] of Object.entries(OPERATION_EXAMPLES)) {
      const op = byOperationId(id);
      if (e.request !== undefined) expect(op.requestBody.content['application/json'].example, id).toEqual(e.request);
      for (const [status, body] of Object.entries(e.responses ?? {})) {
        expect(op.responses[status]?.content?.['application/json']?.example, `${id} ${status}`).toEqual(body);
      }
    }
    for (const id of [
      'createCustomer',
      'listCustomerInternalAccounts',
      'createCustomerExternalAccount',
      'createPlatformExternalAccount',
      'createQuote',
      'executeQuote',
      'createTransferOut',
      'getTransactionById',
      'listWebhookDeliveries',
      'sandboxFundInternalAccount',
      'sandboxAdvanceClock',
    ]) {
      expect(OPERATION_EXAMPLES[id], id).toBeDefined();
    }
  });
});

/** The key paths of a JSON value, with each leaf's type (array elements share one path). */
function shape(v: Json, path = '', out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) for (const e of v) shape(e, `${path}[]`, out);
  else if (v !== null && typeof v === 'object') for (const [k, child] of Object.entries(v)) shape(child, `${path}.${k}`, out);
  else out.add(`${path}:${v === null ? 'null' : typeof v}`);
  return out;
}

describe('the examples against a real server', () => {
  /** The examples' fixed ids → the ids this run created. */
  const real = new Map<string, string>();
  const swap = (v: Json): Json => JSON.parse(JSON.stringify(v), (_k, x) => (typeof x === 'string' && real.has(x) ? real.get(x) : x));
  const example = (id: string, status?: string): Json =>
    status === undefined ? OPERATION_EXAMPLES[id]!.request : OPERATION_EXAMPLES[id]!.responses![status];
  /**
   * The answer has exactly the example's fields (`settling`: at least them — a transfer may settle
   * between the request and the read, and a settled one carries more).
   */
  const expectShape = (res: { status: number; body: Json }, id: string, status: string, settling = false) => {
    expect(res.status, `${id}: ${JSON.stringify(res.body)}`).toBe(Number(status));
    const got = shape(res.body);
    const want = shape(example(id, status));
    const extra = settling ? [] : [...got].filter((k) => !want.has(k));
    expect({ missing: [...want].filter((k) => !got.has(k)), extra }, id).toEqual({ missing: [], extra: [] });
  };

  it('the request examples are accepted, and the answers have the response examples’ shape', async () => {
    const customer = await p.api.post('/customers', example('createCustomer'));
    expectShape(customer, 'createCustomer', '201');
    real.set(example('createCustomer', '201').id, customer.body.id);
    expectShape(await p.api.get(`/customers/${customer.body.id}`), 'getCustomerById', '200');

    const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: customer.body.id } });
    expectShape(accounts, 'listCustomerInternalAccounts', '200');
    const account = example('listCustomerInternalAccounts', '200').data[0].id;
    real.set(account, accounts.body.data[0].id);
    expectShape(await p.api.get('/platform/internal-accounts', { query: { currency: 'USD' } }), 'listPlatformInternalAccounts', '200');
    expectShape(
      await p.api.post(`/sandbox/internal-accounts/${real.get(account)}/fund`, example('sandboxFundInternalAccount')),
      'sandboxFundInternalAccount',
      '200',
    );

    const bank = await p.api.post('/customers/external-accounts', swap(example('createCustomerExternalAccount')));
    expectShape(bank, 'createCustomerExternalAccount', '201');
    real.set(example('createCustomerExternalAccount', '201').id, bank.body.id);
    expectShape(await p.api.get(`/customers/external-accounts/${bank.body.id}`), 'getCustomerExternalAccountById', '200');
    const iban = await p.api.post('/platform/external-accounts', example('createPlatformExternalAccount'));
    expectShape(iban, 'createPlatformExternalAccount', '201');
    real.set(example('createPlatformExternalAccount', '201').id, iban.body.id);

    const quote = await p.api.post('/quotes', swap(example('createQuote')));
    expectShape(quote, 'createQuote', '201');
    expect(quote.body).toMatchObject({ totalSendingAmount: 10000, status: 'PENDING', description: 'Invoice 1042' });
    expectShape(await p.api.post(`/quotes/${quote.body.id}/execute`), 'executeQuote', '200', true);

    const out = await p.api.post('/transfer-out', swap(example('createTransferOut')));
    expectShape(out, 'createTransferOut', '201');
    expectShape(await p.api.post('/transfer-in', swap(example('createTransferIn'))), 'createTransferIn', '201');
    expectShape(await p.api.get(`/transactions/${out.body.id}`), 'getTransactionById', '200', true);
    expectShape(await p.api.get('/transactions', { query: { limit: 1 } }), 'listTransactions', '200', true);

    expectShape(await p.api.get('/sandbox/clock'), 'sandboxGetClock', '200');
    const advanced = await p.api.post('/sandbox/clock/advance', example('sandboxAdvanceClock'));
    expectShape(advanced, 'sandboxAdvanceClock', '200');
    expect(advanced.body.offsetMs).toBe(3_600_000);
    expectShape(await p.api.get('/webhooks/signing-key'), 'getWebhookSigningKey', '200');
    expectShape(await p.api.get('/webhooks/deliveries', { query: { limit: 1 } }), 'listWebhookDeliveries', '200');
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('the error examples are what the server answers', async () => {
    const test = await p.api.post('/sandbox/webhooks/test', {});
    expect(test.status).toBe(400);
    expect(test.body).toEqual(example('sendTestWebhook', '400'));
    const accounts = await p.api.get('/platform/internal-accounts', { query: { currency: 'USD' } });
    const bad = await p.api.post(`/sandbox/internal-accounts/${accounts.body.data[0].id}/fund`, { amount: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual(example('sandboxFundInternalAccount', '400'));
  });
});

describe('/docs', () => {
  it('is titled for Corridor, without Swagger in its title', async () => {
    const res = await fetch(`${srv.origin}/docs`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/<title>Corridor API reference<\/title>/);
    expect(text).not.toMatch(/<title>[^<]*Swagger/i);
    expect(text).toContain('theme/corridor.js');
    expect(text).toContain('theme/favicon.svg');
    // Every asset is Corridor's own: relative or same-origin URLs only.
    expect(text).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('shows the document /openapi.json serves, each repeated schema stated once: resolving its $refs gives it back', async () => {
    const res = await fetch(`${srv.origin}/docs/json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const text = await res.text();
    // A fifth of the size or less (4.2 MB took Swagger UI 15–18 s to render; 1.1 MB takes under 4 s).
    expect(text.length).toBeLessThan(docText.length / 3);
    const compact = JSON.parse(text) as Record<string, unknown> & { components: { schemas: Record<string, unknown> } };
    const schemas = compact.components.schemas;
    const resolve = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(resolve);
      if (typeof v !== 'object' || v === null) return v;
      const ref = (v as { $ref?: unknown }).$ref;
      if (typeof ref === 'string' && ref.startsWith('#/components/schemas/')) {
        const name = ref.slice('#/components/schemas/'.length);
        expect(Object.hasOwn(schemas, name), ref).toBe(true);
        return resolve(schemas[name]);
      }
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x)]));
    };
    const full = JSON.parse(docText) as Record<string, unknown> & { components?: { schemas?: Record<string, unknown> } };
    expect(resolve(compact.paths)).toEqual(full.paths);
    expect(resolve(compact.webhooks)).toEqual(full.webhooks);
    const { components: _c, paths: _p, webhooks: _w, ...rest } = compact;
    const { components: _fc, paths: _fp, webhooks: _fw, ...fullRest } = full;
    expect(rest).toEqual(fullRest);
    // And it is a valid OpenAPI 3.1 document in its own right.
    const result = await new Validator().validate(structuredClone(compact));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)?.slice(0, 4000)).toEqual([]);
  });

  it('links the magic values page from the document and from the page, which serves it', async () => {
    expect(doc.info.title).toBe('Corridor');
    expect(doc.info.description).toContain(`](${MAGIC_VALUES_PATH})`);
    const js = await (await fetch(`${srv.origin}/docs/static/theme/corridor.js`)).text();
    expect(js).toContain(`href="${MAGIC_VALUES_PATH}"`);
    const page = await fetch(`${srv.origin}${MAGIC_VALUES_PATH}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<h1>Sandbox magic values</h1>');
    expect(html).toContain('$fail.compliance.usd');
  });

  it('the magic values page is not an API operation', () => {
    expect(Object.keys(doc.paths).some((k) => k.startsWith('/docs'))).toBe(false);
  });
});
