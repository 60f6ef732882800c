/**
 * Per-credential rate limits over HTTP (facts-auth §3.4–3.5, docs/decisions.md): 5 challenges a
 * minute and 5 failed verifications per 15 minutes → 429 RATE_LIMITED with `Retry-After`.
 *
 * The limits run on the server's system clock, not the platform's sandbox clock. The server here
 * gets an injected clock (real time plus a test-controlled offset) so a window can pass without
 * sleeping; the sandbox clock advance, which only shifts one platform's offset, must not lift them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/deps.ts';
import { expectError, type Client, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { SoftwareAuthenticator } from '../helpers/webauthn.ts';
import { addFirstEmailOtp, advanceClock, encryptOtp, keyPair, newWallet, otpLogin, passkeyLogin, signedCall, walletSetup } from './util.ts';

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
  return api.post(`/auth/credentials/${credentialId}/verify`, { type: 'EMAIL_OTP', encryptedOtpBundle: await encryptOtp(bundle, '123456', keyPair()) });
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
    const right = await p.api.post(`/auth/credentials/${email.id}/verify`, { type: 'EMAIL_OTP', encryptedOtpBundle: await encryptOtp(bundle, '000000', keyPair()) });
    const retryAfter = expectRateLimited(right, 15 * 60);
    expect(retryAfter).toBeGreaterThan(14 * 60);
    expect(right.body.message).toMatch(/failed verifications/);

    const other = await newWallet(p.api);
    const otherEmail = await addFirstEmailOtp(p.api, other.accountId);
    await otpLogin(p.api, otherEmail.id);
  });

  it('uses the system clock: a sandbox clock advance does not lift it, 15 minutes passing does', async () => {
    const q = await srv.newPlatform();
    await walletSetup(q);
    const { accountId } = await newWallet(q.api);
    const email = await addFirstEmailOtp(q.api, accountId);
    for (let i = 1; i <= FAILED_VERIFIES; i++) expectError(await wrongOtp(q.api, email.id, email.bundle), 401, 'UNAUTHORIZED');
    expectRateLimited(await wrongOtp(q.api, email.id, email.bundle), 15 * 60);

    await advanceClock(q.api, 24 * 3600);
    expectRateLimited(await wrongOtp(q.api, email.id, email.bundle), 15 * 60);

    skewMs += 15 * 60_000 + 1000;
    const session = await otpLogin(q.api, email.id);
    expect(session.id).toMatch(/^Session:/);
  });

  it('failed passkey verifies count toward the same limit', async () => {
    const { accountId } = await newWallet(p.api);
    const authenticator = new SoftwareAuthenticator();
    const challenge = Buffer.from(`registration-${Date.now()}`).toString('base64url');
    const reg = await p.api.post('/auth/credentials', { type: 'PASSKEY', accountId, nickname: 'Key', challenge, attestation: authenticator.register(challenge) });
    expect(reg.status, reg.text).toBe(201);
    const ch = await p.api.post(`/auth/credentials/${reg.body.id}/challenge`, { clientPublicKey: keyPair().publicKey });
    const verify = (assertion: unknown) => p.api.post(`/auth/credentials/${reg.body.id}/verify`, { type: 'PASSKEY', assertion }, { headers: { 'request-id': ch.body.requestId } });
    for (let i = 1; i <= FAILED_VERIFIES; i++) expectError(await verify(authenticator.assert(ch.body.challenge, { origin: 'https://evil.example.com' })), 401, 'UNAUTHORIZED');
    expectRateLimited(await verify(authenticator.assert(ch.body.challenge)), 15 * 60);
  });
});
