/**
 * Cards over HTTP: issue (provisioning on the job runner, the sandbox's issuance and funding-source
 * suffixes), read, list with every filter, the PATCH state machine with its 409s, funding sources
 * and the limit, the card webhooks (signed), input errors naming their field, another platform's
 * ids, permissions, PRODUCTION platforms (501), and the live CLI's exact requests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { expectError, type Res } from '../helpers/http.ts';
import { advance } from '../helpers/payments.ts';
import { uniqueId } from '../helpers/random.ts';
import { type Receiver, waitFor } from '../helpers/receiver.ts';
import type { PlatformHandle, TestServer } from '../helpers/server.ts';
import {
  accountIn,
  activeCard,
  cardHooks,
  cardIn,
  cardServer,
  type ControlledIds,
  issue,
  newHolder,
  receiverFor,
  tokenWith,
  type Wire,
} from './helpers.ts';

let srv: TestServer;
let ids: ControlledIds;
let p: PlatformHandle;
let rec: Receiver;
let publicKey: string;

beforeAll(async () => {
  ({ srv, ids } = await cardServer());
  p = await srv.newPlatform({ name: 'Cards' });
  rec = await receiverFor(p);
  publicKey = (await p.api.get('/webhooks/signing-key')).body.publicKey;
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

const CARD_KEYS = ['cardholderId', 'createdAt', 'currency', 'form', 'fundingSources', 'id', 'issuerRef', 'maxSpendPerTransaction'];
const ACTIVE_KEYS = [...CARD_KEYS, 'brand', 'expMonth', 'expYear', 'last4'];
const keysOf = (card: Wire) => Object.keys(card).sort();
const withBase = (extra: string[]) => [...extra, 'platformCardId', 'processorRef', 'state', 'stateReason', 'updatedAt'].sort();

function expectField(res: Res, status: number, code: string, field: string): void {
  expectError(res, status, code);
  expect(
    (res.body.details?.errors ?? []).map((e: { field: string }) => e.field),
    res.text,
  ).toContain(field);
}

/** Waits for the card webhooks of `cardId` until there are `n`; checks each signature. */
async function hooks(cardId: string, n: number): Promise<Wire[]> {
  const got = await waitFor(() => {
    const r = cardHooks(rec, cardId);
    return r.length >= n ? r : undefined;
  });
  for (const h of got) expect(verifyWebhook(h.raw, h.headers['x-grid-signature'] as string, publicKey)).toBe(true);
  return got.map((h) => h.body);
}

describe('issuing a card', () => {
  it('answers 201 PROCESSING; the job runner activates it (number details filled) and CARD.STATE_CHANGE follows', async () => {
    const h = await newHolder(p.api);
    const created = await issue(p.api, h, { maxSpendPerTransaction: 5000 });
    expect(keysOf(created)).toEqual(withBase(CARD_KEYS));
    expect(created).toMatchObject({
      id: expect.stringMatching(/^Card:[0-9a-f-]{36}$/),
      cardholderId: h.customerId,
      state: 'PROCESSING',
      stateReason: null,
      form: 'VIRTUAL',
      fundingSources: [h.accountId],
      maxSpendPerTransaction: 5000,
      currency: 'USD',
      processorRef: expect.stringMatching(/^card_[0-9a-f]{8}$/),
    });
    const active = await cardIn(p.api, created.id, 'ACTIVE');
    expect(keysOf(active)).toEqual(withBase(ACTIVE_KEYS));
    expect(active.last4).toMatch(/^\d{4}$/);
    expect(['VISA', 'MASTERCARD']).toContain(active.brand);
    expect(active.expMonth).toBeGreaterThanOrEqual(1);
    expect(active.expYear).toBe(new Date(active.updatedAt).getUTCFullYear() + 3);
    const [event] = await hooks(created.id, 1);
    expect(event.type).toBe('CARD.STATE_CHANGE');
    expect(event.data).toEqual(active);
    // Nothing about the number but last4 anywhere in the card (no run of 13+ digits: uuid groups have at most 12).
    expect(JSON.stringify(active)).not.toMatch(/\d{13,}/);
  });

  it('platformCardId suffixes: 001 stays PROCESSING, 002 is rejected (CLOSED, ISSUER_REJECTED), 005 activates 30 s later', async () => {
    const q = await srv.newPlatform({ name: 'Cards issuance' });
    const h = await newHolder(q.api);
    const never = await issue(q.api, h, { platformCardId: `${uniqueId('pc')}-001` });
    const rejected = await issue(q.api, h, { platformCardId: `${uniqueId('pc')}-002` });
    const delayed = await issue(q.api, h, { platformCardId: `${uniqueId('pc')}-005` });
    const closed = await cardIn(q.api, rejected.id, 'CLOSED');
    expect(closed).toMatchObject({ stateReason: 'ISSUER_REJECTED' });
    expect(closed.last4).toBeUndefined();
    expect((await q.api.get(`/cards/${delayed.id}`)).body.state).toBe('PROCESSING');
    await advance(q, 29);
    expect((await q.api.get(`/cards/${delayed.id}`)).body.state).toBe('PROCESSING');
    await advance(q, 1);
    expect((await q.api.get(`/cards/${delayed.id}`)).body.state).toBe('ACTIVE');
    await advance(q, 3600);
    expect((await q.api.get(`/cards/${never.id}`)).body).toMatchObject({ state: 'PROCESSING', stateReason: null });
  });

  it('without platformCardId the cardholder id’s suffix decides, and a platformCardId is generated', async () => {
    const q = await srv.newPlatform({ name: 'Cards generated ids' });
    ids.force('Customer', '002');
    const h = await newHolder(q.api);
    expect(h.customerId.endsWith('002')).toBe(true);
    const res = await q.api.post('/cards', { cardholderId: h.customerId, form: 'VIRTUAL', fundingSources: [h.accountId] });
    expect(res.status, res.text).toBe(201);
    expect(res.body.platformCardId).toBe(res.body.id.slice('Card:'.length));
    expect((await cardIn(q.api, res.body.id, 'CLOSED')).stateReason).toBe('ISSUER_REJECTED');
  });

  it('refuses a cardholder that is not KYC-approved: 400 CARDHOLDER_KYC_NOT_APPROVED (individual PENDING, business UNVERIFIED)', async () => {
    const pending = await newHolder(p.api, { fullName: 'Pending Holder 001' });
    const res = await p.api.post('/cards', { cardholderId: pending.customerId, form: 'VIRTUAL', fundingSources: [pending.accountId] });
    expectField(res, 400, 'CARDHOLDER_KYC_NOT_APPROVED', 'cardholderId');
    const biz = await p.api.post('/customers', {
      customerType: 'BUSINESS',
      platformCustomerId: uniqueId('biz'),
      businessInfo: { legalName: 'Acme', country: 'US', registrationNumber: 'R-1', taxId: '47-1234567', incorporatedOn: '2018-03-14' },
      address: { line1: '1 Market Street', city: 'Seattle', postalCode: '98101', country: 'US' },
    });
    expect(biz.status, biz.text).toBe(201);
    const bizAccount = await accountIn(p.api, biz.body.id, 'USD');
    expectError(
      await p.api.post('/cards', { cardholderId: biz.body.id, form: 'VIRTUAL', fundingSources: [bizAccount] }),
      400,
      'CARDHOLDER_KYC_NOT_APPROVED',
    );
  });

  it('refuses ineligible funding sources with 400 FUNDING_SOURCE_INELIGIBLE naming each one', async () => {
    const h = await newHolder(p.api);
    const other = await newHolder(p.api);
    const eur = await srv.newPlatform({ name: 'Cards EUR', currency: 'EUR' });
    const eurHolder = await newHolder(eur.api, {}, 'EUR');
    const eurAccount = eurHolder.accountId;
    ids.force('InternalAccount', '002');
    const magic2 = await newHolder(p.api);
    ids.force('InternalAccount', '003');
    const magic3 = await newHolder(p.api);
    const body = (cardholderId: string, fundingSources: string[]) => ({ cardholderId, form: 'VIRTUAL', fundingSources });
    // Another customer's account, an unknown one, and the same id from another platform.
    expectField(await p.api.post('/cards', body(h.customerId, [other.accountId])), 400, 'FUNDING_SOURCE_INELIGIBLE', 'fundingSources.0');
    const unknown = await p.api.post('/cards', body(h.customerId, [h.accountId, 'InternalAccount:00000000-0000-7000-8000-000000000000']));
    expectField(unknown, 400, 'FUNDING_SOURCE_INELIGIBLE', 'fundingSources.1');
    expect(unknown.body.details.errors).toHaveLength(1);
    // A currency cards are not funded in.
    const eurRes = await eur.api.post('/cards', body(eurHolder.customerId, [eurAccount]));
    expectField(eurRes, 400, 'FUNDING_SOURCE_INELIGIBLE', 'fundingSources.0');
    expect(eurRes.body.details.errors[0].message).toContain('USD or USDB');
    // The sandbox's funding-source suffixes.
    expect(magic2.accountId.endsWith('002') && magic3.accountId.endsWith('003')).toBe(true);
    expectField(
      await p.api.post('/cards', body(magic2.customerId, [magic2.accountId])),
      400,
      'FUNDING_SOURCE_INELIGIBLE',
      'fundingSources.0',
    );
    expectField(
      await p.api.post('/cards', body(magic3.customerId, [magic3.accountId])),
      400,
      'FUNDING_SOURCE_INELIGIBLE',
      'fundingSources.0',
    );
    expectField(
      await p.api.post('/cards', { cardholderId: h.customerId, form: 'VIRTUAL', fundingSources: [h.accountId, h.accountId] }),
      400,
      'INVALID_INPUT',
      'fundingSources.1',
    );
    expect((await p.api.get('/cards', { query: { cardholderId: h.customerId } })).body.totalCount).toBe(0);
  });

  it('mixes of currencies are refused: every source is in the card’s one currency', async () => {
    const q = await srv.newPlatform({ name: 'Cards two currencies' });
    const cfg = await q.api.patch('/config', {
      supportedCurrencies: ['USD', 'USDB'].map((currencyCode) => ({
        currencyCode,
        minAmount: 1,
        maxAmount: 100_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
      })),
    });
    expect(cfg.status, cfg.text).toBe(200);
    const h = await newHolder(q.api);
    const usdb = await accountIn(q.api, h.customerId, 'USDB');
    const mixed = await q.api.post('/cards', { cardholderId: h.customerId, form: 'VIRTUAL', fundingSources: [h.accountId, usdb] });
    expectField(mixed, 400, 'FUNDING_SOURCE_INELIGIBLE', 'fundingSources.1');
    // A USDB card (the embedded wallet) is fine, and its currency is USDB.
    const card = await issue(q.api, { ...h, accountId: usdb });
    expect(card.currency).toBe('USDB');
    const moved = await q.api.patch(`/cards/${card.id}`, { fundingSources: [h.accountId] });
    expectField(moved, 400, 'FUNDING_SOURCE_INELIGIBLE', 'fundingSources.0');
  });

  it('bad input is 400 INVALID_INPUT naming the field; a taken platformCardId is 409', async () => {
    const h = await newHolder(p.api);
    const base = { cardholderId: h.customerId, form: 'VIRTUAL', fundingSources: [h.accountId] };
    const cases: [Record<string, unknown>, string][] = [
      [{ ...base, form: 'PHYSICAL' }, 'form'],
      [{ ...base, fundingSources: [] }, 'fundingSources'],
      [{ ...base, maxSpendPerTransaction: 0 }, 'maxSpendPerTransaction'],
      [{ ...base, maxSpendPerTransaction: 1.5 }, 'maxSpendPerTransaction'],
      [{ ...base, threeDSecurePassword: 'AbCd1234EfGh5678' }, 'threeDSecurePassword'],
      [{ ...base, colour: 'blue' }, 'colour'],
      [{ form: 'VIRTUAL', fundingSources: [h.accountId] }, 'cardholderId'],
      [{ ...base, fundingSources: 'InternalAccount:x' }, 'fundingSources'],
    ];
    for (const [body, field] of cases) expectField(await p.api.post('/cards', body), 400, 'INVALID_INPUT', field);
    const first = await issue(p.api, h);
    const again = await p.api.post('/cards', { ...base, platformCardId: first.platformCardId });
    expectField(again, 409, 'CONFLICT', 'platformCardId');
    expectError(
      await p.api.post('/cards', { ...base, cardholderId: 'Customer:00000000-0000-7000-8000-000000000000' }),
      404,
      'USER_NOT_FOUND',
    );
  });
});

describe('reading and listing cards', () => {
  it('lists with every filter, both orders and a cursor walk; counts match', async () => {
    const q = await srv.newPlatform({ name: 'Cards list' });
    const a = await newHolder(q.api);
    const b = await newHolder(q.api);
    const a1 = await issue(q.api, a);
    const a2 = await issue(q.api, a);
    const b1 = await issue(q.api, b, { platformCardId: `${uniqueId('pc')}-001` });
    await cardIn(q.api, a1.id, 'ACTIVE');
    await cardIn(q.api, a2.id, 'ACTIVE');
    const list = async (query: Record<string, string | number>) => {
      const res = await q.api.get('/cards', { query });
      expect(res.status, res.text).toBe(200);
      return res.body;
    };
    const all = await list({});
    expect(all.data.map((c: Wire) => c.id)).toEqual([b1.id, a2.id, a1.id]);
    expect(all).toMatchObject({ hasMore: false, totalCount: 3 });
    expect((await list({ sortOrder: 'asc' })).data.map((c: Wire) => c.id)).toEqual([a1.id, a2.id, b1.id]);
    expect((await list({ cardholderId: a.customerId })).data.map((c: Wire) => c.id)).toEqual([a2.id, a1.id]);
    expect((await list({ accountId: b.accountId })).data.map((c: Wire) => c.id)).toEqual([b1.id]);
    expect((await list({ platformCardId: a2.platformCardId })).data.map((c: Wire) => c.id)).toEqual([a2.id]);
    expect((await list({ state: 'PROCESSING' })).data.map((c: Wire) => c.id)).toEqual([b1.id]);
    expect((await list({ state: 'ACTIVE', cardholderId: b.customerId })).totalCount).toBe(0);
    const walked: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 5; i++) {
      const page = await list({ limit: 1, ...(cursor ? { cursor } : {}) });
      walked.push(...page.data.map((c: Wire) => c.id));
      expect(page.totalCount).toBe(3);
      if (!page.hasMore) break;
      cursor = page.nextCursor;
    }
    expect(walked).toEqual([b1.id, a2.id, a1.id]);
    expect((await q.api.get(`/cards/${a1.id}`)).body).toEqual(all.data[2]);
    expectField(await q.api.get('/cards', { query: { state: 'LOST' } }), 400, 'INVALID_INPUT', 'state');
    expectField(await q.api.get('/cards', { query: { limit: 101 } }), 400, 'INVALID_INPUT', 'limit');
    expectField(await q.api.get('/cards', { query: { cursor: 'nonsense' } }), 400, 'INVALID_INPUT', 'cursor');
    // Another platform sees none of them.
    expect((await p.api.get('/cards', { query: { cardholderId: a.customerId } })).body.totalCount).toBe(0);
    expectError(await p.api.get(`/cards/${a1.id}`), 404, 'REFERENCE_NOT_FOUND');
  });
});

describe('PATCH /cards/{id}', () => {
  it('ACTIVE → FROZEN → ACTIVE → CLOSED, each with CARD.STATE_CHANGE; a CLOSED card refuses everything with the right 409', async () => {
    const { card } = await activeCard(p.api);
    await hooks(card.id, 1);
    const patch = (body: unknown) => p.api.patch(`/cards/${card.id}`, body);
    const frozen = await patch({ state: 'FROZEN' });
    expect(frozen.status, frozen.text).toBe(200);
    expect(frozen.body).toMatchObject({ state: 'FROZEN', stateReason: null });
    // Asking for the state it is in changes nothing and sends nothing.
    expect((await patch({ state: 'FROZEN' })).body.updatedAt).toBe(frozen.body.updatedAt);
    expect((await patch({ state: 'ACTIVE' })).body.state).toBe('ACTIVE');
    const closed = await patch({ state: 'CLOSED' });
    expect(closed.body).toMatchObject({ state: 'CLOSED', stateReason: 'CLOSED_BY_PLATFORM', fundingSources: card.fundingSources });
    const events = await hooks(card.id, 4);
    expect(events.map((e) => [e.type, e.data.state])).toEqual([
      ['CARD.STATE_CHANGE', 'ACTIVE'],
      ['CARD.STATE_CHANGE', 'FROZEN'],
      ['CARD.STATE_CHANGE', 'ACTIVE'],
      ['CARD.STATE_CHANGE', 'CLOSED'],
    ]);
    expect(events[3].data).toEqual(closed.body);
    expectError(await patch({ state: 'CLOSED' }), 409, 'CARD_ALREADY_CLOSED');
    expectError(await patch({ state: 'ACTIVE' }), 409, 'INVALID_STATE_TRANSITION');
    expectError(await patch({ state: 'FROZEN', fundingSources: card.fundingSources }), 409, 'INVALID_STATE_TRANSITION');
    expectError(await patch({ fundingSources: card.fundingSources }), 409, 'CARD_NOT_MUTABLE');
    expectError(await patch({ maxSpendPerTransaction: 100 }), 409, 'CARD_NOT_MUTABLE');
    expect((await p.api.get(`/cards/${card.id}`)).body).toEqual(closed.body);
    expect(cardHooks(rec, card.id)).toHaveLength(4);
  });

  it('a PROCESSING card takes no state (409 INVALID_STATE_TRANSITION) but takes a limit', async () => {
    const h = await newHolder(p.api);
    const card = await issue(p.api, h, { platformCardId: `${uniqueId('pc')}-001` });
    for (const state of ['ACTIVE', 'FROZEN', 'CLOSED'])
      expectError(await p.api.patch(`/cards/${card.id}`, { state }), 409, 'INVALID_STATE_TRANSITION');
    const limited = await p.api.patch(`/cards/${card.id}`, { maxSpendPerTransaction: 2500 });
    expect(limited.body).toMatchObject({ state: 'PROCESSING', maxSpendPerTransaction: 2500 });
  });

  it('fundingSources is a full replacement (CARD.FUNDING_SOURCE_CHANGE); with a state change both events go out', async () => {
    const { card } = await activeCard(p.api);
    await hooks(card.id, 1);
    const replaced = await p.api.patch(`/cards/${card.id}`, { fundingSources: card.fundingSources });
    expect(replaced.status, replaced.text).toBe(200);
    const both = await p.api.patch(`/cards/${card.id}`, { state: 'FROZEN', fundingSources: card.fundingSources });
    expect(both.body.state).toBe('FROZEN');
    const events = await hooks(card.id, 4);
    expect(events.slice(1).map((e) => e.type)).toEqual(['CARD.FUNDING_SOURCE_CHANGE', 'CARD.STATE_CHANGE', 'CARD.FUNDING_SOURCE_CHANGE']);
    expect(events[3].data).toEqual(both.body);
  });

  it('maxSpendPerTransaction: set, keep when omitted, clear with null', async () => {
    const { card } = await activeCard(p.api);
    expect((await p.api.patch(`/cards/${card.id}`, { maxSpendPerTransaction: 900 })).body.maxSpendPerTransaction).toBe(900);
    expect((await p.api.patch(`/cards/${card.id}`, { state: 'ACTIVE' })).body.maxSpendPerTransaction).toBe(900);
    expect((await p.api.patch(`/cards/${card.id}`, { maxSpendPerTransaction: null })).body.maxSpendPerTransaction).toBeNull();
  });

  it('bad input: nothing to change, CLOSED with other fields, unknown fields, an empty list (400 naming the field)', async () => {
    const { card } = await activeCard(p.api);
    const patch = (body: unknown) => p.api.patch(`/cards/${card.id}`, body);
    expectField(await patch({}), 400, 'INVALID_INPUT', 'state');
    expectField(await patch({ state: 'CLOSED', fundingSources: card.fundingSources }), 400, 'INVALID_INPUT', 'fundingSources');
    expectField(await patch({ state: 'CLOSED', maxSpendPerTransaction: null }), 400, 'INVALID_INPUT', 'maxSpendPerTransaction');
    expectField(await patch({ state: 'LOST' }), 400, 'INVALID_INPUT', 'state');
    expectField(await patch({ fundingSources: [] }), 400, 'INVALID_INPUT', 'fundingSources');
    expectField(await patch({ nickname: 'x' }), 400, 'INVALID_INPUT', 'nickname');
    expectField(await patch({ maxSpendPerTransaction: -1 }), 400, 'INVALID_INPUT', 'maxSpendPerTransaction');
    expect((await p.api.get(`/cards/${card.id}`)).body.state).toBe('ACTIVE');
  });
});

describe('access', () => {
  it('401 without credentials; 403 for writes without MANAGE (VIEW, TRANSACT); VIEW reads', async () => {
    const { h, card } = await activeCard(p.api);
    expectError(await srv.anon.get('/cards'), 401, 'UNAUTHORIZED');
    expectError(await srv.anon.post('/cards', {}), 401, 'UNAUTHORIZED');
    const view = await tokenWith(p, ['VIEW']);
    const transact = await tokenWith(p, ['TRANSACT']);
    expect((await view.get(`/cards/${card.id}`)).status).toBe(200);
    expect((await view.get('/cards')).status).toBe(200);
    for (const api of [view, transact]) {
      expectError(
        await api.post('/cards', { cardholderId: h.customerId, form: 'VIRTUAL', fundingSources: [h.accountId] }),
        403,
        'FORBIDDEN',
      );
      expectError(await api.patch(`/cards/${card.id}`, { state: 'FROZEN' }), 403, 'FORBIDDEN');
      expectError(await api.post(`/cards/${card.id}/reveal`), 403, 'FORBIDDEN');
    }
    expectError(await view.post(`/sandbox/cards/${card.id}/simulate/balance_inquiry`, { merchant: { descriptor: 'X' } }), 403, 'FORBIDDEN');
  });

  it('another platform’s card is 404 everywhere, like a card that exists nowhere', async () => {
    const { card } = await activeCard(p.api);
    const q = await srv.newPlatform({ name: 'Cards stranger' });
    for (const id of [card.id, 'Card:00000000-0000-7000-8000-000000000000']) {
      expectError(await q.api.get(`/cards/${id}`), 404, 'REFERENCE_NOT_FOUND');
      expectError(await q.api.patch(`/cards/${id}`, { state: 'FROZEN' }), 404, 'REFERENCE_NOT_FOUND');
      expectError(await q.api.post(`/cards/${id}/reveal`), 404, 'REFERENCE_NOT_FOUND');
      expectError(
        await q.api.post(`/sandbox/cards/${id}/simulate/authorization`, {
          amount: 1,
          currency: { code: 'USD' },
          merchant: { descriptor: 'X' },
        }),
        404,
        'REFERENCE_NOT_FOUND',
      );
    }
    expect((await p.api.get(`/cards/${card.id}`)).body.state).toBe('ACTIVE');
  });

  it('a PRODUCTION platform: every card operation is 501 NOT_IMPLEMENTED (before its input is read), simulations 403', async () => {
    const prod = await srv.newPlatform({ name: 'Cards production', environment: 'PRODUCTION' });
    const h = await newHolder(prod.api);
    const id = 'Card:00000000-0000-7000-8000-000000000000';
    expectError(await prod.api.get('/cards'), 501, 'NOT_IMPLEMENTED');
    expectError(await prod.api.get('/cards', { query: { state: 'LOST' } }), 501, 'NOT_IMPLEMENTED');
    expectError(
      await prod.api.post('/cards', { cardholderId: h.customerId, form: 'VIRTUAL', fundingSources: [h.accountId] }),
      501,
      'NOT_IMPLEMENTED',
    );
    expectError(await prod.api.post('/cards', { bogus: true }), 501, 'NOT_IMPLEMENTED');
    expectError(await prod.api.get(`/cards/${id}`), 501, 'NOT_IMPLEMENTED');
    expectError(await prod.api.patch(`/cards/${id}`, { state: 'FROZEN' }), 501, 'NOT_IMPLEMENTED');
    expectError(await prod.api.post(`/cards/${id}/reveal`), 501, 'NOT_IMPLEMENTED');
    for (const path of ['authorization', 'clearing', 'return', 'balance_inquiry', 'return_reversal']) {
      expectError(await prod.api.post(`/sandbox/cards/${id}/simulate/${path}`, {}), 403, 'FORBIDDEN');
    }
  });
});

describe('the live CLI', () => {
  it('sends exactly these requests for cards list / get / create / update / reveal', async () => {
    const h = await newHolder(p.api);
    // `cards create`: form defaults to VIRTUAL; no platformCardId, no limit.
    const created = await p.api.post('/cards', { cardholderId: h.customerId, form: 'VIRTUAL', fundingSources: [h.accountId] });
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    // `cards get`.
    const active = await cardIn(p.api, id, 'ACTIVE');
    expect(active.fundingSources).toEqual([h.accountId]);
    // `cards list`: limit is always sent (20 by default), with whichever filters were given.
    const listed = await p.api.get('/cards', { query: { limit: 20 } });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((c: Wire) => c.id)).toContain(id);
    const filtered = await p.api.get('/cards', {
      query: {
        cardholderId: h.customerId,
        accountId: h.accountId,
        platformCardId: created.body.platformCardId,
        state: 'ACTIVE',
        limit: 20,
        sortOrder: 'asc',
      },
    });
    expect(filtered.status, filtered.text).toBe(200);
    expect(filtered.body.data).toEqual([active]);
    // `cards update`: any of state, fundingSources, maxSpendPerTransaction (a number or null).
    const set = await p.api.patch(`/cards/${id}`, { maxSpendPerTransaction: 1500 });
    expect(set.body.maxSpendPerTransaction).toBe(1500);
    const cleared = await p.api.patch(`/cards/${id}`, { maxSpendPerTransaction: null });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body.maxSpendPerTransaction).toBeNull();
    const updated = await p.api.patch(`/cards/${id}`, { state: 'FROZEN', fundingSources: [h.accountId], maxSpendPerTransaction: null });
    expect(updated.body.state).toBe('FROZEN');
    // `cards reveal`: a POST without a body.
    const revealed = await p.api.post(`/cards/${id}/reveal`);
    expect(revealed.status, revealed.text).toBe(200);
    expect(Object.keys(revealed.body).sort()).toEqual(['expiresAt', 'panEmbedUrl']);
  });
});
