import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let p: PlatformHandle;
beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
});
afterAll(async () => srv.close());

interface Institution {
  bankName: string;
  displayName: string;
  country: string;
  currency: string;
}

function list(res: Res): Institution[] {
  expect(res.status, res.text).toBe(200);
  expect(Object.keys(res.body)).toEqual(['data']);
  return res.body.data as Institution[];
}

function expectFieldError(res: Res, code: string, field: string): void {
  expectError(res, 400, code);
  expect(res.body.details.errors.map((e: { field: string }) => e.field)).toContain(field);
}

describe('GET /discoveries', () => {
  it('lists every institution without a filter, ordered by country then bankName', async () => {
    const all = list(await p.api.get('/discoveries'));
    const countries = new Set(all.map((i) => i.country));
    for (const c of ['PH', 'NG', 'ZA', 'MX', 'BR', 'IN', 'GB', 'DE', 'US']) expect(countries, c).toContain(c);
    for (const i of all) {
      expect(Object.keys(i).sort()).toEqual(['bankName', 'country', 'currency', 'displayName']);
      expect(i.country).toMatch(/^[A-Z]{2}$/);
      expect(i.currency).toMatch(/^[A-Z]{3}$/);
      expect(i.bankName.length).toBeGreaterThan(0);
      expect(i.displayName.length).toBeGreaterThan(0);
    }
    const keys = all.map((i) => `${i.country}|${i.bankName}`);
    expect(keys).toEqual([...keys].sort());
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('filters by country, by currency and by both', async () => {
    const ph = list(await p.api.get('/discoveries', { query: { country: 'PH' } }));
    expect(ph.length).toBeGreaterThan(1);
    expect(ph.every((i) => i.country === 'PH' && i.currency === 'PHP')).toBe(true);
    expect(ph).toContainEqual({ bankName: 'BDO Unibank', displayName: 'BDO Unibank', country: 'PH', currency: 'PHP' });
    expect(ph).toContainEqual({ bankName: 'BPI', displayName: 'Bank of the Philippine Islands', country: 'PH', currency: 'PHP' });

    const ngn = list(await p.api.get('/discoveries', { query: { currency: 'NGN' } }));
    expect(ngn.length).toBeGreaterThan(1);
    expect(ngn.every((i) => i.country === 'NG' && i.currency === 'NGN')).toBe(true);

    expect(list(await p.api.get('/discoveries', { query: { country: 'ZA', currency: 'ZAR' } })).map((i) => i.country)).toContain('ZA');
    expect(list(await p.api.get('/discoveries', { query: { country: 'PH', currency: 'NGN' } }))).toEqual([]);
    // A well-formed country or known currency with no institutions is an empty list, not an error.
    expect(list(await p.api.get('/discoveries', { query: { country: 'FR' } }))).toEqual([]);
    expect(list(await p.api.get('/discoveries', { query: { currency: 'JPY' } }))).toEqual([]);
  });

  it('rejects malformed filters and unknown parameters naming the field', async () => {
    expectFieldError(await p.api.get('/discoveries', { query: { country: 'ph' } }), 'INVALID_INPUT', 'country');
    expectFieldError(await p.api.get('/discoveries', { query: { country: 'PHL' } }), 'INVALID_INPUT', 'country');
    expectFieldError(await p.api.get('/discoveries', { query: { currency: 'XYZ' } }), 'INVALID_CURRENCY', 'currency');
    expectFieldError(await p.api.get('/discoveries', { query: { bank: 'BPI' } }), 'INVALID_INPUT', 'bank');
  });

  it('requires credentials', async () => {
    expectError(await srv.anon.get('/discoveries'), 401, 'UNAUTHORIZED');
    expectError(
      await p.api.with({ basic: { id: p.creds.id, secret: 'wrong' } }).get('/discoveries', { query: { country: 'PH' } }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await p.api.get('/openapi.json')).body;
    const op = doc.paths['/2025-10-13/discoveries'].get;
    expect(op.operationId).toBe('getDiscoveries');
    expect(op.tags).toEqual(['Discoveries']);
    expect(op.parameters.map((x: { name: string }) => x.name).sort()).toEqual(['country', 'currency']);
  });
});
