/**
 * POST /sandbox/trigger over real HTTP: each triggerable event type really happens — its webhook
 * reaches a real receiver, correctly typed and about the object the trigger created, which the API
 * then returns in the state the event announced — and the ledger stays clean. Unknown and
 * untriggerable types are 400s; PRODUCTION platforms get 403.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECIPES } from '../../src/modules/devtools/trigger.recipes.ts';
import { WEBHOOK_TYPES } from '../../src/webhook-delivery/catalogue.ts';
import { expectError } from '../helpers/http.ts';
import { expectLedgerClean, type Wire } from '../helpers/payments.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let rec: Receiver;
let p: PlatformHandle;
beforeAll(async () => {
  srv = await startServer();
  rec = await startReceiver();
  p = await srv.newPlatform();
  expect((await p.api.patch('/config', { webhookEndpoint: rec.url })).status).toBe(200);
});
afterAll(async () => {
  await rec.close();
  await srv.close();
});

/** GET `path` as the platform: 200 and its body. */
async function read(path: string, query?: Record<string, string>): Promise<Wire> {
  const res = await p.api.get(path, query ? { query } : undefined);
  expect(res.status, `${path}: ${res.text}`).toBe(200);
  return res.body;
}

interface Check {
  /** The webhook's `data`, against what the trigger said it created. */
  data: (d: Wire, created: Wire) => void;
  /** What the API says afterwards about the object (when there is a read for it). */
  now?: (created: Wire) => Promise<void>;
}

const txNow =
  (statuses: string[], extra: Record<string, unknown> = {}) =>
  async (c: Wire) =>
    expect(await read(`/transactions/${c.transactionId}`)).toMatchObject({ status: expect.toBeOneOf(statuses), ...extra });
const customerNow = (fields: Record<string, unknown>) => async (c: Wire) =>
  expect(await read(`/customers/${c.customerId}`)).toMatchObject(fields);
const verificationNow = (status: string) => async (c: Wire) => {
  expect(await read(`/verifications/${c.verificationId}`)).toMatchObject({ customerId: c.customerId, verificationStatus: status });
};
const cardTxNow =
  (status: string, extra: Record<string, unknown> = {}) =>
  async (c: Wire) =>
    expect(await read(`/transactions/${c.cardTransactionId}`)).toMatchObject({ type: 'CARD', cardId: c.cardId, status, ...extra });
const cardTx = (status: string, extra: Record<string, unknown> = {}): Check => ({
  data: (d, c) => expect(d).toMatchObject({ type: 'CARD', cardId: c.cardId, customerId: c.customerId, status, ...extra }),
  now: cardTxNow(status, extra),
});
const outgoing = (status: string, extra: Record<string, unknown> = {}, now = ['COMPLETED', 'FAILED']): Check => ({
  data: (d) => expect(d).toMatchObject({ type: 'OUTGOING', status, ...extra }),
  now: txNow(now),
});
const incoming = (status: string, extra: Record<string, unknown> = {}): Check => ({
  data: (d) => expect(d).toMatchObject({ type: 'INCOMING', status, ...extra }),
  now: txNow(['PENDING', 'COMPLETED', 'FAILED'], { type: 'INCOMING' }),
});
const amount = (n: number) => ({ amount: n });

const checks: Record<string, Check> = {
  'CUSTOMER.KYC_APPROVED': { data: (d) => expect(d.kycStatus).toBe('APPROVED'), now: customerNow({ kycStatus: 'APPROVED' }) },
  'CUSTOMER.KYC_PENDING': { data: (d) => expect(d.kycStatus).toBe('PENDING'), now: customerNow({ kycStatus: 'PENDING' }) },
  'CUSTOMER.KYC_REJECTED': { data: (d) => expect(d.kycStatus).toBe('REJECTED'), now: customerNow({ kycStatus: 'REJECTED' }) },
  'CUSTOMER.KYB_APPROVED': {
    data: (d) => expect(d).toMatchObject({ customerType: 'BUSINESS', kybStatus: 'APPROVED' }),
    now: customerNow({ kybStatus: 'APPROVED' }),
  },
  'CUSTOMER.KYB_PENDING': {
    data: (d) => expect(d).toMatchObject({ customerType: 'BUSINESS', kybStatus: 'PENDING' }),
    now: customerNow({ kybStatus: 'PENDING' }),
  },
  'CUSTOMER.KYB_REJECTED': {
    data: (d) => expect(d).toMatchObject({ customerType: 'BUSINESS', kybStatus: 'REJECTED' }),
    now: customerNow({ kybStatus: 'REJECTED' }),
  },
  'VERIFICATION.APPROVED': {
    data: (d, c) => expect(d).toMatchObject({ customerId: c.customerId, verificationStatus: 'APPROVED', errors: [] }),
    now: verificationNow('APPROVED'),
  },
  'VERIFICATION.PENDING_MANUAL_REVIEW': {
    data: (d) => expect(d.verificationStatus).toBe('PENDING_MANUAL_REVIEW'),
    now: verificationNow('PENDING_MANUAL_REVIEW'),
  },
  'VERIFICATION.REJECTED': { data: (d) => expect(d.verificationStatus).toBe('REJECTED'), now: verificationNow('REJECTED') },
  'VERIFICATION.RESOLVE_ERRORS': {
    data: (d) => {
      expect(d.verificationStatus).toBe('RESOLVE_ERRORS');
      expect(d.errors.map((e: Wire) => e.type)).toContain('MISSING_IDENTITY_DOCUMENT');
    },
    now: verificationNow('RESOLVE_ERRORS'),
  },
  'INTERNAL_ACCOUNT.BALANCE_UPDATED': {
    data: (d) => expect(d.balance.amount).toBe(10_000),
    now: async (c) => {
      const list = await read('/customers/internal-accounts', { customerId: c.customerId, currency: 'USD' });
      expect(list.data[0]).toMatchObject({ id: c.internalAccountId, balance: amount(10_000) });
    },
  },
  'EXTERNAL_ACCOUNT.STATUS_UPDATED': { data: (d) => expect(d.status).toBe('INACTIVE') },
  'OUTGOING_PAYMENT.PENDING': outgoing('PENDING'),
  'OUTGOING_PAYMENT.PENDING_AUTHORIZATION': {
    data: (d) => expect(d).toMatchObject({ type: 'OUTGOING', status: 'PENDING_AUTHORIZATION' }),
    now: async (c) => {
      await txNow(['PENDING_AUTHORIZATION'])(c);
      const quote = await read(`/quotes/${c.quoteId}`);
      expect(quote).toMatchObject({ status: 'PENDING_AUTHORIZATION', scaChallenge: { purpose: 'PAYOUT', factor: 'SMS_OTP' } });
    },
  },
  'OUTGOING_PAYMENT.PROCESSING': outgoing('PROCESSING'),
  'OUTGOING_PAYMENT.COMPLETED': outgoing('COMPLETED'),
  'OUTGOING_PAYMENT.FAILED': outgoing('FAILED', { failureReason: 'QUOTE_EXECUTION_FAILED' }),
  'OUTGOING_PAYMENT.REFUND_PENDING': outgoing('FAILED', { refund: { status: 'PENDING' } }),
  'OUTGOING_PAYMENT.REFUND_COMPLETED': outgoing('FAILED', { refund: { status: 'COMPLETED' } }),
  'OUTGOING_PAYMENT.REFUND_FAILED': outgoing('FAILED', { refund: { status: 'FAILED' } }),
  'OUTGOING_PAYMENT.EXPIRED': outgoing('EXPIRED', { failureReason: 'QUOTE_EXPIRED' }, ['EXPIRED']),
  'INCOMING_PAYMENT.PENDING': incoming('PENDING'),
  'INCOMING_PAYMENT.COMPLETED': incoming('COMPLETED'),
  'INCOMING_PAYMENT.FAILED': incoming('FAILED', { failureReason: 'COLLECTION_FAILED' }),
  'BULK_UPLOAD.COMPLETED': {
    data: (d) => expect(d).toMatchObject({ status: 'COMPLETED', progress: { total: 1, processed: 1, successful: 1, failed: 0 } }),
    now: async (c) => expect((await read(`/customers/bulk/jobs/${c.bulkUploadJobId}`)).status).toBe('COMPLETED'),
  },
  'BULK_UPLOAD.FAILED': {
    data: (d) => {
      expect(d).toMatchObject({ status: 'FAILED', progress: { total: 1, processed: 1, successful: 0, failed: 1 } });
      expect(d.errors[0].details.errors).toEqual([expect.objectContaining({ field: 'birthDate' })]);
    },
    now: async (c) => expect((await read(`/customers/bulk/jobs/${c.bulkUploadJobId}`)).status).toBe('FAILED'),
  },
  'INVITATION.CLAIMED': {
    data: (d, c) =>
      expect(d).toMatchObject({ code: c.invitationCode, status: 'CLAIMED', inviteeUma: expect.stringMatching(/^\$trigger-invitee@/) }),
    now: async (c) => expect((await read(`/invitations/${c.invitationCode}`)).status).toBe('CLAIMED'),
  },
  'AGENT_ACTION.PENDING_APPROVAL': {
    data: (d, c) =>
      expect(d).toMatchObject({
        agentId: c.agentId,
        customerId: c.customerId,
        status: 'PENDING_APPROVAL',
        type: 'TRANSFER_OUT',
        transferDetails: { amount: 10_000, sourceAccountId: c.internalAccountId, destinationAccountId: c.externalAccountId },
      }),
    now: async (c) => {
      const approvals = await read('/agents/approvals');
      expect(approvals.data.map((a: Wire) => a.id)).toContain(c.agentActionId);
      expect(await read(`/agents/${c.agentId}`)).toMatchObject({ isConnected: true });
    },
  },
  'CARD.STATE_CHANGE': {
    data: (d, c) => expect(d).toMatchObject({ cardholderId: c.customerId, state: 'ACTIVE', fundingSources: [c.internalAccountId] }),
    now: async (c) => expect((await read(`/cards/${c.cardId}`)).state).toBe('ACTIVE'),
  },
  'CARD.FUNDING_SOURCE_CHANGE': {
    data: (d, c) => expect(d).toMatchObject({ cardholderId: c.customerId, fundingSources: [c.internalAccountId] }),
    now: async (c) => expect((await read(`/cards/${c.cardId}`)).fundingSources).toEqual([c.internalAccountId]),
  },
  'CARD_TRANSACTION.AUTHORIZED': cardTx('AUTHORIZED', { authorizedAmount: amount(10_000), settledAmount: amount(0) }),
  'CARD_TRANSACTION.PARTIALLY_SETTLED': cardTx('PARTIALLY_SETTLED', { settledAmount: amount(5_000) }),
  'CARD_TRANSACTION.SETTLED': cardTx('SETTLED', { settledAmount: amount(10_000) }),
  'CARD_TRANSACTION.REFUNDED': cardTx('REFUNDED', { settledAmount: amount(10_000), refundedAmount: amount(10_000) }),
  'CARD_TRANSACTION.EXCEPTION': cardTx('EXCEPTION', { merchant: { descriptor: 'TRIGGER MERCHANT 006' } }),
};

/** Catalogue types nothing in Corridor emits (or TEST, which has its own endpoint): the documented exceptions. */
const NOT_TRIGGERABLE = [
  'INCOMING_PAYMENT.REFUND_COMPLETED',
  'INCOMING_PAYMENT.REFUND_FAILED',
  'INCOMING_PAYMENT.REFUND_PENDING',
  'INTERNAL_ACCOUNT.FUNDING_INSTRUCTIONS_UPDATED',
  'INTERNAL_ACCOUNT.STATUS_UPDATED',
  'TEST',
  'VERIFICATION.IN_PROGRESS',
  'VERIFICATION.READY_FOR_VERIFICATION',
];

describe('POST /sandbox/trigger', () => {
  it('has a check for every recipe, and a recipe for every catalogue type but the documented exceptions', () => {
    expect(Object.keys(checks).sort()).toEqual(Object.keys(RECIPES).sort());
    expect(WEBHOOK_TYPES.filter((t) => !(t in RECIPES)).sort()).toEqual(NOT_TRIGGERABLE);
  });

  for (const type of Object.keys(RECIPES)) {
    it(`${type} happens for real and its webhook arrives`, async () => {
      const res = await p.api.post('/sandbox/trigger', { eventType: type });
      expect(res.status, res.text).toBe(200);
      expect(res.body.eventType).toBe(type);
      expect(res.body.event).toMatchObject({ type, id: expect.stringMatching(/^Webhook:/) });
      const { id, resourceId } = res.body.event;
      const created = res.body.created;
      const got = await waitFor(() => rec.received.find((r) => r.body?.id === id));
      expect(got.body.type).toBe(type);
      expect(got.headers['x-grid-signature']).toBeTruthy();
      // The event is about what the trigger created (an invitation is named by its code on the wire).
      if (type === 'INVITATION.CLAIMED') expect(resourceId).toMatch(/^Invitation:/);
      else expect(got.body.data.id).toBe(resourceId);
      expect(Object.values(created)).toContain(type === 'INVITATION.CLAIMED' ? created.invitationCode : resourceId);
      checks[type]!.data(got.body.data, created);
      // The objects exist, as the API shows them.
      if (created.customerId) expect((await p.api.get(`/customers/${created.customerId}`)).status).toBe(200);
      if (created.quoteId) expect((await p.api.get(`/quotes/${created.quoteId}`)).status).toBe(200);
      await checks[type]!.now?.(created);
      expect(res.body.clockAdvancedSeconds).toBe(type === 'OUTGOING_PAYMENT.EXPIRED' ? 301 : 0);
    });
  }

  it('leaves the ledger clean', async () => {
    await expectLedgerClean(srv, p.id);
  });

  it('an unknown event type is a 400 naming the field', async () => {
    const res = expectError(await p.api.post('/sandbox/trigger', { eventType: 'NOPE.HAPPENED' }), 400, 'INVALID_INPUT');
    expect(res.body.details.errors[0].field).toBe('eventType');
  });

  it('an event type with no recipe is a 400 saying why and listing the triggerable ones', async () => {
    for (const t of ['TEST', 'INTERNAL_ACCOUNT.STATUS_UPDATED', 'VERIFICATION.IN_PROGRESS']) {
      const res = expectError(await p.api.post('/sandbox/trigger', { eventType: t }), 400, 'INVALID_INPUT');
      expect(res.body.details.errors[0].field).toBe('eventType');
      expect(res.body.details.triggerable).toEqual(Object.keys(RECIPES));
      expect(res.body.message).toMatch(t === 'TEST' ? /POST \/sandbox\/webhooks\/test/ : /no flow of Corridor emits it/);
    }
  });

  it('rejects a bad body, no auth, and PRODUCTION platforms', async () => {
    expectError(await p.api.post('/sandbox/trigger', { eventType: 'OUTGOING_PAYMENT.FAILED', extra: 1 }), 400, 'INVALID_INPUT');
    expectError(await p.api.post('/sandbox/trigger', {}), 400, 'INVALID_INPUT');
    expectError(await srv.anon.post('/sandbox/trigger', { eventType: 'OUTGOING_PAYMENT.FAILED' }), 401, 'UNAUTHORIZED');
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    expectError(await prod.api.post('/sandbox/trigger', { eventType: 'CARD.STATE_CHANGE' }), 403, 'FORBIDDEN');
  });
});
