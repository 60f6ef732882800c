/**
 * Hostile review of POST/GET /sandbox/fixtures (issue #25). A load is one transaction: on SQLite it
 * holds the store's one write lock and the event loop for its whole length, so its size is bounded
 * (MAX_FIXTURE_ENTRIES) and a bigger file is refused before anything is written, while another
 * platform's requests keep being answered. Permissions: creating customers is MANAGE's, balances
 * (sandbox fundings) TRANSACT's. Malformed files are the spec's 400 and write nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FIXTURE_ENTRIES } from '../../src/modules/devtools/fixtures.schemas.ts';
import { type Client, expectError } from '../helpers/http.ts';
import { usAccountInfo, type Wire } from '../helpers/payments.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

const ADDRESS = { line1: '1 Fixture Way', city: 'Austin', state: 'TX', postalCode: '73301', country: 'US' };

function customer(ref: string, balances: Wire[] = []): Wire {
  return {
    ref,
    customer: {
      customerType: 'INDIVIDUAL',
      platformCustomerId: ref,
      fullName: 'Fixture Person',
      birthDate: '1990-01-01',
      nationality: 'US',
      address: ADDRESS,
      currencies: ['USD'],
    },
    ...(balances.length ? { balances } : {}),
  };
}

const usd = (amount: number) => ({ currency: 'USD', amount });

async function state(p: PlatformHandle): Promise<{ customers: number; externals: number; entries: number }> {
  const c = await p.api.get('/customers');
  const e = await p.api.get('/platform/external-accounts');
  const platformAccount = (await p.api.get('/platform/internal-accounts')).body.data[0].id as string;
  const postings = await p.api.get(`/dashboard/internal-accounts/${platformAccount}/postings`);
  return { customers: c.body.totalCount, externals: e.body.data.length, entries: postings.body.totalCount ?? postings.body.data.length };
}

async function token(p: PlatformHandle, permissions: string[]): Promise<Client> {
  const t = await p.api.post('/tokens', { name: `fixtures-${permissions.join('-')}`, permissions });
  expect(t.status, t.text).toBe(201);
  return p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
}

describe('fixture load size', () => {
  it(`a file of more than ${MAX_FIXTURE_ENTRIES} entries (customers, external accounts, balances) is a 400 that writes nothing`, async () => {
    const p = await srv.newPlatform();
    const before = await state(p);
    // Few customers, many balances: the balances are what made a 1,000-customer file hold SQLite for seconds.
    const file = { version: 1, customers: Array.from({ length: 20 }, (_, i) => customer(`big-${i}`, Array(10).fill(usd(1)))) };
    const res = await p.api.post('/sandbox/fixtures', file);
    expectError(res, 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0].message).toContain(String(MAX_FIXTURE_ENTRIES));
    expect(await state(p)).toEqual(before);
    // More customers than the limit: refused by the schema, on the field.
    const many = { version: 1, customers: Array.from({ length: MAX_FIXTURE_ENTRIES + 1 }, (_, i) => customer(`c-${i}`)) };
    const res2 = await p.api.post('/sandbox/fixtures', many);
    expectError(res2, 400, 'INVALID_INPUT');
    expect(res2.body.details.errors[0].field).toBe('customers');
    expect(await state(p)).toEqual(before);
  });

  it('a load at the limit succeeds, and another platform is answered while it runs', async () => {
    const p = await srv.newPlatform();
    const other = await srv.newPlatform();
    const n = MAX_FIXTURE_ENTRIES / 4;
    const file = {
      version: 1,
      customers: Array.from({ length: n }, (_, i) => customer(`at-${i}`, [usd(100)])),
      externalAccounts: Array.from({ length: n }, (_, i) => ({
        customerRef: `at-${i}`,
        currency: 'USD',
        accountInfo: { ...usAccountInfo('001'), accountNumber: `7${String(i).padStart(6, '0')}001` },
      })),
      platformBalances: Array(n).fill(usd(5)),
    };
    // Another platform's reads, timed while the load runs: none may wait for the whole load.
    let loading = true;
    const waits: number[] = [];
    const prober = (async () => {
      while (loading) {
        const t0 = performance.now();
        expect((await other.api.get('/customers')).status).toBe(200);
        waits.push(performance.now() - t0);
      }
    })();
    const t0 = performance.now();
    const res = await p.api.post('/sandbox/fixtures', file);
    const took = performance.now() - t0;
    loading = false;
    await prober;
    expect(res.status, res.text).toBe(201);
    expect(res.body.customers).toHaveLength(n);
    // Generous for a busy 2-core machine: the point is the order of magnitude (it was seconds).
    expect(Math.max(...waits)).toBeLessThan(2_000);
    expect(took).toBeLessThan(5_000);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});

describe('fixture load permissions', () => {
  it('a TRANSACT-only token cannot create customers through a fixture (POST /customers needs MANAGE)', async () => {
    const p = await srv.newPlatform();
    const before = await state(p);
    const transact = await token(p, ['TRANSACT']);
    const res = await transact.post('/sandbox/fixtures', { version: 1, customers: [customer('t1', [usd(10)])] });
    expectError(res, 403, 'FORBIDDEN');
    expect(await state(p)).toEqual(before);
  });

  it('a MANAGE-only token loads customers and external accounts, but a file with balances needs TRANSACT too', async () => {
    const p = await srv.newPlatform();
    const manage = await token(p, ['MANAGE']);
    const plain = await manage.post('/sandbox/fixtures', { version: 1, customers: [customer('m1')] });
    expect(plain.status, plain.text).toBe(201);
    const before = await state(p);
    for (const file of [
      { version: 1, customers: [customer('m2', [usd(10)])] },
      { version: 1, platformBalances: [usd(10)] },
    ]) {
      const res = await manage.post('/sandbox/fixtures', file);
      expectError(res, 403, 'FORBIDDEN');
      expect(res.body.details.missing).toEqual(['TRANSACT']);
    }
    expect(await state(p)).toEqual(before);
    const both = await token(p, ['MANAGE', 'TRANSACT']);
    expect((await both.post('/sandbox/fixtures', { version: 1, customers: [customer('m3', [usd(10)])] })).status).toBe(201);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });
});

describe('malformed fixtures: the spec 400, nothing written', () => {
  const cases: [string, Wire, string][] = [
    ['duplicate refs', { version: 1, customers: [customer('d'), customer('d')] }, 'customers.1.ref'],
    [
      'an external account naming a customer not in the file',
      { version: 1, externalAccounts: [{ customerRef: 'ghost', currency: 'USD', accountInfo: usAccountInfo('001') }] },
      'externalAccounts.0.customerRef',
    ],
    ['a negative balance', { version: 1, customers: [customer('n', [usd(-1)])] }, 'customers.0.balances.0.amount'],
    ['a balance beyond the sandbox funding maximum', { version: 1, platformBalances: [usd(1e11 + 1)] }, 'platformBalances.0.amount'],
    ['a fractional balance', { version: 1, platformBalances: [usd(1.5)] }, 'platformBalances.0.amount'],
    [
      'a balance in a currency the customer has no account in',
      { version: 1, customers: [customer('e', [{ currency: 'EUR', amount: 1 }])] },
      'customers.0.balances.0.currency',
    ],
    [
      'a currency the platform lacks',
      { version: 1, customers: [{ ...customer('x'), customer: { ...customer('x').customer, currencies: ['JPY'] } }] },
      'customers.0.customer.currencies.0',
    ],
    ['a huge ref', { version: 1, customers: [customer('r'.repeat(256))] }, 'customers.0.ref'],
    ['an unknown field', { version: 1, customers: [{ ...customer('u'), extra: true }] }, 'customers.0.extra'],
    ['another version', { version: 2 }, 'version'],
  ];
  for (const [what, file, field] of cases) {
    it(what, async () => {
      const p = await srv.newPlatform();
      const before = await state(p);
      // A valid customer first: its writes must be rolled back with the bad entry.
      const body = { ...file, customers: [customer('valid-first', [usd(50)]), ...((file.customers as Wire[]) ?? [])] };
      const res = await p.api.post('/sandbox/fixtures', body);
      expect(res.status, res.text).toBe(400);
      const shifted = field.replace(/^customers\.(\d+)/, (_m, i: string) => `customers.${Number(i) + 1}`);
      expect(res.body.details.errors.map((e: Wire) => e.field)).toContain(shifted);
      expect(await state(p)).toEqual(before);
      expect((await srv.ledger(p.id)).ok).toBe(true);
    });
  }
});
