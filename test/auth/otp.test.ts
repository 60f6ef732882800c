/**
 * EMAIL_OTP / SMS_OTP credentials and login over HTTP with the real client libraries: the state
 * rows of the spec's §3 for OTP login and credential revocation, and their 400/401/404 rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issue } from '../../src/modules/auth/signed-retry.ts';
import { runUnit } from '../../src/unit.ts';
import { expectError } from '../helpers/http.ts';
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
} from '../helpers/wallet-auth.ts';

const SANDBOX_SIGNATURE = 'sandbox-valid-signature';

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  await walletSetup(p);
});
afterAll(async () => srv?.close());

describe('EMAIL_OTP login', () => {
  it('registers the first credential directly and logs in with 000000 (202, then 200 on the TEK-stamped retry)', async () => {
    const { accountId } = await newWallet(p.api);
    const cred = await addFirstEmailOtp(p.api, accountId);
    expect(cred.bundle).toMatch(/^\{"version":"v1.0.0"/);
    const session = await otpLogin(p.api, cred.id);
    expect(session.id).toMatch(/^Session:/);
    const list = await p.api.get('/auth/sessions', { query: { accountId } });
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([session.id]);
    expect(list.body.data[0]).not.toHaveProperty('encryptedSessionSigningKey');
    const creds = await p.api.get('/auth/credentials', { query: { accountId } });
    expect(creds.body.data).toEqual([
      expect.objectContaining({ id: cred.id, type: 'EMAIL_OTP', accountId, nickname: expect.stringContaining('@example.com') }),
    ]);
  });

  it('answers a wrong code with 401 reason "Invalid OTP code"', async () => {
    const { accountId } = await newWallet(p.api);
    const cred = await addFirstEmailOtp(p.api, accountId);
    const res = await p.api.post(`/auth/credentials/${cred.id}/verify`, {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await encryptOtp(cred.bundle, '123456', keyPair()),
    });
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.body.reason).toBe('Invalid OTP code');
  });

  it('rejects a retry stamped by a key other than the TEK, a changed body, and a reused Request-Id', async () => {
    const { accountId } = await newWallet(p.api);
    const cred = await addFirstEmailOtp(p.api, accountId);
    const tek = keyPair();
    const body = { type: 'EMAIL_OTP', encryptedOtpBundle: await encryptOtp(cred.bundle, '000000', tek) };
    const leg1 = await p.api.post(`/auth/credentials/${cred.id}/verify`, body);
    expect(leg1.status).toBe(202);
    expect(leg1.body).toEqual({
      payloadToSign: expect.any(String),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.any(String),
      type: 'EMAIL_OTP',
    });
    const other = await p.api.post(
      `/auth/credentials/${cred.id}/verify`,
      body,
      signed(await stamp(keyPair(), leg1.body.payloadToSign), leg1.body.requestId),
    );
    expectError(other, 401, 'WALLET_SIGNATURE_INVALID');
    const changed = await p.api.post(
      `/auth/credentials/${cred.id}/verify`,
      { ...body, encryptedOtpBundle: await encryptOtp(cred.bundle, '000000', tek) },
      signed(await stamp(tek, leg1.body.payloadToSign), leg1.body.requestId),
    );
    expectError(changed, 401, 'WALLET_SIGNATURE_BODY_MISMATCH');
    const good = await p.api.post(
      `/auth/credentials/${cred.id}/verify`,
      body,
      signed(await stamp(tek, leg1.body.payloadToSign), leg1.body.requestId),
    );
    expect(good.status).toBe(200);
    const replay = await p.api.post(
      `/auth/credentials/${cred.id}/verify`,
      body,
      signed(await stamp(tek, leg1.body.payloadToSign), leg1.body.requestId),
    );
    expectError(replay, 401, 'UNAUTHORIZED');
  });
});

describe('the legacy sandbox-valid-signature stamp on the OTP verify retry (spec §4.12 item 5, issue #21 item 4)', () => {
  it('is accepted on a sandbox platform: the session takes the TEK the first leg bound', async () => {
    const { accountId } = await newWallet(p.api);
    const cred = await addFirstEmailOtp(p.api, accountId);
    const tek = keyPair();
    const body = { type: 'EMAIL_OTP', encryptedOtpBundle: await encryptOtp(cred.bundle, '000000', tek) };
    const leg1 = await p.api.post(`/auth/credentials/${cred.id}/verify`, body);
    expect(leg1.status, leg1.text).toBe(202);
    const leg2 = await p.api.post(`/auth/credentials/${cred.id}/verify`, body, signed(SANDBOX_SIGNATURE, leg1.body.requestId));
    expect(leg2.status, leg2.text).toBe(200);
    expect(leg2.body).toMatchObject({ id: expect.stringMatching(/^Session:/), accountId, type: 'EMAIL_OTP' });
    expect(leg2.body).not.toHaveProperty('encryptedSessionSigningKey');
    // The request is consumed like any retry's.
    expectError(
      await p.api.post(`/auth/credentials/${cred.id}/verify`, body, signed(SANDBOX_SIGNATURE, leg1.body.requestId)),
      401,
      'UNAUTHORIZED',
    );
    // The session's key is the TEK: it stamps the wallet's next signed operation.
    const add = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId }, o), tek);
    expect(add.result.status, add.result.text).toBe(201);
  });

  it('is refused (401) on a production platform', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    const { accountId } = await walletSetup(prod);
    const created = await prod.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId });
    expect(created.status, created.text).toBe(201);
    const credId: string = created.body.id;
    // Production answers no OTP first leg (501), so its pending verify request is made here, in a
    // unit of the store, as a sandbox first leg would make it.
    const sandboxCred = await addFirstEmailOtp(p.api, (await newWallet(p.api)).accountId);
    const tek = keyPair();
    const body = { type: 'EMAIL_OTP', encryptedOtpBundle: await encryptOtp(sandboxCred.bundle, '000000', tek) };
    const challenge = await runUnit(srv.app.ctx, prod.id, (u) =>
      issue(u, {
        operation: 'otp.verify',
        accountId,
        targetId: credId,
        content: { encryptedOtpBundle: body.encryptedOtpBundle },
        signer: { kind: 'key', publicKey: tek.publicKey },
        payload: (requestId) => `otp-verify-${requestId}`,
        ttlMs: 300_000,
      }),
    );
    const refused = expectError(
      await prod.api.post(`/auth/credentials/${credId}/verify`, body, signed(SANDBOX_SIGNATURE, challenge.requestId)),
      401,
      'WALLET_SIGNATURE_MALFORMED',
    );
    expect(refused.body.reason).toMatch(/sandbox/);
    expect((await prod.api.get('/auth/sessions', { query: { accountId } })).body).toEqual({ data: [] });
  });
});

describe('adding and revoking credentials', () => {
  it('adds SMS_OTP through a signed retry, refuses a second EMAIL_OTP, and revokes with a stamp of the other credential only', async () => {
    const { accountId } = await newWallet(p.api);
    const email = await addFirstEmailOtp(p.api, accountId);
    const emailSession = await otpLogin(p.api, email.id);

    const dup = await p.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId });
    expectError(dup, 400, 'EMAIL_OTP_CREDENTIAL_ALREADY_EXISTS');

    const add = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId }, o), emailSession.key);
    expect(add.challenge.body.type).toBe('SMS_OTP');
    expect(add.result.status, JSON.stringify(add.result.body)).toBe(201);
    const sms = add.result.body;
    expect(sms).toMatchObject({ type: 'SMS_OTP', nickname: '+14155550100', otpEncryptionTargetBundle: expect.any(String) });
    const smsSession = await otpLogin(p.api, sms.id, 'SMS_OTP');

    // The credential being revoked cannot sign its own revocation.
    const self = await p.api.delete(`/auth/credentials/${email.id}`);
    expect(self.status).toBe(202);
    const selfSigned = await p.api.delete(
      `/auth/credentials/${email.id}`,
      signed(await stamp(emailSession.key, self.body.payloadToSign), self.body.requestId),
    );
    expectError(selfSigned, 401, 'WALLET_SIGNATURE_INVALID');

    const revoke = await signedCall((o) => p.api.delete(`/auth/credentials/${email.id}`, o), smsSession.key);
    expect(revoke.challenge.body.type).toBe('EMAIL_OTP');
    expect(revoke.result.status).toBe(204);
    // Its sessions ended with it.
    const sessions = await p.api.get('/auth/sessions', { query: { accountId } });
    expect(sessions.body.data.map((s: { id: string }) => s.id)).toEqual([smsSession.id]);
    // Now SMS_OTP is the only credential: 400.
    expectError(await p.api.delete(`/auth/credentials/${sms.id}`), 400, 'INVALID_INPUT');
  });

  it('401s for a missing Request-Id, a missing stamp, a malformed stamp and an unknown Request-Id; 404 for an unknown credential', async () => {
    const { accountId } = await newWallet(p.api);
    const email = await addFirstEmailOtp(p.api, accountId);
    const s = await otpLogin(p.api, email.id);
    const add = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId }, o), s.key);
    expect(add.result.status).toBe(201);
    const ch = await p.api.delete(`/auth/credentials/${email.id}`);
    const st = await stamp(s.key, ch.body.payloadToSign);
    expectError(
      await p.api.delete(`/auth/credentials/${email.id}`, { headers: { 'service-wallet-signature': st } }),
      401,
      'REQUEST_ID_MISSING',
    );
    expectError(
      await p.api.delete(`/auth/credentials/${email.id}`, { headers: { 'request-id': ch.body.requestId } }),
      401,
      'WALLET_SIGNATURE_MISSING',
    );
    expectError(
      await p.api.delete(`/auth/credentials/${email.id}`, signed('not-a-stamp', ch.body.requestId)),
      401,
      'WALLET_SIGNATURE_MALFORMED',
    );
    expectError(
      await p.api.delete(`/auth/credentials/${email.id}`, signed(st, 'Request:00000000-0000-7000-8000-000000000000')),
      401,
      'UNAUTHORIZED',
    );
    expectError(await p.api.delete('/auth/credentials/AuthMethod:00000000-0000-7000-8000-000000000000'), 404, 'REFERENCE_NOT_FOUND');
  });

  it("hides another platform's credentials (404) and lists nothing for its account", async () => {
    const { accountId } = await newWallet(p.api);
    const email = await addFirstEmailOtp(p.api, accountId);
    const q = await srv.newPlatform();
    expectError(await q.api.delete(`/auth/credentials/${email.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await q.api.post(`/auth/credentials/${email.id}/challenge`, {}), 404, 'REFERENCE_NOT_FOUND');
    const list = await q.api.get('/auth/credentials', { query: { accountId } });
    expect(list.body).toEqual({ data: [] });
    expectError(await q.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId }), 404, 'REFERENCE_NOT_FOUND');
  });
});
