import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

/** A clock the tests move by hand: rates are keyed by 5-minute windows of it. */
const T0 = Date.parse('2025-02-05T12:01:00.000Z');
let now = T0;
const clock = { nowMs: () => now };

let srv: TestServer;
let p: PlatformHandle;
beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
  p = await srv.newPlatform();
});
afterAll(async () => srv.close());

const FIAT = [
  'USD',
  'EUR',
  'GBP',
  'MXN',
  'BRL',
  'INR',
  'CAD',
  'DKK',
  'HKD',
  'IDR',
  'MYR',
  'NGN',
  'PHP',
  'SGD',
  'THB',
  'VND',
  'ARS',
  'COP',
  'KES',
  'ZAR',
  'JPY',
  // The currencies of the live API's other bank and mobile-money account types (issue #21).
  ...['AED', 'BDT', 'BWP', 'CNY', 'EGP', 'GHS', 'GTQ', 'HTG', 'JMD', 'MWK', 'PKR', 'RWF', 'TZS', 'UGX', 'XAF', 'XOF', 'ZMW'],
];
const ALL = [...FIAT, 'BTC', 'USDC', 'USDT', 'USDB'];

interface Rate {
  sourceCurrency: { code: string; name: string; symbol: string; decimals: number };
  destinationCurrency: { code: string; name: string; symbol: string; decimals: number };
  destinationPaymentRail: string;
  minSendingAmount: number;
  maxSendingAmount: number;
  sendingAmount: number;
  receivingAmount: number;
  exchangeRate: number;
  fees: { fixed: number; total: number };
  updatedAt: string;
}

function rates(res: Res): Rate[] {
  expect(res.status, res.text).toBe(200);
  expect(Object.keys(res.body)).toEqual(['data']);
  return res.body.data as Rate[];
}

/** A JSON number as an exact fraction (its shortest decimal text, exponent notation included). */
function fraction(x: number): { n: bigint; d: bigint } {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (!m) throw new Error(`not a plain positive number: ${x}`);
  const exp = Number(m[3] ?? 0) - (m[2]?.length ?? 0);
  const digits = BigInt(m[1]! + (m[2] ?? ''));
  return exp >= 0 ? { n: digits * 10n ** BigInt(exp), d: 1n } : { n: digits, d: 10n ** BigInt(-exp) };
}

function significantDigits(x: number): number {
  const m = /^(\d+)(?:\.(\d+))?(?:e[+-]\d+)?$/.exec(String(x))!;
  return (m[1]! + (m[2] ?? '')).replace(/^0+/, '').replace(/0+$/, '').length;
}

/** The documented formula, recomputed from the response alone. */
function expectConsistent(r: Rate): void {
  for (const v of [r.sendingAmount, r.receivingAmount, r.minSendingAmount, r.maxSendingAmount, r.fees.fixed, r.fees.total]) {
    expect(Number.isSafeInteger(v) && v >= 0, `${v} is a non-negative integer`).toBe(true);
  }
  expect(r.exchangeRate).toBeGreaterThan(0);
  expect(significantDigits(r.exchangeRate)).toBeLessThanOrEqual(10);
  expect(r.fees.total).toBeGreaterThanOrEqual(r.fees.fixed);
  const { n, d } = fraction(r.exchangeRate);
  const net = BigInt(r.sendingAmount) - BigInt(r.fees.total);
  const expected = net > 0n ? (net * n) / d : 0n;
  expect(BigInt(r.receivingAmount), `${r.sourceCurrency.code}→${r.destinationCurrency.code}`).toBe(expected);
}

function expectFieldError(res: Res, code: string, field: string): void {
  expectError(res, 400, code);
  expect(res.body.details.errors.map((e: { field: string }) => e.field)).toContain(field);
}

describe('GET /exchange-rates', () => {
  it('defaults to the platform fiat currency, every other fiat destination and 10000 smallest units', async () => {
    const data = rates(await p.api.get('/exchange-rates'));
    expect(data.map((r) => r.destinationCurrency.code)).toEqual(FIAT.filter((c) => c !== 'USD'));
    for (const r of data) {
      expect(Object.keys(r).sort()).toEqual([
        'destinationCurrency',
        'destinationPaymentRail',
        'exchangeRate',
        'fees',
        'maxSendingAmount',
        'minSendingAmount',
        'receivingAmount',
        'sendingAmount',
        'sourceCurrency',
        'updatedAt',
      ]);
      expect(r.sourceCurrency).toEqual({ code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 });
      expect(r.sendingAmount).toBe(10000);
      expect(r.fees).toEqual({ fixed: 0, total: 0 });
      expect(r.minSendingAmount).toBe(1);
      expect(r.maxSendingAmount).toBe(100_000_000);
      expect(r.updatedAt).toBe('2025-02-05T12:00:00.000Z');
      expectConsistent(r);
    }
  });

  it('takes repeated destinationCurrency keys, in request order without repeats, and a single key as a list', async () => {
    const data = rates(
      await p.api.get('/exchange-rates', { query: { sourceCurrency: 'USD', destinationCurrency: ['INR', 'GBP', 'INR'] } }),
    );
    expect(data.map((r) => [r.destinationCurrency.code, r.destinationPaymentRail])).toEqual([
      ['INR', 'UPI'],
      ['GBP', 'FASTER_PAYMENTS'],
    ]);
    expect(data[0]!.destinationCurrency).toEqual({ code: 'INR', name: 'Indian Rupee', symbol: '₹', decimals: 2 });
    data.forEach(expectConsistent);

    const one = rates(await p.api.get('/exchange-rates', { query: { destinationCurrency: 'EUR' } }));
    expect(one.map((r) => [r.destinationCurrency.code, r.destinationPaymentRail])).toEqual([['EUR', 'SEPA_INSTANT']]);
  });

  it('states the rate as destination smallest units per source smallest unit', async () => {
    const usd = rates(await p.api.get('/exchange-rates', { query: { destinationCurrency: ['EUR', 'INR', 'VND', 'JPY'] } }));
    const by = Object.fromEntries(usd.map((r) => [r.destinationCurrency.code, r]));
    // Around 0.92 EUR cents per US cent, 83 paise per cent, 253 dong (0 decimals) per cent, 1.5 yen per cent.
    expect(by.EUR!.exchangeRate).toBeGreaterThan(0.9);
    expect(by.EUR!.exchangeRate).toBeLessThan(0.95);
    expect(by.INR!.exchangeRate).toBeGreaterThan(80);
    expect(by.INR!.exchangeRate).toBeLessThan(86);
    expect(by.VND!.exchangeRate).toBeGreaterThan(245);
    expect(by.VND!.exchangeRate).toBeLessThan(260);
    expect(by.JPY!.exchangeRate).toBeGreaterThan(1.45);
    expect(by.JPY!.exchangeRate).toBeLessThan(1.55);

    // Stablecoins are pegged to the dollar and never move: one micro-USDC is 0.0001 cents, exactly.
    const [usdc] = rates(
      await p.api.get('/exchange-rates', { query: { sourceCurrency: 'USDC', destinationCurrency: 'USD', sendingAmount: 1_234_567 } }),
    );
    expect(usdc!.exchangeRate).toBe(0.0001);
    expect(usdc!.receivingAmount).toBe(123);
    expect(usdc!.destinationPaymentRail).toBe('ACH');
  });

  it('prices every source currency in the catalogue against every fiat destination', async () => {
    for (const source of ALL) {
      const data = rates(await p.api.get('/exchange-rates', { query: { sourceCurrency: source, sendingAmount: 123_456_789 } }));
      expect(data.map((r) => r.destinationCurrency.code)).toEqual(FIAT.filter((c) => c !== source));
      for (const r of data) {
        expect(r.sourceCurrency.code).toBe(source);
        expect(r.minSendingAmount).toBeLessThanOrEqual(r.maxSendingAmount);
        expectConsistent(r);
      }
    }
  });

  it('prices a same-currency corridor at exactly 1 with no cross-currency fee', async () => {
    const q = await srv.newPlatform();
    await setFees(q, 50, 100);
    const [r] = rates(
      await q.api.get('/exchange-rates', { query: { sourceCurrency: 'USD', destinationCurrency: 'USD', sendingAmount: 5000 } }),
    );
    expect(r).toMatchObject({
      exchangeRate: 1,
      sendingAmount: 5000,
      receivingAmount: 5000,
      fees: { fixed: 0, total: 0 },
      destinationPaymentRail: 'ACH',
    });
  });

  it("includes the platform's cross-currency fee configuration and takes it out before converting", async () => {
    const q = await srv.newPlatform();
    const query = { destinationCurrency: ['INR', 'EUR'], sendingAmount: 10000 };
    const before = rates(await q.api.get('/exchange-rates', { query }));
    await setFees(q, 50, 100);
    const after = rates(await q.api.get('/exchange-rates', { query }));
    for (const [i, r] of after.entries()) {
      // 100 fixed + 0.5 % of 10000 = 150 cents.
      expect(r.fees).toEqual({ fixed: 100, total: 150 });
      expect(r.exchangeRate).toBe(before[i]!.exchangeRate);
      expect(r.receivingAmount).toBeLessThan(before[i]!.receivingAmount);
      expectConsistent(r);
    }
    // Another platform in the same window is unaffected.
    expect(rates(await p.api.get('/exchange-rates', { query }))).toEqual(before);
  });

  it('rounds the variable fee to the nearest smallest unit, ties up, and never takes more than it converts', async () => {
    const q = await srv.newPlatform();
    await setFees(q, 50, 0); // 0.5 %, no fixed part
    const feeFor = async (sendingAmount: number) => {
      const [r] = rates(await q.api.get('/exchange-rates', { query: { destinationCurrency: 'EUR', sendingAmount } }));
      expectConsistent(r!);
      return r!.fees.total;
    };
    expect(await feeFor(99)).toBe(0); // 0.495
    expect(await feeFor(100)).toBe(1); // 0.5 → 1
    expect(await feeFor(299)).toBe(1); // 1.495
    expect(await feeFor(300)).toBe(2); // 1.5 → 2
    expect(await feeFor(0)).toBe(0);

    await setFees(q, 0, 100);
    const [tiny] = rates(await q.api.get('/exchange-rates', { query: { destinationCurrency: 'EUR', sendingAmount: 60 } }));
    expect(tiny).toMatchObject({ sendingAmount: 60, fees: { fixed: 100, total: 100 }, receivingAmount: 0 });

    // Fee configs are for a USD source only: another source currency carries no fee.
    const [eur] = rates(await q.api.get('/exchange-rates', { query: { sourceCurrency: 'EUR', destinationCurrency: 'GBP' } }));
    expect(eur!.fees).toEqual({ fixed: 0, total: 0 });
  });

  it("reports the platform's sending bounds for the source currency, or USD-equivalent defaults", async () => {
    const q = await srv.newPlatform();
    const cfg = await q.api.patch('/config', {
      supportedCurrencies: [
        {
          currencyCode: 'USD',
          minAmount: 500,
          maxAmount: 2_000_000,
          requiredCounterpartyFields: [],
          enabledTransactionTypes: ['OUTGOING'],
        },
      ],
    });
    expect(cfg.status, cfg.text).toBe(200);
    const [usd] = rates(await q.api.get('/exchange-rates', { query: { destinationCurrency: 'INR' } }));
    expect([usd!.minSendingAmount, usd!.maxSendingAmount]).toEqual([500, 2_000_000]);

    // EUR is not configured: USD 0.01 .. 1,000,000.00 at the reference price (1 EUR = 1.08 USD).
    const [eur] = rates(await q.api.get('/exchange-rates', { query: { sourceCurrency: 'EUR', destinationCurrency: 'INR' } }));
    expect([eur!.minSendingAmount, eur!.maxSendingAmount]).toEqual([1, 92_592_592]);
    const [idr] = rates(await q.api.get('/exchange-rates', { query: { sourceCurrency: 'IDR', destinationCurrency: 'INR' } }));
    expect([idr!.minSendingAmount, idr!.maxSendingAmount]).toEqual([16_000, 1_600_000_000_000]);

    // An amount outside the bounds is still priced (the bounds are information; quotes enforce them).
    const [big] = rates(await q.api.get('/exchange-rates', { query: { destinationCurrency: 'INR', sendingAmount: 5_000_000 } }));
    expect(big!.sendingAmount).toBe(5_000_000);
    expectConsistent(big!);
  });

  it('keeps rates and updatedAt for the 5-minute window and moves them in the next one', async () => {
    const query = { destinationCurrency: FIAT.filter((c) => c !== 'USD') };
    now = T0; // 12:01
    const first = rates(await p.api.get('/exchange-rates', { query }));
    expect(first[0]!.updatedAt).toBe('2025-02-05T12:00:00.000Z');

    now = Date.parse('2025-02-05T12:04:59.999Z');
    expect(rates(await p.api.get('/exchange-rates', { query }))).toEqual(first);

    now = Date.parse('2025-02-05T12:05:00.000Z');
    const next = rates(await p.api.get('/exchange-rates', { query }));
    expect(new Set(next.map((r) => r.updatedAt))).toEqual(new Set(['2025-02-05T12:05:00.000Z']));
    const moved = next.filter((r, i) => r.exchangeRate !== first[i]!.exchangeRate);
    expect(moved.length).toBeGreaterThan(0);
    for (const [i, r] of next.entries()) {
      // The wobble is small: within ±1 % of the previous window.
      expect(Math.abs(r.exchangeRate / first[i]!.exchangeRate - 1)).toBeLessThan(0.01);
      expectConsistent(r);
    }

    // Deterministic: the same window always gives the same table.
    now = Date.parse('2025-02-05T12:02:30.000Z');
    expect(rates(await p.api.get('/exchange-rates', { query }))).toEqual(first);
    now = T0;
  });

  it('rejects unknown currencies with INVALID_CURRENCY naming each field', async () => {
    expectFieldError(await p.api.get('/exchange-rates', { query: { sourceCurrency: 'XYZ' } }), 'INVALID_CURRENCY', 'sourceCurrency');
    const res = await p.api.get('/exchange-rates', { query: { destinationCurrency: ['INR', 'FOO', 'usd'] } });
    expectFieldError(res, 'INVALID_CURRENCY', 'destinationCurrency.1');
    expectFieldError(res, 'INVALID_CURRENCY', 'destinationCurrency.2');
    // Crypto assets have no payout rail in the PaymentRail enum: they are priced by quotes.
    expectFieldError(
      await p.api.get('/exchange-rates', { query: { destinationCurrency: 'BTC' } }),
      'INVALID_CURRENCY',
      'destinationCurrency.0',
    );
  });

  it('rejects malformed input with INVALID_INPUT naming the field', async () => {
    const bad: [Record<string, string | string[]>, string][] = [
      [{ sendingAmount: '-1' }, 'sendingAmount'],
      [{ sendingAmount: '1.5' }, 'sendingAmount'],
      [{ sendingAmount: 'ten' }, 'sendingAmount'],
      [{ sendingAmount: '9007199254740992' }, 'sendingAmount'],
      [{ destinationCurrency: '' }, 'destinationCurrency.0'],
      [{ currency: 'USD' }, 'currency'],
      [{ sourceCurrency: ['USD', 'EUR'] }, 'sourceCurrency'],
    ];
    for (const [query, field] of bad) expectFieldError(await p.api.get('/exchange-rates', { query }), 'INVALID_INPUT', field);
  });

  it('refuses an amount whose converted value would not fit in a JSON integer', async () => {
    const res = await p.api.get('/exchange-rates', { query: { destinationCurrency: 'IDR', sendingAmount: '9007199254740991' } });
    expectFieldError(res, 'AMOUNT_OUT_OF_RANGE', 'sendingAmount');
    // The same amount into a stronger currency is fine.
    const [gbp] = rates(await p.api.get('/exchange-rates', { query: { destinationCurrency: 'GBP', sendingAmount: '9007199254740991' } }));
    expectConsistent(gbp!);
  });

  it('requires credentials with VIEW permission', async () => {
    expectError(await srv.anon.get('/exchange-rates'), 401, 'UNAUTHORIZED');
    expectError(await p.api.with({ basic: { id: p.creds.id, secret: 'wrong' } }).get('/exchange-rates'), 401, 'UNAUTHORIZED');
    const t = await p.api.post('/tokens', { name: 'transact only', permissions: ['TRANSACT'] });
    expect(t.status, t.text).toBe(201);
    const transactOnly = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    expectError(await transactOnly.get('/exchange-rates'), 403, 'FORBIDDEN');
  });

  it('is described in the OpenAPI document', async () => {
    const doc = (await p.api.get('/openapi.json')).body;
    const op = doc.paths['/2025-10-13/exchange-rates'].get;
    expect(op.operationId).toBe('getExchangeRates');
    expect(op.tags).toEqual(['Exchange Rates']);
    const params = Object.fromEntries(op.parameters.map((x: { name: string; required?: boolean }) => [x.name, x.required ?? false]));
    expect(params).toEqual({ sourceCurrency: false, destinationCurrency: false, sendingAmount: false });
  });
});

async function setFees(q: PlatformHandle, variableFeeBps: number, fixed: number): Promise<void> {
  const res = await q.api.patch('/config', {
    feeConfigs: [
      { feeType: 'CROSS_CURRENCY_TRANSACTION', sourceCurrency: 'USD', variableFeeBps, fixedFee: { amount: fixed, currency: 'USD' } },
    ],
  });
  expect(res.status, res.text).toBe(200);
}
