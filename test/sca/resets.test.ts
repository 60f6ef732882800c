/**
 * 2FA resets over HTTP: startTwoFactorReset (201, the 5-per-24-hours limit), the hosted liveness
 * page (GET renders, POST pass / fail), the review job on the sandbox clock, getTwoFactorResetStatus,
 * completeTwoFactorReset for SMS_OTP, TOTP and PASSKEY, and the window's expiry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { SoftwareAuthenticator } from '../helpers/webauthn.ts';
import { advance, fieldOf, limitedClient, platformNow, scaCustomer, usCustomer } from './sca-helpers.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'SCA resets' });
  other = await srv.newPlatform({ name: 'Other platform' });
});
afterAll(async () => srv?.close());

const q = (customerId: string) => ({ query: { customerId } });

async function startReset(c: string, factor: string): Promise<{ resetId: string; verificationLink: string; expiresAt: string }> {
  const res = await p.api.post('/sca/factors/reset', { factor }, q(c));
  expect(res.status, res.text).toBe(201);
  return res.body;
}
const status = async (c: string, id: string) => {
  const res = await p.api.get(`/sca/factors/reset/${id}`, q(c));
  expect(res.status, res.text).toBe(200);
  return res.body;
};
const submit = (link: string, form: string) =>
  fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form, redirect: 'manual' });

describe('the hosted liveness page', () => {
  it('GET renders pass and fail actions; POST pass → PENDING_REVIEW → (5 s) LIVENESS_PASSED', async () => {
    const c = await scaCustomer(p.api);
    const start = await startReset(c, 'SMS_OTP');
    const now = await platformNow(p.api);
    expect(start.resetId).toMatch(/^TwoFactorReset:/);
    expect(Date.parse(start.expiresAt) - now).toBeGreaterThan(14 * 60_000);
    expect(Date.parse(start.expiresAt) - now).toBeLessThanOrEqual(15 * 60_000);
    expect(start.verificationLink.startsWith(`${srv.baseUrl}/hosted/sca-liveness/`)).toBe(true);
    expect(await status(c, start.resetId)).toEqual({
      status: 'INITIATED',
      factor: 'SMS_OTP',
      enrollmentStatus: null,
      expiresAt: start.expiresAt,
      completedAt: null,
    });

    const page = await fetch(start.verificationLink);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('value="pass"');
    expect(html).toContain('value="fail"');
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3)/);

    expect((await submit(start.verificationLink, 'outcome=maybe')).status).toBe(400);
    expect((await submit(start.verificationLink, 'outcome=pass&x=1')).status).toBe(400);
    const posted = await submit(start.verificationLink, 'outcome=pass');
    expect(posted.status).toBe(200);
    expect(await posted.text()).toContain('data-status="PENDING_REVIEW"');
    expect((await status(c, start.resetId)).status).toBe('PENDING_REVIEW');
    expect((await submit(start.verificationLink, 'outcome=fail')).status).toBe(409); // submitted already

    // Not ready yet: complete is 400.
    const early = await p.api.post(
      `/sca/factors/reset/${start.resetId}/complete`,
      { mobile: { countryCode: '+49', number: '15112345678' } },
      q(c),
    );
    expectError(early, 400, 'INVALID_INPUT');
    await advance(p.api, 5);
    expect((await status(c, start.resetId)).status).toBe('LIVENESS_PASSED');
    expect((await fetch(start.verificationLink)).status).toBe(200);

    // SMS_OTP: mobile is required, then COMPLETED with no enrollment step; the new number backs SMS logins.
    const noMobile = await p.api.post(`/sca/factors/reset/${start.resetId}/complete`, undefined, q(c));
    expect(fieldOf(expectError(noMobile, 400, 'INVALID_INPUT'))).toBe('mobile');
    const bad = await p.api.post(`/sca/factors/reset/${start.resetId}/complete`, { mobile: { countryCode: '49', number: '1' } }, q(c));
    expectError(bad, 400, 'INVALID_INPUT');
    const done = await p.api.post(
      `/sca/factors/reset/${start.resetId}/complete`,
      { mobile: { countryCode: '+49', number: '15112345678' } },
      q(c),
    );
    expect(done.status, done.text).toBe(204);
    const final = await status(c, start.resetId);
    expect(final).toMatchObject({ status: 'COMPLETED', enrollmentStatus: null, completedAt: expect.any(String) });
    expectError(
      await p.api.post(`/sca/factors/reset/${start.resetId}/complete`, { mobile: { countryCode: '+49', number: '15112345678' } }, q(c)),
      409,
      'CONFLICT',
    );
    const row = await srv.app.ctx.db
      .selectFrom('sca_customer_states')
      .select('sms_number')
      .where('customer_id', '=', c)
      .executeTakeFirstOrThrow();
    expect(row.sms_number).toBe('+4915112345678');
  });

  it('POST fail → REJECTED after 5 s; an unknown token is 404; other methods 405', async () => {
    const c = await scaCustomer(p.api);
    const start = await startReset(c, 'SMS_OTP');
    expect((await submit(start.verificationLink, 'outcome=fail')).status).toBe(200);
    await advance(p.api, 5);
    expect((await status(c, start.resetId)).status).toBe('REJECTED');
    expectError(
      await p.api.post(`/sca/factors/reset/${start.resetId}/complete`, { mobile: { countryCode: '+1', number: '4155550123' } }, q(c)),
      400,
      'INVALID_INPUT',
    );
    const base = start.verificationLink.slice(0, start.verificationLink.lastIndexOf('/') + 1);
    expect((await fetch(`${base}not-a-token`)).status).toBe(404);
    expect((await submit(`${base}not-a-token`, 'outcome=pass')).status).toBe(404);
    expect((await fetch(start.verificationLink, { method: 'DELETE' })).status).toBe(405);
  });
});

describe('TOTP and PASSKEY resets', () => {
  it('clear the factor; enrollmentStatus PENDING until the replacement is enrolled, then COMPLETED', async () => {
    const c = await scaCustomer(p.api);
    const auth = new SoftwareAuthenticator({ rpId: 'app.example.com' });
    const enroll = await p.api.post('/sca/factors', { type: 'PASSKEY' }, q(c));
    await p.api.post(
      '/sca/factors/confirm',
      { type: 'PASSKEY', origin: auth.origin, credential: auth.register(enroll.body.options.challenge) },
      q(c),
    );
    const totp = await p.api.post('/sca/factors', { type: 'TOTP' }, q(c));
    await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret: totp.body.secret, code: '123456' }, q(c));
    expect((await p.api.get('/sca/factors', q(c))).body.factors.map((f: { factor: string }) => f.factor)).toEqual([
      'SMS_OTP',
      'TOTP',
      'PASSKEY',
    ]);

    for (const factor of ['PASSKEY', 'TOTP'] as const) {
      const start = await startReset(c, factor);
      await submit(start.verificationLink, 'outcome=pass');
      await advance(p.api, 6);
      // The body is ignored for TOTP / PASSKEY resets.
      const done = await p.api.post(
        `/sca/factors/reset/${start.resetId}/complete`,
        { mobile: { countryCode: '+1', number: '4155550123' } },
        q(c),
      );
      expect(done.status, done.text).toBe(204);
      expect(await status(c, start.resetId)).toMatchObject({ status: 'COMPLETED', factor, enrollmentStatus: 'PENDING' });
      expect((await p.api.get('/sca/factors', q(c))).body.factors.map((f: { factor: string }) => f.factor)).not.toContain(factor);
      if (factor === 'PASSKEY') {
        const again = await p.api.post('/sca/factors', { type: 'PASSKEY' }, q(c));
        const auth2 = new SoftwareAuthenticator({ rpId: 'app.example.com' });
        const ok = await p.api.post(
          '/sca/factors/confirm',
          { type: 'PASSKEY', origin: auth2.origin, credential: auth2.register(again.body.options.challenge) },
          q(c),
        );
        expect(ok.status, ok.text).toBe(200);
      } else {
        const again = await p.api.post('/sca/factors', { type: 'TOTP' }, q(c));
        expect((await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret: again.body.secret, code: '123456' }, q(c))).status).toBe(
          200,
        );
      }
      expect((await status(c, start.resetId)).enrollmentStatus).toBe('COMPLETED');
    }
  });

  it('needs the factor enrolled (400 on factor)', async () => {
    const c = await scaCustomer(p.api);
    expect(fieldOf(expectError(await p.api.post('/sca/factors/reset', { factor: 'TOTP' }, q(c)), 400, 'INVALID_INPUT'))).toBe('factor');
    expect(fieldOf(expectError(await p.api.post('/sca/factors/reset', { factor: 'SMS' }, q(c)), 400, 'INVALID_INPUT'))).toBe('factor');
  });
});

describe('limits, expiry and scope', () => {
  it('5 starts per 24 hours (429 with Retry-After), the window expires a reset, another platform’s ids are 404', async () => {
    const c = await scaCustomer(p.api);
    const first = await startReset(c, 'SMS_OTP');
    for (let i = 0; i < 4; i++) await startReset(c, 'SMS_OTP');
    const limited = expectError(await p.api.post('/sca/factors/reset', { factor: 'SMS_OTP' }, q(c)), 429, 'RATE_LIMITED');
    const retry = Number(limited.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(23 * 3600);
    expect(retry).toBeLessThanOrEqual(24 * 3600);

    await advance(p.api, 15 * 60);
    expect((await status(c, first.resetId)).status).toBe('EXPIRED');
    expect((await submit(first.verificationLink, 'outcome=pass')).status).toBe(409);
    expectError(await p.api.post(`/sca/factors/reset/${first.resetId}/complete`, undefined, q(c)), 400, 'INVALID_INPUT');
    await advance(p.api, 24 * 3600 - 15 * 60);
    expect((await p.api.post('/sca/factors/reset', { factor: 'SMS_OTP' }, q(c))).status).toBe(201);

    expectError(await other.api.get(`/sca/factors/reset/${first.resetId}`, q(c)), 404, 'USER_NOT_FOUND');
    const d = await scaCustomer(p.api);
    expectError(await p.api.get(`/sca/factors/reset/${first.resetId}`, q(d)), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.post(`/sca/factors/reset/${first.resetId}/complete`, undefined, q(d)), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get('/sca/factors/reset/TwoFactorReset:nope', q(c)), 404, 'REFERENCE_NOT_FOUND');
    const us = await usCustomer(p.api);
    expectError(await p.api.post('/sca/factors/reset', { factor: 'SMS_OTP' }, q(us)), 409, 'CONFLICT');
    expectError(await p.api.get(`/sca/factors/reset/${first.resetId}`, q(us)), 409, 'CONFLICT');
    expectError(await p.api.post(`/sca/factors/reset/${first.resetId}/complete`, undefined, q(us)), 409, 'CONFLICT');
    const viewer = await limitedClient(p, ['VIEW']);
    expect((await viewer.get(`/sca/factors/reset/${first.resetId}`, q(c))).status).toBe(200);
    expectError(await viewer.post('/sca/factors/reset', { factor: 'SMS_OTP' }, q(c)), 403, 'FORBIDDEN');
    expectError(await viewer.post(`/sca/factors/reset/${first.resetId}/complete`, undefined, q(c)), 403, 'FORBIDDEN');
  });
});
