/**
 * OTP bundles that must not open a session, and a credential revocation stamped by another
 * wallet's session (issue #6 "Done when"; the other OTP and revoke rules are in otp.test.ts and
 * sessions.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  addFirstEmailOtp,
  encryptOtp,
  keyPair,
  newWallet,
  otpLogin,
  signed,
  signedCall,
  stamp,
  walletSetup,
  walletWithSession,
} from '../helpers/wallet-auth.ts';

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  await walletSetup(p);
});
afterAll(async () => srv?.close());

/** `bundle` with one bit of byte `index` of the hex field `field` flipped. */
function flip(bundle: string, field: 'ciphertext' | 'encappedPublic', index: number): string {
  const parsed = JSON.parse(bundle) as Record<string, string>;
  const bytes = Buffer.from(parsed[field]!, 'hex');
  bytes[index] = bytes[index]! ^ 0x01;
  return JSON.stringify({ ...parsed, [field]: bytes.toString('hex') });
}

function expect401(res: Res, reason: RegExp): void {
  expectError(res, 401, 'UNAUTHORIZED');
  expect(res.body.reason).toMatch(reason);
}

describe('OTP bundles', () => {
  it('401 with a reason for a tampered encryptedOtpBundle (a flipped ciphertext or encapsulated-key byte); the untouched one still works', async () => {
    const { accountId } = await newWallet(p.api);
    const cred = await addFirstEmailOtp(p.api, accountId);
    const good = await encryptOtp(cred.bundle, '000000', keyPair());
    const verify = (encryptedOtpBundle: string) =>
      p.api.post(`/auth/credentials/${cred.id}/verify`, { type: 'EMAIL_OTP', encryptedOtpBundle });

    expect401(await verify(flip(good, 'ciphertext', 0)), /does not decrypt/);
    expect401(await verify(flip(good, 'ciphertext', Buffer.from(JSON.parse(good).ciphertext, 'hex').length - 1)), /does not decrypt/);
    // A flipped byte in the ephemeral key: not on the curve any more, or another key.
    expect401(await verify(flip(good, 'encappedPublic', 40)), /encappedPublic|does not decrypt/);
    expect((await p.api.get('/auth/sessions', { query: { accountId } })).body).toEqual({ data: [] });

    const leg1 = await verify(good);
    expect(leg1.status, leg1.text).toBe(202);
  });

  it('401 for a bundle built against a superseded target bundle: each challenge replaces the previous target', async () => {
    const { accountId } = await newWallet(p.api);
    const cred = await addFirstEmailOtp(p.api, accountId);
    const first = await p.api.post(`/auth/credentials/${cred.id}/challenge`, {});
    const second = await p.api.post(`/auth/credentials/${cred.id}/challenge`, {});
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.body.otpEncryptionTargetBundle).not.toBe(first.body.otpEncryptionTargetBundle);
    const verify = async (targetBundle: string) =>
      p.api.post(`/auth/credentials/${cred.id}/verify`, {
        type: 'EMAIL_OTP',
        encryptedOtpBundle: await encryptOtp(targetBundle, '000000', keyPair()),
      });

    // The creation bundle and the first challenge's are both superseded.
    expect401(await verify(cred.bundle), /does not decrypt/);
    expect401(await verify(first.body.otpEncryptionTargetBundle), /does not decrypt/);
    const leg1 = await verify(second.body.otpEncryptionTargetBundle);
    expect(leg1.status, leg1.text).toBe(202);
  });

  it('a correct code consumes the OTP: a second bundle for the same target is 401 (call /challenge again)', async () => {
    const { accountId } = await newWallet(p.api);
    const cred = await addFirstEmailOtp(p.api, accountId);
    const body = async () => ({ type: 'EMAIL_OTP', encryptedOtpBundle: await encryptOtp(cred.bundle, '000000', keyPair()) });
    const leg1 = await p.api.post(`/auth/credentials/${cred.id}/verify`, await body());
    expect(leg1.status, leg1.text).toBe(202);
    expect401(await p.api.post(`/auth/credentials/${cred.id}/verify`, await body()), /No pending OTP/);
    await otpLogin(p.api, cred.id);
  });
});

describe('DELETE /auth/credentials/{id} stamped by another wallet', () => {
  it("401 WALLET_SIGNATURE_INVALID for a stamp by another account's session; the wallet's own other credential then revokes it", async () => {
    const w = await walletWithSession(p.api);
    const add = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId: w.accountId }, o), w.session.key);
    expect(add.result.status, add.result.text).toBe(201);
    const sms = await otpLogin(p.api, add.result.body.id, 'SMS_OTP');
    const stranger = await walletWithSession(p.api);

    const ch = await p.api.delete(`/auth/credentials/${w.credentialId}`);
    expect(ch.status).toBe(202);
    const res = expectError(
      await p.api.delete(
        `/auth/credentials/${w.credentialId}`,
        signed(await stamp(stranger.session.key, ch.body.payloadToSign), ch.body.requestId),
      ),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    expect(res.body.reason).toMatch(/not an active session of this wallet/);
    expect((await p.api.get('/auth/credentials', { query: { accountId: w.accountId } })).body.data).toHaveLength(2);

    // The failed retry left the challenge pending.
    const ok = await p.api.delete(
      `/auth/credentials/${w.credentialId}`,
      signed(await stamp(sms.key, ch.body.payloadToSign), ch.body.requestId),
    );
    expect(ok.status, ok.text).toBe(204);
  });
});
