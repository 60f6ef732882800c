/**
 * The agent's own API over HTTP: each operation with and without its permission (403 FORBIDDEN),
 * the customer scope (another customer's transactions, accounts and quotes, the platform's own,
 * and quotes another agent or the platform created are all 404; no filter widens it), a paused
 * agent (reads work, nothing starts), idempotent transfers, and an embedded-wallet quote that
 * still needs the wallet signature. Money moves through the payment services: ledger clean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { waitFor } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { walletSetup } from '../helpers/wallet-auth.ts';
import { eurAccountInfo, expectLedgerClean, platformExternal, platformUsdAccount } from '../helpers/payments.ts';
import {
  balanceOf,
  customer,
  externalFor,
  installAgent,
  policy,
  transferOut,
  type AgentHandle,
  type CustomerSetup,
  type Wire,
} from './util.ts';

let srv: TestServer;
let p: PlatformHandle;
let a: CustomerSetup;
let b: CustomerSetup;
let full: AgentHandle;
let none: AgentHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  a = await customer(p);
  b = await customer(p);
  full = await installAgent(srv, p, a.customerId);
  none = await installAgent(srv, p, a.customerId, policy({ permissions: [] }));
});
afterAll(async () => srv.close());

const quoteBody = (source: string, dest: string, amount: number, extra: Record<string, unknown> = {}) => ({
  source: { sourceType: 'ACCOUNT', accountId: source },
  destination: { destinationType: 'ACCOUNT', accountId: dest },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: amount,
  ...extra,
});

describe('GET /agents/me', () => {
  it('needs no permission and shows the agent with its usage', async () => {
    const res = await none.api.get('/agents/me');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: none.id, customerId: a.customerId, isConnected: true, policy: { permissions: [] } });
  });
});

describe('transactions', () => {
  it("lists and reads only the customer's transactions, with VIEW_TRANSACTIONS", async () => {
    const mine = await p.api.post('/transfer-out', {
      source: { accountId: a.account },
      destination: { accountId: a.external },
      amount: 100,
    });
    const theirs = await p.api.post('/transfer-out', {
      source: { accountId: b.account },
      destination: { accountId: b.external },
      amount: 100,
    });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    const list = await full.api.get('/agents/me/transactions', { query: { limit: 100 } });
    expect(list.status, list.text).toBe(200);
    const ids = list.body.data.map((t: Wire) => t.id);
    expect(ids).toContain(mine.body.id);
    expect(ids).not.toContain(theirs.body.id);
    expect(list.body.data.every((t: Wire) => t.customerId === a.customerId)).toBe(true);
    // No customer filter is accepted, and the others cannot reach beyond the customer.
    expectError(await full.api.get('/agents/me/transactions', { query: { customerId: b.customerId } }), 400, 'INVALID_INPUT');
    expectError(
      await full.api.get('/agents/me/transactions', { query: { platformCustomerId: b.platformCustomerId } }),
      400,
      'INVALID_INPUT',
    );
    expect((await full.api.get('/agents/me/transactions', { query: { accountIdentifier: b.account } })).body.data).toEqual([]);
    expect(
      (await full.api.get('/agents/me/transactions', { query: { type: 'OUTGOING', accountIdentifier: a.account } })).body.data.map(
        (t: Wire) => t.id,
      ),
    ).toContain(mine.body.id);

    expect((await full.api.get(`/agents/me/transactions/${mine.body.id}`)).body).toMatchObject({
      id: mine.body.id,
      customerId: a.customerId,
    });
    expectError(await full.api.get(`/agents/me/transactions/${theirs.body.id}`), 404, 'TRANSACTION_NOT_FOUND');
    expectError(await none.api.get('/agents/me/transactions'), 403, 'FORBIDDEN');
    expectError(await none.api.get(`/agents/me/transactions/${mine.body.id}`), 403, 'FORBIDDEN');
  });
});

describe('internal accounts', () => {
  it("lists the customer's accounts the policy allows, with VIEW_TRANSACTIONS", async () => {
    const res = await full.api.get('/agents/me/internal-accounts');
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((x: Wire) => x.id)).toEqual([a.account]);
    expect(res.body.data[0]).toMatchObject({ customerId: a.customerId, balance: { currency: { code: 'USD' } } });
    expect((await full.api.get('/agents/me/internal-accounts', { query: { currency: 'EUR' } })).body.data).toEqual([]);
    expectError(await full.api.get('/agents/me/internal-accounts', { query: { customerId: b.customerId } }), 400, 'INVALID_INPUT');
    expectError(await none.api.get('/agents/me/internal-accounts'), 403, 'FORBIDDEN');

    const restricted = await installAgent(srv, p, a.customerId, policy({ accountRestrictions: { allowedAccountIds: [] } }));
    expect((await restricted.api.get('/agents/me/internal-accounts')).body).toMatchObject({ data: [], totalCount: 0 });
    const allowed = await installAgent(srv, p, a.customerId, policy({ accountRestrictions: { allowedAccountIds: [a.account] } }));
    expect((await allowed.api.get('/agents/me/internal-accounts')).body.data.map((x: Wire) => x.id)).toEqual([a.account]);
  });
});

describe('external accounts', () => {
  it('list, create, get and delete need MANAGE_EXTERNAL_ACCOUNTS and stay within the customer', async () => {
    const list = await full.api.get('/agents/me/external-accounts');
    expect(list.status).toBe(200);
    expect(list.body.data.map((x: Wire) => x.id)).toEqual([a.external]);
    expectError(await full.api.get('/agents/me/external-accounts', { query: { customerId: b.customerId } }), 400, 'INVALID_INPUT');

    const info = { ...eurAccountInfo(), iban: 'GB82WEST12345698765432' };
    const created = await full.api.post('/agents/me/external-accounts', { currency: 'EUR', accountInfo: info });
    expect(created.status, created.text).toBe(201);
    expect(created.body.customerId).toBe(a.customerId);
    expectError(await full.api.post('/agents/me/external-accounts', { currency: 'EUR', accountInfo: info }), 409, 'CONFLICT');
    expectError(
      await full.api.post('/agents/me/external-accounts', { customerId: b.customerId, currency: 'EUR', accountInfo: eurAccountInfo() }),
      404,
      'USER_NOT_FOUND',
    );
    expect(
      (await full.api.post('/agents/me/external-accounts', { customerId: a.customerId, currency: 'EUR', accountInfo: eurAccountInfo() }))
        .status,
    ).toBe(201);

    expect((await full.api.get(`/agents/me/external-accounts/${created.body.id}`)).body).toEqual(created.body);
    expectError(await full.api.get(`/agents/me/external-accounts/${b.external}`), 404, 'REFERENCE_NOT_FOUND');
    const platformOwn = await platformExternal(p, '001');
    expectError(await full.api.get(`/agents/me/external-accounts/${platformOwn}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await full.api.delete(`/agents/me/external-accounts/${b.external}`), 404, 'REFERENCE_NOT_FOUND');
    expect((await full.api.delete(`/agents/me/external-accounts/${created.body.id}`)).status).toBe(204);
    expectError(await full.api.get(`/agents/me/external-accounts/${created.body.id}`), 404, 'REFERENCE_NOT_FOUND');
    // The platform sees B's account untouched.
    expect((await p.api.get(`/customers/external-accounts/${b.external}`)).status).toBe(200);

    expectError(await none.api.get('/agents/me/external-accounts'), 403, 'FORBIDDEN');
    expectError(await none.api.post('/agents/me/external-accounts', { currency: 'EUR', accountInfo: eurAccountInfo() }), 403, 'FORBIDDEN');
    expectError(await none.api.get(`/agents/me/external-accounts/${a.external}`), 403, 'FORBIDDEN');
    expectError(await none.api.delete(`/agents/me/external-accounts/${a.external}`), 403, 'FORBIDDEN');
  });
});

describe('quotes', () => {
  it('creates and executes its own quotes; others are 404', async () => {
    const eur = await externalFor(p, a.customerId, '001', 'EUR', { ...eurAccountInfo(), iban: 'FR1420041010050500013M02606' });
    const created = await full.api.post('/agents/me/quotes', quoteBody(a.account, eur, 1_000));
    expect(created.status, created.text).toBe(201);
    const q = created.body;
    expect(q).toMatchObject({
      status: 'PENDING',
      totalSendingAmount: 1_000,
      sendingCurrency: { code: 'USD' },
      receivingCurrency: { code: 'EUR' },
    });
    expect((await full.api.get(`/agents/me/quotes/${q.id}`)).body).toEqual(q);
    // Another agent of the same customer, and the platform's quote, are not this agent's.
    const other = await installAgent(srv, p, a.customerId);
    expectError(await other.api.get(`/agents/me/quotes/${q.id}`), 404, 'QUOTE_NOT_FOUND');
    expectError(await other.api.post(`/agents/me/quotes/${q.id}/execute`), 404, 'QUOTE_NOT_FOUND');
    const platformQuote = (await p.api.post('/quotes', quoteBody(a.account, eur, 500))).body;
    expectError(await full.api.get(`/agents/me/quotes/${platformQuote.id}`), 404, 'QUOTE_NOT_FOUND');
    expectError(await full.api.post(`/agents/me/quotes/${platformQuote.id}/execute`), 404, 'QUOTE_NOT_FOUND');

    // Accounts must be the customer's.
    expectError(await full.api.post('/agents/me/quotes', quoteBody(b.account, eur, 1_000)), 404, 'REFERENCE_NOT_FOUND');
    expectError(await full.api.post('/agents/me/quotes', quoteBody(a.account, b.external, 1_000)), 404, 'REFERENCE_NOT_FOUND');
    expectError(await full.api.post('/agents/me/quotes', quoteBody(await platformUsdAccount(p), eur, 1_000)), 404, 'REFERENCE_NOT_FOUND');
    expectError(
      await full.api.post('/agents/me/quotes', quoteBody(a.account, await platformExternal(p, '001'), 1_000)),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(
      await full.api.post('/agents/me/quotes', {
        ...quoteBody(a.account, eur, 1_000),
        source: { sourceType: 'ACCOUNT', accountId: a.account, customerId: b.customerId },
      }),
      404,
      'USER_NOT_FOUND',
    );
    expect(
      fields(
        expectError(
          await full.api.post('/agents/me/quotes', quoteBody(a.account, eur, 1_000, { immediatelyExecute: true })),
          400,
          'INVALID_INPUT',
        ),
      ),
    ).toEqual(['immediatelyExecute']);
    expectError(await none.api.post('/agents/me/quotes', quoteBody(a.account, eur, 1_000)), 403, 'FORBIDDEN');

    // Executing it is an action: APPROVED with the quote and its transaction.
    const before = await balanceOf(p, a.account);
    expectError(await none.api.post(`/agents/me/quotes/${q.id}/execute`), 403, 'FORBIDDEN');
    const exec = await full.api.post(`/agents/me/quotes/${q.id}/execute`);
    expect(exec.status, exec.text).toBe(200);
    expect(exec.body).toMatchObject({
      agentId: full.id,
      customerId: a.customerId,
      platformCustomerId: a.platformCustomerId,
      type: 'EXECUTE_QUOTE',
      status: 'APPROVED',
    });
    expect(exec.body.id).toMatch(/^AgentAction:/);
    expect(exec.body.quote).toMatchObject({ id: q.id, status: 'PROCESSING' });
    expect(exec.body.transaction).toMatchObject({ id: q.transactionId, quoteId: q.id });
    expect(exec.body.transferDetails).toBeUndefined();
    expect(await balanceOf(p, a.account)).toBe(before - 1_000);
    expectError(await full.api.post(`/agents/me/quotes/${q.id}/execute`), 409, 'CONFLICT');
    expect((await full.api.get('/agents/me')).body.usage).toMatchObject({ dailyTransactionCount: 1, dailySpend: 1_000 });
    await expectLedgerClean(srv, p.id);
  });
});

describe('transfers', () => {
  it('transfer-out and transfer-in are actions with CREATE_TRANSFERS, within the customer', async () => {
    const before = await balanceOf(p, a.account);
    const out = await transferOut(full, a, 700);
    expect(out.status, out.text).toBe(201);
    expect(out.body).toMatchObject({
      type: 'TRANSFER_OUT',
      status: 'APPROVED',
      transferDetails: { amount: 700, currency: 'USD', sourceAccountId: a.account, destinationAccountId: a.external },
      transaction: { type: 'OUTGOING', customerId: a.customerId, sentAmount: { amount: 700 } },
    });
    expect(out.body.quote).toBeUndefined();
    expect(await balanceOf(p, a.account)).toBe(before - 700);

    const inn = await full.api.post('/agents/me/transfer-in', {
      source: { accountId: a.external },
      destination: { accountId: a.account },
      amount: 300,
    });
    expect(inn.status, inn.text).toBe(201);
    expect(inn.body).toMatchObject({
      type: 'TRANSFER_IN',
      status: 'APPROVED',
      transferDetails: { amount: 300, sourceAccountId: a.external, destinationAccountId: a.account },
      transaction: { type: 'INCOMING' },
    });
    // The pull settles in the background: wait for it, so the tests after this one start from a
    // balance that no longer moves on its own.
    await waitFor(async () => (await balanceOf(p, a.account)) === before - 400);
    expect(
      fields(
        expectError(
          await full.api.post('/agents/me/transfer-in', { source: { accountId: a.external }, destination: { accountId: a.account } }),
          400,
          'INVALID_INPUT',
        ),
      ),
    ).toEqual(['amount']);
    // Only pull-capable accounts can be pulled from.
    const eurIban = await externalFor(p, a.customerId, '001', 'EUR', { ...eurAccountInfo(), iban: 'NL91ABNA0417164300' });
    expect(
      fields(
        expectError(
          await full.api.post('/agents/me/transfer-in', {
            source: { accountId: eurIban },
            destination: { accountId: a.account },
            amount: 1,
          }),
          400,
          'INVALID_INPUT',
        ),
      ),
    ).toEqual(['source.accountId']);

    // Someone else's accounts, or the platform's, are not found.
    expectError(
      await full.api.post('/agents/me/transfer-out', {
        source: { accountId: b.account },
        destination: { accountId: a.external },
        amount: 1,
      }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(
      await full.api.post('/agents/me/transfer-out', {
        source: { accountId: a.account },
        destination: { accountId: b.external },
        amount: 1,
      }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(
      await full.api.post('/agents/me/transfer-out', {
        source: { accountId: await platformUsdAccount(p) },
        destination: { accountId: a.external },
        amount: 1,
      }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(
      await full.api.post('/agents/me/transfer-in', {
        source: { accountId: b.external },
        destination: { accountId: a.account },
        amount: 1,
      }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(
      await full.api.post('/agents/me/transfer-in', {
        source: { accountId: a.external },
        destination: { accountId: b.account },
        amount: 1,
      }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expect(
      fields(
        expectError(
          await full.api.post('/agents/me/transfer-out', {
            source: { accountId: a.account },
            destination: { accountId: a.external },
            amount: 0,
          }),
          400,
          'INVALID_INPUT',
        ),
      ),
    ).toEqual(['amount']);

    expectError(await transferOut(none, a, 1), 403, 'FORBIDDEN');
    expectError(
      await none.api.post('/agents/me/transfer-in', {
        source: { accountId: a.external },
        destination: { accountId: a.account },
        amount: 1,
      }),
      403,
      'FORBIDDEN',
    );
    // A missing permission is refused before the body is looked at.
    expectError(await none.api.post('/agents/me/transfer-out', { nonsense: true }), 403, 'FORBIDDEN');
    await expectLedgerClean(srv, p.id);
  });

  it('replays a transfer with the same Idempotency-Key: one action, one movement', async () => {
    const before = await balanceOf(p, a.account);
    const r1 = await transferOut(full, a, 250, { 'Idempotency-Key': 'agent-out-1' });
    const r2 = await transferOut(full, a, 250, { 'Idempotency-Key': 'agent-out-1' });
    expect(r1.status).toBe(201);
    expect(r2.body).toEqual(r1.body);
    expect(r2.headers.get('idempotency-hit')).toBe('true');
    expect(await balanceOf(p, a.account)).toBe(before - 250);
    // Another agent's key space is its own.
    const other = await installAgent(srv, p, a.customerId);
    const r3 = await transferOut(other, a, 250, { 'Idempotency-Key': 'agent-out-1' });
    expect(r3.status).toBe(201);
    expect(r3.body.id).not.toBe(r1.body.id);
    await expectLedgerClean(srv, p.id);
  });
});

describe('actions', () => {
  it("lists and reads only the agent's own actions", async () => {
    const mine = (await transferOut(full, a, 10)).body;
    const list = await full.api.get('/agents/me/actions', { query: { limit: 100 } });
    expect(list.status).toBe(200);
    expect(list.body.data[0].id).toBe(mine.id);
    expect(list.body.data.every((x: Wire) => x.agentId === full.id)).toBe(true);
    expect((await full.api.get('/agents/me/actions', { query: { status: 'REJECTED' } })).body.data).toEqual([]);
    expectError(await full.api.get('/agents/me/actions', { query: { status: 'MAYBE' } }), 400, 'INVALID_INPUT');
    expect((await full.api.get(`/agents/me/actions/${mine.id}`)).body).toMatchObject({ id: mine.id, status: 'APPROVED' });
    const other = await installAgent(srv, p, a.customerId);
    expectError(await other.api.get(`/agents/me/actions/${mine.id}`), 404, 'REFERENCE_NOT_FOUND');
    expect((await other.api.get('/agents/me/actions')).body.data).toEqual([]);
    const page = await full.api.get('/agents/me/actions', { query: { limit: 1 } });
    expect(page.body.hasMore).toBe(true);
    expect((await full.api.get('/agents/me/actions', { query: { limit: 1, cursor: page.body.nextCursor } })).body.data[0].id).not.toBe(
      mine.id,
    );
  });
});

describe('a paused agent', () => {
  it('can read but cannot start anything; resuming lets it act again', async () => {
    const c = await customer(p);
    const agent = await installAgent(srv, p, c.customerId);
    expect((await p.api.patch(`/agents/${agent.id}`, { isPaused: true })).status).toBe(200);
    expect((await agent.api.get('/agents/me')).body.isPaused).toBe(true);
    expect((await agent.api.get('/agents/me/transactions')).status).toBe(200);
    expect((await agent.api.get('/agents/me/internal-accounts')).status).toBe(200);
    const refused = expectError(await transferOut(agent, c, 100), 403, 'FORBIDDEN');
    expect(refused.body.message).toMatch(/paused/);
    expectError(
      await agent.api.post('/agents/me/transfer-in', {
        source: { accountId: c.external },
        destination: { accountId: c.account },
        amount: 1,
      }),
      403,
      'FORBIDDEN',
    );
    expectError(await agent.api.post('/agents/me/quotes', quoteBody(c.account, c.external, 100)), 403, 'FORBIDDEN');
    expectError(await agent.api.post('/agents/me/external-accounts', { currency: 'EUR', accountInfo: eurAccountInfo() }), 403, 'FORBIDDEN');
    expectError(await agent.api.delete(`/agents/me/external-accounts/${c.external}`), 403, 'FORBIDDEN');
    expect(await balanceOf(p, c.account)).toBe(100_000);
    expect((await p.api.patch(`/agents/${agent.id}`, { isPaused: false })).status).toBe(200);
    expect((await transferOut(agent, c, 100)).status).toBe(201);
  });
});

describe('embedded wallet source', () => {
  it('still needs the wallet signature to execute', async () => {
    const w = await srv.newPlatform();
    const { accountId: wallet, customerId } = await walletSetup(w);
    expect((await w.api.post(`/sandbox/internal-accounts/${wallet}/fund`, { amount: 5_000_000 })).status).toBe(200);
    const dest = await externalFor(w, customerId, '001');
    const agent = await installAgent(srv, w, customerId, policy({ spendingLimits: { currency: 'USD', perTransactionLimit: 1_000_000 } }));
    const q = await agent.api.post('/agents/me/quotes', quoteBody(wallet, dest, 1_000_000));
    expect(q.status, q.text).toBe(201);
    expectError(await agent.api.post(`/agents/me/quotes/${q.body.id}/execute`), 401, 'WALLET_SIGNATURE_MISSING');
    expectError(
      await agent.api.post(`/agents/me/quotes/${q.body.id}/execute`, undefined, { headers: { 'Grid-Wallet-Signature': 'not-a-stamp' } }),
      401,
      'WALLET_SIGNATURE_MALFORMED',
    );
    expect((await agent.api.get('/agents/me/actions')).body.data).toEqual([]);
    const ok = await agent.api.post(`/agents/me/quotes/${q.body.id}/execute`, undefined, {
      headers: { 'Grid-Wallet-Signature': 'sandbox-valid-signature' },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toMatchObject({ status: 'APPROVED', quote: { status: 'PROCESSING' } });
    expect(await balanceOf(w, wallet)).toBe(4_000_000);

    // Sent for approval, the signature is still checked at once and used when the platform approves.
    expect((await w.api.patch(`/agents/${agent.id}/policy`, { defaultExecutionMode: 'APPROVAL_REQUIRED' })).status).toBe(200);
    const q2 = (await agent.api.post('/agents/me/quotes', quoteBody(wallet, dest, 2_000_000))).body;
    expectError(await agent.api.post(`/agents/me/quotes/${q2.id}/execute`), 401, 'WALLET_SIGNATURE_MISSING');
    const pending = await agent.api.post(`/agents/me/quotes/${q2.id}/execute`, undefined, {
      headers: { 'Grid-Wallet-Signature': 'sandbox-valid-signature' },
    });
    expect(pending.body.status).toBe('PENDING_APPROVAL');
    expect(await balanceOf(w, wallet)).toBe(4_000_000);
    const approved = await w.api.post(`/agents/${agent.id}/actions/${pending.body.id}/approve`);
    expect(approved.body).toMatchObject({ status: 'APPROVED', quote: { status: 'PROCESSING' } });
    expect(await balanceOf(w, wallet)).toBe(2_000_000);
    await expectLedgerClean(srv, w.id);
  });
});

function fields(res: { body: Wire }): string[] {
  return (res.body.details?.errors ?? []).map((e: { field: string }) => e.field);
}
