/**
 * POST /quotes with a lookupId from GET /receiver/…: the quote uses the lookup it names (receiver,
 * sender, the payer data the receiver asked for) and refuses an unknown, expired, foreign or
 * mismatched one. A quote without lookupId is unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Res } from '../helpers/http.ts';
import { advance, balances, expectLedgerClean, tx } from '../helpers/payments.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { externalAccount, lookupAccount, lookupUma, SANDBOX, sender, type Sender } from './fixtures.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let alice: Sender;
let bob: Sender;
beforeAll(async () => {
  // A frozen clock (moved only by the sandbox clock): the lookup's estimate and the quote's rate come from one rate window.
  const now = Date.now();
  srv = await startServer({ deps: { clock: { nowMs: () => now } } });
  p = await srv.newPlatform({ name: 'Lookup quotes' });
  other = await srv.newPlatform({ name: 'Lookup quotes, other platform' });
  alice = await sender(p);
  bob = await sender(p);
});
afterAll(async () => srv.close());

const PAYER = { FULL_NAME: 'Jane Smith', BIRTH_DATE: '1990-01-15' };

function umaQuote(from: Sender, address: string, lookupId: string | undefined, extra: Record<string, unknown> = {}) {
  return {
    ...(lookupId !== undefined ? { lookupId } : {}),
    source: { sourceType: 'ACCOUNT', accountId: from.account },
    destination: { destinationType: 'UMA_ADDRESS', umaAddress: address },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 5_000,
    ...extra,
  };
}

function accountQuote(from: Sender, accountId: string, lookupId: string | undefined, extra: Record<string, unknown> = {}) {
  return {
    ...(lookupId !== undefined ? { lookupId } : {}),
    source: { sourceType: 'ACCOUNT', accountId: from.account },
    destination: { destinationType: 'ACCOUNT', accountId },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 2_500,
    ...extra,
  };
}

async function umaLookup(who: PlatformHandle, from: Sender, address: string): Promise<Res> {
  const res = await lookupUma(who, address, { customerId: from.customer.id });
  expect(res.status, res.text).toBe(200);
  return res;
}

function fieldsOf(res: Res): string[] {
  return (res.body.details?.errors ?? []).map((e: { field: string }) => e.field);
}

describe('a quote made with the lookupId of its receiver', () => {
  it('UMA: pays the looked-up receiver at the estimated rate, with the payer data it asked for', async () => {
    const address = `$success.eur@${SANDBOX}`;
    const lookup = await umaLookup(p, alice, address);
    const before = await balances(p, alice.account);
    const res = await p.api.post(
      '/quotes',
      umaQuote(alice, address, lookup.body.lookupId, { senderCustomerInfo: PAYER, immediatelyExecute: true }),
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.receivingCurrency.code).toBe('EUR');
    // Same 5-minute rate window: the estimate is the rate the quote got.
    expect(res.body.exchangeRate).toBe(lookup.body.supportedCurrencies[0].estimatedExchangeRate);
    await advance(p, 1);
    expect((await tx(p.api, res.body.transactionId)).status).toBe('COMPLETED');
    expect((await balances(p, alice.account)).balance).toBe(before.balance - 5_000);
    await expectLedgerClean(srv, p.id);
  });

  it('external account: the lookup of the account pays it', async () => {
    const account = await externalAccount(p, alice.customer.id);
    const lookup = await lookupAccount(p, account, { customerId: alice.customer.id });
    expect(lookup.status, lookup.text).toBe(200);
    const res = await p.api.post('/quotes', accountQuote(alice, account, lookup.body.lookupId));
    expect(res.status, res.text).toBe(201);
    const executed = await p.api.post(`/quotes/${res.body.id}/execute`);
    expect(executed.status, executed.text).toBe(200);
    await advance(p, 1);
    expect((await tx(p.api, res.body.transactionId)).status).toBe('COMPLETED');
    await expectLedgerClean(srv, p.id);
  });

  it('a lookup made by senderUmaAddress serves that customer’s quotes, several while it lasts', async () => {
    const address = `$success.usd@${SANDBOX}`;
    const lookup = await lookupUma(p, address, { senderUmaAddress: alice.customer.umaAddress });
    expect(lookup.status, lookup.text).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await p.api.post('/quotes', umaQuote(alice, address, lookup.body.lookupId, { senderCustomerInfo: PAYER }));
      expect(res.status, res.text).toBe(201);
    }
    // Still usable just before it expires (15 minutes).
    await advance(p, 14 * 60);
    const late = await p.api.post('/quotes', umaQuote(alice, address, lookup.body.lookupId, { senderCustomerInfo: PAYER }));
    expect(late.status, late.text).toBe(201);
  });

  it('a quote without lookupId works as before', async () => {
    const res = await p.api.post('/quotes', umaQuote(alice, `$success.usd@${SANDBOX}`, undefined));
    expect(res.status, res.text).toBe(201);
  });
});

describe('a lookupId the quote refuses', () => {
  it('404 LOOKUP_REQUEST_NOT_FOUND for an unknown id, whatever its shape', async () => {
    for (const id of ['Lookup:019542f5-b3e7-7d02-8000-000000000009', 'LookupRequest:019542f5-b3e7-1d02-0000-000000000009', 'x']) {
      const res = expectError(await p.api.post('/quotes', umaQuote(alice, `$success.usd@${SANDBOX}`, id)), 404, 'LOOKUP_REQUEST_NOT_FOUND');
      expect(res.body.details).toEqual({ lookupId: id });
    }
  });

  it("404 for another platform's lookup, answered exactly like an unknown one", async () => {
    const foreignSender = await sender(other, 0);
    const foreign = await umaLookup(other, foreignSender, `$success.usd@${SANDBOX}`);
    const res = expectError(
      await p.api.post('/quotes', umaQuote(alice, `$success.usd@${SANDBOX}`, foreign.body.lookupId, { senderCustomerInfo: PAYER })),
      404,
      'LOOKUP_REQUEST_NOT_FOUND',
    );
    expect(res.body.details).toEqual({ lookupId: foreign.body.lookupId });
    expect(res.body.message).not.toContain('expired');
  });

  it('404 once it has expired (15 minutes on the platform clock), nothing held', async () => {
    const q = await srv.newPlatform({ name: 'Lookup expiry' });
    const carol = await sender(q);
    const address = `$success.usd@${SANDBOX}`;
    const lookup = await umaLookup(q, carol, address);
    await advance(q, 15 * 60);
    const res = expectError(
      await q.api.post('/quotes', umaQuote(carol, address, lookup.body.lookupId, { senderCustomerInfo: PAYER })),
      404,
      'LOOKUP_REQUEST_NOT_FOUND',
    );
    expect(res.body.message).toContain('expired');
    expect(res.body.details.expiredAt).toEqual(expect.any(String));
    expect(await balances(q, carol.account)).toEqual({ balance: 1_000_000, total: 1_000_000 });
    // A new lookup works again (and prunes the expired one).
    const again = await umaLookup(q, carol, address);
    expect((await q.api.post('/quotes', umaQuote(carol, address, again.body.lookupId, { senderCustomerInfo: PAYER }))).status).toBe(201);
    const left = await srv.app.ctx.db.selectFrom('lookups').select('id').where('platform_id', '=', q.id).execute();
    expect(left.map((r) => r.id)).toEqual([again.body.lookupId]);
  });

  it('400 naming lookupId when it was made for another receiver', async () => {
    const eur = await umaLookup(p, alice, `$success.eur@${SANDBOX}`);
    const res = expectError(
      await p.api.post('/quotes', umaQuote(alice, `$success.usd@${SANDBOX}`, eur.body.lookupId, { senderCustomerInfo: PAYER })),
      400,
      'INVALID_INPUT',
    );
    expect(fieldsOf(res)).toEqual(['lookupId']);
    // A UMA lookup for an account, an account lookup for another account or for a UMA address.
    const account = await externalAccount(p, alice.customer.id);
    const otherAccount = await externalAccount(p, alice.customer.id);
    expectError(await p.api.post('/quotes', accountQuote(alice, account, eur.body.lookupId)), 400, 'INVALID_INPUT');
    const byAccount = await lookupAccount(p, account, { customerId: alice.customer.id });
    expectError(await p.api.post('/quotes', accountQuote(alice, otherAccount, byAccount.body.lookupId)), 400, 'INVALID_INPUT');
    expectError(
      await p.api.post('/quotes', umaQuote(alice, `$success.usd@${SANDBOX}`, byAccount.body.lookupId, { senderCustomerInfo: PAYER })),
      400,
      'INVALID_INPUT',
    );
  });

  it('400 naming lookupId when it was made for another sender', async () => {
    const address = `$success.usd@${SANDBOX}`;
    const forBob = await umaLookup(p, bob, address);
    const res = expectError(
      await p.api.post('/quotes', umaQuote(alice, address, forBob.body.lookupId, { senderCustomerInfo: PAYER })),
      400,
      'INVALID_INPUT',
    );
    expect(fieldsOf(res)).toEqual(['lookupId']);
    // The platform's own account (no customer) is not the customer the lookup was made for.
    const platformAccount = (await p.api.get('/platform/internal-accounts', { query: { currency: 'USD' } })).body.data[0].id;
    const fromPlatform = {
      ...umaQuote(alice, address, forBob.body.lookupId, { senderCustomerInfo: PAYER }),
      source: { sourceType: 'ACCOUNT', accountId: platformAccount },
    };
    expectError(await p.api.post('/quotes', fromPlatform), 400, 'INVALID_INPUT');
  });

  it('400 MISSING_MANDATORY_USER_INFO naming each payer field the receiver asked for and did not get', async () => {
    const address = `$success.mxn@${SANDBOX}`;
    const lookup = await umaLookup(p, alice, address);
    const none = expectError(
      await p.api.post('/quotes', umaQuote(alice, address, lookup.body.lookupId)),
      400,
      'MISSING_MANDATORY_USER_INFO',
    );
    expect(fieldsOf(none)).toEqual(['senderCustomerInfo.FULL_NAME', 'senderCustomerInfo.BIRTH_DATE']);
    const blank = expectError(
      await p.api.post(
        '/quotes',
        umaQuote(alice, address, lookup.body.lookupId, { senderCustomerInfo: { FULL_NAME: '  ', BIRTH_DATE: '1990-01-15' } }),
      ),
      400,
      'MISSING_MANDATORY_USER_INFO',
    );
    expect(fieldsOf(blank)).toEqual(['senderCustomerInfo.FULL_NAME']);
    const badDate = expectError(
      await p.api.post(
        '/quotes',
        umaQuote(alice, address, lookup.body.lookupId, { senderCustomerInfo: { ...PAYER, BIRTH_DATE: '1990-02-30' } }),
      ),
      400,
      'INVALID_INPUT',
    );
    expect(fieldsOf(badDate)).toEqual(['senderCustomerInfo.BIRTH_DATE']);
  });

  it('refused quotes hold nothing and leave no quote behind', async () => {
    const q = await srv.newPlatform({ name: 'Lookup refusals' });
    const dave = await sender(q);
    const lookup = await umaLookup(q, dave, `$success.usd@${SANDBOX}`);
    expectError(
      await q.api.post('/quotes', umaQuote(dave, `$success.usd@${SANDBOX}`, lookup.body.lookupId, { immediatelyExecute: true })),
      400,
      'MISSING_MANDATORY_USER_INFO',
    );
    expect(await balances(q, dave.account)).toEqual({ balance: 1_000_000, total: 1_000_000 });
    const quotes = await srv.app.ctx.db.selectFrom('quotes').select('id').where('platform_id', '=', q.id).execute();
    expect(quotes).toEqual([]);
    await expectLedgerClean(srv, q.id);
  });
});
