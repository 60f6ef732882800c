/**
 * The generated OpenAPI document: valid OpenAPI 3.1, served without auth, and listing every
 * operation the server actually registered (derived from the running app, not a hand list), and,
 * in its `webhooks` section, every event type of the catalogue. Also /docs and /healthz.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { BASE_PATH } from '../../src/config.ts';
import { WEBHOOK_TYPES, WEBHOOKS } from '../../src/webhook-delivery/catalogue.ts';
import { Client } from '../helpers/http.ts';
import { laneStore, startServer, type TestServer } from '../helpers/server.ts';
import { checkEnvelope } from './util.ts';

let srv: TestServer;
// biome-ignore lint/suspicious/noExplicitAny: `any`: the OpenAPI document is arbitrary JSON; the assertions below check its shape.
let doc: any;

beforeAll(async () => {
  srv = await startServer();
  const res = await srv.anon.get('/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => srv.close());

/** Every (method, path) Fastify registered, read from its route tree. */
function registeredRoutes(app: App): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const m = /^((?:│ {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = [...m[1]!].length / 4;
    const full = (depth > 0 ? stack[depth - 1]! : '') + m[2]!;
    stack.length = depth;
    stack[depth] = full;
    if (m[3]) for (const method of m[3].split(/,\s*/)) out.push({ method, path: full });
  }
  return out;
}

const toOpenApiPath = (p: string) => p.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function expectedOperations(app: App): Set<string> {
  const ops = new Set<string>();
  for (const r of registeredRoutes(app)) {
    if (r.method === 'HEAD' || r.method === 'OPTIONS') continue;
    // The hosted pages a browser opens (the KYC link's) are not API operations.
    const api = r.path.startsWith(`${BASE_PATH}/`) && r.path !== `${BASE_PATH}/openapi.json` && !r.path.startsWith(`${BASE_PATH}/hosted/`);
    const operator = r.path.startsWith('/_admin/') || r.path === '/healthz';
    if (api || operator) ops.add(`${r.method} ${toOpenApiPath(r.path)}`);
  }
  return ops;
}

function documentedOperations(): Map<string, { operationId?: string; responses?: Record<string, unknown>; security?: unknown }> {
  const out = new Map();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const [method, op] of Object.entries(item as Record<string, unknown>)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      out.set(`${method.toUpperCase()} ${path}`, op);
    }
  }
  return out;
}

describe('OpenAPI document', () => {
  it('is served without auth as JSON', async () => {
    const res = await new Client(srv.origin).get(`${BASE_PATH}/openapi.json`);
    expect(res.status).toBe(200);
    checkEnvelope(res);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body.openapi).toBe('3.1.0');
  });

  it('validates as OpenAPI 3.1', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)?.slice(0, 4000)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('the route-tree reader sees the routes this file knows exist', () => {
    const seen = expectedOperations(srv.app);
    for (const op of [
      'GET /healthz',
      'POST /_admin/platforms',
      `GET ${BASE_PATH}/config`,
      `PATCH ${BASE_PATH}/config`,
      `POST ${BASE_PATH}/tokens`,
      `GET ${BASE_PATH}/tokens`,
      `GET ${BASE_PATH}/tokens/{tokenId}`,
      `DELETE ${BASE_PATH}/tokens/{tokenId}`,
      `GET ${BASE_PATH}/platform/internal-accounts`,
      `POST ${BASE_PATH}/sandbox/internal-accounts/{accountId}/fund`,
    ]) {
      expect(seen.has(op), op).toBe(true);
    }
    expect(seen.has(`GET ${BASE_PATH}/openapi.json`)).toBe(false);
    expect([...seen].some((o) => o.includes('/docs'))).toBe(false);
  });

  it('lists every implemented operation, each with an operationId, and nothing else', () => {
    const expected = expectedOperations(srv.app);
    const documented = documentedOperations();
    const missing = [...expected].filter((op) => !documented.has(op));
    expect(missing, 'registered but not documented').toEqual([]);
    const extra = [...documented.keys()].filter((op) => !expected.has(op));
    expect(extra, 'documented but not registered').toEqual([]);
    for (const [op, spec] of documented) {
      expect(typeof spec.operationId, `${op} operationId`).toBe('string');
      expect(spec.operationId!.length).toBeGreaterThan(0);
      expect(
        Object.keys(spec.responses ?? {}).some((s) => /^2\d\d$/.test(s)),
        `${op} has a 2xx response`,
      ).toBe(true);
    }
    const ids = [...documented.values()].map((s) => s.operationId);
    expect(new Set(ids).size, 'operationIds are unique').toBe(ids.length);
  });

  it('uses the live API’s operationIds for the foundation operations', () => {
    const documented = documentedOperations();
    const want: Record<string, string> = {
      [`GET ${BASE_PATH}/config`]: 'getPlatformConfig',
      [`PATCH ${BASE_PATH}/config`]: 'updatePlatformConfig',
      [`POST ${BASE_PATH}/tokens`]: 'createToken',
      [`GET ${BASE_PATH}/tokens`]: 'listTokens',
      [`GET ${BASE_PATH}/tokens/{tokenId}`]: 'getTokenById',
      [`DELETE ${BASE_PATH}/tokens/{tokenId}`]: 'deleteTokenById',
      [`GET ${BASE_PATH}/platform/internal-accounts`]: 'listPlatformInternalAccounts',
      [`POST ${BASE_PATH}/sandbox/internal-accounts/{accountId}/fund`]: 'sandboxFundInternalAccount',
    };
    for (const [op, id] of Object.entries(want)) expect(documented.get(op)?.operationId, op).toBe(id);
  });

  it('declares the security schemes the routes use', () => {
    const schemes = Object.keys(doc.components?.securitySchemes ?? {});
    expect(schemes).toEqual(expect.arrayContaining(['BasicAuth', 'AdminAuth']));
    const documented = documentedOperations();
    expect(documented.get(`GET ${BASE_PATH}/config`)?.security).toEqual([{ BasicAuth: [] }]);
    expect(documented.get('POST /_admin/platforms')?.security).toEqual([{ AdminAuth: [] }]);
    for (const [op, spec] of documented) {
      for (const req of (spec.security as Record<string, unknown>[] | undefined) ?? []) {
        for (const name of Object.keys(req)) expect(schemes, `${op} uses ${name}`).toContain(name);
      }
    }
  });
});

describe('OpenAPI webhooks section (the event catalogue)', () => {
  const post = (key: string) => doc.webhooks?.[key]?.post;
  const schemaOf = (key: string) => post(key).requestBody.content['application/json'].schema;

  it('has one webhook per catalogue entry, keyed and named like the live API', () => {
    expect(Object.keys(doc.webhooks ?? {}).sort()).toEqual(
      Object.values(WEBHOOKS)
        .map((w) => w.key)
        .sort(),
    );
    for (const w of Object.values(WEBHOOKS)) {
      expect(post(w.key)?.operationId, w.key).toBe(w.operationId);
      expect(post(w.key).tags).toEqual(['Webhooks']);
    }
    expect(post('outgoing-payment').operationId).toBe('outgoingPaymentWebhook');
    expect(post('incoming-payment').operationId).toBe('incomingPaymentWebhook');
    expect(post('card-transaction').operationId).toBe('cardTransactionWebhook');
    // operationIds stay unique across paths and webhooks.
    const ids = [...documentedOperations().values()]
      .map((s) => s.operationId)
      // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
      .concat(Object.values(doc.webhooks).map((i: any) => i.post.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lists every WebhookType exactly once, each with the envelope {id, type, timestamp, data}', () => {
    const listed: string[] = [];
    for (const key of Object.keys(doc.webhooks)) {
      const schema = schemaOf(key);
      expect(schema.type).toBe('object');
      expect(schema.additionalProperties).toBe(false);
      expect(Object.keys(schema.properties)).toEqual(['id', 'type', 'timestamp', 'data']);
      expect([...schema.required].sort()).toEqual(['data', 'id', 'timestamp', 'type']);
      expect(schema.properties.timestamp).toMatchObject({ type: 'string', format: 'date-time' });
      expect(schema.properties.type.type).toBe('string');
      listed.push(...schema.properties.type.enum);
    }
    expect([...listed].sort()).toEqual([...WEBHOOK_TYPES].sort());
    expect(new Set(listed).size).toBe(listed.length);
    expect(WEBHOOK_TYPES.length).toBe(43);
    // The data schemas come from the route schemas (titles carried over).
    expect(schemaOf('customer-update').properties.data.title).toBe('CustomerOneOf');
    expect(schemaOf('internal-account-status').properties.data.title).toBe('InternalAccount');
    expect(schemaOf('external-account-status').properties.data.title).toBe('ExternalAccount');
    expect(schemaOf('verification-update').properties.data.title).toBe('Verification');
    expect(schemaOf('outgoing-payment').properties.data.properties.type).toMatchObject({ const: 'OUTGOING' });
    expect(schemaOf('incoming-payment').properties.data.properties).toHaveProperty('requestedReceiverCustomerInfoFields');
  });

  it('documents the receiver replies and the WebhookSignature scheme', () => {
    expect(doc.components.securitySchemes.WebhookSignature).toEqual(
      expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-Grid-Signature' }),
    );
    for (const key of Object.keys(doc.webhooks)) {
      expect(post(key).security, key).toEqual([{ WebhookSignature: [] }]);
      expect(post(key).requestBody.required).toBe(true);
      expect(Object.keys(post(key).responses), key).toEqual(expect.arrayContaining(['200', '409']));
    }
    const incoming = post('incoming-payment').responses;
    expect(Object.keys(incoming)).toEqual(expect.arrayContaining(['200', '202', '403', '409', '422']));
    expect(incoming['200'].content['application/json'].schema.properties).toHaveProperty('receiverCustomerInfo');
    expect(incoming['403'].content['application/json'].schema.properties).toHaveProperty('reason');
    expect(incoming['422'].content['application/json'].schema.properties).toHaveProperty('requiredFields');
    expect(post('outgoing-payment').responses['202']).toBeUndefined();
  });
});

describe('/docs and /healthz', () => {
  it('/docs serves HTML without auth', async () => {
    const res = await fetch(`${srv.origin}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/<html/i);
  });

  it('/healthz answers without auth and names the store', async () => {
    const res = await new Client(srv.origin).get('/healthz');
    expect(res.status).toBe(200);
    checkEnvelope(res);
    expect(res.body).toEqual({ status: 'ok', store: laneStore() });
  });
});

describe('request bodies as the live API declares them (issue #21)', () => {
  const op = (method: string, path: string) => doc.paths[`${BASE_PATH}${path}`]?.[method];
  it('optional where the live document makes them optional, and absent where it declares none', () => {
    // From the live openapi.yaml: requestBody without `required: true`.
    for (const [method, path] of [
      ['post', '/quotes/{quoteId}/execute'],
      ['post', '/transactions/{transactionId}/cancel'],
      ['post', '/transactions/{transactionId}/confirm'],
      ['post', '/transactions/{transactionId}/approve'],
      ['post', '/transactions/{transactionId}/reject'],
      ['post', '/auth/credentials/{id}/challenge'],
      ['post', '/agents/{agentId}/actions/{actionId}/reject'],
    ] as const) {
      expect(op(method, path), `${method} ${path}`).toBeDefined();
      expect(op(method, path).requestBody?.required, `${method} ${path}`).toBe(false);
    }
    // No requestBody in the live document: Corridor still accepts an empty JSON object there.
    for (const [method, path] of [
      ['post', '/sandbox/webhooks/test'],
      ['post', '/agents/me/quotes/{quoteId}/execute'],
      ['post', '/agents/{agentId}/device-codes'],
      ['post', '/agents/{agentId}/actions/{actionId}/approve'],
      ['post', '/agents/device-codes/{code}/redeem'],
    ] as const) {
      expect(op(method, path), `${method} ${path}`).toBeDefined();
      expect(op(method, path).requestBody, `${method} ${path}`).toBeUndefined();
    }
    // A body the operation needs stays required.
    expect(op('post', '/quotes').requestBody.required).toBe(true);
  });
});

describe('error bodies per status (issue #21)', () => {
  it('each status names its own codes, from the live list (no NOT_FOUND of Corridor’s own)', () => {
    const responses = doc.paths[`${BASE_PATH}/quotes/{quoteId}`].get.responses;
    const ref = (s: { $ref?: string }) => (s.$ref ? doc.components.schemas[s.$ref.split('/').pop()!] : s);
    const e404 = ref(responses['404'].content['application/json'].schema);
    expect(e404.properties.status.enum).toEqual([404]);
    expect(e404.properties.code.enum).toEqual(expect.arrayContaining(['QUOTE_NOT_FOUND', 'REFERENCE_NOT_FOUND', 'TRANSACTION_NOT_FOUND']));
    expect(e404.properties.code.enum).not.toContain('NOT_FOUND');
    const e401 = ref(responses['401'].content['application/json'].schema);
    expect(e401.properties.code.enum).toContain('UNAUTHORIZED');
    expect(e401.properties.code.enum).not.toContain('QUOTE_NOT_FOUND');
  });
});
