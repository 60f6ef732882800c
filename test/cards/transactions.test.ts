/**
 * Card transactions in GET /transactions: merged with payments by their time-ordered ids (both
 * orders, cursor walks across both kinds, totals summed), the filters as they apply to card rows,
 * another platform's rows never shown; and the CardTransaction GET /transactions/{id} answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getTransactionWire } from '../../src/modules/payments/transactions.service.ts';
import { expectError } from '../helpers/http.ts';
import { fund as fundPlatform, platformExternal, platformUsdAccount } from '../helpers/payments.ts';
import type { PlatformHandle, TestServer } from '../helpers/server.ts';
import { activeCard, approved, cardServer, ledgerOk, simulate, type Wire } from './helpers.ts';

let srv: TestServer;
let p: PlatformHandle;
/** In creation order: payment, card, payment, card (credit), card (refunded). */
let made: Wire[];
let holder: { customerId: string; accountId: string };

beforeAll(async () => {
  ({ srv } = await cardServer());
  p = await srv.newPlatform({ name: 'Card transactions list' });
  const platformAccount = await platformUsdAccount(p);
  await fundPlatform(p, platformAccount, 10_000);
  const ext = await platformExternal(p, '001');
  const pay = async () => {
    const res = await p.api.post('/transfer-out', { source: { accountId: platformAccount }, destination: { accountId: ext }, amount: 100 });
    expect(res.status, res.text).toBe(201);
    return res.body;
  };
  const { h, card } = await activeCard(p.api, 5000);
  holder = h;
  made = [await pay()];
  made.push((await approved(p.api, card.id, 'authorization', 700)).tx);
  made.push(await pay());
  made.push((await approved(p.api, card.id, 'credit_authorization', 300)).tx);
  const refunded = (await approved(p.api, card.id, 'financial_authorization', 200)).tx;
  expect((await simulate(p.api, card.id, 'return', { cardTransactionId: refunded.id, amount: 200 })).status).toBe(202);
  made.push(refunded);
});
afterAll(async () => srv.close());

const ids = (list: Wire[]) => list.map((t) => t.id);

async function list(query: Record<string, string | number> = {}): Promise<Wire> {
  const res = await p.api.get('/transactions', { query });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function walk(query: Record<string, string | number>): Promise<{ ids: string[]; totals: number[] }> {
  const out: string[] = [];
  const totals: number[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 20; i++) {
    const page = await list({ ...query, limit: 1, ...(cursor ? { cursor } : {}) });
    out.push(...ids(page.data));
    totals.push(page.totalCount);
    if (!page.hasMore) return { ids: out, totals };
    cursor = page.nextCursor;
  }
  throw new Error('the walk did not end');
}

describe('GET /transactions with card transactions', () => {
  it('merges payments and card transactions newest first (or oldest first), and pages across both kinds', async () => {
    const all = await list();
    expect(ids(all.data)).toEqual(ids([...made].reverse()));
    expect(all.totalCount).toBe(5);
    expect(all.data.map((t: Wire) => t.type)).toEqual(['CARD', 'CARD', 'OUTGOING', 'CARD', 'OUTGOING']);
    expect(ids((await list({ sortOrder: 'asc' })).data)).toEqual(ids(made));
    const desc = await walk({});
    expect(desc.ids).toEqual(ids([...made].reverse()));
    expect(new Set(desc.totals)).toEqual(new Set([5]));
    expect((await walk({ sortOrder: 'asc' })).ids).toEqual(ids(made));
    const two = await list({ limit: 2 });
    expect(two).toMatchObject({ hasMore: true, totalCount: 5 });
    expect(ids((await list({ limit: 2, cursor: two.nextCursor })).data)).toEqual([made[2].id, made[1].id]);
  });

  it('filters: customer and account match card rows; type and reference exclude them; status, sender and receiver match their own', async () => {
    const [pay1, debit, pay2, credit, refunded] = made;
    expect(ids((await list({ customerId: holder.customerId })).data)).toEqual([refunded.id, credit.id, debit.id]);
    expect(ids((await list({ accountIdentifier: holder.accountId })).data)).toEqual([refunded.id, credit.id, debit.id]);
    expect(ids((await list({ senderAccountIdentifier: holder.accountId })).data)).toEqual([refunded.id, debit.id]);
    expect(ids((await list({ receiverAccountIdentifier: holder.accountId })).data)).toEqual([credit.id]);
    expect(ids((await list({ type: 'OUTGOING' })).data)).toEqual([pay2.id, pay1.id]);
    expect((await list({ type: 'INCOMING' })).totalCount).toBe(0);
    expect((await list({ status: 'REFUNDED' })).data.map((t: Wire) => t.id)).toEqual([refunded.id]);
    expect((await list({ reference: 'nothing-such' })).totalCount).toBe(0);
    expect(ids((await list({ startDate: debit.createdAt, endDate: pay2.createdAt })).data)).toEqual([pay2.id, debit.id]);
    expect((await list({ customerId: holder.customerId, accountIdentifier: 'InternalAccount:other' })).totalCount).toBe(0);
  });

  it('GET /transactions/{id}’s answer for a CardTransaction id is the listed transaction; another platform’s is 404', async () => {
    const [, debit] = made;
    const listed = (await list()).data.find((t: Wire) => t.id === debit.id);
    expect(await getTransactionWire(srv.app.ctx.db, p.id, debit.id)).toEqual(listed);
    const q = await srv.newPlatform({ name: 'Card transactions stranger' });
    await expect(getTransactionWire(srv.app.ctx.db, q.id, debit.id)).rejects.toMatchObject({ status: 404, code: 'TRANSACTION_NOT_FOUND' });
    await expect(getTransactionWire(srv.app.ctx.db, p.id, 'CardTransaction:00000000-0000-7000-8000-000000000000')).rejects.toMatchObject({
      status: 404,
    });
    // Payments are answered as before.
    expect((await getTransactionWire(srv.app.ctx.db, p.id, made[0].id)).type).toBe('OUTGOING');
    expect((await q.api.get('/transactions')).body.totalCount).toBe(0);
    expectError(await q.api.get(`/transactions/${debit.id}`), 404, 'TRANSACTION_NOT_FOUND');
    await ledgerOk(srv, p.id);
  });
});
