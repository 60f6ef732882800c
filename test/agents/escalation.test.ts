/**
 * Hostile review: an agent must not be a way around a token's permissions or a customer's deletion.
 * - Defect 2: a MANAGE-only API token could create an agent whose policy moves money, redeem its
 *   device code and transfer out. Making an agent that moves money (create, widen the policy,
 *   resume it, issue its device code) needs TRANSACT as well as MANAGE.
 * - Defect 11: an agent of a deleted customer could still transfer out; it gets 410
 *   CUSTOMER_DELETED, as the customer's own routes do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Client } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { customer, installAgent, policy } from './util.ts';

let srv: TestServer;
let p: PlatformHandle;
let manageOnly: Client;
beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  const t = await p.api.post('/tokens', { name: 'manage-only', permissions: ['MANAGE'] });
  manageOnly = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
});
afterAll(async () => srv.close());

const MOVES_MONEY = ['CREATE_TRANSFERS', 'EXECUTE_QUOTES'];
const READ_ONLY = ['VIEW_TRANSACTIONS', 'CREATE_QUOTES', 'MANAGE_EXTERNAL_ACCOUNTS'];

describe('an agent that moves money needs TRANSACT as well as MANAGE', () => {
  it('a MANAGE-only token cannot create one, so it cannot redeem it and transfer out', async () => {
    const c = await customer(p, 50_000);
    for (const perm of MOVES_MONEY) {
      const res = expectError(
        await manageOnly.post('/agents', { name: 'escalate', customerId: c.customerId, policy: policy({ permissions: [perm] }) }),
        403,
        'FORBIDDEN',
      );
      expect(res.body.message).toMatch(/TRANSACT/);
    }
    expect((await p.api.get('/agents', { query: { customerId: c.customerId } })).body.data).toEqual([]);
    // An agent that cannot move money it may create.
    expect(
      (await manageOnly.post('/agents', { name: 'reader', customerId: c.customerId, policy: policy({ permissions: READ_ONLY }) })).status,
    ).toBe(201);
    // The token with both permissions creates the money agent, which works.
    const agent = await installAgent(srv, p, c.customerId, policy({ permissions: MOVES_MONEY }));
    expect(
      (
        await agent.api.post('/agents/me/transfer-out', {
          source: { accountId: c.account },
          destination: { accountId: c.external },
          amount: 100,
        })
      ).status,
    ).toBe(201);
  });

  it('a MANAGE-only token cannot widen a policy, resume a paused agent or issue a device code for a money agent', async () => {
    const c = await customer(p, 0);
    const reader = await manageOnly.post('/agents', {
      name: 'reader',
      customerId: c.customerId,
      policy: policy({ permissions: READ_ONLY }),
    });
    const id = reader.body.agent.id as string;
    expectError(await manageOnly.patch(`/agents/${id}/policy`, { permissions: [...READ_ONLY, 'CREATE_TRANSFERS'] }), 403, 'FORBIDDEN');
    expect((await p.api.get(`/agents/${id}`)).body.policy.permissions).toEqual(READ_ONLY);
    // Narrowing, renaming and pausing stay MANAGE's; so does a code for a read-only agent.
    expect((await manageOnly.patch(`/agents/${id}/policy`, { permissions: ['VIEW_TRANSACTIONS'] })).status).toBe(200);
    expect((await manageOnly.post(`/agents/${id}/device-codes`)).status).toBe(201);

    const mover = (await p.api.post('/agents', { name: 'mover', customerId: c.customerId, policy: policy({ permissions: MOVES_MONEY }) }))
      .body.agent.id as string;
    expectError(await manageOnly.post(`/agents/${mover}/device-codes`), 403, 'FORBIDDEN');
    expect((await manageOnly.patch(`/agents/${mover}`, { name: 'renamed', isPaused: true })).status).toBe(200);
    expectError(await manageOnly.patch(`/agents/${mover}`, { isPaused: false }), 403, 'FORBIDDEN');
    expect((await p.api.get(`/agents/${mover}`)).body.isPaused).toBe(true);
    expect((await p.api.patch(`/agents/${mover}`, { isPaused: false })).body.isPaused).toBe(false);
  });
});

describe('an agent of a deleted customer', () => {
  it('gets 410 CUSTOMER_DELETED for every action, and moves nothing', async () => {
    const c = await customer(p, 50_000);
    const agent = await installAgent(srv, p, c.customerId, policy());
    const quote = await agent.api.post('/agents/me/quotes', {
      source: { sourceType: 'ACCOUNT', accountId: c.account },
      destination: { destinationType: 'ACCOUNT', accountId: c.external },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1_000,
    });
    expect(quote.status, quote.text).toBe(201);
    expect((await p.api.delete(`/customers/${c.customerId}`)).status).toBe(200);

    expectError(
      await agent.api.post('/agents/me/transfer-out', {
        source: { accountId: c.account },
        destination: { accountId: c.external },
        amount: 100,
      }),
      410,
      'CUSTOMER_DELETED',
    );
    expectError(await agent.api.post(`/agents/me/quotes/${quote.body.id}/execute`), 410, 'CUSTOMER_DELETED');
    expectError(
      await agent.api.post('/agents/me/quotes', {
        source: { sourceType: 'ACCOUNT', accountId: c.account },
        destination: { destinationType: 'ACCOUNT', accountId: c.external },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: 1_000,
      }),
      410,
      'CUSTOMER_DELETED',
    );
    const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: c.customerId } });
    expect(accounts.body.data[0].balance.amount).toBe(50_000);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('an action waiting for approval fails when the platform approves it after the deletion', async () => {
    const c = await customer(p, 50_000);
    const agent = await installAgent(srv, p, c.customerId, policy({ defaultExecutionMode: 'APPROVAL_REQUIRED' }));
    const pending = await agent.api.post('/agents/me/transfer-out', {
      source: { accountId: c.account },
      destination: { accountId: c.external },
      amount: 100,
    });
    expect(pending.status, pending.text).toBe(201);
    expect(pending.body.status).toBe('PENDING_APPROVAL');
    expect((await p.api.delete(`/customers/${c.customerId}`)).status).toBe(200);
    const approved = await p.api.post(`/agents/${agent.id}/actions/${pending.body.id}/approve`);
    expect(approved.status, approved.text).toBe(200);
    expect(approved.body).toMatchObject({ status: 'FAILED', failureReason: expect.stringContaining('deleted') });
    const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: c.customerId } });
    expect(accounts.body.data[0].balance.amount).toBe(50_000);
  });
});
