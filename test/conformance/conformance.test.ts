/**
 * The live-schema checker itself (test/helpers/conformance.ts): it matches Corridor's operations to
 * the live document's, passes what Corridor answers, and fails a body the live schema does not
 * allow — so the check every other test runs cannot pass vacuously.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkResponse, checkWebhook, liveOperation, toLiveNames } from '../helpers/conformance.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { platformUsdAccount } from '../helpers/payments.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';

let srv: TestServer;
let p: PlatformHandle;
let rec: Receiver;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  rec = await startReceiver();
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

const JSON_TYPE = 'application/json; charset=utf-8';

describe('the live-schema checker', () => {
  it('matches every operation Corridor serves that the live document has, literal segments before parameters', async () => {
    expect(liveOperation('GET', '/2025-10-13/customers/external-accounts')).toEqual({
      method: 'get',
      template: '/customers/external-accounts',
    });
    expect(liveOperation('GET', '/2025-10-13/customers/Customer:1')).toEqual({ method: 'get', template: '/customers/{customerId}' });
    expect(liveOperation('POST', '/2025-10-13/sandbox/clock/advance')).toBeUndefined();
    const doc = (await srv.anon.get('/openapi.json')).body;
    const ours = Object.entries<Record<string, unknown>>(doc.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => ['get', 'post', 'patch', 'put', 'delete'].includes(m))
        .map((m) => [m, path.replace(/\{[^}]+\}/g, 'X')] as const),
    );
    const matched = ours.filter(([m, path]) => liveOperation(m, path) !== undefined);
    // The live operations Corridor implements (docs/decisions.md, "Wire fidelity"): all of them are checked.
    expect(matched.length).toBeGreaterThanOrEqual(88);
  });

  it('passes what Corridor answers and fails the same body without a required field', async () => {
    const res = await p.api.get('/platform/internal-accounts');
    expect(res.status).toBe(200);
    expect(() => checkResponse('GET', `${srv.baseUrl}/platform/internal-accounts`, 200, JSON_TYPE, res.body)).not.toThrow();
    const broken = structuredClone(res.body);
    delete broken.data[0].balance;
    expect(() => checkResponse('GET', `${srv.baseUrl}/platform/internal-accounts`, 200, JSON_TYPE, broken)).toThrow(
      /live-schema violation: GET \/platform\/internal-accounts → 200[\s\S]*balance/,
    );
    // An error body too: the live 404 codes are an enum.
    const missing = await p.api.get('/customers/Customer:019542f5-b3e7-7d02-8000-000000000001');
    expect(missing.status).toBe(404);
    const wrongCode = { ...missing.body, code: 'NOT_FOUND' };
    expect(() => checkResponse('GET', `${srv.baseUrl}/customers/x`, 404, JSON_TYPE, wrongCode)).toThrow(/→ 404/);
  });

  it("maps the spec's account-type names to the live ones, and checks nothing that is not JSON", async () => {
    expect(toLiveNames({ a: [{ accountType: 'US_ACCOUNT' }, { accountType: 'LAYER2_WALLET' }, { accountType: 'LIGHTNING' }] })).toEqual({
      a: [{ accountType: 'USD_ACCOUNT' }, { accountType: 'SPARK_WALLET' }, { accountType: 'LIGHTNING' }],
    });
    expect(() => checkResponse('GET', `${srv.baseUrl}/platform/internal-accounts`, 200, 'text/plain', { nonsense: true })).not.toThrow();
    const account = await platformUsdAccount(p);
    expect(account).toMatch(/^InternalAccount:/);
  });

  it('passes the webhooks Corridor sends and fails one the live schema does not allow', async () => {
    expect((await p.api.patch('/config', { webhookEndpoint: rec.url })).status).toBe(200);
    const test = await waitFor(() => rec.received.find((r) => r.body?.type === 'TEST'));
    expect(() => checkWebhook(test.body)).not.toThrow();
    const { timestamp: _drop, ...noTimestamp } = test.body;
    expect(() => checkWebhook(noTimestamp)).toThrow(/live-schema violation: webhook TEST/);
  });
});
