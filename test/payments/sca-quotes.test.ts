/**
 * Per-transaction Strong Customer Authentication on quotes (issue #23): when a payment needs the
 * customer's authorisation, PENDING_AUTHORIZATION with its scaChallenge, authorize (with the SCA
 * login session), resend, the lapse of a challenge, the exemptions, and what the live CLI sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setCurrencies } from '../helpers/customers.ts';
import { expectError } from '../helpers/http.ts';
import { advance, balances, eventsFor, expectLedgerClean, fund, tx, usAccountInfo, type Wire } from '../helpers/payments.ts';
import { uniqueAccountNumber } from '../helpers/random.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

const CODE = '123456';
const BERLIN = { line1: 'Unter den Linden 1', city: 'Berlin', postalCode: '10117', country: 'DE' };
const SF = { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' };

interface Sender {
  p: PlatformHandle;
  customerId: string;
  account: string;
  payee: string;
}

/** A customer (in Berlin: SCA applies, unless `home` says otherwise) with a funded USD account and a payee. */
async function sender(p: PlatformHandle, home = BERLIN, funded = 1_000_000): Promise<Sender> {
  const c = await p.api.post('/customers', {
    customerType: 'INDIVIDUAL',
    fullName: 'Erika Mustermann',
    birthDate: '1985-04-12',
    nationality: 'DE',
    phoneNumber: '+4915123456789',
    address: home,
  });
  expect(c.status, c.text).toBe(201);
  const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: c.body.id, currency: 'USD' } });
  const account = accounts.body.data[0].id as string;
  if (funded > 0) await fund(p, account, funded);
  const ext = await p.api.post('/customers/external-accounts', {
    customerId: c.body.id,
    currency: 'USD',
    accountInfo: { ...usAccountInfo('001'), accountNumber: uniqueAccountNumber('001') },
  });
  expect(ext.status, ext.text).toBe(201);
  return { p, customerId: c.body.id, account, payee: ext.body.id };
}

async function login(s: Sender): Promise<void> {
  const q = { query: { customerId: s.customerId } };
  const start = await s.p.api.post('/sca/login/start', { factor: 'SMS_OTP' }, q);
  expect(start.status, start.text).toBe(200);
  const done = await s.p.api.post(
    '/sca/login/complete',
    { factor: 'SMS_OTP', challengeId: start.body.challengeId, code: CODE, endUserIpAddress: '203.0.113.7' },
    q,
  );
  expect(done.status, done.text).toBe(200);
  expect(done.body.status).toBe('SUCCESS');
}

const quoteOf = (s: Sender, amount: number, extra: Record<string, unknown> = {}) => ({
  source: { sourceType: 'ACCOUNT', accountId: s.account },
  destination: { destinationType: 'ACCOUNT', accountId: s.payee },
  lockedCurrencySide: 'SENDING',
  lockedCurrencyAmount: amount,
  ...extra,
});

async function quote(s: Sender, amount = 50_000): Promise<Wire> {
  const res = await s.p.api.post('/quotes', quoteOf(s, amount));
  expect(res.status, res.text).toBe(201);
  expect(res.body.status).toBe('PENDING');
  expect(res.body.scaChallenge).toBeUndefined();
  return res.body;
}

async function executeParked(s: Sender, q: Wire, body?: Record<string, unknown>): Promise<Wire> {
  const res = await s.p.api.post(`/quotes/${q.id}/execute`, body);
  expect(res.status, res.text).toBe(200);
  expect(res.body.status).toBe('PENDING_AUTHORIZATION');
  return res.body;
}

describe('a prefunded send by an SCA customer', () => {
  it('waits for authorisation: nothing moves until the customer authorises, then it completes', async () => {
    const s = await sender(await srv.newPlatform());
    const q = await quote(s);
    const parked = await executeParked(s, q);
    expect(parked.scaChallenge).toMatchObject({ factor: 'SMS_OTP', purpose: 'PAYOUT' });
    expect(parked.scaChallenge.id).toMatch(/^ScaChallenge:/);
    expect(parked.scaChallenge.availableFactors).toContain('SMS_OTP');
    expect(Date.parse(parked.scaChallenge.expiresAt) - Date.parse(parked.createdAt)).toBeGreaterThan(0);
    expect(await balances(s.p, s.account)).toEqual({ balance: 1_000_000, total: 1_000_000 });
    expect((await tx(s.p.api, q.transactionId)).status).toBe('PENDING_AUTHORIZATION');
    // The challenge lives on the quote.
    expect((await s.p.api.get(`/quotes/${q.id}`)).body.scaChallenge).toEqual(parked.scaChallenge);
    // Executing again is a conflict; authorising needs the SCA login session.
    expectError(await s.p.api.post(`/quotes/${q.id}/execute`), 409, 'CONFLICT');
    expectError(await s.p.api.post(`/quotes/${q.id}/authorize`, { code: CODE }), 409, 'SCA_SESSION_REQUIRED');
    await login(s);
    // A wrong code is refused and counted; the right one releases the payment.
    const wrong = expectError(await s.p.api.post(`/quotes/${q.id}/authorize`, { code: '000000' }), 400, 'INVALID_INPUT');
    expect(wrong.body.details.attemptsRemaining).toBe(4);
    const ok = await s.p.api.post(`/quotes/${q.id}/authorize`, { code: CODE, endUserIpAddress: '203.0.113.7' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.status).toBe('PROCESSING');
    expect(ok.body.scaChallenge).toBeUndefined();
    expect((await balances(s.p, s.account)).balance).toBe(950_000);
    // Replaying the authorisation: nothing is pending any more.
    expectError(await s.p.api.post(`/quotes/${q.id}/authorize`, { code: CODE }), 409, 'CONFLICT');
    await advance(s.p, 1);
    expect((await tx(s.p.api, q.transactionId)).status).toBe('COMPLETED');
    expect(await eventsFor(srv, q.transactionId)).toEqual([
      'OUTGOING_PAYMENT.PENDING',
      'OUTGOING_PAYMENT.PENDING_AUTHORIZATION',
      'OUTGOING_PAYMENT.PROCESSING',
      'OUTGOING_PAYMENT.COMPLETED',
    ]);
    await expectLedgerClean(srv, s.p.id);
  });

  it('fails with SCA_NOT_COMPLETED when the challenge lapses; no money moved', async () => {
    const s = await sender(await srv.newPlatform());
    await login(s);
    const q = await quote(s);
    await executeParked(s, q);
    await advance(s.p, 301);
    const t = await tx(s.p.api, q.transactionId);
    expect(t).toMatchObject({ status: 'FAILED', failureReason: 'SCA_NOT_COMPLETED' });
    expect((await s.p.api.get(`/quotes/${q.id}`)).body.status).toBe('FAILED');
    expectError(await s.p.api.post(`/quotes/${q.id}/authorize`, { code: CODE }), 409, 'CONFLICT');
    expect(await balances(s.p, s.account)).toEqual({ balance: 1_000_000, total: 1_000_000 });
    expect((await eventsFor(srv, q.transactionId)).at(-1)).toBe('OUTGOING_PAYMENT.FAILED');
    await expectLedgerClean(srv, s.p.id);
  });

  it('resends the code without extending the challenge, at most every 30 s', async () => {
    const s = await sender(await srv.newPlatform());
    const q = await quote(s);
    const parked = await executeParked(s, q);
    expectError(await s.p.api.post(`/quotes/${q.id}/authorize/resend`), 429, 'RATE_LIMITED');
    await advance(s.p, 31);
    expect((await s.p.api.post(`/quotes/${q.id}/authorize/resend`)).status).toBe(204);
    const tooSoon = expectError(await s.p.api.post(`/quotes/${q.id}/authorize/resend`), 429, 'RATE_LIMITED');
    expect(Number(tooSoon.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await s.p.api.get(`/quotes/${q.id}`)).body.scaChallenge.expiresAt).toBe(parked.scaChallenge.expiresAt);
  });

  it('refuses TOTP as a per-transaction factor and PASSKEY without an enrolled passkey', async () => {
    const s = await sender(await srv.newPlatform());
    const q = await quote(s);
    const totp = expectError(await s.p.api.post(`/quotes/${q.id}/execute`, { scaFactor: 'TOTP' }), 400, 'INVALID_INPUT');
    expect(totp.body.details.errors[0].field).toBe('scaFactor');
    expectError(await s.p.api.post(`/quotes/${q.id}/execute`, { scaFactor: 'PASSKEY' }), 400, 'INVALID_INPUT');
    // Refusals change nothing: the quote can still be executed.
    expect((await executeParked(s, q, { scaFactor: 'SMS_OTP' })).scaChallenge.factor).toBe('SMS_OTP');
  });

  it('answers 423 while the customer is locked out', async () => {
    const s = await sender(await srv.newPlatform());
    await login(s);
    const q = await quote(s);
    await executeParked(s, q);
    for (let i = 0; i < 5; i++) {
      const ev = await s.p.api.post('/sca/record-event', { eventType: 'FAILED_LOGIN_ATTEMPT' }, { query: { customerId: s.customerId } });
      expect([200, 423]).toContain(ev.status);
    }
    const locked = expectError(await s.p.api.post(`/quotes/${q.id}/authorize`, { code: CODE }), 423, 'ACCOUNT_LOCKED');
    expect(locked.body.details).toMatchObject({ suspended: false, failedAttempts: 5 });
  });

  it('lets exactly one of two concurrent authorisations release the payment', async () => {
    const s = await sender(await srv.newPlatform());
    await login(s);
    const q = await quote(s);
    await executeParked(s, q);
    const [a, b] = await Promise.all([
      s.p.api.post(`/quotes/${q.id}/authorize`, { code: CODE }),
      s.p.api.post(`/quotes/${q.id}/authorize`, { code: CODE }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    expect((await balances(s.p, s.account)).balance).toBe(950_000);
    await expectLedgerClean(srv, s.p.id);
  });

  it('is 404 on another platform and 403 for a VIEW-only token', async () => {
    const s = await sender(await srv.newPlatform());
    const q = await quote(s);
    await executeParked(s, q);
    const other = await srv.newPlatform();
    expectError(await other.api.post(`/quotes/${q.id}/authorize`, { code: CODE }), 404, 'QUOTE_NOT_FOUND');
    expectError(await other.api.post(`/quotes/${q.id}/authorize/resend`), 404, 'QUOTE_NOT_FOUND');
    const view = await s.p.api.post('/tokens', { name: 'view', permissions: ['VIEW'] });
    const viewer = s.p.api.with({ basic: { id: view.body.clientId, secret: view.body.clientSecret } });
    expectError(await viewer.post(`/quotes/${q.id}/authorize`, { code: CODE }), 403, 'FORBIDDEN');
    expect((await viewer.get(`/quotes/${q.id}`)).body.status).toBe('PENDING_AUTHORIZATION');
    const bad = expectError(await s.p.api.post(`/quotes/${q.id}/authorize`, { code: CODE, extra: 1 }), 400, 'INVALID_INPUT');
    expect(bad.body.details.errors[0].field).toBe('extra');
  });
});

describe('when SCA does not apply', () => {
  it('a customer outside the EEA executes at once, and the SCA operations are 409', async () => {
    const s = await sender(await srv.newPlatform(), SF);
    const q = await quote(s);
    const res = await s.p.api.post(`/quotes/${q.id}/execute`, { scaFactor: 'SMS_OTP' });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('PROCESSING');
    expectError(await s.p.api.post(`/quotes/${q.id}/authorize`, { code: CODE }), 409, 'CONFLICT');
    expectError(await s.p.api.post(`/quotes/${q.id}/authorize/resend`), 409, 'CONFLICT');
  });

  it('a trusted beneficiary is paid without a challenge, and again with one once untrusted', async () => {
    const s = await sender(await srv.newPlatform());
    const path = `/customers/external-accounts/${s.payee}`;
    const start = await s.p.api.post(`${path}/trust`);
    expect(start.status, start.text).toBe(200);
    const confirm = await s.p.api.post(`${path}/trust/confirm`, { challengeId: start.body.scaChallenge?.id, code: CODE });
    expect(confirm.status, confirm.text).toBe(200);
    expect(confirm.body.trusted).toBe(true);
    const q = await quote(s);
    expect((await s.p.api.post(`/quotes/${q.id}/execute`)).body.status).toBe('PROCESSING');
    const unstart = await s.p.api.post(`${path}/untrust`);
    const unconfirm = await s.p.api.post(`${path}/untrust/confirm`, { challengeId: unstart.body.scaChallenge?.id, code: CODE });
    expect(unconfirm.body.trusted).toBe(false);
    await executeParked(s, await quote(s));
    await expectLedgerClean(srv, s.p.id);
  });

  it('the low-value exemption spares payments up to EUR 30 while fewer than 5 and at most EUR 100 since the last authorised one', async () => {
    const s = await sender(await srv.newPlatform());
    await login(s);
    // 500 US cents is under EUR 5: five go through, the sixth needs authorising.
    for (let i = 0; i < 5; i++) expect((await s.p.api.post(`/quotes/${(await quote(s, 500)).id}/execute`)).body.status).toBe('PROCESSING');
    const sixth = await executeParked(s, await quote(s, 500));
    expect((await s.p.api.post(`/quotes/${sixth.id}/authorize`, { code: CODE })).body.status).toBe('PROCESSING');
    // The authorisation starts the count again; more than EUR 30 is never exempt.
    expect((await s.p.api.post(`/quotes/${(await quote(s, 500)).id}/execute`)).body.status).toBe('PROCESSING');
    await executeParked(s, await quote(s, 5_000));
    await expectLedgerClean(srv, s.p.id);
  });

  it('a transfer between the customer’s own accounts is exempt', async () => {
    const p = await srv.newPlatform();
    await setCurrencies(p.api, ['USD', 'EUR']);
    const s = await sender(p);
    const eur = await p.api.get('/customers/internal-accounts', { query: { customerId: s.customerId, currency: 'EUR' } });
    const other = eur.body.data[0];
    const res = await p.api.post('/quotes', { ...quoteOf(s, 50_000), destination: { destinationType: 'ACCOUNT', accountId: other.id } });
    expect(res.status, res.text).toBe(201);
    expect((await p.api.post(`/quotes/${res.body.id}/execute`)).body.status).toBe('PROCESSING');
  });
});

describe('a real-time funded cross-currency send', () => {
  it('is created 202 PENDING_AUTHORIZATION, takes two authorisations, then shows its instructions', async () => {
    const s = await sender(await srv.newPlatform(), BERLIN, 0);
    await login(s);
    const eurPayee = await s.p.api.post('/customers/external-accounts', {
      customerId: s.customerId,
      currency: 'EUR',
      accountInfo: {
        accountType: 'EUR_ACCOUNT',
        iban: 'DE89370400440532013000',
        swiftCode: 'DEUTDEFF',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Hans Müller', countryOfResidence: 'DE' },
      },
    });
    expect(eurPayee.status, eurPayee.text).toBe(201);
    // What the live CLI sends for `quotes create --source-customer … --source-currency USD --sca-factor SMS_OTP`.
    const created = await s.p.api.post('/quotes', {
      lockedCurrencyAmount: 50_000,
      lockedCurrencySide: 'SENDING',
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: s.customerId },
      destination: { destinationType: 'ACCOUNT', accountId: eurPayee.body.id },
      scaFactor: 'SMS_OTP',
    });
    expect(created.status, created.text).toBe(202);
    expect(created.body.status).toBe('PENDING_AUTHORIZATION');
    expect(created.body.paymentInstructions).toBeUndefined();
    expect(created.body.scaChallenge.purpose).toBe('CURRENCY_CONVERSION');
    const first = await s.p.api.post(`/quotes/${created.body.id}/authorize`, { code: CODE });
    expect(first.status, first.text).toBe(200);
    expect(first.body.status).toBe('PENDING_AUTHORIZATION');
    expect(first.body.scaChallenge.purpose).toBe('PAYOUT');
    expect(first.body.scaChallenge.id).not.toBe(created.body.scaChallenge.id);
    const second = await s.p.api.post(`/quotes/${created.body.id}/authorize`, { code: CODE });
    expect(second.body.status).toBe('PENDING');
    expect(second.body.paymentInstructions.length).toBeGreaterThan(0);
    const sent = await s.p.api.post('/sandbox/send', { quoteId: created.body.id, currencyCode: 'USD' });
    expect(sent.status, sent.text).toBe(200);
    await advance(s.p, 1);
    expect((await tx(s.p.api, created.body.transactionId)).status).toBe('COMPLETED');
    await expectLedgerClean(srv, s.p.id);
  });

  it('cannot be funded before it is authorised', async () => {
    const s = await sender(await srv.newPlatform(), BERLIN, 0);
    const created = await s.p.api.post('/quotes', {
      ...quoteOf(s, 50_000),
      source: { sourceType: 'REALTIME_FUNDING', currency: 'USD', customerId: s.customerId },
    });
    expect(created.status).toBe(202);
    expectError(await s.p.api.post('/sandbox/send', { quoteId: created.body.id, currencyCode: 'USD' }), 409, 'CONFLICT');
  });
});

describe('what the live CLI sends', () => {
  it('`quotes execute --sca-factor SMS_OTP` posts {scaFactor}; without the flag, no body at all', async () => {
    const s = await sender(await srv.newPlatform());
    const withFlag = await s.p.api.post(`/quotes/${(await quote(s)).id}/execute`, { scaFactor: 'SMS_OTP' });
    expect(withFlag.status).toBe(200);
    expect(withFlag.body.scaChallenge.factor).toBe('SMS_OTP');
    // The client sends no body and no content-type when there is no body.
    const bare = await s.p.api.post(`/quotes/${(await quote(s)).id}/execute`);
    expect(bare.status).toBe(200);
    expect(bare.body.status).toBe('PENDING_AUTHORIZATION');
  });
});
