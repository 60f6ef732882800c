/**
 * GET /platform/internal-accounts and sandbox funding: the account a new platform starts with, its
 * full wire shape, filters, funding (balance, outbox event, ledger) and the sandbox-only rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postEntry, systemAccount } from '../../src/ledger/ledger.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { checkEnvelope, expectFieldError } from './util.ts';

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Acme Payments' });
});
afterAll(async () => srv.close());

const USD = { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 };

describe('a new platform', () => {
  it('has exactly one internal account: USD, INTERNAL_FIAT, ACTIVE, empty', async () => {
    const res = await p.api.get('/platform/internal-accounts');
    expect(res.status).toBe(200);
    checkEnvelope(res);
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(res.body.data).toHaveLength(1);
    const a = res.body.data[0];
    expect(a.id).toMatch(/^InternalAccount:[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.type).toBe('INTERNAL_FIAT');
    expect(a.status).toBe('ACTIVE');
    expect(a.balance).toEqual({ amount: 0, currency: USD });
    expect(a.totalBalance).toEqual({ amount: 0, currency: USD });
    expect(a).not.toHaveProperty('customerId');
    expect(new Date(a.createdAt).toISOString()).toBe(a.createdAt);
    expect(new Date(a.updatedAt).toISOString()).toBe(a.updatedAt);
  });

  it('has US_ACCOUNT funding instructions', async () => {
    const a = (await p.api.get('/platform/internal-accounts')).body.data[0];
    expect(a.fundingPaymentInstructions).toHaveLength(1);
    const fi = a.fundingPaymentInstructions[0];
    const info = fi.accountOrWalletInfo;
    expect(info.accountType).toBe('US_ACCOUNT');
    for (const k of ['reference', 'accountNumber', 'routingNumber', 'accountHolderName', 'bankName']) {
      expect(typeof info[k], k).toBe('string');
      expect(info[k].length, k).toBeGreaterThan(0);
    }
    expect(info.accountNumber).toMatch(/^\d+$/);
    expect(info.routingNumber).toMatch(/^\d{9}$/);
    // ABA checksum: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10).
    const d = [...info.routingNumber].map(Number);
    expect((3 * (d[0]! + d[3]! + d[6]!) + 7 * (d[1]! + d[4]! + d[7]!) + (d[2]! + d[5]! + d[8]!)) % 10).toBe(0);
    expect(info.accountHolderName).toBe('Acme Payments');
    if (fi.instructionsNotes !== undefined) expect(fi.instructionsNotes).toContain(info.reference);
  });

  it('instructions are stable across reads and differ between platforms', async () => {
    const r1 = (await p.api.get('/platform/internal-accounts')).body.data[0];
    const r2 = (await p.api.get('/platform/internal-accounts')).body.data[0];
    expect(r2.fundingPaymentInstructions).toEqual(r1.fundingPaymentInstructions);
    const other = await srv.newPlatform();
    const o = (await other.api.get('/platform/internal-accounts')).body.data[0];
    expect(o.fundingPaymentInstructions[0].accountOrWalletInfo.reference).not.toBe(
      r1.fundingPaymentInstructions[0].accountOrWalletInfo.reference,
    );
    expect(o.fundingPaymentInstructions[0].accountOrWalletInfo.accountNumber).not.toBe(
      r1.fundingPaymentInstructions[0].accountOrWalletInfo.accountNumber,
    );
  });

  it('created with currency EUR through the admin API starts with an EUR account', async () => {
    const e = await srv.newPlatform({ currency: 'EUR' });
    const res = await e.api.get('/platform/internal-accounts');
    expect(res.body.data).toHaveLength(1);
    const a = res.body.data[0];
    expect(a.type).toBe('INTERNAL_FIAT');
    expect(a.balance).toEqual({ amount: 0, currency: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 } });
    expect(a.fundingPaymentInstructions[0].accountOrWalletInfo.accountType).not.toBe('US_ACCOUNT');
    const cfg = (await e.api.get('/config')).body;
    expect(cfg.supportedCurrencies.map((c: { currencyCode: string }) => c.currencyCode)).toEqual(['EUR']);
  });

  it('the admin API refuses an unknown currency', async () => {
    const res = await srv.admin.post('/_admin/platforms', { name: 'Bad', currency: 'XYZ' });
    expectError(res, 400, 'INVALID_CURRENCY');
    checkEnvelope(res);
  });
});

describe('filters', () => {
  let multi: PlatformHandle;
  beforeAll(async () => {
    multi = await srv.newPlatform();
    const line = (code: string) => ({
      currencyCode: code,
      minAmount: 1,
      maxAmount: 1000,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
    });
    const res = await multi.api.patch('/config', { supportedCurrencies: [line('USD'), line('EUR'), line('USDC')] });
    expect(res.status).toBe(200);
  });

  it('currency=', async () => {
    const all = await multi.api.get('/platform/internal-accounts');
    expect(all.body.data).toHaveLength(3);
    for (const code of ['USD', 'EUR', 'USDC']) {
      const res = await multi.api.get('/platform/internal-accounts', { query: { currency: code } });
      expect(res.status).toBe(200);
      expect(res.body.data).toHaveLength(1);
      expect(res.body.data[0].balance.currency.code).toBe(code);
    }
    const none = await multi.api.get('/platform/internal-accounts', { query: { currency: 'GBP' } });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ data: [] });
  });

  it('type=', async () => {
    const fiat = await multi.api.get('/platform/internal-accounts', { query: { type: 'INTERNAL_FIAT' } });
    expect(fiat.body.data.map((a: { balance: { currency: { code: string } } }) => a.balance.currency.code).sort()).toEqual(['EUR', 'USD']);
    const crypto = await multi.api.get('/platform/internal-accounts', { query: { type: 'INTERNAL_CRYPTO' } });
    expect(crypto.body.data).toHaveLength(1);
    expect(crypto.body.data[0].balance.currency.code).toBe('USDC');
    expect(crypto.body.data[0].fundingPaymentInstructions[0].accountOrWalletInfo.accountType).toBe('CHAIN2_WALLET');
    const wallets = await multi.api.get('/platform/internal-accounts', { query: { type: 'EMBEDDED_WALLET' } });
    expect(wallets.body.data).toEqual([]);
    const both = await multi.api.get('/platform/internal-accounts', { query: { type: 'INTERNAL_FIAT', currency: 'EUR' } });
    expect(both.body.data).toHaveLength(1);
  });

  it('bad filter values are 400 naming the field', async () => {
    const res = await multi.api.get('/platform/internal-accounts', { query: { type: 'SAVINGS' } });
    expectFieldError(res, 'type');
    expectFieldError(await multi.api.get('/platform/internal-accounts', { query: { currency: 'usd' } }), 'currency');
    expectFieldError(await multi.api.get('/platform/internal-accounts', { query: { limit: 5 } }), 'limit');
  });
});

describe('sandbox fund', () => {
  it('credits the balance, records BALANCE_UPDATED and keeps the ledger clean', async () => {
    const f = await srv.newPlatform();
    const acc = (await f.api.get('/platform/internal-accounts')).body.data[0];
    const res = await f.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount: 100_000 });
    expect(res.status).toBe(200);
    checkEnvelope(res);
    expect(res.body.id).toBe(acc.id);
    expect(res.body.balance).toEqual({ amount: 100_000, currency: USD });
    expect(res.body.totalBalance).toEqual({ amount: 100_000, currency: USD });
    expect(res.body.fundingPaymentInstructions).toEqual(acc.fundingPaymentInstructions);
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(acc.updatedAt));

    const res2 = await f.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount: 50 });
    expect(res2.body.balance.amount).toBe(100_050);
    const listed = (await f.api.get('/platform/internal-accounts')).body.data[0];
    expect(listed.balance.amount).toBe(100_050);
    expect(listed.totalBalance.amount).toBe(100_050);

    const events = await srv.app.ctx.db
      .selectFrom('outbox_events')
      .selectAll()
      .where('platform_id', '=', f.id)
      .where('type', '=', 'INTERNAL_ACCOUNT.BALANCE_UPDATED')
      .orderBy('id', 'asc')
      .execute();
    expect(events).toHaveLength(2);
    expect(events.map((e) => e.resource_id)).toEqual([acc.id, acc.id]);
    const payloads = events.map((e) => JSON.parse(e.payload));
    expect(payloads[0]).toMatchObject({
      id: acc.id,
      type: 'INTERNAL_FIAT',
      status: 'ACTIVE',
      balance: { amount: 100_000, currency: USD },
      fundingPaymentInstructions: [],
    });
    expect(payloads[1].balance.amount).toBe(100_050);
    for (const e of events) {
      expect(e.id).toMatch(/^Webhook:/);
      expect(e.status).toBe('PENDING');
    }

    const report = await srv.ledger(f.id);
    expect(report.ok).toBe(true);
    expect(report.entries).toBe(2);
    expect(report.postings).toBe(4);
  });

  it('an EUR account is funded in EUR', async () => {
    const e = await srv.newPlatform({ currency: 'EUR' });
    const acc = (await e.api.get('/platform/internal-accounts')).body.data[0];
    const res = await e.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount: 1234 });
    expect(res.status).toBe(200);
    expect(res.body.balance).toEqual({ amount: 1234, currency: { code: 'EUR', name: 'Euro', symbol: '€', decimals: 2 } });
    expect((await srv.ledger(e.id)).ok).toBe(true);
  });

  it('bad amounts and unknown accounts change nothing', async () => {
    const f = await srv.newPlatform();
    const acc = (await f.api.get('/platform/internal-accounts')).body.data[0];
    for (const amount of [0, -5, 1.25, '10', null]) {
      expectFieldError(await f.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount }), 'amount');
    }
    expectError(await f.api.post('/sandbox/internal-accounts/InternalAccount:nope/fund', { amount: 5 }), 404, 'REFERENCE_NOT_FOUND');
    expect((await f.api.get('/platform/internal-accounts')).body.data[0].balance.amount).toBe(0);
    const events = await srv.app.ctx.db.selectFrom('outbox_events').select('id').where('platform_id', '=', f.id).execute();
    expect(events).toHaveLength(0);
    expect((await srv.ledger(f.id)).entries).toBe(0);
  });

  it('accepts up to the live API maximum (100000000000) and no more', async () => {
    const f = await srv.newPlatform();
    const acc = (await f.api.get('/platform/internal-accounts')).body.data[0];
    const max = await f.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount: 100_000_000_000 });
    expect(max.status, max.text).toBe(200);
    expect(max.body.balance.amount).toBe(100_000_000_000);
    expectFieldError(await f.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount: 100_000_000_001 }), 'amount');
    expect((await f.api.get('/platform/internal-accounts')).body.data[0].balance.amount).toBe(100_000_000_000);
  });

  it('a balance that would pass 2^53−1 is refused and nothing moves', async () => {
    const f = await srv.newPlatform();
    const acc = (await f.api.get('/platform/internal-accounts')).body.data[0];
    // Bring the balance near the top through the ledger itself (the API caps one fund at 1e11).
    const near = Number.MAX_SAFE_INTEGER - 10;
    await srv.app.ctx.db.transaction().execute((trx) =>
      postEntry(trx, {
        id: srv.app.ctx.deps.ids.next('LedgerEntry'),
        platformId: f.id,
        kind: 'SANDBOX_FUNDING',
        referenceId: acc.id,
        at: new Date().toISOString(),
        postings: [
          { accountId: systemAccount(f.id, 'SANDBOX_ISSUER'), currency: 'USD', bucket: 'AVAILABLE', amount: -near },
          { accountId: acc.id, currency: 'USD', bucket: 'AVAILABLE', amount: near },
        ],
      }),
    );
    const over = await f.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount: 11 });
    expect(over.status).toBe(400);
    checkEnvelope(over);
    expect((await f.api.get('/platform/internal-accounts')).body.data[0].balance.amount).toBe(near);
    expect((await f.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount: 10 })).body.balance.amount).toBe(
      Number.MAX_SAFE_INTEGER,
    );
    const report = await srv.ledger(f.id);
    expect(report.ok).toBe(true);
    expect(report.entries).toBe(2);
  });

  it('concurrent funds all land', async () => {
    const f = await srv.newPlatform();
    const acc = (await f.api.get('/platform/internal-accounts')).body.data[0];
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => f.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount: i + 1 })),
    );
    for (const r of results) expect(r.status, r.text).toBe(200);
    expect((await f.api.get('/platform/internal-accounts')).body.data[0].balance.amount).toBe(55);
    const report = await srv.ledger(f.id);
    expect(report.ok).toBe(true);
    expect(report.entries).toBe(10);
  });

  it('a PRODUCTION platform gets 403 and nothing moves', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const acc = (await prod.api.get('/platform/internal-accounts')).body.data[0];
    const res = await prod.api.post(`/sandbox/internal-accounts/${acc.id}/fund`, { amount: 100 });
    expectError(res, 403, 'FORBIDDEN');
    checkEnvelope(res);
    expect((await prod.api.get('/platform/internal-accounts')).body.data[0].balance.amount).toBe(0);
    expect((await srv.ledger(prod.id)).entries).toBe(0);
    // Reads still work for production platforms.
    expect((await prod.api.get('/config')).status).toBe(200);
  });
});
