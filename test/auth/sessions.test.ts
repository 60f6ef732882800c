/**
 * Wallet sessions over HTTP with the real client libraries: listing (active only, no key
 * material), revocation (signed by any active session of the wallet, itself included) and refresh
 * (signed by the session itself, client-held or legacy sealed key) — spec §4.2, facts-auth §3.6–3.8.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Client } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advanceClock,
  keyFromPrivate,
  keyPair,
  otpLogin,
  openSessionKey,
  signed,
  signedCall,
  stamp,
  walletSetup,
  walletWithSession,
  type KeyPair,
} from '../helpers/wallet-auth.ts';

const SESSION_MS = 15 * 60_000;
const CHALLENGE_MS = 5 * 60_000;
const UNKNOWN_SESSION = 'Session:00000000-0000-7000-8000-000000000000';

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  await walletSetup(p);
});
afterAll(async () => srv?.close());

/** A platform of its own, for tests that move the clock. */
async function freshPlatform(): Promise<PlatformHandle> {
  const q = await srv.newPlatform();
  await walletSetup(q);
  return q;
}

async function sessionIds(api: Client, accountId: string): Promise<string[]> {
  const res = await api.get('/auth/sessions', { query: { accountId } });
  expect(res.status).toBe(200);
  return res.body.data.map((s: { id: string }) => s.id);
}

/** A signed op that proves `key` is (or is not) an active session key of `accountId`. */
function privacyUpdate(api: Client, accountId: string, privateEnabled: boolean) {
  return (o?: { headers: Record<string, string> }) => api.patch(`/internal-accounts/${accountId}`, { privateEnabled }, o);
}

describe('GET /auth/sessions', () => {
  it('lists active sessions with a 15-minute lifetime and no key material; expired ones drop out', async () => {
    const q = await freshPlatform();
    const w = await walletWithSession(q.api);
    await advanceClock(q.api, 600);
    const second = await otpLogin(q.api, w.credentialId);

    const list = await q.api.get('/auth/sessions', { query: { accountId: w.accountId } });
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([w.session.id, second.id]);
    for (const s of list.body.data) {
      expect(s).toEqual({
        id: expect.stringMatching(/^Session:/),
        accountId: w.accountId,
        type: 'EMAIL_OTP',
        nickname: expect.stringContaining('@example.com'),
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        expiresAt: expect.any(String),
      });
      expect(Date.parse(s.expiresAt) - Date.parse(s.createdAt)).toBe(SESSION_MS);
    }

    // 15 min 1 s after the first login: only the second session is left; then none.
    await advanceClock(q.api, 301);
    expect(await sessionIds(q.api, w.accountId)).toEqual([second.id]);
    await advanceClock(q.api, 600);
    expect(await sessionIds(q.api, w.accountId)).toEqual([]);
  });

  it("answers an unknown or another platform's account with empty data, and 400 for a missing or malformed accountId", async () => {
    const w = await walletWithSession(p.api);
    const other = await srv.newPlatform();
    expect((await other.api.get('/auth/sessions', { query: { accountId: w.accountId } })).body).toEqual({ data: [] });
    expect(
      (await p.api.get('/auth/sessions', { query: { accountId: 'InternalAccount:00000000-0000-7000-8000-000000000000' } })).body,
    ).toEqual({ data: [] });

    const missing = expectError(await p.api.get('/auth/sessions'), 400, 'INVALID_INPUT');
    expect(missing.body.details.errors[0].field).toBe('accountId');
    const malformed = expectError(await p.api.get('/auth/sessions', { query: { accountId: 'Customer:123' } }), 400, 'INVALID_INPUT');
    expect(malformed.body.details.errors[0].field).toBe('accountId');
    expectError(await srv.anon.get('/auth/sessions', { query: { accountId: w.accountId } }), 401, 'UNAUTHORIZED');
  });
});

describe('DELETE /auth/sessions/{id}', () => {
  it("202 with the issuing credential's type, then 204 when another session of the wallet signs; the credential stays", async () => {
    const w = await walletWithSession(p.api);
    const add = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId: w.accountId }, o), w.session.key);
    expect(add.result.status, add.result.text).toBe(201);
    const sms = await otpLogin(p.api, add.result.body.id, 'SMS_OTP');

    const ch = await p.api.delete(`/auth/sessions/${sms.id}`);
    expect(ch.status).toBe(202);
    expect(ch.body).toEqual({
      payloadToSign: expect.any(String),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.any(String),
      type: 'SMS_OTP',
    });
    const now = Date.parse((await p.api.get('/sandbox/clock')).body.now);
    expect(Date.parse(ch.body.expiresAt) - now).toBeGreaterThan(CHALLENGE_MS - 60_000);
    expect(Date.parse(ch.body.expiresAt) - now).toBeLessThanOrEqual(CHALLENGE_MS);
    expect(JSON.parse(ch.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_DELETE_API_KEYS',
      parameters: { apiKeyIds: [sms.id], userId: w.accountId },
      requestId: ch.body.requestId,
    });

    const done = await p.api.delete(
      `/auth/sessions/${sms.id}`,
      signed(await stamp(w.session.key, ch.body.payloadToSign), ch.body.requestId),
    );
    expect(done.status, done.text).toBe(204);
    expect(done.text).toBe('');
    expect(await sessionIds(p.api, w.accountId)).toEqual([w.session.id]);

    // The revoked session's key signs nothing any more; its credential still logs in.
    const byRevoked = await p.api.delete(`/auth/sessions/${w.session.id}`);
    expectError(
      await p.api.delete(
        `/auth/sessions/${w.session.id}`,
        signed(await stamp(sms.key, byRevoked.body.payloadToSign), byRevoked.body.requestId),
      ),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    const creds = await p.api.get('/auth/credentials', { query: { accountId: w.accountId } });
    expect(creds.body.data.map((c: { type: string }) => c.type).sort()).toEqual(['EMAIL_OTP', 'SMS_OTP']);
    const again = await otpLogin(p.api, add.result.body.id, 'SMS_OTP');
    expect(await sessionIds(p.api, w.accountId)).toEqual([w.session.id, again.id]);
  });

  it('the other direction: an SMS_OTP session revokes an EMAIL_OTP one', async () => {
    const w = await walletWithSession(p.api);
    const add = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId: w.accountId }, o), w.session.key);
    const sms = await otpLogin(p.api, add.result.body.id, 'SMS_OTP');
    const { challenge, result } = await signedCall((o) => p.api.delete(`/auth/sessions/${w.session.id}`, o), sms.key);
    expect(challenge.body.type).toBe('EMAIL_OTP');
    expect(result.status, result.text).toBe(204);
    expect(await sessionIds(p.api, w.accountId)).toEqual([sms.id]);
  });

  it('lets a session revoke itself (logout); revoking it again is 404', async () => {
    const w = await walletWithSession(p.api);
    const { challenge, result } = await signedCall((o) => p.api.delete(`/auth/sessions/${w.session.id}`, o), w.session.key);
    expect(challenge.body.type).toBe('EMAIL_OTP');
    expect(result.status, result.text).toBe(204);
    expect(await sessionIds(p.api, w.accountId)).toEqual([]);
    // Replaying the consumed challenge, or starting over: the session is no longer active.
    expectError(
      await p.api.delete(
        `/auth/sessions/${w.session.id}`,
        signed(await stamp(w.session.key, challenge.body.payloadToSign), challenge.body.requestId),
      ),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(await p.api.delete(`/auth/sessions/${w.session.id}`), 404, 'REFERENCE_NOT_FOUND');
  });

  it("404 for an unknown, an expired and another platform's session", async () => {
    expectError(await p.api.delete(`/auth/sessions/${UNKNOWN_SESSION}`), 404, 'REFERENCE_NOT_FOUND');
    const w = await walletWithSession(p.api);
    const other = await srv.newPlatform();
    expectError(await other.api.delete(`/auth/sessions/${w.session.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.delete('/auth/sessions/not-a-session-id'), 404, 'REFERENCE_NOT_FOUND');

    const q = await freshPlatform();
    const expiring = await walletWithSession(q.api);
    await advanceClock(q.api, SESSION_MS / 1000 + 1);
    expectError(await q.api.delete(`/auth/sessions/${expiring.session.id}`), 404, 'REFERENCE_NOT_FOUND');
  });

  it("401 for another wallet's stamp, a Request-Id of another challenge, a consumed Request-Id and an expired challenge", async () => {
    const q = await freshPlatform();
    const a = await walletWithSession(q.api);
    const a2 = await otpLogin(q.api, a.credentialId);
    const b = await walletWithSession(q.api);
    const target = `/auth/sessions/${a.session.id}`;

    const ch = await q.api.delete(target);
    expect(ch.status).toBe(202);
    const good = await stamp(a2.key, ch.body.payloadToSign);
    expectError(
      await q.api.delete(target, signed(await stamp(b.session.key, ch.body.payloadToSign), ch.body.requestId)),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    expectError(await q.api.delete(target, { headers: { 'service-wallet-signature': good } }), 401, 'REQUEST_ID_MISSING');
    expectError(await q.api.delete(target, { headers: { 'request-id': ch.body.requestId } }), 401, 'WALLET_SIGNATURE_MISSING');

    // A Request-Id issued for another session's revocation does not match this request.
    const forA2 = await q.api.delete(`/auth/sessions/${a2.id}`);
    expectError(await q.api.delete(target, signed(good, forA2.body.requestId)), 401, 'UNAUTHORIZED');
    // A newer challenge for the same session: the stamp over the first payload does not verify.
    const newer = await q.api.delete(target);
    expectError(await q.api.delete(target, signed(good, newer.body.requestId)), 401, 'WALLET_SIGNATURE_INVALID');

    // A consumed Request-Id (a2's revocation, signed by a itself) cannot be used again.
    const consumed = await q.api.delete(
      `/auth/sessions/${a2.id}`,
      signed(await stamp(a.session.key, forA2.body.payloadToSign), forA2.body.requestId),
    );
    expect(consumed.status, consumed.text).toBe(204);
    expectError(
      await q.api.delete(target, signed(await stamp(a.session.key, forA2.body.payloadToSign), forA2.body.requestId)),
      401,
      'UNAUTHORIZED',
    );

    // A challenge lives 5 minutes on the platform clock.
    const late = await q.api.delete(target);
    await advanceClock(q.api, CHALLENGE_MS / 1000 + 1);
    const expired = expectError(
      await q.api.delete(target, signed(await stamp(a.session.key, late.body.payloadToSign), late.body.requestId)),
      401,
      'UNAUTHORIZED',
    );
    expect(expired.body.reason).toMatch(/expired/);

    expect(await sessionIds(q.api, a.accountId)).toEqual([a.session.id]);
  });
});

describe('POST /auth/sessions/{id}/refresh', () => {
  it('202 without type, then 201 with a new session stamped by the session itself; the old key stops working (client-held key)', async () => {
    const w = await walletWithSession(p.api);
    const next = keyPair();
    const body = { clientPublicKey: next.publicKey };
    const ch = await p.api.post(`/auth/sessions/${w.session.id}/refresh`, body);
    expect(ch.status).toBe(202);
    expect(ch.body).toEqual({
      payloadToSign: expect.any(String),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.any(String),
    });
    expect(JSON.parse(ch.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_CREATE_READ_WRITE_SESSION_V2',
      parameters: { targetPublicKey: next.publicKey },
    });

    const res = await p.api.post(
      `/auth/sessions/${w.session.id}/refresh`,
      body,
      signed(await stamp(w.session.key, ch.body.payloadToSign), ch.body.requestId),
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^Session:/),
      accountId: w.accountId,
      type: 'EMAIL_OTP',
      nickname: expect.stringContaining('@example.com'),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(res.body.id).not.toBe(w.session.id);
    expect(Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)).toBe(SESSION_MS);
    expect(await sessionIds(p.api, w.accountId)).toEqual([res.body.id]);

    // The old session is over: its key no longer signs, and it cannot be refreshed again.
    const update = privacyUpdate(p.api, w.accountId, true);
    const old = await update();
    expectError(
      await update(signed(await stamp(w.session.key, old.body.payloadToSign), old.body.requestId)),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    expectError(await p.api.post(`/auth/sessions/${w.session.id}/refresh`, { clientPublicKey: keyPair().publicKey }), 401, 'UNAUTHORIZED');
    // The client's own key is the new session key.
    const ok = await signedCall(update, next);
    expect(ok.result.status, ok.result.text).toBe(200);
    expect(ok.result.body.privateEnabled).toBe(true);
  });

  it('legacy: an uncompressed clientPublicKey gets encryptedSessionSigningKey, which decryptCredentialBundle opens into a working key', async () => {
    const w = await walletWithSession(p.api);
    const client = keyPair();
    const { result } = await signedCall(
      (o) => p.api.post(`/auth/sessions/${w.session.id}/refresh`, { clientPublicKey: client.publicKeyUncompressed }, o),
      w.session.key,
    );
    expect(result.status, result.text).toBe(201);
    expect(result.body.encryptedSessionSigningKey).toMatch(/^[1-9A-HJ-NP-Za-km-z]+$/);
    const sessionKey: KeyPair = keyFromPrivate(openSessionKey(result.body.encryptedSessionSigningKey, client));
    expect(sessionKey.publicKey).not.toBe(client.publicKey);
    expect(() => openSessionKey(result.body.encryptedSessionSigningKey, keyPair())).toThrow();

    // Lists never carry the key.
    const list = await p.api.get('/auth/sessions', { query: { accountId: w.accountId } });
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].id).toBe(result.body.id);
    expect(list.body.data[0]).not.toHaveProperty('encryptedSessionSigningKey');

    // The decrypted key signs; the encryption key it was sealed to does not.
    const update = privacyUpdate(p.api, w.accountId, true);
    const byClient = await update();
    expectError(
      await update(signed(await stamp(client, byClient.body.payloadToSign), byClient.body.requestId)),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    const ok = await signedCall(update, sessionKey);
    expect(ok.result.status, ok.result.text).toBe(200);
  });

  it('401 for a changed clientPublicKey or a stamp by another session; the challenge survives failed retries', async () => {
    const w = await walletWithSession(p.api);
    const sibling = await otpLogin(p.api, w.credentialId);
    const k1 = keyPair();
    const path = `/auth/sessions/${w.session.id}/refresh`;
    const ch = await p.api.post(path, { clientPublicKey: k1.publicKey });
    const st = await stamp(w.session.key, ch.body.payloadToSign);
    expectError(
      await p.api.post(path, { clientPublicKey: keyPair().publicKey }, signed(st, ch.body.requestId)),
      401,
      'WALLET_SIGNATURE_BODY_MISMATCH',
    );
    expectError(
      await p.api.post(path, { clientPublicKey: k1.publicKeyUncompressed }, signed(st, ch.body.requestId)),
      401,
      'WALLET_SIGNATURE_BODY_MISMATCH',
    );
    expectError(
      await p.api.post(path, { clientPublicKey: k1.publicKey }, signed(await stamp(sibling.key, ch.body.payloadToSign), ch.body.requestId)),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    const other = await walletWithSession(p.api);
    expectError(
      await p.api.post(
        path,
        { clientPublicKey: k1.publicKey },
        signed(await stamp(other.session.key, ch.body.payloadToSign), ch.body.requestId),
      ),
      401,
      'WALLET_SIGNATURE_INVALID',
    );

    const ok = await p.api.post(path, { clientPublicKey: k1.publicKey }, signed(st, ch.body.requestId));
    expect(ok.status, ok.text).toBe(201);
    // The sibling session is untouched.
    expect((await sessionIds(p.api, w.accountId)).sort()).toEqual([sibling.id, ok.body.id].sort());
  });

  it('401 for a session that expired (before the first leg or between the legs)', async () => {
    const q = await freshPlatform();
    const before = await walletWithSession(q.api);
    await advanceClock(q.api, 800);
    const between = await walletWithSession(q.api);
    await advanceClock(q.api, 101);
    // `before` is 901 s old.
    expectError(
      await q.api.post(`/auth/sessions/${before.session.id}/refresh`, { clientPublicKey: keyPair().publicKey }),
      401,
      'UNAUTHORIZED',
    );

    const k = keyPair();
    const ch = await q.api.post(`/auth/sessions/${between.session.id}/refresh`, { clientPublicKey: k.publicKey });
    expect(ch.status).toBe(202);
    await advanceClock(q.api, 800); // the session (901 s) ends before the challenge would
    const res = await q.api.post(
      `/auth/sessions/${between.session.id}/refresh`,
      { clientPublicKey: k.publicKey },
      signed(await stamp(between.session.key, ch.body.payloadToSign), ch.body.requestId),
    );
    expectError(res, 401, 'UNAUTHORIZED');
  });

  it("404 for an unknown or another platform's session; 400 for a malformed, missing or extra field", async () => {
    const w = await walletWithSession(p.api);
    const key = keyPair().publicKey;
    expectError(await p.api.post(`/auth/sessions/${UNKNOWN_SESSION}/refresh`, { clientPublicKey: key }), 404, 'REFERENCE_NOT_FOUND');
    const other = await srv.newPlatform();
    expectError(await other.api.post(`/auth/sessions/${w.session.id}/refresh`, { clientPublicKey: key }), 404, 'REFERENCE_NOT_FOUND');

    const path = `/auth/sessions/${w.session.id}/refresh`;
    for (const bad of [{ clientPublicKey: '04abcd' }, { clientPublicKey: `05${key.slice(2)}` }, {}, { clientPublicKey: key, extra: 1 }]) {
      const r = expectError(await p.api.post(path, bad), 400, 'INVALID_INPUT');
      expect(r.body.details.errors.length).toBeGreaterThan(0);
    }
    expect(await sessionIds(p.api, w.accountId)).toEqual([w.session.id]);
  });
});
