/**
 * Authorization decisioning over HTTP: declines (a real shortfall and the 002 suffix, a FROZEN /
 * CLOSED / PROCESSING card and the 003 suffix, over maxSpendPerTransaction, the velocity limit) move
 * no money, make no transaction and send no webhook, and are recorded with their reason; the 005
 * (delayed pull, confirmed by a job on the platform's clock) and 006 (EXCEPTION) suffixes; funding
 * sources tried in priority order; parallel authorizations never overdraw.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInternalAccount } from '../../src/modules/internal-accounts/internal-accounts.service.ts';
import { activeKey, createBody } from '../delegated-keys/keys.ts';
import { advance } from '../helpers/payments.ts';
import { uniqueId } from '../helpers/random.ts';
import { type Receiver, waitFor } from '../helpers/receiver.ts';
import type { PlatformHandle, TestServer } from '../helpers/server.ts';
import { walletSetup, walletWithSession } from '../helpers/wallet-auth.ts';
import {
  activeCard,
  approved,
  balances,
  cardHooks,
  cardServer,
  declined,
  fund,
  getTx,
  issue,
  ledgerOk,
  MERCHANT,
  newHolder,
  receiverFor,
  simulate,
  USD,
  type Wire,
} from './helpers.ts';

let srv: TestServer;
let p: PlatformHandle;
let rec: Receiver;

beforeAll(async () => {
  ({ srv } = await cardServer());
  p = await srv.newPlatform({ name: 'Card decisioning' });
  rec = await receiverFor(p);
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

const auth = (amount: number, descriptor = MERCHANT.descriptor) => ({ amount, currency: USD, merchant: { ...MERCHANT, descriptor } });

/** The card's recorded issuer messages (approved and declined). */
async function eventsOf(cardId: string): Promise<Wire[]> {
  return srv.app.ctx.db.selectFrom('card_events').selectAll().where('card_id', '=', cardId).orderBy('id').execute();
}

async function cardTransactions(customerId: string): Promise<Wire[]> {
  return (await p.api.get('/transactions', { query: { customerId, limit: 100 } })).body.data;
}

describe('declines move no money and make no transaction', () => {
  it('for want of funds (real, and the 002 suffix), recorded with the reason; the 202 still carries a token', async () => {
    const { h, card } = await activeCard(p.api, 1000);
    const short = await declined(p.api, card.id, 'authorization', auth(1001), 'INSUFFICIENT_FUNDS');
    const magic = await declined(p.api, card.id, 'authorization', auth(10, 'AMAZON RETAIL US-002'), 'INSUFFICIENT_FUNDS');
    await declined(p.api, card.id, 'financial_authorization', auth(1001), 'INSUFFICIENT_FUNDS');
    expect(await cardTransactions(h.customerId)).toEqual([]);
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 1000, pending: 0 });
    const events = await eventsOf(card.id);
    expect(events.map((e) => [e.issuer_transaction_token, e.outcome, e.decline_reason, e.card_transaction_id])).toEqual([
      [short, 'DECLINED', 'INSUFFICIENT_FUNDS', null],
      [magic, 'DECLINED', 'INSUFFICIENT_FUNDS', null],
      [expect.any(String), 'DECLINED', 'INSUFFICIENT_FUNDS', null],
    ]);
    // An authorization of exactly the balance is approved.
    const { tx } = await approved(p.api, card.id, 'authorization', 1000);
    expect(tx.status).toBe('AUTHORIZED');
    await ledgerOk(srv, p.id);
  });

  it('by the card: FROZEN (and the 003 suffix) CARD_PAUSED, CLOSED CARD_CLOSED, PROCESSING CARD_NOT_ACTIVE', async () => {
    const { h, card } = await activeCard(p.api, 5000);
    await declined(p.api, card.id, 'authorization', auth(10, 'CAFE-003'), 'CARD_PAUSED');
    const { tx } = await approved(p.api, card.id, 'authorization', 500);
    expect((await p.api.patch(`/cards/${card.id}`, { state: 'FROZEN' })).status).toBe(200);
    for (const path of [
      'authorization',
      'financial_authorization',
      'credit_authorization',
      'financial_credit_authorization',
      'credit_authorization_advice',
    ]) {
      await declined(p.api, card.id, path, auth(10), 'CARD_PAUSED');
    }
    // Earlier authorizations still reconcile on a FROZEN card, and on a CLOSED one.
    let res = await simulate(p.api, card.id, 'clearing', { cardTransactionId: tx.id, amount: 200 });
    expect(res.status, res.text).toBe(202);
    expect((await p.api.patch(`/cards/${card.id}`, { state: 'CLOSED' })).status).toBe(200);
    await declined(p.api, card.id, 'authorization', auth(10), 'CARD_CLOSED');
    res = await simulate(p.api, card.id, 'clearing', { cardTransactionId: tx.id, amount: 300 });
    expect(res.status, res.text).toBe(202);
    expect((await getTx(p.api, tx)).status).toBe('SETTLED');
    const processing = await issue(p.api, h, { platformCardId: `${uniqueId('pc')}-001` });
    await declined(p.api, processing.id, 'authorization', auth(10), 'CARD_NOT_ACTIVE');
    await declined(p.api, processing.id, 'balance_inquiry', { merchant: MERCHANT }, 'CARD_NOT_ACTIVE');
    expect((await cardTransactions(h.customerId)).map((t) => t.id)).toEqual([tx.id]);
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 4500, pending: 0 });
    await ledgerOk(srv, p.id);
  });

  it('over maxSpendPerTransaction (exactly the limit is allowed); a credit is not limited', async () => {
    const { card } = await activeCard(p.api, 5000, { maxSpendPerTransaction: 700 });
    await approved(p.api, card.id, 'authorization', 700);
    await declined(p.api, card.id, 'authorization', auth(701), 'EXCEEDS_MAX_SPEND_PER_TRANSACTION');
    await declined(p.api, card.id, 'financial_authorization', auth(701), 'EXCEEDS_MAX_SPEND_PER_TRANSACTION');
    await approved(p.api, card.id, 'credit_authorization', 5000);
    expect((await p.api.patch(`/cards/${card.id}`, { maxSpendPerTransaction: null })).status).toBe(200);
    await approved(p.api, card.id, 'authorization', 701);
  });

  it('the velocity limit: at most 10 approved authorizations per card per minute of the platform clock', async () => {
    const q = await srv.newPlatform({ name: 'Card velocity' });
    const { card } = await activeCard(q.api, 100_000);
    for (let i = 0; i < 10; i++) await approved(q.api, card.id, i % 2 === 0 ? 'authorization' : 'credit_authorization', 10);
    await declined(q.api, card.id, 'authorization', auth(10), 'VELOCITY_LIMIT_EXCEEDED');
    await declined(q.api, card.id, 'credit_authorization', auth(10), 'VELOCITY_LIMIT_EXCEEDED');
    // Declines do not count; a minute later the window is free again.
    await advance(q, 61);
    await approved(q.api, card.id, 'authorization', 10);
    await ledgerOk(srv, q.id);
  });

  it('no webhook for a decline', async () => {
    const { h, card } = await activeCard(p.api, 0);
    await declined(p.api, card.id, 'authorization', auth(1), 'INSUFFICIENT_FUNDS');
    const { tx } = await approved(p.api, card.id, 'credit_authorization', 1);
    await waitFor(() => cardHooks(rec, tx.id).length > 0);
    const forHolder = rec.received.filter((r) => r.body?.type?.startsWith('CARD_TRANSACTION.') && r.body.data.customerId === h.customerId);
    expect(forHolder.map((r) => r.body.data.id)).toEqual([tx.id]);
  });
});

describe('the pull suffixes', () => {
  it('005: the pull stays PENDING until a job confirms it 30 s later (platform clock)', async () => {
    const q = await srv.newPlatform({ name: 'Card delayed pull' });
    const { h, card } = await activeCard(q.api, 2000);
    const { tx } = await approved(q.api, card.id, 'authorization', 800, { ...MERCHANT, descriptor: 'SLOW BANK-005' });
    expect(tx).toMatchObject({ status: 'AUTHORIZED', pullSummary: { count: 1, totalAmount: 800, pendingCount: 1 } });
    expect(await balances(q.api, h.customerId, h.accountId)).toEqual({ available: 1200, pending: 800 });
    await advance(q, 29);
    expect((await getTx(q.api, tx)).pullSummary.pendingCount).toBe(1);
    await advance(q, 1);
    const confirmed = await getTx(q.api, tx);
    expect(confirmed).toMatchObject({ status: 'AUTHORIZED', pullSummary: { pendingCount: 0 } });
    expect(confirmed.lastEventAt > tx.lastEventAt).toBe(true);
    await ledgerOk(srv, q.id);
  });

  it('006: the pull’s confirmation fails: EXCEPTION at once, nothing moved', async () => {
    const { h, card } = await activeCard(p.api, 2000);
    const { tx } = await approved(p.api, card.id, 'authorization', 800, { ...MERCHANT, descriptor: 'FLAKY PAY-006' });
    expect(tx).toMatchObject({ status: 'EXCEPTION', pullSummary: { count: 1, totalAmount: 0 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 2000, pending: 0 });
    const res = await simulate(p.api, card.id, 'clearing', { cardTransactionId: tx.id, amount: 800 });
    expect(res.status).toBe(400);
    const { tx: fin } = await approved(p.api, card.id, 'financial_authorization', 300, { ...MERCHANT, descriptor: 'ATM-006' });
    expect(fin).toMatchObject({ status: 'EXCEPTION', settledAmount: { amount: 300 } });
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 2000, pending: 0 });
    await ledgerOk(srv, p.id);
  });
});

describe('funding sources', () => {
  it('are tried in priority order: the hold goes on the first that covers the amount', async () => {
    const h = await newHolder(p.api);
    // A second USD account of the cardholder (the API gives a customer one per currency).
    const second = await createInternalAccount(srv.app.ctx.db, srv.app.ctx.deps, {
      platformId: p.id,
      customerId: h.customerId,
      type: 'INTERNAL_FIAT',
      currency: 'USD',
      at: new Date().toISOString(),
    });
    await fund(p.api, h.accountId, 300);
    await fund(p.api, second.id, 1000);
    const card = await issue(p.api, h, { fundingSources: [h.accountId, second.id] });
    await waitFor(async () => (await p.api.get(`/cards/${card.id}`)).body.state === 'ACTIVE');
    expect((await approved(p.api, card.id, 'authorization', 200)).tx.accountId).toBe(h.accountId);
    expect((await approved(p.api, card.id, 'authorization', 200)).tx.accountId).toBe(second.id);
    expect((await p.api.patch(`/cards/${card.id}`, { fundingSources: [second.id, h.accountId] })).status).toBe(200);
    expect((await approved(p.api, card.id, 'authorization', 50)).tx.accountId).toBe(second.id);
    await declined(p.api, card.id, 'authorization', auth(751), 'INSUFFICIENT_FUNDS');
    const listed = (await p.api.get('/cards', { query: { accountId: second.id } })).body.data.map((c: Wire) => c.id);
    expect(listed).toEqual([card.id]);
    await ledgerOk(srv, p.id);
  });

  it('an embedded wallet funds authorizations only once it has an ACTIVE delegated key for the card', async () => {
    const q = await srv.newPlatform({ name: 'Card wallet source' });
    await walletSetup(q);
    const w = await walletWithSession(q.api);
    await fund(q.api, w.accountId, 5_000_000);
    const body = await createBody(q.api, w);
    await waitFor(async () => (await q.api.get(`/cards/${body.cardId}`)).body.state === 'ACTIVE');
    const usdb = { amount: 1_000_000, currency: { code: 'USDB' }, merchant: MERCHANT };
    await declined(q.api, body.cardId, 'authorization', usdb, 'INSUFFICIENT_FUNDS');
    expect(await balances(q.api, w.customerId, w.accountId)).toEqual({ available: 5_000_000, pending: 0 });
    await activeKey(q.api, body, w.session.key);
    const ok = await simulate(q.api, body.cardId, 'authorization', usdb);
    expect(ok.headers.get('corridor-card-decision')).toBe('APPROVED');
    expect(await balances(q.api, w.customerId, w.accountId)).toEqual({ available: 4_000_000, pending: 1_000_000 });
    await ledgerOk(srv, q.id);
  });
});

describe('concurrency', () => {
  it('parallel authorizations on one card never overdraw: exactly what the balance covers is approved', async () => {
    const { h, card } = await activeCard(p.api, 5000);
    const results = await Promise.all(Array.from({ length: 9 }, () => simulate(p.api, card.id, 'authorization', auth(1000))));
    expect(results.map((r) => r.status)).toEqual(Array(9).fill(202));
    const decisions = results.map((r) => r.headers.get('corridor-card-decision'));
    expect(decisions.filter((d) => d === 'APPROVED')).toHaveLength(5);
    expect(await balances(p.api, h.customerId, h.accountId)).toEqual({ available: 0, pending: 5000 });
    await ledgerOk(srv, p.id);
  });

  it('parallel authorizations on two cards of one account never overdraw either', async () => {
    const h = await newHolder(p.api);
    await fund(p.api, h.accountId, 4000);
    const cards = [await issue(p.api, h), await issue(p.api, h)];
    for (const c of cards) await waitFor(async () => (await p.api.get(`/cards/${c.id}`)).body.state === 'ACTIVE');
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        simulate(p.api, cards[i % 2]!.id, i % 3 === 0 ? 'financial_authorization' : 'authorization', auth(500)),
      ),
    );
    expect(results.filter((r) => r.headers.get('corridor-card-decision') === 'APPROVED')).toHaveLength(8);
    const after = await balances(p.api, h.customerId, h.accountId);
    expect(after.available).toBe(0);
    expect(after.available + after.pending).toBeLessThanOrEqual(4000);
    await ledgerOk(srv, p.id);
  });
});
