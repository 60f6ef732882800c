/**
 * Hostile review of POST /sandbox/trigger (issue #25): a token gets from a trigger no more than the
 * API would give it. Every recipe creates a customer or an account (MANAGE on the API), and most
 * fund an account or pay (TRANSACT): a TRANSACT-only token must not create customers through it,
 * nor a MANAGE-only token move money. Also: odd event types are the spec's 400, never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/http.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let p: PlatformHandle;
const only = {} as Record<'VIEW' | 'TRANSACT' | 'MANAGE', Client>;
let manageTransact: Client;

async function token(permissions: string[]): Promise<Client> {
  const t = await p.api.post('/tokens', { name: `trigger-${permissions.join('-')}`, permissions });
  expect(t.status, t.text).toBe(201);
  return p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
}

async function customerCount(): Promise<number> {
  return (await p.api.get('/customers')).body.totalCount as number;
}

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  for (const perm of ['VIEW', 'TRANSACT', 'MANAGE'] as const) only[perm] = await token([perm]);
  manageTransact = await token(['MANAGE', 'TRANSACT']);
});
afterAll(async () => srv.close());

describe('POST /sandbox/trigger permissions', () => {
  it('a TRANSACT-only token cannot create customers through a trigger (POST /customers needs MANAGE)', async () => {
    const before = await customerCount();
    for (const eventType of ['CUSTOMER.KYC_APPROVED', 'OUTGOING_PAYMENT.COMPLETED']) {
      const res = await only.TRANSACT.post('/sandbox/trigger', { eventType });
      expectError(res, 403, 'FORBIDDEN');
      expect(res.body.message).toContain('MANAGE');
    }
    expect(await customerCount()).toBe(before);
  });

  it('a MANAGE-only token triggers the events that move no money, but not a payment, a funding or a card purchase', async () => {
    const ok = await only.MANAGE.post('/sandbox/trigger', { eventType: 'CUSTOMER.KYC_APPROVED' });
    expect(ok.status, ok.text).toBe(200);
    const before = await customerCount();
    for (const eventType of ['OUTGOING_PAYMENT.COMPLETED', 'INTERNAL_ACCOUNT.BALANCE_UPDATED', 'CARD_TRANSACTION.AUTHORIZED']) {
      const res = await only.MANAGE.post('/sandbox/trigger', { eventType });
      expectError(res, 403, 'FORBIDDEN');
      expect(res.body.details.missing).toEqual(['TRANSACT']);
    }
    // Refused before anything was created.
    expect(await customerCount()).toBe(before);
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('VIEW alone triggers nothing; MANAGE with TRANSACT triggers a payment', async () => {
    expectError(await only.VIEW.post('/sandbox/trigger', { eventType: 'CUSTOMER.KYC_APPROVED' }), 403, 'FORBIDDEN');
    const res = await manageTransact.post('/sandbox/trigger', { eventType: 'OUTGOING_PAYMENT.FAILED' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.event.type).toBe('OUTGOING_PAYMENT.FAILED');
    expect((await srv.ledger(p.id)).ok).toBe(true);
  });

  it('an untriggerable type is the 400 whatever the token holds', async () => {
    expectError(await only.MANAGE.post('/sandbox/trigger', { eventType: 'TEST' }), 400, 'INVALID_INPUT');
  });

  it('odd event types are 400 INVALID_INPUT on eventType, never a 500', async () => {
    for (const eventType of ['__proto__', 'constructor', 'toString', 'outgoing_payment.failed', ' CUSTOMER.KYC_APPROVED', 'ÄÖ']) {
      const res = await p.api.post('/sandbox/trigger', { eventType });
      expectError(res, 400, 'INVALID_INPUT');
      expect(res.body.details.errors[0].field).toBe('eventType');
    }
    for (const body of [{}, { eventType: 5 }, { eventType: 'x'.repeat(101) }, { eventType: 'CUSTOMER.KYC_APPROVED', extra: 1 }]) {
      expectError(await p.api.post('/sandbox/trigger', body), 400, 'INVALID_INPUT');
    }
  });
});
