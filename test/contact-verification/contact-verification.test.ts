/**
 * Contact verification over HTTP: POST /customers/{customerId}/verify-email[/confirm] and
 * verify-phone[/confirm], and the customer's `contactVerification` (facts-customers-extra §2;
 * docs/contact-verification.md): who must verify, the per-channel state machine, the sandbox code
 * 123456, wrong codes and their limit, expiry and the send limit on the platform's clock, contact
 * changes, and the refusals (400, 401, 403, 404, 409, 410).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicHeader, expectError, type Client, type Res } from '../helpers/http.ts';
import { create, eventsOf, business, expectFieldError, individual, manualClock, type Wire } from '../helpers/customers.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { advanceClock } from '../helpers/wallet-auth.ts';

const clock = manualClock();
let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let prod: PlatformHandle;
let viewer: Client;
let seq = 0;

beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
  p = await srv.newPlatform({ name: 'Contact verification' });
  other = await srv.newPlatform({ name: 'Someone else' });
  prod = await srv.newPlatform({ name: 'Production', environment: 'PRODUCTION' });
  const t = await p.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
  expect(t.status, t.text).toBe(201);
  viewer = p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
});
afterAll(async () => srv?.close());

/** An individual in Germany (an EEA region): it must verify both its email and its phone number. */
function eu(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  seq += 1;
  return individual({
    region: 'DE',
    email: `kunde${seq}@example.de`,
    phoneNumber: `+491511234${String(seq).padStart(4, '0')}`,
    ...overrides,
  });
}

const send = (api: Client, id: string, channel: 'email' | 'phone') => api.post(`/customers/${id}/verify-${channel}`);
const confirm = (api: Client, id: string, channel: 'email' | 'phone', code: unknown) =>
  api.post(`/customers/${id}/verify-${channel}/confirm`, { code });

function expectSent(res: Res): void {
  expect(res.status, res.text).toBe(204);
  expect(res.text).toBe('');
}

/** A refused code: 400 INVALID_INPUT on `code`, with the reason. */
function expectCodeRefused(res: Res, reason: string): Res {
  expectFieldError(res, 'code');
  expect(res.body.details.reason, res.text).toBe(reason);
  return res;
}

/** The stored channel rows of a customer, straight from the store. */
async function rowsOf(customerId: string) {
  return srv.app.ctx.db.selectFrom('contact_verifications').selectAll().where('customer_id', '=', customerId).execute();
}

describe("the customer's contactVerification", () => {
  it('both channels PENDING for an EEA customer of a sandbox platform, on create, GET, list, PATCH and its event', async () => {
    const c = await create(p.api, eu());
    expect(c.contactVerification).toEqual({ email: 'PENDING', phone: 'PENDING' });
    expect((await p.api.get(`/customers/${c.id}`)).body).toEqual(c);
    const listed = await p.api.get('/customers', { query: { platformCustomerId: c.platformCustomerId } });
    expect(listed.body.data).toEqual([c]);
    clock.advance(1_000);
    const patched = await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', fullName: 'Erika Mustermann' });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.contactVerification).toEqual({ email: 'PENDING', phone: 'PENDING' });
    const created = (await eventsOf(srv, p.id)).find((e) => e.resourceId === c.id);
    expect(created?.data.contactVerification).toEqual({ email: 'PENDING', phone: 'PENDING' });
  });

  it('a business in the EEA verifies its primary contact too', async () => {
    seq += 1;
    const b = await create(
      p.api,
      business({ region: 'FR', email: `contact${seq}@acme.fr`, phoneNumber: '+33612345678' }, { primaryContactFirstName: 'Marie' }),
    );
    expect(b.contactVerification).toEqual({ email: 'PENDING', phone: 'PENDING' });
  });

  it('absent outside the EEA, without a region, and on production platforms', async () => {
    for (const body of [individual({ region: 'US' }), individual(), individual({ region: 'GB' })]) {
      const c = await create(p.api, body);
      expect(c).not.toHaveProperty('contactVerification');
    }
    const c = await create(prod.api, eu());
    expect(c).not.toHaveProperty('contactVerification');
  });
});

describe('verify-email, verify-phone and their confirm', () => {
  it('send 204, confirm 123456: the channel is VERIFIED, updatedAt moves; then the other channel', async () => {
    const c = await create(p.api, eu());
    clock.advance(5_000);
    expectSent(await send(p.api, c.id, 'email'));
    // A send changes nothing the customer shows.
    expect((await p.api.get(`/customers/${c.id}`)).body).toEqual(c);
    clock.advance(5_000);
    const email = await confirm(p.api, c.id, 'email', '123456');
    expect(email.status, email.text).toBe(200);
    expect(email.body).toEqual({ ...c, contactVerification: { email: 'VERIFIED', phone: 'PENDING' }, updatedAt: clock.iso() });
    expect((await p.api.get(`/customers/${c.id}`)).body).toEqual(email.body);

    expectSent(await send(p.api, c.id, 'phone'));
    const phone = await confirm(p.api, c.id, 'phone', '123456');
    expect(phone.status, phone.text).toBe(200);
    expect(phone.body.contactVerification).toEqual({ email: 'VERIFIED', phone: 'VERIFIED' });
  });

  it('a VERIFIED channel: sending or confirming again is 409 CONFLICT, and changes nothing', async () => {
    const c = await create(p.api, eu());
    expectSent(await send(p.api, c.id, 'email'));
    const verified = (await confirm(p.api, c.id, 'email', '123456')).body;
    const again = expectError(await confirm(p.api, c.id, 'email', '123456'), 409, 'CONFLICT');
    expect(again.body.details).toEqual({ reason: 'ALREADY_VERIFIED', channel: 'email' });
    expectError(await send(p.api, c.id, 'email'), 409, 'CONFLICT');
    expectError(await confirm(p.api, c.id, 'email', '000000'), 409, 'CONFLICT');
    expect((await p.api.get(`/customers/${c.id}`)).body).toEqual(verified);
  });

  it('the channels are independent: a code sent on one does not confirm the other', async () => {
    const c = await create(p.api, eu());
    expectSent(await send(p.api, c.id, 'email'));
    expectCodeRefused(await confirm(p.api, c.id, 'phone', '123456'), 'NO_CODE_SENT');
    expect((await confirm(p.api, c.id, 'email', '123456')).body.contactVerification).toEqual({ email: 'VERIFIED', phone: 'PENDING' });
  });

  it('confirm before any send: 400, no code outstanding', async () => {
    const c = await create(p.api, eu());
    expectCodeRefused(await confirm(p.api, c.id, 'email', '123456'), 'NO_CODE_SENT');
  });

  it('a wrong code is 400 and counts; the 5th voids the code; a new send starts over', async () => {
    const c = await create(p.api, eu());
    expectSent(await send(p.api, c.id, 'phone'));
    for (let left = 4; left >= 1; left--) {
      const res = expectCodeRefused(await confirm(p.api, c.id, 'phone', '654321'), 'CODE_INVALID');
      expect(res.body.details.attemptsRemaining).toBe(left);
    }
    expectCodeRefused(await confirm(p.api, c.id, 'phone', '111111'), 'ATTEMPTS_EXHAUSTED');
    // The right code no longer helps: the code is void.
    expectCodeRefused(await confirm(p.api, c.id, 'phone', '123456'), 'NO_CODE_SENT');
    expect((await p.api.get(`/customers/${c.id}`)).body.contactVerification.phone).toBe('PENDING');

    expectSent(await send(p.api, c.id, 'phone'));
    expect(expectCodeRefused(await confirm(p.api, c.id, 'phone', '000000'), 'CODE_INVALID').body.details.attemptsRemaining).toBe(4);
    // A resend replaces the code and its wrong attempts.
    expectSent(await send(p.api, c.id, 'phone'));
    expect(expectCodeRefused(await confirm(p.api, c.id, 'phone', '000000'), 'CODE_INVALID').body.details.attemptsRemaining).toBe(4);
    expect((await confirm(p.api, c.id, 'phone', '123456')).status).toBe(200);
  });

  it('a code expires 10 minutes after its send on the platform clock (a sandbox clock advance)', async () => {
    const q = await srv.newPlatform({ name: 'Expiry' });
    const c = await create(q.api, eu());
    expectSent(await send(q.api, c.id, 'email'));
    await advanceClock(q.api, 599);
    expectSent(await send(q.api, c.id, 'email'));
    await advanceClock(q.api, 600);
    expectCodeRefused(await confirm(q.api, c.id, 'email', '123456'), 'CODE_EXPIRED');
    expectSent(await send(q.api, c.id, 'email'));
    await advanceClock(q.api, 599);
    expect((await confirm(q.api, c.id, 'email', '123456')).status).toBe(200);
  });

  it('at most 5 sends an hour per channel: the 6th is 429 RATE_LIMITED with Retry-After, lifted by the clock', async () => {
    const q = await srv.newPlatform({ name: 'Send limit' });
    const c = await create(q.api, eu());
    for (let i = 0; i < 5; i++) {
      expectSent(await send(q.api, c.id, 'email'));
      await advanceClock(q.api, 60);
    }
    const limited = expectError(await send(q.api, c.id, 'email'), 429, 'RATE_LIMITED');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600 - 300);
    expect(limited.body.details.retryAfterSeconds).toBe(retryAfter);
    // The other channel has its own budget, and the outstanding code still works.
    expectSent(await send(q.api, c.id, 'phone'));
    await advanceClock(q.api, retryAfter);
    expectSent(await send(q.api, c.id, 'email'));
    expect((await confirm(q.api, c.id, 'email', '123456')).status).toBe(200);
  });

  it('a code proves the contact it went to: after a change it is refused, and a verified channel is PENDING again', async () => {
    const c = await create(p.api, eu());
    expectSent(await send(p.api, c.id, 'email'));
    const moved = await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', email: 'neu@example.de' });
    expect(moved.status, moved.text).toBe(200);
    expectCodeRefused(await confirm(p.api, c.id, 'email', '123456'), 'CONTACT_CHANGED');
    expectSent(await send(p.api, c.id, 'email'));
    expect((await confirm(p.api, c.id, 'email', '123456')).body.contactVerification.email).toBe('VERIFIED');

    const changed = await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', email: 'andere@example.de' });
    expect(changed.body.contactVerification).toEqual({ email: 'PENDING', phone: 'PENDING' });
    // Only the case differs from the verified address: it is the same address, still VERIFIED.
    const back = await p.api.patch(`/customers/${c.id}`, { customerType: 'INDIVIDUAL', email: 'NEU@example.de' });
    expect(back.body.contactVerification).toEqual({ email: 'VERIFIED', phone: 'PENDING' });
  });

  it('the code is never stored: the row keeps a salted digest', async () => {
    const c = await create(p.api, eu());
    expectSent(await send(p.api, c.id, 'email'));
    const [row] = await rowsOf(c.id);
    expect(row).toMatchObject({ channel: 'EMAIL', code_contact: c.email, failed_attempts: 0, verified_contact: null });
    expect(row!.code_digest).toMatch(/^v1\$[0-9a-f]{32}\$[0-9a-f]{64}$/);
    expect(JSON.stringify(row)).not.toContain('123456');
    // Two sends of the same code are stored differently (fresh salt).
    expectSent(await send(p.api, c.id, 'email'));
    const [again] = await rowsOf(c.id);
    expect(again!.code_digest).not.toBe(row!.code_digest);
  });

  it('400 MISSING_MANDATORY_USER_INFO when the customer has no such contact to send to', async () => {
    const c = await create(p.api, eu({ phoneNumber: undefined }));
    expect(c.contactVerification).toEqual({ email: 'PENDING', phone: 'PENDING' });
    const res = expectError(await send(p.api, c.id, 'phone'), 400, 'MISSING_MANDATORY_USER_INFO');
    expect(res.body.details.errors).toEqual([{ field: 'phoneNumber', message: expect.any(String) }]);
  });
});

describe('refusals', () => {
  it('409 CONFLICT on all four operations for a customer that need not verify (outside the EEA, production)', async () => {
    const us = await create(p.api, individual({ region: 'US' }));
    const production = await create(prod.api, eu());
    for (const [api, id] of [
      [p.api, us.id],
      [prod.api, production.id],
    ] as const) {
      for (const ch of ['email', 'phone'] as const) {
        const res = expectError(await send(api, id, ch), 409, 'CONFLICT');
        expect(res.body.details.reason).toBe('CONTACT_VERIFICATION_NOT_REQUIRED');
        expectError(await confirm(api, id, ch, '123456'), 409, 'CONFLICT');
      }
    }
  });

  it("404 USER_NOT_FOUND for an unknown id and another platform's customer; 410 for a deleted one", async () => {
    const theirs = await create(other.api, eu());
    const mine = await create(p.api, eu());
    expect((await p.api.delete(`/customers/${mine.id}`)).status).toBe(200);
    for (const ch of ['email', 'phone'] as const) {
      for (const id of ['Customer:019542f5-b3e7-7d02-8000-000000000001', theirs.id, encodeURIComponent(theirs.id)]) {
        expectError(await send(p.api, id, ch), 404, 'USER_NOT_FOUND');
        expectError(await confirm(p.api, id, ch, '123456'), 404, 'USER_NOT_FOUND');
      }
      expectError(await send(p.api, mine.id, ch), 410, 'CUSTOMER_DELETED');
      expectError(await confirm(p.api, mine.id, ch, '123456'), 410, 'CUSTOMER_DELETED');
    }
    expect(await rowsOf(theirs.id)).toEqual([]);
  });

  it('401 without or with wrong credentials; 403 for a token without MANAGE', async () => {
    const c = await create(p.api, eu());
    const wrong = p.api.with({ basic: { id: p.creds.id, secret: 'not-the-secret' } });
    for (const api of [srv.anon, wrong]) {
      expectError(await send(api, c.id, 'email'), 401, 'UNAUTHORIZED');
      expectError(await confirm(api, c.id, 'phone', '123456'), 401, 'UNAUTHORIZED');
    }
    expectError(await send(viewer, c.id, 'email'), 403, 'FORBIDDEN');
    expectError(await confirm(viewer, c.id, 'email', '123456'), 403, 'FORBIDDEN');
    expect(await rowsOf(c.id)).toEqual([]);
  });

  it('bad input: 400 INVALID_INPUT naming the field, unknown fields included', async () => {
    const c = await create(p.api, eu());
    expectSent(await send(p.api, c.id, 'email'));
    const path = `/customers/${c.id}/verify-email/confirm`;
    expectFieldError(await p.api.post(path, {}), 'code');
    expectError(await p.api.post(path), 400, 'INVALID_INPUT');
    expectFieldError(await p.api.post(path, { code: 123456 }), 'code');
    expectFieldError(await p.api.post(path, { code: '' }), 'code');
    expectFieldError(await p.api.post(path, { code: '123456', channel: 'email' }), 'channel');
    expectError(await p.api.post(path, undefined, { raw: '{"code":' }), 400, 'INVALID_INPUT');
    expectFieldError(await p.api.post(`/customers/${c.id}/verify-phone`, { resend: true }), 'resend');
    // None of them counted as an attempt.
    const [row] = await rowsOf(c.id);
    expect(row!.failed_attempts).toBe(0);
    // A send with an empty JSON object is a send.
    expectSent(await p.api.post(`/customers/${c.id}/verify-phone`, {}));
  });
});

describe("the live CLI's requests (lightsparkdev/grid-api cli/src/commands/customers.ts)", () => {
  /** The CLI's GridClient: Basic auth, Accept JSON, a JSON body (and its Content-Type) only when it has one. */
  async function cli(path: string, body?: unknown): Promise<{ status: number; text: string; json?: Wire }> {
    const headers: Record<string, string> = { Authorization: basicHeader(p.creds), Accept: 'application/json' };
    const init: RequestInit = { method: 'POST', headers };
    if (body) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(`${srv.baseUrl}${path}`, init);
    const text = await res.text();
    return {
      status: res.status,
      text,
      ...(res.headers.get('content-type')?.includes('application/json') ? { json: JSON.parse(text) } : {}),
    };
  }

  it('customers verify-email / confirm-email / verify-phone / confirm-phone', async () => {
    const c = await create(p.api, eu());
    expect((await cli(`/customers/${c.id}/verify-email`)).status).toBe(204);
    const email = await cli(`/customers/${c.id}/verify-email/confirm`, { code: '123456' });
    expect(email.status, email.text).toBe(200);
    expect(email.json?.contactVerification).toEqual({ email: 'VERIFIED', phone: 'PENDING' });
    expect((await cli(`/customers/${c.id}/verify-phone`)).status).toBe(204);
    const phone = await cli(`/customers/${c.id}/verify-phone/confirm`, { code: '123456' });
    expect(phone.status, phone.text).toBe(200);
    expect(phone.json?.contactVerification).toEqual({ email: 'VERIFIED', phone: 'VERIFIED' });
    const again = await cli(`/customers/${c.id}/verify-phone/confirm`, { code: '654321' });
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ status: 409, code: 'CONFLICT' });
  });
});
