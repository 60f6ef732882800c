/**
 * The event catalogue against what is really delivered: one platform with a real receiver runs a
 * broad flow over HTTP (customers and KYC/KYB verifications, external accounts, sandbox funding,
 * quotes that succeed, fail, fail their refund, are returned and expire, transfers in and out,
 * incoming UMA payments approved, rejected and failed, TEST events), and every envelope the
 * receiver gets must validate against the schema the served OpenAPI document's `webhooks` section
 * lists for its type. Payments' last event carries the transaction exactly as GET returns it.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEBHOOK_TYPES } from '../../src/webhook-delivery/catalogue.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { businessBody, createCustomer, createOwner, individualBody, JPEG, ownerBody, PNG, upload } from '../helpers/kyc.ts';
import {
  advance,
  eurAccountInfo,
  expectLedgerClean,
  fund,
  platformExternal,
  platformUsdAccount,
  usAccountInfo,
  type Wire,
} from '../helpers/payments.ts';
import { startReceiver, waitFor, type Received, type Receiver } from '../helpers/receiver.ts';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

let srv: TestServer;
let rec: Receiver;
// biome-ignore lint/suspicious/noExplicitAny: `any`: the OpenAPI document is arbitrary JSON; the assertions below check its shape.
let doc: any;

beforeAll(async () => {
  srv = await startServer();
  rec = await startReceiver();
  // An incoming UMA payment's PENDING is an approval request: 202 defers the decision to
  // POST /transactions/{id}/approve|reject, which the flow below makes.
  rec.respond = (r) => (r.body?.type === 'INCOMING_PAYMENT.PENDING' ? { status: 202 } : { status: 200, body: 'ok' });
  const res = await srv.anon.get('/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

/** Replaces every local `$ref` with what it points to (the document's own schemas are inline today). */
function deref(node: unknown, root: unknown, depth = 0): unknown {
  if (depth > 64) throw new Error('$ref nesting too deep (a cycle?)');
  if (Array.isArray(node)) return node.map((n) => deref(n, root, depth));
  if (node === null || typeof node !== 'object') return node;
  const obj = node as Record<string, unknown>;
  if (typeof obj.$ref === 'string') {
    if (!obj.$ref.startsWith('#/')) throw new Error(`non-local $ref ${obj.$ref}`);
    let target: unknown = root;
    for (const part of obj.$ref.slice(2).split('/'))
      target = (target as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (target === undefined) throw new Error(`dangling $ref ${obj.$ref}`);
    return deref(target, root, depth + 1);
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, deref(v, root, depth)]));
}

/** One Ajv validator per event type, compiled from the served document's `webhooks` section. */
function validatorsFromDocument(): Map<string, { webhook: string; validate: ValidateFunction }> {
  const ajv = new Ajv({ allErrors: true, strict: false, discriminator: true });
  addFormats(ajv);
  const out = new Map<string, { webhook: string; validate: ValidateFunction }>();
  // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
  for (const [key, item] of Object.entries<any>(doc.webhooks ?? {})) {
    // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
    const schema = deref(item.post.requestBody.content['application/json'].schema, doc) as Record<string, any>;
    const validate = ajv.compile(schema);
    for (const type of schema.properties.type.enum as string[]) {
      expect(out.has(type), `${type} listed by two webhooks`).toBe(false);
      out.set(type, { webhook: key, validate });
    }
  }
  return out;
}

const quoteBody = (account: string, dest: string, amount: number, extra: Record<string, unknown> = {}) => ({
  source: { sourceType: 'ACCOUNT', accountId: account },
  destination: { destinationType: 'ACCOUNT', accountId: dest },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: amount,
  ...extra,
});

/** A business with everything KYB needs; the registration number's suffix picks the sandbox outcome. */
async function completeBusiness(p: PlatformHandle, registrationNumber: string): Promise<Wire> {
  const c = await createCustomer(p.api, businessBody({ registrationNumber }));
  await createOwner(p.api, ownerBody(c.id));
  await upload(srv.baseUrl, p.creds, c.id, 'CERTIFICATE_OF_INCORPORATION');
  await upload(srv.baseUrl, p.creds, c.id, 'SHAREHOLDER_REGISTER', { bytes: PNG });
  await upload(srv.baseUrl, p.creds, c.id, 'BANK_STATEMENT', { bytes: JPEG });
  return c;
}

async function verify(p: PlatformHandle, customerId: string): Promise<Wire> {
  const res = await p.api.post('/verifications', { customerId });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function ok(res: Promise<{ status: number; text: string; body: Wire }>, status = 200): Promise<Wire> {
  const r = await res;
  expect(r.status, r.text).toBe(status);
  return r.body;
}

/** The broad flow; returns the transactions it made. */
async function runFlow(p: PlatformHandle): Promise<string[]> {
  const txns: string[] = [];
  await ok(p.api.patch('/config', { webhookEndpoint: rec.url }));
  await ok(p.api.post('/sandbox/webhooks/test'));

  // Customers: decided at creation (sandbox name rule), and through verifications.
  await createCustomer(p.api, individualBody({ fullName: 'Ann Approved' }));
  await createCustomer(p.api, individualBody({ fullName: 'Rob Rejected002' }));
  const pending = await createCustomer(p.api, individualBody({ fullName: 'Jane Doe001' }));
  expect((await verify(p, pending.id)).verificationStatus).toBe('RESOLVE_ERRORS');
  await upload(srv.baseUrl, p.creds, pending.id, 'PASSPORT', { bytes: JPEG });
  expect((await verify(p, pending.id)).verificationStatus).toBe('PENDING_MANUAL_REVIEW');
  for (const [reg, status] of [
    ['REG-100', 'APPROVED'],
    ['REG-002', 'REJECTED'],
    ['REG-001', 'PENDING_MANUAL_REVIEW'],
  ] as const) {
    const b = await completeBusiness(p, reg);
    expect((await verify(p, b.id)).verificationStatus).toBe(status);
  }

  // External accounts: a customer's (no event), and a deleted one (STATUS_UPDATED to INACTIVE).
  const customer = await createCustomer(p.api, individualBody({ fullName: 'Cara Customer' }));
  await ok(
    p.api.post('/customers/external-accounts', { customerId: customer.id, currency: 'USD', accountInfo: usAccountInfo('001') }),
    201,
  );
  const doomed = await platformExternal(p, '001');
  expect((await p.api.delete(`/platform/external-accounts/${doomed}`)).status).toBe(204);

  // Money out of the platform's USD account.
  const account = await platformUsdAccount(p);
  await fund(p, account, 1_000_000);
  const eur = await platformExternal(p, '001', 'EUR', eurAccountInfo());
  const q = await ok(p.api.post('/quotes', quoteBody(account, eur, 10_000, { description: 'catalogue' })), 201);
  await ok(p.api.post(`/quotes/${q.id}/execute`));
  txns.push(q.transactionId);
  for (const suffix of ['002', '007', '005']) {
    const dest = await platformExternal(p, suffix);
    txns.push((await ok(p.api.post('/quotes', quoteBody(account, dest, 1_000, { immediatelyExecute: true })), 201)).transactionId);
  }
  for (const suffix of ['001', '002']) {
    const ext = await platformExternal(p, suffix);
    txns.push(
      (await ok(p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 500 }), 201)).id,
    );
    txns.push(
      (await ok(p.api.post('/transfer-in', { source: { accountId: ext }, destination: { accountId: account }, amount: 700 }), 201)).id,
    );
  }

  // Incoming UMA payments to a customer: approved, rejected, and failed by the sender's compliance.
  const receive = (sender: string) =>
    ok(
      p.api.post('/sandbox/uma/receive', {
        senderUmaAddress: `${sender}@sandbox.uma.money`,
        customerId: customer.id,
        receivingCurrencyCode: 'USD',
        receivingCurrencyAmount: 1_500,
      }),
    );
  const approvalRequested = (id: string) =>
    waitFor(() => rec.received.find((r) => r.body?.type === 'INCOMING_PAYMENT.PENDING' && r.body.data.id === id));
  const approved = await receive('$success.usd');
  await approvalRequested(approved.id);
  expect((await ok(p.api.post(`/transactions/${approved.id}/approve`, {}))).status).toBe('COMPLETED');
  const rejected = await receive('$success.eur');
  await approvalRequested(rejected.id);
  expect((await ok(p.api.post(`/transactions/${rejected.id}/reject`, {}))).status).toBe('REJECTED');
  const failed = await receive('$fail.compliance.usd');
  expect(failed.status).toBe('FAILED');
  txns.push(approved.id, rejected.id, failed.id);

  // A quote left to expire; then time enough for every delayed outcome (the 005 return included).
  const stale = await ok(p.api.post('/quotes', quoteBody(account, eur, 2_000)), 201);
  txns.push(stale.transactionId);
  await advance(p, 1);
  await advance(p, 301);

  // Everything the platform's outbox holds reaches the receiver.
  await waitFor(async () => {
    const rows = await srv.app.ctx.db.selectFrom('outbox_events').select(['id', 'status']).where('platform_id', '=', p.id).execute();
    const got = new Set(rec.received.map((r) => r.body?.id));
    return rows.length > 0 && rows.every((r) => got.has(r.id));
  }, 20_000);
  return txns;
}

describe('delivered events match the served OpenAPI webhooks section', () => {
  let p: PlatformHandle;
  let txns: string[];
  let delivered: Received[];

  beforeAll(async () => {
    p = await srv.newPlatform();
    txns = await runFlow(p);
    delivered = rec.received;
  }, 120_000);

  it('every envelope validates against the schema listed for its type', () => {
    const validators = validatorsFromDocument();
    const problems: string[] = [];
    for (const r of delivered) {
      const v = validators.get(r.body?.type);
      if (!v) {
        problems.push(`${r.body?.type}: no webhook in the document lists this type`);
        continue;
      }
      if (!v.validate(r.body)) problems.push(`${r.body.type} (${v.webhook}): ${JSON.stringify(v.validate.errors?.slice(0, 5))}`);
    }
    expect(problems).toEqual([]);
  });

  it('the flow reached every event type it was built to cause', () => {
    const seen = new Set(delivered.map((r) => r.body.type as string));
    const expected = [
      'TEST',
      'CUSTOMER.KYC_APPROVED',
      'CUSTOMER.KYC_REJECTED',
      'CUSTOMER.KYC_PENDING',
      'CUSTOMER.KYB_APPROVED',
      'CUSTOMER.KYB_REJECTED',
      'CUSTOMER.KYB_PENDING',
      'VERIFICATION.RESOLVE_ERRORS',
      'VERIFICATION.PENDING_MANUAL_REVIEW',
      'VERIFICATION.APPROVED',
      'VERIFICATION.REJECTED',
      'EXTERNAL_ACCOUNT.STATUS_UPDATED',
      'INTERNAL_ACCOUNT.BALANCE_UPDATED',
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
      'OUTGOING_PAYMENT.FAILED',
      'OUTGOING_PAYMENT.EXPIRED',
      'OUTGOING_PAYMENT.REFUND_PENDING',
      'OUTGOING_PAYMENT.REFUND_COMPLETED',
      'OUTGOING_PAYMENT.REFUND_FAILED',
      'INCOMING_PAYMENT.PENDING',
      'INCOMING_PAYMENT.COMPLETED',
      'INCOMING_PAYMENT.FAILED',
    ];
    expect(expected.filter((t) => !seen.has(t))).toEqual([]);
    for (const t of seen) expect(WEBHOOK_TYPES).toContain(t);
    // Two TEST events: one for setting the endpoint, one from POST /sandbox/webhooks/test.
    expect(delivered.filter((r) => r.body.type === 'TEST').length).toBe(2);
  });

  it('data is the resource: a payment’s last event is the transaction as GET returns it; balance events carry no instructions', async () => {
    for (const id of txns) {
      const events = delivered.filter((r) => r.body.data?.id === id && /_PAYMENT\./.test(r.body.type));
      expect(events.length, id).toBeGreaterThan(0);
      // Delivery keeps each resource's order, so the last one received is the latest.
      const last = events[events.length - 1]!;
      const res = await p.api.get(`/transactions/${id}`);
      expect(res.status).toBe(200);
      expect(last.body.data, `${id} ${last.body.type}`).toEqual(res.body);
      expect(last.body.type.startsWith(res.body.type === 'INCOMING' ? 'INCOMING_PAYMENT.' : 'OUTGOING_PAYMENT.')).toBe(true);
    }
    const balances = delivered.filter((r) => r.body.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED');
    expect(balances.length).toBeGreaterThan(0);
    for (const b of balances) expect(b.body.data.fundingPaymentInstructions).toEqual([]);
    await expectLedgerClean(srv, p.id);
  });

  it('the validators are not vacuous: a changed envelope fails', () => {
    const validators = validatorsFromDocument();
    const sample = (type: string) => structuredClone(delivered.find((r) => r.body.type === type)!.body);
    const mutate: [string, (b: Wire) => void][] = [
      ['OUTGOING_PAYMENT.COMPLETED', (b) => (b.data.type = 'INCOMING')],
      ['OUTGOING_PAYMENT.FAILED', (b) => (b.data.failureReason = 'SOMETHING_ELSE')],
      ['INCOMING_PAYMENT.COMPLETED', (b) => delete b.data.receivedAmount],
      ['CUSTOMER.KYC_APPROVED', (b) => (b.data.surprise = 1)],
      ['INTERNAL_ACCOUNT.BALANCE_UPDATED', (b) => (b.data.balance.amount = 'many')],
      ['TEST', (b) => (b.data = { x: 1 })],
      ['VERIFICATION.APPROVED', (b) => (b.id = 'Event:1')],
      ['EXTERNAL_ACCOUNT.STATUS_UPDATED', (b) => delete b.timestamp],
    ];
    for (const [type, change] of mutate) {
      const body = sample(type);
      const v = validators.get(type)!;
      expect(v.validate(body), `${type} as delivered`).toBe(true);
      change(body);
      expect(v.validate(body), `${type} changed`).toBe(false);
    }
    // A type on the wrong webhook fails too.
    const wrong = sample('OUTGOING_PAYMENT.COMPLETED');
    wrong.type = 'INCOMING_PAYMENT.COMPLETED';
    expect(validators.get('OUTGOING_PAYMENT.COMPLETED')!.validate(wrong)).toBe(false);
  });
});
