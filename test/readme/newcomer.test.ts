/**
 * What a newcomer meets first, over real HTTP: `GET /` points to the docs, and the docs say what a
 * transfer-out without `amount` does (and the server does exactly that).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../src/config.ts';
import { Client, expectError } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { balances, fund, platformExternal, platformUsdAccount } from '../helpers/payments.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv?.close());

/** GET without following redirects. */
async function raw(path: string, headers: Record<string, string> = {}) {
  return fetch(`${srv.origin}${path}`, { headers, redirect: 'manual' });
}

describe('GET /', () => {
  it('answers a script (curl, fetch) with the links to the docs, the OpenAPI document, the API and health; each link works', async () => {
    const res = await raw('/');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json();
    expect(body).toEqual({
      name: 'Corridor',
      apiVersion: BASE_PATH.slice(1),
      docs: '/docs',
      openapi: `${BASE_PATH}/openapi.json`,
      api: BASE_PATH,
      health: '/healthz',
    });
    const docs = await fetch(`${srv.origin}${body.docs}`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toMatch(/swagger/i);
    const openapi = await new Client(srv.origin).get(body.openapi);
    expect(openapi.status).toBe(200);
    expect(openapi.body.openapi).toBe('3.1.0');
    expect((await new Client(srv.origin).get(body.health)).status).toBe(200);
    expect((await raw('/', { accept: '*/*' })).status).toBe(200);
    expect((await fetch(`${srv.origin}/`, { method: 'HEAD' })).status).toBe(200);
  });

  it('sends a browser (Accept: text/html) to /docs', async () => {
    const res = await raw('/', { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/docs');
  });

  it('is not an operation of the OpenAPI document', async () => {
    const doc = (await new Client(srv.origin).get(`${BASE_PATH}/openapi.json`)).body;
    expect(Object.keys(doc.paths)).not.toContain('/');
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((item) =>
      Object.values(item).map((op) => op.operationId),
    );
    expect(ids).not.toContain(undefined);
  });

  it("an unknown path is still the API's 404", async () => {
    expectError(await new Client(srv.origin).get('/nothing-here'), 404, 'REFERENCE_NOT_FOUND');
  });
});

describe('POST /transfer-out without amount', () => {
  // biome-ignore lint/suspicious/noExplicitAny: `any`: the OpenAPI document is arbitrary JSON.
  function resolve(doc: any, schema: any): any {
    while (schema?.$ref)
      schema = schema.$ref
        .split('/')
        .slice(1)
        // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
        .reduce((o: any, k: string) => o[k], doc);
    return schema;
  }

  it('the schema served at /docs says the whole spendable balance is sent', async () => {
    const doc = (await new Client(srv.origin).get(`${BASE_PATH}/openapi.json`)).body;
    const body = resolve(doc, doc.paths[`${BASE_PATH}/transfer-out`].post.requestBody.content['application/json'].schema);
    expect(body.required).not.toContain('amount');
    expect(body.description).toMatch(/Without `amount`, the source account's whole spendable balance is sent/);
    expect(resolve(doc, body.properties.amount).description).toMatch(/left out, the WHOLE spendable balance of the source account/);
  });

  it('sends the whole spendable balance, as documented; with nothing spendable it is a 400', async () => {
    const p = await srv.newPlatform();
    const account = await platformUsdAccount(p);
    await fund(p, account, 12_345);
    const ext = await platformExternal(p, '001');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.sentAmount.amount).toBe(12_345);
    expect((await balances(p, account)).balance).toBe(0);
    const again = expectError(
      await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext } }),
      400,
      'INVALID_INPUT',
    );
    expect(again.body.details.errors[0].field).toBe('amount');
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});
