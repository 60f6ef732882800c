/**
 * Per-credential rate limits over HTTP (facts-auth §3.4–3.5, docs/decisions.md): 5 challenges a
 * minute and 5 failed verifications per 15 minutes → 429 RATE_LIMITED with `Retry-After`.
 *
 * The challenge limit runs on the server's system clock; the failed-verify lockout runs on a sandbox
 * platform's clock (issue #21 item 6), so `POST /sandbox/clock/advance` lifts it, and on the system
 * clock on a PRODUCTION platform. The server here gets an injected clock (real time plus a
 * test-controlled offset) so a window can pass without sleeping.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/deps.ts';
import { expectError, type Client, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  addFirstEmailOtp,
  advanceClock,
  encryptOtp,
  keyPair,
  newWallet,
  otpLogin,
  passkeyLogin,
  registerPasskey,
  signedCall,
  walletSetup,
} from '../helpers/wallet-auth.ts';

const CHALLENGES_PER_MINUTE = 5;
const FAILED_VERIFIES = 5;

/** System time as the server sees it: real time plus `skewMs`, which the tests move forward. */
let skewMs = 0;
const clock: Clock = { nowMs: () => Date.now() + skewMs };

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
  p = await srv.newPlatform();
  await walletSetup(p);
});
afterAll(async () => srv?.close());

function challengeOtp(api: Client, credentialId: string): Promise<Res> {
  return api.post(`/auth/credentials/${credentialId}/challenge`, {});
}

/** The spec's 429: error body, and an integer-seconds Retry-After equal to details.retryAfterSeconds, at most `maxSeconds`. */
function expectRateLimited(res: Res, maxSeconds: number): number {
  expectError(res, 429, 'RATE_LIMITED');
  expect(Object.keys(res.body).sort()).toEqual(['code', 'details', 'message', 'status']);
  const header = res.headers.get('retry-after');
  expect(header).toMatch(/^\d+$/);
  const seconds = Number(header);
  expect(seconds).toBeGreaterThanOrEqual(1);
  expect(seconds).toBeLessThanOrEqual(maxSeconds);
  expect(res.body.details).toEqual({ retryAfterSeconds: seconds });
  return seconds;
}

async function wrongOtp(api: Client, credentialId: string, bundle: string): Promise<Res> {
  return api.post(`/auth/credentials/${credentialId}/verify`, {
    type: 'EMAIL_OTP',
    encryptedOtpBundle: await encryptOtp(bundle, '123456', keyPair()),
  });
}

describe('challenge rate limit (5 a minute per credential)', () => {
  it('the 6th challenge within a minute is 429 RATE_LIMITED with Retry-After; other credentials are unaffected; a login already started finishes', async () => {
    const { accountId } = await newWallet(p.api);
    const email = await addFirstEmailOtp(p.api, accountId);
    const session = await otpLogin(p.api, email.id); // challenge 1
    const sms = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId }, o), session.key);
    expect(sms.result.status, sms.result.text).toBe(201);

    let last: Res | undefined;
    for (let i = 2; i <= CHALLENGES_PER_MINUTE; i++) {
      last = await challengeOtp(p.api, email.id);
      expect(last.status, `challenge ${i}: ${last.text}`).toBe(200);
    }
    const sixth = await challengeOtp(p.api, email.id);
    const retryAfter = expectRateLimited(sixth, 60);
    expect(retryAfter).toBeGreaterThanOrEqual(50);
    expect(sixth.body.message).toMatch(/challenges/);
    // Still limited on the next try.
    expectRateLimited(await challengeOtp(p.api, email.id), 60);

    // The wallet's other credential and another wallet's credential are not limited.
    expect((await challengeOtp(p.api, sms.result.body.id)).status).toBe(200);
    const other = await newWallet(p.api);
    const otherEmail = await addFirstEmailOtp(p.api, other.accountId);
    expect((await challengeOtp(p.api, otherEmail.id)).status).toBe(200);

    // The bundle of the last allowed challenge still logs in (the limit is on new challenges).
    const tek = keyPair();
    const body = { type: 'EMAIL_OTP', encryptedOtpBundle: await encryptOtp(last!.body.otpEncryptionTargetBundle, '000000', tek) };
    const leg1 = await p.api.post(`/auth/credentials/${email.id}/verify`, body);
    expect(leg1.status, leg1.text).toBe(202);
  });

  it('passkey challenges count too (400 for a missing clientPublicKey does not)', async () => {
    const { accountId } = await newWallet(p.api);
    const session = await passkeyLogin(p.api, accountId); // challenge 1
    const path = `/auth/credentials/${session.credentialId}/challenge`;
    expectError(await p.api.post(path, {}), 400, 'INVALID_INPUT');
    for (let i = 2; i <= CHALLENGES_PER_MINUTE; i++) {
      const res = await p.api.post(path, { clientPublicKey: keyPair().publicKey });
      expect(res.status, `challenge ${i}: ${res.text}`).toBe(200);
    }
    expectRateLimited(await p.api.post(path, { clientPublicKey: keyPair().publicKey }), 60);
  });

  it('uses the system clock: a sandbox clock advance does not lift it, the minute passing does', async () => {
    const q = await srv.newPlatform();
    await walletSetup(q);
    const { accountId } = await newWallet(q.api);
    const email = await addFirstEmailOtp(q.api, accountId);
    for (let i = 1; i <= CHALLENGES_PER_MINUTE; i++) expect((await challengeOtp(q.api, email.id)).status).toBe(200);
    expectRateLimited(await challengeOtp(q.api, email.id), 60);

    await advanceClock(q.api, 3600);
    expectRateLimited(await challengeOtp(q.api, email.id), 60);

    skewMs += 61_000;
    const res = await challengeOtp(q.api, email.id);
    expect(res.status, res.text).toBe(200);
    // One more fits in the new window's count (the five old attempts fell out of it).
    expect((await challengeOtp(q.api, email.id)).status).toBe(200);
  });
});

describe('failed-verify rate limit (5 per 15 minutes per credential)', () => {
  it('after 5 wrong OTPs the next verify is 429 even with the right code; other credentials are unaffected', async () => {
    const { accountId } = await newWallet(p.api);
    const email = await addFirstEmailOtp(p.api, accountId);
    const ch = await challengeOtp(p.api, email.id);
    const bundle: string = ch.body.otpEncryptionTargetBundle;
    for (let i = 1; i <= FAILED_VERIFIES; i++) {
      const res = await wrongOtp(p.api, email.id, bundle);
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.body.reason).toBe('Invalid OTP code');
    }
    const right = await p.api.post(`/auth/credentials/${email.id}/verify`, {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await encryptOtp(bundle, '000000', keyPair()),
    });
    const retryAfter = expectRateLimited(right, 15 * 60);
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(right.body.message).toMatch(/failed verifications/);

    const other = await newWallet(p.api);
    const otherEmail = await addFirstEmailOtp(p.api, other.accountId);
    await otpLogin(p.api, otherEmail.id);
  });

  it('follows the sandbox platform clock: a sandbox clock advance past the lockout lifts it', async () => {
    const q = await srv.newPlatform();
    await walletSetup(q);
    const { accountId } = await newWallet(q.api);
    const email = await addFirstEmailOtp(q.api, accountId);
    for (let i = 1; i <= FAILED_VERIFIES; i++) expectError(await wrongOtp(q.api, email.id, email.bundle), 401, 'UNAUTHORIZED');
    expect(expectRateLimited(await wrongOtp(q.api, email.id, email.bundle), 15 * 60)).toBeGreaterThan(14 * 60);

    // Ten minutes on the platform clock: still locked, with about five minutes left.
    await advanceClock(q.api, 10 * 60);
    const left = expectRateLimited(await wrongOtp(q.api, email.id, email.bundle), 5 * 60);
    expect(left).toBeGreaterThan(4 * 60);

    // Past the lockout on the platform clock (no system time passes): the right code logs in.
    await advanceClock(q.api, 5 * 60 + 1);
    const session = await otpLogin(q.api, email.id);
    expect(session.id).toMatch(/^Session:/);
  });

  it('uses the system clock on a production platform: 15 minutes passing lifts it', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const { accountId } = await walletSetup(prod);
    const { authenticator, credentialId } = await registerPasskey(prod.api, accountId);
    const challenge = async () => {
      const ch = await prod.api.post(`/auth/credentials/${credentialId}/challenge`, { clientPublicKey: keyPair().publicKey });
      expect(ch.status, ch.text).toBe(200);
      return ch.body as { challenge: string; requestId: string };
    };
    const verify = (ch: { challenge: string; requestId: string }, origin?: string) =>
      prod.api.post(
        `/auth/credentials/${credentialId}/verify`,
        { type: 'PASSKEY', assertion: authenticator.assert(ch.challenge, origin ? { origin } : {}) },
        { headers: { 'request-id': ch.requestId } },
      );
    const first = await challenge();
    for (let i = 1; i <= FAILED_VERIFIES; i++) expectError(await verify(first, 'https://evil.example.com'), 401, 'UNAUTHORIZED');
    expectRateLimited(await verify(first), 15 * 60);

    skewMs += 15 * 60_000 + 1000;
    const res = await verify(await challenge());
    expect(res.status, res.text).toBe(200);
  });

  it('failed passkey verifies count toward the same limit', async () => {
    const { accountId } = await newWallet(p.api);
    const { authenticator, credentialId } = await registerPasskey(p.api, accountId);
    const ch = await p.api.post(`/auth/credentials/${credentialId}/challenge`, { clientPublicKey: keyPair().publicKey });
    const verify = (assertion: unknown) =>
      p.api.post(
        `/auth/credentials/${credentialId}/verify`,
        { type: 'PASSKEY', assertion },
        { headers: { 'request-id': ch.body.requestId } },
      );
    for (let i = 1; i <= FAILED_VERIFIES; i++)
      expectError(await verify(authenticator.assert(ch.body.challenge, { origin: 'https://evil.example.com' })), 401, 'UNAUTHORIZED');
    expectRateLimited(await verify(authenticator.assert(ch.body.challenge)), 15 * 60);
  });
});
