/**
 * Idempotency-Key on POST /sandbox/internal-accounts/{id}/fund: replay, conflict, per-platform
 * scope, concurrent requests with one key, and failed requests not burning the key.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { checkEnvelope, expectFieldError } from './util.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

async function setup(): Promise<{
  p: PlatformHandle;
  account: string;
  fund: (amount: number, key?: string) => Promise<Res>;
  balance: () => Promise<number>;
}> {
  const p = await srv.newPlatform();
  const account = (await p.api.get('/platform/internal-accounts')).body.data[0].id as string;
  return {
    p,
    account,
    fund: (amount, key) =>
      p.api.post(
        `/sandbox/internal-accounts/${account}/fund`,
        { amount },
        key === undefined ? {} : { headers: { 'Idempotency-Key': key } },
      ),
    balance: async () => (await p.api.get('/platform/internal-accounts')).body.data[0].balance.amount as number,
  };
}

async function entries(platformId: string): Promise<number> {
  return (await srv.ledger(platformId)).entries;
}

async function balanceEvents(platformId: string): Promise<number> {
  const rows = await srv.app.ctx.db
    .selectFrom('outbox_events')
    .select('id')
    .where('platform_id', '=', platformId)
    .where('type', '=', 'INTERNAL_ACCOUNT.BALANCE_UPDATED')
    .execute();
  return rows.length;
}

describe('Idempotency-Key', () => {
  it('a replay returns the same status and body with Idempotency-Hit, and moves money once', async () => {
    const { p, fund, balance } = await setup();
    const key = randomUUID();
    const first = await fund(500, key);
    expect(first.status).toBe(200);
    checkEnvelope(first);
    expect(first.headers.get('idempotency-hit')).toBeNull();
    expect(first.body.balance.amount).toBe(500);

    const second = await fund(500, key);
    expect(second.status).toBe(200);
    checkEnvelope(second);
    expect(second.headers.get('idempotency-hit')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));

    const third = await fund(500, key);
    expect(third.body).toEqual(first.body);
    expect(third.headers.get('idempotency-hit')).toBe('true');

    expect(await balance()).toBe(500);
    expect(await entries(p.id)).toBe(1);
    expect(await balanceEvents(p.id)).toBe(1);

    // The replay answers with the stored body even after the balance has moved on.
    await fund(1);
    const later = await fund(500, key);
    expect(later.body).toEqual(first.body);
    expect(await balance()).toBe(501);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('without a key every request is its own', async () => {
    const { p, fund, balance } = await setup();
    await fund(7);
    await fund(7);
    expect(await balance()).toBe(14);
    expect(await entries(p.id)).toBe(2);
  });

  it('the same key with a different body is 409 CONFLICT and moves nothing', async () => {
    const { p, fund, balance } = await setup();
    const key = randomUUID();
    expect((await fund(100, key)).status).toBe(200);
    const conflict = await fund(101, key);
    expectError(conflict, 409, 'CONFLICT');
    checkEnvelope(conflict);
    expect(conflict.headers.get('idempotency-hit')).toBeNull();
    expect(await balance()).toBe(100);
    expect(await entries(p.id)).toBe(1);
    // The original is still replayable.
    const replay = await fund(100, key);
    expect(replay.headers.get('idempotency-hit')).toBe('true');
    expect(replay.body.balance.amount).toBe(100);
  });

  it('the same JSON with its keys in another order is the same request (hostile review, defect 11)', async () => {
    const p = await srv.newPlatform();
    const ext = await p.api.post('/platform/external-accounts', {
      currency: 'USD',
      accountInfo: {
        accountType: 'US_ACCOUNT',
        accountNumber: '987654321001',
        routingNumber: '021000021',
        bankAccountType: 'CHECKING',
        beneficiary: {
          beneficiaryType: 'INDIVIDUAL',
          fullName: 'Jane Doe',
          birthDate: '1990-01-15',
          nationality: 'US',
          address: { line1: '1 Main St', city: 'Austin', state: 'TX', postalCode: '73301', country: 'US' },
        },
      },
    });
    const account = (await p.api.get('/platform/internal-accounts')).body.data[0].id as string;
    await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 10_000 });
    const key = randomUUID();
    const headers = { 'Idempotency-Key': key };
    const first = await p.api.post('/transfer-out', undefined, {
      headers,
      raw: `{"source":{"accountId":"${account}"},"destination":{"accountId":"${ext.body.id}"},"amount":700}`,
    });
    expect(first.status, first.text).toBe(201);
    const reordered = await p.api.post('/transfer-out', undefined, {
      headers,
      raw: `{ "amount": 700, "destination": {"accountId": "${ext.body.id}"}, "source": {"accountId": "${account}"} }`,
    });
    expect(reordered.status, reordered.text).toBe(201);
    expect(reordered.headers.get('idempotency-hit')).toBe('true');
    expect(reordered.body).toEqual(first.body);
    // A different value is still a different request.
    expectError(
      await p.api.post('/transfer-out', undefined, {
        headers,
        raw: `{"amount":701,"destination":{"accountId":"${ext.body.id}"},"source":{"accountId":"${account}"}}`,
      }),
      409,
      'CONFLICT',
    );
    expect((await p.api.get('/transactions')).body.totalCount).toBe(1);
  });

  it('the same key on another path is 409 CONFLICT', async () => {
    const { p, fund } = await setup();
    const key = randomUUID();
    expect((await fund(100, key)).status).toBe(200);
    // Another account of the same platform.
    const line = (code: string) => ({
      currencyCode: code,
      minAmount: 1,
      maxAmount: 1000,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ['INCOMING'],
    });
    await p.api.patch('/config', { supportedCurrencies: [line('USD'), line('EUR')] });
    const eur = (await p.api.get('/platform/internal-accounts', { query: { currency: 'EUR' } })).body.data[0].id;
    expectError(
      await p.api.post(`/sandbox/internal-accounts/${eur}/fund`, { amount: 100 }, { headers: { 'Idempotency-Key': key } }),
      409,
      'CONFLICT',
    );
    expect((await p.api.get('/platform/internal-accounts', { query: { currency: 'EUR' } })).body.data[0].balance.amount).toBe(0);
  });

  it('keys are scoped to the platform', async () => {
    const a = await setup();
    const b = await setup();
    const key = `shared-${randomUUID()}`;
    const ra = await a.fund(300, key);
    const rb = await b.fund(300, key);
    expect(ra.status).toBe(200);
    expect(rb.status).toBe(200);
    expect(rb.headers.get('idempotency-hit')).toBeNull();
    expect(rb.body.id).toBe(b.account);
    expect(await a.balance()).toBe(300);
    expect(await b.balance()).toBe(300);
    // And a different body on the other platform is not a conflict either.
    const c = await setup();
    expect((await c.fund(999, key)).status).toBe(200);
  });

  it('10 concurrent requests with one key: one effect, identical answers', async () => {
    const { p, fund, balance } = await setup();
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 10 }, () => fund(250, key)));
    for (const r of results) {
      expect(r.status, r.text).toBe(200);
      checkEnvelope(r);
    }
    const bodies = new Set(results.map((r) => JSON.stringify(r.body)));
    expect(bodies.size).toBe(1);
    expect(results[0]!.body.balance.amount).toBe(250);
    expect(results.filter((r) => r.headers.get('idempotency-hit') === null)).toHaveLength(1);
    expect(results.filter((r) => r.headers.get('idempotency-hit') === 'true')).toHaveLength(9);
    expect(await balance()).toBe(250);
    expect(await entries(p.id)).toBe(1);
    expect(await balanceEvents(p.id)).toBe(1);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('concurrent requests with distinct keys all take effect', async () => {
    const { p, fund, balance } = await setup();
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => fund(10, `k-${i}`)));
    for (const r of results) expect(r.status, r.text).toBe(200);
    expect(await balance()).toBe(100);
    expect(await entries(p.id)).toBe(10);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('a failed request does not burn the key', async () => {
    const { p, fund, account, balance } = await setup();
    const key = randomUUID();
    // 404: the account does not exist.
    const missing = await p.api.post(
      '/sandbox/internal-accounts/InternalAccount:00000000-0000-7000-8000-000000000000/fund',
      { amount: 5 },
      { headers: { 'Idempotency-Key': key } },
    );
    expectError(missing, 404, 'REFERENCE_NOT_FOUND');
    // Had the key been stored, this different request would be a 409; it succeeds instead.
    const ok = await fund(5, key);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.headers.get('idempotency-hit')).toBeNull();
    expect(await balance()).toBe(5);

    // A failure of the same request is not replayed either: validation failures store nothing.
    const key2 = randomUUID();
    expectFieldError(
      await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 0 }, { headers: { 'Idempotency-Key': key2 } }),
      'amount',
    );
    const ok2 = await fund(6, key2);
    expect(ok2.status).toBe(200);
    expect(ok2.headers.get('idempotency-hit')).toBeNull();

    // Nor do 403s from a token without TRANSACT.
    const key3 = randomUUID();
    const view = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
    const viewer = p.api.with({ basic: { id: view.body.clientId, secret: view.body.clientSecret } });
    expectError(
      await viewer.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 7 }, { headers: { 'Idempotency-Key': key3 } }),
      403,
      'FORBIDDEN',
    );
    const ok3 = await fund(7, key3);
    expect(ok3.status).toBe(200);
    expect(ok3.headers.get('idempotency-hit')).toBeNull();

    expect(await balance()).toBe(18);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('a malformed key is 400 naming Idempotency-Key and moves nothing', async () => {
    const { fund, balance } = await setup();
    expectFieldError(await fund(5, 'x'.repeat(256)), 'Idempotency-Key');
    expectFieldError(await fund(5, 'has space'), 'Idempotency-Key');
    expect(await balance()).toBe(0);
    const ok = await fund(5, 'x'.repeat(255));
    expect(ok.status).toBe(200);
  });
});
