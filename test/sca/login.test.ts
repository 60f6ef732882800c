/**
 * SCA login and lockout over HTTP: startScaLogin, completeScaLogin (SMS_OTP, TOTP with an
 * independent RFC 6238 code, PASSKEY with a real WebAuthn assertion), recordSecurityEvent and the
 * live lockout schedule with its 423 details, on the platform's sandbox clock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../helpers/http.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { SoftwareAuthenticator } from '../helpers/webauthn.ts';
import { advance, base32Decode, fieldOf, limitedClient, platformNow, scaCustomer, totp, usCustomer, wrongCode } from './sca-helpers.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'SCA login' });
  other = await srv.newPlatform({ name: 'Other platform' });
});
afterAll(async () => srv?.close());

const q = (customerId: string) => ({ query: { customerId } });
const IP = '203.0.113.42';

async function smsStart(api: Client, c: string): Promise<string> {
  const res = await api.post('/sca/login/start', { factor: 'SMS_OTP' }, q(c));
  expect(res.status, res.text).toBe(200);
  return res.body.challengeId as string;
}
const smsComplete = (api: Client, c: string, challengeId: string, code: string) =>
  api.post('/sca/login/complete', { factor: 'SMS_OTP', challengeId, code, endUserIpAddress: IP }, q(c));
const event = (c: string, eventType: string) => p.api.post('/sca/record-event', { eventType }, q(c));

describe('SMS_OTP login', () => {
  it('start → complete with the sandbox code opens a 180-day session; a replay is 409', async () => {
    const c = await scaCustomer(p.api);
    const start = await p.api.post('/sca/login/start', { factor: 'SMS_OTP' }, q(c));
    expect(start.status, start.text).toBe(200);
    const now = await platformNow(p.api);
    expect(start.body).toEqual({ factor: 'SMS_OTP', challengeId: expect.stringMatching(/^ScaChallenge:/), expiresAt: expect.any(String) });
    expect(Date.parse(start.body.expiresAt) - now).toBeGreaterThan(290_000);
    expect(Date.parse(start.body.expiresAt) - now).toBeLessThanOrEqual(300_000);

    const done = await smsComplete(p.api, c, start.body.challengeId, '123456');
    expect(done.status, done.text).toBe(200);
    expect(done.body.status).toBe('SUCCESS');
    const days = (Date.parse(done.body.sessionExpiresAt) - now) / 86_400_000;
    expect(days).toBeGreaterThan(179.99);
    expect(days).toBeLessThan(180.01);
    expectError(await smsComplete(p.api, c, start.body.challengeId, '123456'), 409, 'CONFLICT');
  });

  it('wrong code 400 (counted), wrong challengeId or factor 400, expired 400, 5th wrong voids it (then locked: 423)', async () => {
    const c = await scaCustomer(p.api);
    const id = await smsStart(p.api, c);
    const wrong = expectError(await smsComplete(p.api, c, id, '000000'), 400, 'INVALID_INPUT');
    expect(fieldOf(wrong)).toBe('code');
    expect(wrong.body.details.attemptsRemaining).toBe(4);
    expect(fieldOf(expectError(await smsComplete(p.api, c, 'ScaChallenge:other', '123456'), 400, 'INVALID_INPUT'))).toBe('challengeId');
    const noId = await p.api.post('/sca/login/complete', { factor: 'SMS_OTP', code: '123456', endUserIpAddress: IP }, q(c));
    expect(fieldOf(expectError(noId, 400, 'INVALID_INPUT'))).toBe('challengeId');
    const factor = await p.api.post('/sca/login/complete', { factor: 'TOTP', code: '123456', endUserIpAddress: IP }, q(c));
    expect(fieldOf(expectError(factor, 400, 'INVALID_INPUT'))).toBe('factor');

    await advance(p.api, 301);
    expect(fieldOf(expectError(await smsComplete(p.api, c, id, '123456'), 400, 'INVALID_INPUT'))).toBe('code');

    const id2 = await smsStart(p.api, c);
    for (let i = 0; i < 3; i++) expectError(await smsComplete(p.api, c, id2, '111111'), 400, 'INVALID_INPUT');
    // The 5th failed login overall (1 + 3 + this one) locks the customer for 15 minutes.
    const fifth = expectError(await smsComplete(p.api, c, id2, '111111'), 400, 'INVALID_INPUT');
    expect(fifth.body.details.attemptsRemaining).toBe(1);
    const locked = expectError(await smsComplete(p.api, c, id2, '123456'), 423, 'ACCOUNT_LOCKED');
    expect(locked.body.details).toEqual({ suspended: false, lockedUntil: expect.any(String), failedAttempts: 5 });
  });

  it('a void challenge answers 429 with Retry-After', async () => {
    const c = await scaCustomer(p.api);
    // Clear the counter between wrong proofs so the lockout does not step in first.
    const id = await smsStart(p.api, c);
    for (let i = 0; i < 5; i++) {
      expectError(await smsComplete(p.api, c, id, '999999'), 400, 'INVALID_INPUT');
      expect((await event(c, 'RESET_PASSWORD_COMPLETED')).status).toBe(200);
    }
    const limited = expectError(await smsComplete(p.api, c, id, '123456'), 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // A new start gives a new challenge.
    expect((await smsComplete(p.api, c, await smsStart(p.api, c), '123456')).status).toBe(200);
  });

  it('needs a phone number; bad input names the field', async () => {
    const c = await scaCustomer(p.api, { phoneNumber: undefined });
    expect(fieldOf(expectError(await p.api.post('/sca/login/start', { factor: 'SMS_OTP' }, q(c)), 400, 'INVALID_INPUT'))).toBe('factor');
    expect(fieldOf(expectError(await p.api.post('/sca/login/start', { factor: 'EMAIL' }, q(c)), 400, 'INVALID_INPUT'))).toBe('factor');
    const noIp = await p.api.post('/sca/login/complete', { factor: 'SMS_OTP', code: '1' }, q(c));
    expect(JSON.stringify(expectError(noIp, 400, 'INVALID_INPUT').body.details)).toContain('endUserIpAddress');
    const d = await scaCustomer(p.api);
    const id = await smsStart(p.api, d);
    const both = await p.api.post(
      '/sca/login/complete',
      { factor: 'SMS_OTP', challengeId: id, code: '1', passkeyAssertion: {}, origin: 'https://a.example', endUserIpAddress: IP },
      q(d),
    );
    expect(fieldOf(expectError(both, 400, 'INVALID_INPUT'))).toBe('passkeyAssertion');
    const neither = await p.api.post('/sca/login/complete', { factor: 'SMS_OTP', challengeId: id, endUserIpAddress: IP }, q(d));
    expect(fieldOf(expectError(neither, 400, 'INVALID_INPUT'))).toBe('code');
    const unknown = await p.api.post(
      '/sca/login/complete',
      { factor: 'SMS_OTP', challengeId: id, code: '1', pin: 1, endUserIpAddress: IP },
      q(d),
    );
    expect(JSON.stringify(expectError(unknown, 400, 'INVALID_INPUT').body.details)).toContain('pin');
    // None of these were counted: the right code still works.
    expect((await smsComplete(p.api, d, id, '123456')).status).toBe(200);
  });

  it('TOTP and PASSKEY logins need the factor enrolled (400)', async () => {
    const c = await scaCustomer(p.api);
    expect(fieldOf(expectError(await p.api.post('/sca/login/start', { factor: 'TOTP' }, q(c)), 400, 'INVALID_INPUT'))).toBe('factor');
    expect(fieldOf(expectError(await p.api.post('/sca/login/start', { factor: 'PASSKEY' }, q(c)), 400, 'INVALID_INPUT'))).toBe('factor');
    expectError(await p.api.post('/sca/login/complete', { factor: 'TOTP', code: '123456', endUserIpAddress: IP }, q(c)), 409, 'CONFLICT');
  });
});

describe('TOTP login', () => {
  it('a real RFC 6238 code logs in once per step; a recovery code works once', async () => {
    const c = await scaCustomer(p.api);
    const start = await p.api.post('/sca/factors', { type: 'TOTP' }, q(c));
    const key = base32Decode(start.body.secretBase32Encoded);
    const confirm = await p.api.post(
      '/sca/factors/confirm',
      { type: 'TOTP', secret: start.body.secret, code: totp(key, await platformNow(p.api)) },
      q(c),
    );
    expect(confirm.status, confirm.text).toBe(200);
    const recovery: string[] = confirm.body.recoveryCodes;

    await advance(p.api, 90);
    const login = await p.api.post('/sca/login/start', { factor: 'TOTP' }, q(c));
    expect(login.body).toEqual({ factor: 'TOTP' });
    const code = totp(key, await platformNow(p.api));
    const wrong = await p.api.post('/sca/login/complete', { factor: 'TOTP', code: wrongCode(code), endUserIpAddress: IP }, q(c));
    expect(fieldOf(expectError(wrong, 400, 'INVALID_INPUT'))).toBe('code');
    const ok = await p.api.post('/sca/login/complete', { factor: 'TOTP', code, endUserIpAddress: IP }, q(c));
    expect(ok.status, ok.text).toBe(200);

    await p.api.post('/sca/login/start', { factor: 'TOTP' }, q(c));
    const replay = await p.api.post('/sca/login/complete', { factor: 'TOTP', code, endUserIpAddress: IP }, q(c));
    expectError(replay, 400, 'INVALID_INPUT');
    const byRecovery = await p.api.post('/sca/login/complete', { factor: 'TOTP', code: recovery[0], endUserIpAddress: IP }, q(c));
    expect(byRecovery.status, byRecovery.text).toBe(200);
    await p.api.post('/sca/login/start', { factor: 'TOTP' }, q(c));
    expectError(
      await p.api.post('/sca/login/complete', { factor: 'TOTP', code: recovery[0], endUserIpAddress: IP }, q(c)),
      400,
      'INVALID_INPUT',
    );
  });
});

describe('PASSKEY login', () => {
  it('a real WebAuthn assertion over the login options logs in; a wrong origin or signature does not', async () => {
    const c = await scaCustomer(p.api);
    const auth = new SoftwareAuthenticator({ rpId: 'app.example.com' });
    const enroll = await p.api.post('/sca/factors', { type: 'PASSKEY' }, q(c));
    const reg = auth.register(enroll.body.options.challenge);
    expect((await p.api.post('/sca/factors/confirm', { type: 'PASSKEY', origin: auth.origin, credential: reg }, q(c))).status).toBe(200);

    const start = await p.api.post('/sca/login/start', { factor: 'PASSKEY' }, q(c));
    expect(start.status, start.text).toBe(200);
    expect(start.body).toMatchObject({ factor: 'PASSKEY', allowedOrigins: [auth.origin], relyingPartyId: 'app.example.com' });
    const opts = start.body.passkeyOptions;
    expect(opts.allowCredentials[0].id).toBe(auth.credentialId);
    expect(opts.rpId).toBe('app.example.com');

    const badOrigin = await p.api.post(
      '/sca/login/complete',
      {
        factor: 'PASSKEY',
        passkeyAssertion: auth.assert('', { challengeB64: opts.challenge }),
        origin: 'https://evil.example.com',
        endUserIpAddress: IP,
      },
      q(c),
    );
    expect(fieldOf(expectError(badOrigin, 400, 'INVALID_INPUT'))).toBe('origin');
    const forged = await p.api.post(
      '/sca/login/complete',
      { factor: 'PASSKEY', passkeyAssertion: auth.assert('', { challengeB64: 'AAAA' }), origin: auth.origin, endUserIpAddress: IP },
      q(c),
    );
    expect(fieldOf(expectError(forged, 400, 'INVALID_INPUT'))).toBe('passkeyAssertion');
    const noOrigin = await p.api.post(
      '/sca/login/complete',
      { factor: 'PASSKEY', passkeyAssertion: auth.assert('', { challengeB64: opts.challenge }), endUserIpAddress: IP },
      q(c),
    );
    expect(fieldOf(expectError(noOrigin, 400, 'INVALID_INPUT'))).toBe('origin');
    const ok = await p.api.post(
      '/sca/login/complete',
      { factor: 'PASSKEY', passkeyAssertion: auth.assert('', { challengeB64: opts.challenge }), origin: auth.origin, endUserIpAddress: IP },
      q(c),
    );
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.status).toBe('SUCCESS');
  });
});

describe('record-event and the lockout schedule', () => {
  it('5 → 15 min, 6 → 30 min, 7 → 1 h, 8 → 24 h, 9 → suspended; 423 details; RESET_PASSWORD_COMPLETED clears it', async () => {
    const c = await scaCustomer(p.api);
    for (let i = 1; i <= 4; i++) {
      const r = await event(c, 'FAILED_LOGIN_ATTEMPT');
      expect(r.status, r.text).toBe(200);
      expect(r.body).toEqual({ eventType: 'FAILED_LOGIN_ATTEMPT', suspended: false, lockedUntil: null, failedAttempts: i });
    }
    const schedule: [number, number][] = [
      [5, 15 * 60],
      [6, 30 * 60],
      [7, 60 * 60],
      [8, 24 * 3600],
    ];
    for (const [count, seconds] of schedule) {
      const now = await platformNow(p.api);
      const r = await event(c, 'FAILED_LOGIN_ATTEMPT');
      expect(r.status, r.text).toBe(200); // the event that causes the lock answers its state
      expect(r.body.failedAttempts).toBe(count);
      expect(r.body.suspended).toBe(false);
      const lockMs = Date.parse(r.body.lockedUntil) - now;
      expect(lockMs).toBeGreaterThanOrEqual(seconds * 1000 - 1000);
      expect(lockMs).toBeLessThanOrEqual(seconds * 1000 + 5000);
      // While locked: record-event and login complete answer 423 with the details.
      const locked = expectError(await event(c, 'FAILED_LOGIN_ATTEMPT'), 423, 'ACCOUNT_LOCKED');
      expect(locked.body.details).toEqual({ suspended: false, lockedUntil: r.body.lockedUntil, failedAttempts: count });
      const id = await smsStart(p.api, c);
      expectError(await smsComplete(p.api, c, id, '123456'), 423, 'ACCOUNT_LOCKED');
      await advance(p.api, seconds + 1);
    }
    const ninth = await event(c, 'FAILED_LOGIN_ATTEMPT');
    expect(ninth.body).toEqual({ eventType: 'FAILED_LOGIN_ATTEMPT', suspended: true, lockedUntil: null, failedAttempts: 9 });
    await advance(p.api, 30 * 24 * 3600);
    const suspended = expectError(await smsComplete(p.api, c, await smsStart(p.api, c), '123456'), 423, 'ACCOUNT_LOCKED');
    expect(suspended.body.details).toEqual({ suspended: true, lockedUntil: null, failedAttempts: 9 });

    const reset = await event(c, 'RESET_PASSWORD_COMPLETED');
    expect(reset.body).toEqual({ eventType: 'RESET_PASSWORD_COMPLETED', suspended: false, lockedUntil: null, failedAttempts: 0 });
    expect((await smsComplete(p.api, c, await smsStart(p.api, c), '123456')).status).toBe(200);
  });

  it('bad event type 400 on eventType; 404 / 409 / 403 as every SCA operation', async () => {
    const c = await scaCustomer(p.api);
    expect(fieldOf(expectError(await event(c, 'LOGIN'), 400, 'INVALID_INPUT'))).toBe('eventType');
    expectError(await other.api.post('/sca/record-event', { eventType: 'FAILED_LOGIN_ATTEMPT' }, q(c)), 404, 'USER_NOT_FOUND');
    expectError(await event(await usCustomer(p.api), 'FAILED_LOGIN_ATTEMPT'), 409, 'CONFLICT');
    const viewer = await limitedClient(p, ['VIEW']);
    expectError(await viewer.post('/sca/record-event', { eventType: 'FAILED_LOGIN_ATTEMPT' }, q(c)), 403, 'FORBIDDEN');
    expectError(await viewer.post('/sca/login/start', { factor: 'SMS_OTP' }, q(c)), 403, 'FORBIDDEN');
    expectError(await viewer.post('/sca/login/complete', { factor: 'SMS_OTP', code: '1', endUserIpAddress: IP }, q(c)), 403, 'FORBIDDEN');
    expectError(await other.api.post('/sca/login/start', { factor: 'SMS_OTP' }, q(c)), 404, 'USER_NOT_FOUND');
    expectError(await p.api.post('/sca/login/start', { factor: 'SMS_OTP' }, q(await usCustomer(p.api))), 409, 'CONFLICT');
    expectError(
      await other.api.post('/sca/login/complete', { factor: 'SMS_OTP', code: '1', endUserIpAddress: IP }, q(c)),
      404,
      'USER_NOT_FOUND',
    );
  });
});
