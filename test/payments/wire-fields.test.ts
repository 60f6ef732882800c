/**
 * The live API's optional transaction and quote fields Corridor knows (issue #21, docs/decisions.md
 * "Wire fidelity"), over HTTP and in the payment webhooks: a quote's `rateDetails` from its pricing,
 * on the quote and on its payment; `railSelectionMode` (MANUAL, AUTO, null); `expectedSettlementAt`
 * and `settlementTimelineSeconds` from the sandbox outcome's delay; `platformFees`; and no `agentId`
 * on what the platform starts. Money moves as before: ledger clean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advance,
  eurAccountInfo,
  expectLedgerClean,
  fund,
  platformExternal,
  platformUsdAccount,
  tx,
  type Wire,
} from '../helpers/payments.ts';

let srv: TestServer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  await srv.close();
  for (const r of receivers) await r.close();
});

/** A funded platform whose webhooks go to a fresh receiver. */
async function setup(): Promise<{ p: PlatformHandle; account: string; r: Receiver }> {
  const r = await startReceiver();
  receivers.push(r);
  const p = await srv.newPlatform();
  const account = await platformUsdAccount(p);
  await fund(p, account, 1_000_000);
  expect((await p.api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
  return { p, account, r };
}

const quoteBody = (account: string, destination: Record<string, unknown>, amount: number, extra: Record<string, unknown> = {}) => ({
  source: { sourceType: 'ACCOUNT', accountId: account },
  destination: { destinationType: 'ACCOUNT', ...destination },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: amount,
  ...extra,
});

/** The webhook of `type` about transaction `id`, once it arrived. */
const webhook = (r: Receiver, type: string, id: string): Promise<Wire> =>
  waitFor(() => r.received.find((x) => x.body?.type === type && x.body?.data?.id === id)).then((x) => x.body.data);

const seconds = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 1000;

describe('rateDetails', () => {
  it('a cross-currency quote and its payment carry the fee terms it was priced with', async () => {
    const { p, account, r } = await setup();
    const cfg = await p.api.patch('/config', {
      feeConfigs: [
        { feeType: 'CROSS_CURRENCY_TRANSACTION', sourceCurrency: 'USD', variableFeeBps: 100, fixedFee: { amount: 50, currency: 'USD' } },
      ],
    });
    expect(cfg.status).toBe(200);
    const eur = await platformExternal(p, '001', 'EUR', eurAccountInfo());
    const created = await p.api.post('/quotes', quoteBody(account, { accountId: eur }, 10_000));
    expect(created.status).toBe(201);
    const q = created.body;
    expect(q.rateDetails).toEqual({
      counterpartyMultiplier: q.exchangeRate,
      counterpartyFixedFee: 0,
      gridApiMultiplier: 0.99,
      gridApiFixedFee: 50,
      gridApiVariableFeeRate: 0.01,
      gridApiVariableFeeAmount: 100,
    });
    // The details reproduce the amounts: fees, and what arrives from the rest at the rate.
    expect(q.rateDetails.gridApiFixedFee + q.rateDetails.gridApiVariableFeeAmount).toBe(q.feesIncluded);
    expect(q.totalReceivingAmount).toBe(Math.floor(9_850 * q.rateDetails.counterpartyMultiplier + 1e-9));
    expect((await p.api.get(`/quotes/${q.id}`)).body.rateDetails).toEqual(q.rateDetails);
    // Before execution the payment already has them; the fee is the platform's.
    expect(await tx(p.api, q.transactionId)).toMatchObject({ rateDetails: q.rateDetails, fees: 150, platformFees: 150 });

    expect((await p.api.post(`/quotes/${q.id}/execute`)).status).toBe(200);
    await advance(p, 1);
    const done = await tx(p.api, q.transactionId);
    expect(done).toMatchObject({ status: 'COMPLETED', rateDetails: q.rateDetails, platformFees: 150 });
    const listed = (await p.api.get('/transactions', { query: { type: 'OUTGOING' } })).body.data.find((t: Wire) => t.id === done.id);
    expect(listed.rateDetails).toEqual(q.rateDetails);
    expect((await webhook(r, 'OUTGOING_PAYMENT.COMPLETED', done.id)).rateDetails).toEqual(q.rateDetails);
    await expectLedgerClean(srv, p.id);
  });

  it("a same-currency quote has no fees (multipliers 1); an override's terms are its own", async () => {
    const { p, account } = await setup();
    const usd = await platformExternal(p, '001');
    const same = (await p.api.post('/quotes', quoteBody(account, { accountId: usd }, 10_000))).body;
    expect(same.rateDetails).toEqual({
      counterpartyMultiplier: 1,
      counterpartyFixedFee: 0,
      gridApiMultiplier: 1,
      gridApiFixedFee: 0,
      gridApiVariableFeeRate: 0,
      gridApiVariableFeeAmount: 0,
    });
    const override = { platformFixedFee: { amount: 25, currency: 'USD' }, platformVariableFeeBps: 30 };
    const res = await p.api.post(
      '/quotes',
      quoteBody(account, { accountId: usd }, 10_000, { platformFeeOverride: override, immediatelyExecute: true }),
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.rateDetails).toEqual({
      counterpartyMultiplier: 1,
      counterpartyFixedFee: 0,
      gridApiMultiplier: 0.997,
      gridApiFixedFee: 25,
      gridApiVariableFeeRate: 0.003,
      gridApiVariableFeeAmount: 30,
    });
    expect(res.body).toMatchObject({ feesIncluded: 55, platformFeesIncluded: 55, totalReceivingAmount: 9_945 });
    expect(await tx(p.api, res.body.transactionId)).toMatchObject({ rateDetails: res.body.rateDetails, fees: 55, platformFees: 55 });
    await advance(p, 1);
    await expectLedgerClean(srv, p.id);
  });

  it('a transfer, which no quote priced, has none', async () => {
    const { p, account } = await setup();
    const ext = await platformExternal(p, '001');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 1_000 });
    expect(res.status).toBe(201);
    expect(res.body.rateDetails).toBeUndefined();
    expect(res.body).toMatchObject({ fees: 0, platformFees: 0 });
    await advance(p, 1);
    await expectLedgerClean(srv, p.id);
  });
});

describe('paymentRail and railSelectionMode', () => {
  it('MANUAL when the request names the rail, AUTO when Corridor picks it, null without a rail', async () => {
    const { p, account, r } = await setup();
    const ext = await platformExternal(p, '001');
    const body = (destination: Record<string, unknown>) => ({ source: { accountId: account }, destination, amount: 1_000 });

    const manual = await p.api.post('/transfer-out', body({ accountId: ext, paymentRail: 'WIRE' }));
    expect(manual.status, manual.text).toBe(201);
    expect(manual.body).toMatchObject({ paymentRail: 'WIRE', railSelectionMode: 'MANUAL' });
    expect((await webhook(r, 'OUTGOING_PAYMENT.PENDING', manual.body.id)).railSelectionMode).toBe('MANUAL');

    const auto = await p.api.post('/transfer-out', body({ accountId: ext }));
    expect(auto.body).toMatchObject({ paymentRail: 'ACH', railSelectionMode: 'AUTO' });
    expect(await tx(p.api, auto.body.id)).toMatchObject({ paymentRail: 'ACH', railSelectionMode: 'AUTO' });

    const quoted = (await p.api.post('/quotes', quoteBody(account, { accountId: ext, paymentRail: 'RTP' }, 1_000))).body;
    expect(await tx(p.api, quoted.transactionId)).toMatchObject({ paymentRail: 'RTP', railSelectionMode: 'MANUAL' });

    const uma = await p.api.post('/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: account },
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: '$success.eur@sandbox.uma.money' },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
    });
    expect(uma.status, uma.text).toBe(201);
    expect(await tx(p.api, uma.body.transactionId)).toMatchObject({ paymentRail: null, railSelectionMode: null });
    await advance(p, 1);
    await expectLedgerClean(srv, p.id);
  });
});

describe('expectedSettlementAt and settlementTimelineSeconds', () => {
  it('null for an outcome that comes at once', async () => {
    const { p, account } = await setup();
    const ext = await platformExternal(p, '001');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 1_000 });
    expect(res.body).toMatchObject({ expectedSettlementAt: null, settlementTimelineSeconds: null });
    await advance(p, 1);
    expect(await tx(p.api, res.body.id)).toMatchObject({
      status: 'COMPLETED',
      expectedSettlementAt: null,
      settlementTimelineSeconds: null,
    });
    await expectLedgerClean(srv, p.id);
  });

  it('a pending transfer (suffix 005) expects its outcome 30 seconds after it starts', async () => {
    const { p, account, r } = await setup();
    const ext = await platformExternal(p, '005');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 1_000 });
    expect(res.status).toBe(201);
    const t = res.body;
    expect(t.status).toBe('PENDING');
    expect(seconds(t.createdAt, t.expectedSettlementAt)).toBe(30);
    expect(t.settlementTimelineSeconds).toBe(30);
    expect(await webhook(r, 'OUTGOING_PAYMENT.PENDING', t.id)).toMatchObject({
      expectedSettlementAt: t.expectedSettlementAt,
      settlementTimelineSeconds: 30,
    });
    await advance(p, 31);
    // The outcome came when expected (a failure, here); the expectation stays as it was.
    expect(await tx(p.api, t.id)).toMatchObject({
      status: 'FAILED',
      expectedSettlementAt: t.expectedSettlementAt,
      settlementTimelineSeconds: 30,
    });
    await expectLedgerClean(srv, p.id);
  });

  it('a slow quote payment (suffix 003) expects settlement 6 minutes after execution, counted from the quote', async () => {
    const { p, account, r } = await setup();
    const ext = await platformExternal(p, '003');
    const q = (await p.api.post('/quotes', quoteBody(account, { accountId: ext }, 2_000))).body;
    // Not started: not known yet.
    expect(await tx(p.api, q.transactionId)).toMatchObject({
      status: 'PENDING',
      expectedSettlementAt: null,
      settlementTimelineSeconds: null,
    });
    await advance(p, 60);
    expect((await p.api.post(`/quotes/${q.id}/execute`)).status).toBe(200);
    const t = await tx(p.api, q.transactionId);
    expect(t.status).toBe('PROCESSING');
    // updatedAt is the execution: the outcome is due 360 s later.
    expect(seconds(t.updatedAt, t.expectedSettlementAt)).toBe(360);
    expect(t.settlementTimelineSeconds).toBe(Math.ceil(seconds(t.createdAt, t.expectedSettlementAt)));
    expect(t.settlementTimelineSeconds).toBeGreaterThanOrEqual(420);
    expect(t.settlementTimelineSeconds).toBeLessThan(430);
    expect((await webhook(r, 'OUTGOING_PAYMENT.PROCESSING', t.id)).expectedSettlementAt).toBe(t.expectedSettlementAt);
    await advance(p, 361);
    const done = await tx(p.api, t.id);
    expect(done).toMatchObject({ status: 'COMPLETED', expectedSettlementAt: t.expectedSettlementAt });
    expect(Date.parse(done.settledAt)).toBeGreaterThanOrEqual(Date.parse(t.expectedSettlementAt));

    // Executed as it is created: the timeline is the delay itself.
    const now = (await p.api.post('/quotes', quoteBody(account, { accountId: ext }, 2_000, { immediatelyExecute: true }))).body;
    expect(await tx(p.api, now.transactionId)).toMatchObject({ status: 'PROCESSING', settlementTimelineSeconds: 360 });
    await advance(p, 361);
    await expectLedgerClean(srv, p.id);
  });
});

describe('agentId', () => {
  it('is absent from what the platform starts', async () => {
    const { p, account, r } = await setup();
    const ext = await platformExternal(p, '001');
    const res = await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 1_000 });
    expect('agentId' in res.body).toBe(false);
    const q = (await p.api.post('/quotes', quoteBody(account, { accountId: ext }, 1_000, { immediatelyExecute: true }))).body;
    await advance(p, 1);
    expect('agentId' in (await tx(p.api, q.transactionId))).toBe(false);
    expect('agentId' in (await webhook(r, 'OUTGOING_PAYMENT.COMPLETED', res.body.id))).toBe(false);
    await expectLedgerClean(srv, p.id);
  });
});

describe('the served OpenAPI document', () => {
  it('documents the new fields on transactions and quotes', async () => {
    const doc = (await srv.anon.get('/openapi.json')).body;
    const response = (suffix: string) => {
      const path = Object.keys(doc.paths).find((k) => k.endsWith(suffix))!;
      return doc.paths[path].get.responses['200'].content['application/json'].schema;
    };
    // A payment or a card transaction (the live TransactionOneOf): the payment branch carries them.
    const transaction = response('/transactions/{transactionId}').oneOf.find((b: { title?: string }) => b.title === 'Transaction');
    for (const field of [
      'agentId',
      'rateDetails',
      'railSelectionMode',
      'expectedSettlementAt',
      'settlementTimelineSeconds',
      'platformFees',
    ]) {
      expect(transaction.properties[field], field).toBeDefined();
    }
    expect(transaction.properties.rateDetails.required.sort()).toEqual([
      'counterpartyFixedFee',
      'counterpartyMultiplier',
      'gridApiFixedFee',
      'gridApiMultiplier',
      'gridApiVariableFeeAmount',
      'gridApiVariableFeeRate',
    ]);
    expect(response('/quotes/{quoteId}').properties.rateDetails.title).toBe('OutgoingRateDetails');
  });
});
