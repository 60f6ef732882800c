/** GET /uma-providers and GET /vasps: the sandbox directories, their filters, order and paging. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { SANDBOX } from './fixtures.ts';

let srv: TestServer;
let p: PlatformHandle;
beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Directories' });
});
afterAll(async () => srv.close());

const DOMAINS = [
  'upi.example',
  'sterling.example',
  'sandbox.uma.money',
  'remesas.example',
  'pix.example',
  'padala.example',
  'naira.example',
  'eu.pay.example',
];

function ok(res: Res): Res {
  expect(res.status, res.text).toBe(200);
  return res;
}

const domainsOf = (res: Res): string[] => res.body.data.map((x: { domain: string }) => x.domain);
const fieldsOf = (res: Res): string[] => (res.body.details?.errors ?? []).map((e: { field: string }) => e.field);

describe('GET /uma-providers', () => {
  it('lists every provider, by domain descending, the sandbox provider alone on the allow list', async () => {
    const res = ok(await p.api.get('/uma-providers'));
    expect(res.body).toMatchObject({ hasMore: false, totalCount: DOMAINS.length });
    expect(res.body.nextCursor).toBeUndefined();
    expect(domainsOf(res)).toEqual(DOMAINS);
    const sandbox = res.body.data.find((x: { domain: string }) => x.domain === SANDBOX);
    expect(sandbox).toEqual({
      name: 'Sandbox UMA Provider',
      supportedRegions: ['US', 'MX', 'DE', 'ES', 'FR', 'IT', 'NL'],
      domain: SANDBOX,
      supportedCurrencies: [
        { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 },
        { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 },
        { code: 'MXN', name: 'Mexican Peso', symbol: '$', decimals: 2 },
      ],
      allowListStatus: true,
    });
    for (const x of res.body.data) {
      if (x.domain !== SANDBOX) expect(x.allowListStatus, x.domain).toBe(false);
      expect(Object.keys(x).sort()).toEqual(['allowListStatus', 'domain', 'name', 'supportedCurrencies', 'supportedRegions']);
    }
  });

  it('sorts ascending on request', async () => {
    expect(domainsOf(ok(await p.api.get('/uma-providers', { query: { sortOrder: 'asc' } })))).toEqual([...DOMAINS].reverse());
  });

  it('filters by country, by currency and by the allow list', async () => {
    expect(domainsOf(ok(await p.api.get('/uma-providers', { query: { countryCode: 'MX' } })))).toEqual([
      'sandbox.uma.money',
      'remesas.example',
    ]);
    expect(domainsOf(ok(await p.api.get('/uma-providers', { query: { currencyCode: 'USD' } })))).toEqual([
      'sandbox.uma.money',
      'remesas.example',
      'padala.example',
    ]);
    const both = ok(await p.api.get('/uma-providers', { query: { countryCode: 'DE', currencyCode: 'EUR' } }));
    expect(domainsOf(both)).toEqual(['sandbox.uma.money', 'eu.pay.example']);
    expect(both.body.totalCount).toBe(2);
    const allowed = ok(await p.api.get('/uma-providers', { query: { hasBlockedProviders: false } }));
    expect(domainsOf(allowed)).toEqual([SANDBOX]);
    expect(domainsOf(ok(await p.api.get('/uma-providers', { query: { hasBlockedProviders: true } })))).toEqual(DOMAINS);
    // A known currency or a well-formed country nobody serves: an empty page.
    const none = ok(await p.api.get('/uma-providers', { query: { countryCode: 'JP' } }));
    expect(none.body).toEqual({ data: [], hasMore: false, totalCount: 0 });
    expect(ok(await p.api.get('/uma-providers', { query: { currencyCode: 'JPY' } })).body.data).toEqual([]);
  });

  it('pages with limit and cursor, in either order', async () => {
    for (const sortOrder of ['desc', 'asc'] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let i = 0; i < 10; i++) {
        const res = ok(await p.api.get('/uma-providers', { query: { limit: 3, sortOrder, cursor } }));
        expect(res.body.totalCount).toBe(DOMAINS.length);
        seen.push(...domainsOf(res));
        if (!res.body.hasMore) {
          expect(res.body.nextCursor).toBeUndefined();
          break;
        }
        cursor = res.body.nextCursor;
      }
      expect(seen).toEqual(sortOrder === 'desc' ? DOMAINS : [...DOMAINS].reverse());
    }
  });

  it('rejects malformed filters, limits, cursors and unknown parameters, naming the field', async () => {
    const cases: [Record<string, string | number>, string, string][] = [
      [{ countryCode: 'us' }, 'INVALID_INPUT', 'countryCode'],
      [{ countryCode: 'USA' }, 'INVALID_INPUT', 'countryCode'],
      [{ currencyCode: 'usd' }, 'INVALID_INPUT', 'currencyCode'],
      [{ currencyCode: 'XYZ' }, 'INVALID_CURRENCY', 'currencyCode'],
      [{ hasBlockedProviders: 'yes' }, 'INVALID_INPUT', 'hasBlockedProviders'],
      [{ sortOrder: 'up' }, 'INVALID_INPUT', 'sortOrder'],
      [{ limit: 0 }, 'INVALID_INPUT', 'limit'],
      [{ limit: 101 }, 'INVALID_INPUT', 'limit'],
      [{ cursor: 'not-a-cursor' }, 'INVALID_INPUT', 'cursor'],
      [{ search: 'pay' }, 'INVALID_INPUT', 'search'],
    ];
    for (const [query, code, field] of cases) {
      const res = expectError(await p.api.get('/uma-providers', { query }), 400, code);
      expect(fieldsOf(res), JSON.stringify(query)).toContain(field);
    }
  });

  it('follows CORRIDOR_SANDBOX_UMA_DOMAIN', async () => {
    const other = await startServer({ env: { CORRIDOR_SANDBOX_UMA_DOMAIN: 'uma.sandbox.test' } });
    try {
      const q = await other.newPlatform();
      const res = ok(await q.api.get('/uma-providers', { query: { hasBlockedProviders: false } }));
      expect(domainsOf(res)).toEqual(['uma.sandbox.test']);
    } finally {
      await other.close();
    }
  });
});

describe('GET /vasps', () => {
  const NAMES = [
    'Binance',
    'Bitfinex',
    'Bitso',
    'Bitstamp',
    'Bybit',
    'Coinbase',
    'Crypto.com',
    'Gemini',
    'Kraken',
    'KuCoin',
    'OKX',
    'Upbit',
  ];

  it('lists the directory by name, without totalCount, with the live example (Kraken)', async () => {
    const res = ok(await p.api.get('/vasps'));
    expect(Object.keys(res.body).sort()).toEqual(['data', 'hasMore']);
    expect(res.body.hasMore).toBe(false);
    expect(res.body.data.map((v: { vaspName: string }) => v.vaspName)).toEqual(NAMES);
    expect(res.body.data).toContainEqual({ vaspName: 'Kraken', url: 'https://www.kraken.com' });
    for (const v of res.body.data) expect(v.url).toMatch(/^https:\/\/[a-z.]+$/);
  });

  it('pages with limit and cursor', async () => {
    const first = ok(await p.api.get('/vasps', { query: { limit: 5 } }));
    expect(first.body.hasMore).toBe(true);
    const second = ok(await p.api.get('/vasps', { query: { limit: 5, cursor: first.body.nextCursor } }));
    const third = ok(await p.api.get('/vasps', { query: { limit: 5, cursor: second.body.nextCursor } }));
    expect(third.body.hasMore).toBe(false);
    expect(third.body.nextCursor).toBeUndefined();
    const names = [first, second, third].flatMap((r) => r.body.data.map((v: { vaspName: string }) => v.vaspName));
    expect(names).toEqual(NAMES);
  });

  it('takes no filters: unknown parameters, bad limits and cursors are 400', async () => {
    for (const query of [{ name: 'Kraken' }, { limit: 0 }, { limit: 'ten' }, { cursor: '!!!' }]) {
      expectError(await p.api.get('/vasps', { query }), 400, 'INVALID_INPUT');
    }
  });
});

describe('directories: credentials and permissions', () => {
  it('401 without or with wrong credentials, 403 without VIEW, 200 with VIEW alone', async () => {
    const token = async (permissions: string[]) => {
      const t = await p.api.post('/tokens', { name: `directories ${permissions.join('+')}`, permissions });
      expect(t.status, t.text).toBe(201);
      return p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    };
    const view = await token(['VIEW']);
    const noView = await token(['TRANSACT']);
    for (const path of ['/uma-providers', '/vasps']) {
      expectError(await srv.anon.get(path), 401, 'UNAUTHORIZED');
      expectError(await p.api.with({ basic: { id: p.creds.id, secret: 'nope' } }).get(path), 401, 'UNAUTHORIZED');
      expectError(await noView.get(path), 403, 'FORBIDDEN');
      ok(await view.get(path));
    }
  });
});
