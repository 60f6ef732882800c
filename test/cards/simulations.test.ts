/**
 * The sandbox card simulations over HTTP, and where the money sits after each: the docs' loop
 * (authorize 1250 → clear 1500 → return 1500), partial and over-clearing, expiry (a 0 clearing and
 * the 7-day job on the platform's clock), returns and their reversal, advices, single-message and
 * credit messages, balance inquiries, and the CARD_TRANSACTION.* webhooks (signed). The ledger check
 * is clean after every scenario.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { expectError } from '../helpers/http.ts';
import { advance } from '../helpers/payments.ts';
import { type Receiver, waitFor } from '../helpers/receiver.ts';
import type { PlatformHandle, TestServer } from '../helpers/server.ts';
import {
  activeCard,
  approved,
  balances,
  cardHooks,
  cardServer,
  declined,
  getTx,
  ledgerOk,
  MERCHANT,
  receiverFor,
  simulate,
  USD,
  type Wire,
} from './helpers.ts';

let srv: TestServer;
let p: PlatformHandle;
let rec: Receiver;
let publicKey: string;

beforeAll(async () => {
  ({ srv } = await cardServer());
  p = await srv.newPlatform({ name: 'Card simulations' });
  rec = await receiverFor(p);
  publicKey = (await p.api.get('/webhooks/signing-key')).body.publicKey;
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

const amountOf = (tx: Wire, field: 'authorizedAmount' | 'settledAmount' | 'refundedAmount') => tx[field].amount;
const sim = (cardId: string, path: string, body: unknown) => simulate(p.api, cardId, path, body);

async function accepted(cardId: string, path: string, body: unknown): Promise<string> {
  const res = await sim(cardId, path, body);
  expect(res.status, res.text).toBe(202);
  expect(res.headers.get('corridor-card-decision')).toBe('APPROVED');
  expect(res.body.issuerTransactionToken).toMatch(/^[0-9a-f-]{36}$/);
  return res.body.issuerTransactionToken;
}

/** The CARD_TRANSACTION webhooks of `txId` once there are `n`, signatures checked. */
async function txHooks(txId: string, n: number): Promise<Wire[]> {
  const got = await waitFor(() => {
    const r = cardHooks(rec, txId);
    return r.length >= n ? r : undefined;
  });
  for (const h of got) expect(verifyWebhook(h.raw, h.headers['x-grid-signature'] as string, publicKey)).toBe(true);
  return got.map((h) => h.body);
}

describe('the docs’ loop: issue → authorize 1250 → clearing 1500 → return 1500', () => {
  it('holds, settles with a post-hoc pull, refunds; webhooks carry the transaction as GET returns it', async () => {
    const { h, card } = await activeCard(p.api, 5000);
    const { token, tx } = await approved(p.api, card.id, 'authorization', 1250);
    expect(tx).toMatchObject({
      type: 'CARD',
      id: expect.stringMatching(/^CardTransaction:[0-9a-f-]{36}$/),
      cardId: card.id,
      customerId: h.customerId,
      platformCustomerId: h.platformCustomerId,
      issuerTransactionToken: token,
      status: 'AUTHORIZED',
      direction: 'DEBIT',
      merchant: MERCHANT,
      accountId: h.accountId,
      pullSummary: { count: 1, totalAmount: 1250, pendingCount: 0 },
      refundSummary: { count: 0, totalAmount: 0 },
      settlementSummary: { count: 0, totalAmount: 0 },
    });
    expect(tx.authorizedAmount).toEqual({
      amount: 1250,
      currency: { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 },
    });
    expect(tx.authorizedAt).toBe(tx.createdAt);
    // The hold: AVAILABLE → PENDING on the funding account.
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 3750, pending: 1250 });

    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 1500 });
    const settled = await getTx(p.api, tx);
    expect(settled).toMatchObject({ status: 'SETTLED', pullSummary: { count: 2, totalAmount: 1500, pendingCount: 0 } });
    expect([amountOf(settled, 'authorizedAmount'), amountOf(settled, 'settledAmount')]).toEqual([1250, 1500]);
    expect(settled.settlementSummary).toEqual({ count: 1, totalAmount: 1500 });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 3500, pending: 0 });

    await accepted(card.id, 'return', { cardTransactionId: tx.id, amount: 1500 });
    const refunded = await getTx(p.api, tx);
    expect(refunded).toMatchObject({ status: 'REFUNDED', refundSummary: { count: 1, totalAmount: 1500 } });
    expect(amountOf(refunded, 'refundedAmount')).toBe(1500);
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 5000, pending: 0 });

    const events = await txHooks(tx.id, 3);
    expect(events.map((e) => e.type)).toEqual(['CARD_TRANSACTION.AUTHORIZED', 'CARD_TRANSACTION.SETTLED', 'CARD_TRANSACTION.REFUNDED']);
    expect(events[0].data).toEqual(tx);
    expect(events[2].data).toEqual(refunded);
    await ledgerOk(srv, p.id);
  });
});

describe('clearings', () => {
  it('below the hold: PARTIALLY_SETTLED with the rest held; the next clearing settles it', async () => {
    const { h, card } = await activeCard(p.api, 2000);
    const { tx } = await approved(p.api, card.id, 'authorization', 1000);
    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 400 });
    expect(await getTx(p.api, tx)).toMatchObject({ status: 'PARTIALLY_SETTLED', settlementSummary: { count: 1, totalAmount: 400 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 1000, pending: 600 });
    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 600 });
    expect(await getTx(p.api, tx)).toMatchObject({ status: 'SETTLED', settlementSummary: { count: 2, totalAmount: 1000 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 1000, pending: 0 });
    expect((await txHooks(tx.id, 3)).map((e) => e.type)).toEqual([
      'CARD_TRANSACTION.AUTHORIZED',
      'CARD_TRANSACTION.PARTIALLY_SETTLED',
      'CARD_TRANSACTION.SETTLED',
    ]);
    // A settled transaction takes no more clearings.
    const again = await sim(card.id, 'clearing', { cardTransactionId: tx.id, amount: 1 });
    expect(expectError(again, 400, 'INVALID_INPUT').body.details.errors[0].field).toBe('cardTransactionId');
    await ledgerOk(srv, p.id);
  });

  it('amount 0 is the authorization’s expiry: the rest of the hold is released, the transaction SETTLED with what cleared', async () => {
    const { h, card } = await activeCard(p.api, 2000);
    const { tx } = await approved(p.api, card.id, 'authorization', 1000);
    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 300 });
    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 0 });
    const done = await getTx(p.api, tx);
    expect(done).toMatchObject({ status: 'SETTLED', pullSummary: { count: 1, totalAmount: 300 } });
    expect(amountOf(done, 'settledAmount')).toBe(300);
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 1700, pending: 0 });
    const { tx: untouched } = await approved(p.api, card.id, 'authorization', 500);
    await accepted(card.id, 'clearing', { cardTransactionId: untouched.id, amount: 0 });
    expect(await getTx(p.api, untouched)).toMatchObject({ status: 'SETTLED', settledAmount: { amount: 0 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 1700, pending: 0 });
    await ledgerOk(srv, p.id);
  });

  it('over-clearing the account cannot cover goes EXCEPTION: the hold is paid, the shortfall recorded, nothing overdraws', async () => {
    const { h, card } = await activeCard(p.api, 1000);
    const { tx } = await approved(p.api, card.id, 'authorization', 900);
    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 1500 });
    const ex = await getTx(p.api, tx);
    expect(ex).toMatchObject({ status: 'EXCEPTION', pullSummary: { count: 1, totalAmount: 900 }, settledAmount: { amount: 1500 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 100, pending: 0 });
    const row = await srv.app.ctx.db.selectFrom('card_transactions').selectAll().where('id', '=', tx.id).executeTakeFirstOrThrow();
    expect([Number(row.shortfall), row.exception_reason]).toEqual([600, 'POST_HOC_PULL_FAILED']);
    expect((await txHooks(tx.id, 2)).map((e) => e.type)).toEqual(['CARD_TRANSACTION.AUTHORIZED', 'CARD_TRANSACTION.EXCEPTION']);
    expectError(await sim(card.id, 'return', { cardTransactionId: tx.id, amount: 100 }), 400, 'INVALID_INPUT');
    await ledgerOk(srv, p.id);
  });

  it('an uncleared hold is released 7 days (platform clock) after the last authorization or advice', async () => {
    const q = await srv.newPlatform({ name: 'Card expiry' });
    const { h, card } = await activeCard(q.api, 3000);
    const { tx } = await approved(q.api, card.id, 'authorization', 1000);
    const { tx: advised } = await approved(q.api, card.id, 'authorization', 1000);
    await advance(q, 6 * 86400);
    // An advice pushes its transaction's expiry back.
    const res = await simulate(q.api, card.id, 'authorization_advice', { cardTransactionId: advised.id, amount: 1200 });
    expect(res.status, res.text).toBe(202);
    await advance(q, 86400 - 60);
    expect((await getTx(q.api, tx)).status).toBe('AUTHORIZED');
    await advance(q, 60);
    expect(await getTx(q.api, tx)).toMatchObject({ status: 'SETTLED', settledAmount: { amount: 0 }, pullSummary: { totalAmount: 0 } });
    expect((await getTx(q.api, advised)).status).toBe('AUTHORIZED');
    expect(await balances(q.api, h.customerId, h.accountId)).toEqual({ available: 1800, pending: 1200 });
    await advance(q, 6 * 86400);
    expect((await getTx(q.api, advised)).status).toBe('SETTLED');
    expect(await balances(q.api, h.customerId, h.accountId)).toEqual({ available: 3000, pending: 0 });
    await ledgerOk(srv, q.id);
  });
});

describe('returns and their reversal', () => {
  it('a partial return keeps it SETTLED with refundedAmount; the rest makes it REFUNDED; more is 400', async () => {
    const { h, card } = await activeCard(p.api, 2000);
    const { tx } = await approved(p.api, card.id, 'authorization', 1000);
    expect(
      expectError(await sim(card.id, 'return', { cardTransactionId: tx.id, amount: 1 }), 400, 'INVALID_INPUT').body.details.errors[0].field,
    ).toBe('cardTransactionId');
    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 1000 });
    await accepted(card.id, 'return', { cardTransactionId: tx.id, amount: 400 });
    expect(await getTx(p.api, tx)).toMatchObject({ status: 'SETTLED', refundedAmount: { amount: 400 }, refundSummary: { count: 1 } });
    const tooMuch = await sim(card.id, 'return', { cardTransactionId: tx.id, amount: 601 });
    expect(expectError(tooMuch, 400, 'INVALID_INPUT').body.details.errors[0].field).toBe('amount');
    await accepted(card.id, 'return', { cardTransactionId: tx.id, amount: 600 });
    expect(await getTx(p.api, tx)).toMatchObject({ status: 'REFUNDED', refundSummary: { count: 2, totalAmount: 1000 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 2000, pending: 0 });
    expect((await txHooks(tx.id, 4)).map((e) => e.type)).toEqual([
      'CARD_TRANSACTION.AUTHORIZED',
      'CARD_TRANSACTION.SETTLED',
      'CARD_TRANSACTION.SETTLED',
      'CARD_TRANSACTION.REFUNDED',
    ]);
    await ledgerOk(srv, p.id);
  });

  it('return_reversal takes the latest return back (SETTLED), or goes EXCEPTION when the account cannot give it', async () => {
    const { h, card } = await activeCard(p.api, 1000);
    const { tx } = await approved(p.api, card.id, 'authorization', 1000);
    expectError(await sim(card.id, 'return_reversal', { cardTransactionId: tx.id }), 400, 'INVALID_INPUT');
    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 1000 });
    await accepted(card.id, 'return', { cardTransactionId: tx.id, amount: 1000 });
    await accepted(card.id, 'return_reversal', { cardTransactionId: tx.id });
    expect(await getTx(p.api, tx)).toMatchObject({ status: 'SETTLED', refundedAmount: { amount: 0 }, refundSummary: { count: 0 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 0, pending: 0 });
    // Returned again, then the money is held by another authorization: the reversal cannot be covered.
    await accepted(card.id, 'return', { cardTransactionId: tx.id, amount: 1000 });
    await approved(p.api, card.id, 'authorization', 800);
    await accepted(card.id, 'return_reversal', { cardTransactionId: tx.id });
    expect((await getTx(p.api, tx)).status).toBe('EXCEPTION');
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 200, pending: 800 });
    const row = await srv.app.ctx.db.selectFrom('card_transactions').selectAll().where('id', '=', tx.id).executeTakeFirstOrThrow();
    expect([Number(row.shortfall), row.exception_reason]).toEqual([1000, 'RETURN_REVERSAL_PULL_FAILED']);
    await ledgerOk(srv, p.id);
  });
});

describe('advices, single-message and credit messages, balance inquiries', () => {
  it('authorization_advice re-sizes the hold up and down; up beyond the balance is declined; below what settled is 400', async () => {
    const { h, card } = await activeCard(p.api, 2000);
    const { tx } = await approved(p.api, card.id, 'authorization', 1000);
    await accepted(card.id, 'authorization_advice', { cardTransactionId: tx.id, amount: 1500 });
    expect(await getTx(p.api, tx)).toMatchObject({
      status: 'AUTHORIZED',
      authorizedAmount: { amount: 1500 },
      pullSummary: { totalAmount: 1500 },
    });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 500, pending: 1500 });
    await declined(p.api, card.id, 'authorization_advice', { cardTransactionId: tx.id, amount: 2600 }, 'INSUFFICIENT_FUNDS');
    expect(amountOf(await getTx(p.api, tx), 'authorizedAmount')).toBe(1500);
    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 700 });
    await accepted(card.id, 'authorization_advice', { cardTransactionId: tx.id, amount: 900 });
    expect(await getTx(p.api, tx)).toMatchObject({ status: 'PARTIALLY_SETTLED', authorizedAmount: { amount: 900 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 1100, pending: 200 });
    const below = await sim(card.id, 'authorization_advice', { cardTransactionId: tx.id, amount: 600 });
    expect(expectError(below, 400, 'INVALID_INPUT').body.details.errors[0].field).toBe('amount');
    await ledgerOk(srv, p.id);
  });

  it('financial_authorization is pulled and SETTLED at once; it can be returned', async () => {
    const { h, card } = await activeCard(p.api, 2000);
    const { tx } = await approved(p.api, card.id, 'financial_authorization', 700, { descriptor: 'ATM 42ND ST', mcc: '6011' });
    expect(tx).toMatchObject({
      status: 'SETTLED',
      direction: 'DEBIT',
      settledAmount: { amount: 700 },
      pullSummary: { count: 1, totalAmount: 700 },
    });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 1300, pending: 0 });
    await accepted(card.id, 'return', { cardTransactionId: tx.id, amount: 700 });
    expect((await getTx(p.api, tx)).status).toBe('REFUNDED');
    expect((await txHooks(tx.id, 2)).map((e) => e.type)).toEqual(['CARD_TRANSACTION.SETTLED', 'CARD_TRANSACTION.REFUNDED']);
    await ledgerOk(srv, p.id);
  });

  it('credits: credit_authorization and its advice are pending credits made available by clearing; financial credits arrive at once', async () => {
    const { h, card } = await activeCard(p.api, 0);
    const { tx } = await approved(p.api, card.id, 'credit_authorization', 500);
    expect(tx).toMatchObject({ status: 'AUTHORIZED', direction: 'CREDIT', pullSummary: { count: 0, totalAmount: 0 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 0, pending: 500 });
    await accepted(card.id, 'clearing', { cardTransactionId: tx.id, amount: 600 });
    expect(await getTx(p.api, tx)).toMatchObject({ status: 'SETTLED', settledAmount: { amount: 600 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 600, pending: 0 });
    expectError(await sim(card.id, 'return', { cardTransactionId: tx.id, amount: 100 }), 400, 'INVALID_INPUT');

    const { tx: advice } = await approved(p.api, card.id, 'credit_authorization_advice', 250);
    expect(advice).toMatchObject({ status: 'AUTHORIZED', direction: 'CREDIT' });
    await accepted(card.id, 'clearing', { cardTransactionId: advice.id, amount: 0 });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 600, pending: 0 });

    const { tx: fin } = await approved(p.api, card.id, 'financial_credit_authorization', 300, { descriptor: 'ATM DEPOSIT', mcc: '6012' });
    expect(fin).toMatchObject({ status: 'SETTLED', direction: 'CREDIT', settledAmount: { amount: 300 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 900, pending: 0 });
    await ledgerOk(srv, p.id);
  });

  it('balance_inquiry: approved on an ACTIVE card, declined on a FROZEN one; no money, no transaction', async () => {
    const { h, card } = await activeCard(p.api, 100);
    const before = (await p.api.get('/transactions', { query: { customerId: h.customerId } })).body.totalCount;
    await accepted(card.id, 'balance_inquiry', { merchant: MERCHANT });
    expect((await p.api.patch(`/cards/${card.id}`, { state: 'FROZEN' })).status).toBe(200);
    await declined(p.api, card.id, 'balance_inquiry', { merchant: MERCHANT }, 'CARD_PAUSED');
    expect((await p.api.get('/transactions', { query: { customerId: h.customerId } })).body.totalCount).toBe(before);
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 100, pending: 0 });
  });
});

describe('simulation input', () => {
  it('400 naming the field; an unknown or another card’s transaction is 404', async () => {
    const { card } = await activeCard(p.api, 1000);
    const { card: other } = await activeCard(p.api, 1000);
    const { tx } = await approved(p.api, other.id, 'authorization', 100);
    const field = async (path: string, body: unknown, name: string) =>
      expect(
        (expectError(await sim(card.id, path, body), 400, 'INVALID_INPUT').body.details.errors as Wire[]).map((e) => e.field),
      ).toContain(name);
    await field('authorization', { amount: 0, currency: USD, merchant: MERCHANT }, 'amount');
    await field('authorization', { amount: 10, currency: USD }, 'merchant');
    await field('authorization', { amount: 10, currency: { code: 'EUR' }, merchant: MERCHANT }, 'currency.code');
    await field('authorization', { amount: 10, currency: USD, merchant: { descriptor: 'X', mcc: '58' } }, 'merchant.mcc');
    await field('authorization', { amount: 10, currency: USD, merchant: MERCHANT, extra: 1 }, 'extra');
    await field('clearing', { cardTransactionId: tx.id, amount: -1 }, 'amount');
    await field('return', { cardTransactionId: tx.id }, 'amount');
    await field('balance_inquiry', {}, 'merchant');
    expectError(await sim(card.id, 'clearing', { cardTransactionId: tx.id, amount: 10 }), 404, 'TRANSACTION_NOT_FOUND');
    expectError(
      await sim(card.id, 'return_reversal', { cardTransactionId: 'CardTransaction:00000000-0000-7000-8000-000000000000' }),
      404,
      'TRANSACTION_NOT_FOUND',
    );
    const q = await srv.newPlatform({ name: 'Card simulations stranger' });
    const { card: theirs } = await activeCard(q.api, 0);
    expectError(await simulate(q.api, theirs.id, 'clearing', { cardTransactionId: tx.id, amount: 10 }), 404, 'TRANSACTION_NOT_FOUND');
    expect((await getTx(p.api, tx)).status).toBe('AUTHORIZED');
  });
});
