/**
 * OAUTH credentials over HTTP (spec §4.3, §4.5, §4.12 item 4; crypto-formats.md §6): JWT-shaped
 * ID tokens with a dummy signature segment, built here. Registration checks iss/aud/sub/iat/exp;
 * verify also checks the registered identity and the nonce binding to `clientPublicKey`, and
 * answers an AuthSession in both key modes. Sandbox only: a PRODUCTION platform gets 501.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Client, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  keyFromPrivate,
  keyPair,
  newWallet,
  oidcNonce,
  oidcToken,
  openSessionKey,
  platformNowSeconds,
  signed,
  signedCall,
  stamp,
  walletSetup,
  walletWithSession,
  type KeyPair,
} from '../helpers/wallet-auth.ts';

const GOOGLE = 'https://accounts.google.com';
const AUD = 'corridor-test.apps.googleusercontent.com';

let srv: TestServer;
let p: PlatformHandle;
let subSeq = 0;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  await walletSetup(p);
});
afterAll(async () => srv?.close());

/** Claims of a fresh token for a new identity (iat now on the platform clock, exp in an hour). */
async function freshClaims(api: Client, overrides: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const now = await platformNowSeconds(api);
  subSeq += 1;
  return {
    iss: GOOGLE,
    aud: AUD,
    sub: `10876${Date.now()}${subSeq}`,
    email: `oauth${subSeq}@example.com`,
    email_verified: true,
    iat: now,
    exp: now + 3600,
    ...overrides,
  };
}

/** A fresh verify token for the identity in `claims`, bound to `clientPublicKey`. */
async function verifyToken(
  api: Client,
  claims: Record<string, unknown>,
  clientPublicKey: string,
  overrides: Record<string, unknown> = {},
): Promise<string> {
  const now = await platformNowSeconds(api);
  return oidcToken({ ...claims, iat: now, exp: now + 3600, nonce: oidcNonce(clientPublicKey), ...overrides });
}

function verify(api: Client, credentialId: string, oidcTokenValue: string, clientPublicKey: string): Promise<Res> {
  return api.post(`/auth/credentials/${credentialId}/verify`, { type: 'OAUTH', oidcToken: oidcTokenValue, clientPublicKey });
}

/** A new wallet whose first credential is OAUTH (201 directly). */
async function walletWithOauth(api: Client): Promise<{ accountId: string; id: string; claims: Record<string, unknown> }> {
  const { accountId } = await newWallet(api);
  const claims = await freshClaims(api);
  const res = await api.post('/auth/credentials', { type: 'OAUTH', accountId, oidcToken: oidcToken(claims) });
  expect(res.status, res.text).toBe(201);
  return { accountId, id: res.body.id, claims };
}

async function patchSignedBy(api: Client, accountId: string, key: KeyPair): Promise<Res> {
  const { result } = await signedCall((o) => api.patch(`/internal-accounts/${accountId}`, { privateEnabled: true }, o), key);
  return result;
}

function expect401(res: Res, reason: RegExp): void {
  expectError(res, 401, 'UNAUTHORIZED');
  expect(res.body.reason).toMatch(reason);
  expect(res.body.details.reason).toBe(res.body.reason);
}

function expectOidcTokenError(res: Res, message?: RegExp): void {
  expectError(res, 400, 'INVALID_INPUT');
  expect(res.body.details.errors[0].field, res.text).toBe('oidcToken');
  if (message) expect(res.body.details.errors[0].message).toMatch(message);
}

describe('POST /auth/credentials (OAUTH)', () => {
  it('creates the first OAUTH credential directly: 201, nickname from the email claim, else from sub', async () => {
    const { accountId } = await newWallet(p.api);
    const claims = await freshClaims(p.api);
    const res = await p.api.post('/auth/credentials', { type: 'OAUTH', accountId, oidcToken: oidcToken(claims) });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^AuthMethod:/),
      accountId,
      type: 'OAUTH',
      nickname: claims.email,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const noEmail = await newWallet(p.api);
    const { email: _email, ...rest } = await freshClaims(p.api, { iss: 'https://appleid.apple.com' });
    const bySub = await p.api.post('/auth/credentials', { type: 'OAUTH', accountId: noEmail.accountId, oidcToken: oidcToken(rest) });
    expect(bySub.status, bySub.text).toBe(201);
    expect(bySub.body.nickname).toBe(rest.sub);
  });

  it('takes a one-element aud array as that audience (the identity then verifies with a string aud, and vice versa)', async () => {
    const { accountId } = await newWallet(p.api);
    const claims = await freshClaims(p.api, { aud: [AUD], iss: 'accounts.google.com' });
    const res = await p.api.post('/auth/credentials', { type: 'OAUTH', accountId, oidcToken: oidcToken(claims) });
    expect(res.status, res.text).toBe(201);
    const client = keyPair();
    const ok = await verify(p.api, res.body.id, await verifyToken(p.api, claims, client.publicKey, { aud: AUD }), client.publicKey);
    expect(ok.status, ok.text).toBe(200);
    const again = await verify(p.api, res.body.id, await verifyToken(p.api, claims, client.publicKey, { aud: [AUD] }), client.publicKey);
    expect(again.status, again.text).toBe(200);
  });

  it('adds OAUTH as another credential through the signed retry (202 type OAUTH → 201); the same identity again is 400', async () => {
    const w = await walletWithSession(p.api);
    const claims = await freshClaims(p.api);
    const body = { type: 'OAUTH', accountId: w.accountId, oidcToken: oidcToken(claims) };
    const { challenge, result } = await signedCall((o) => p.api.post('/auth/credentials', body, o), w.session.key);
    expect(challenge.body).toEqual({
      payloadToSign: expect.any(String),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.any(String),
      type: 'OAUTH',
    });
    expect(JSON.parse(challenge.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_CREATE_OAUTH_PROVIDERS',
      parameters: { userId: w.accountId, oauthProviders: [{ oidcToken: body.oidcToken, providerName: GOOGLE }] },
    });
    expect(result.status, result.text).toBe(201);
    expect(result.body).toMatchObject({ type: 'OAUTH', accountId: w.accountId, nickname: claims.email });

    // The same (iss, aud, sub) in a newer token, even with another email: 400 on the first leg.
    const same = await p.api.post('/auth/credentials', {
      type: 'OAUTH',
      accountId: w.accountId,
      oidcToken: oidcToken({ ...(await freshClaims(p.api)), sub: claims.sub, email: 'other@example.com' }),
    });
    expectOidcTokenError(same, /already registered/);
    // Another subject of the same issuer is another identity.
    const other = await p.api.post('/auth/credentials', {
      type: 'OAUTH',
      accountId: w.accountId,
      oidcToken: oidcToken(await freshClaims(p.api)),
    });
    expect(other.status, other.text).toBe(202);
    const list = await p.api.get('/auth/credentials', { query: { accountId: w.accountId } });
    expect(list.body.data.map((c: { type: string }) => c.type).sort()).toEqual(['EMAIL_OTP', 'OAUTH']);
  });

  it('the same identity twice on a wallet whose first credential is that identity: 400; another wallet may register it', async () => {
    const first = await walletWithOauth(p.api);
    const again = await p.api.post('/auth/credentials', {
      type: 'OAUTH',
      accountId: first.accountId,
      oidcToken: oidcToken({ ...first.claims, ...(await freshClaims(p.api, { sub: first.claims.sub })) }),
    });
    expectOidcTokenError(again, /already registered/);
    const { accountId } = await newWallet(p.api);
    const elsewhere = await p.api.post('/auth/credentials', {
      type: 'OAUTH',
      accountId,
      oidcToken: oidcToken({ ...(await freshClaims(p.api)), sub: first.claims.sub }),
    });
    expect(elsewhere.status, elsewhere.text).toBe(201);
  });

  it('401 with a reason for a stale, future or expired token, an unsupported issuer, an empty sub and a two-element aud; an iat 60 s old is fine', async () => {
    const { accountId } = await newWallet(p.api);
    const now = await platformNowSeconds(p.api);
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['stale iat (70 s, beyond 60 s + 5 s skew)', { iat: now - 70 }, /stale/],
      ['iat in the future', { iat: now + 30 }, /future/],
      ['no iat', { iat: undefined }, /iat/],
      ['string iat', { iat: String(now) }, /iat/],
      ['expired', { exp: now - 1 }, /expired/],
      ['no exp', { exp: undefined }, /exp/],
      ['unsupported issuer', { iss: 'https://login.example.com' }, /issuer/],
      ['no issuer', { iss: undefined }, /issuer/],
      ['empty sub', { sub: '' }, /subject/],
      ['no sub', { sub: undefined }, /subject/],
      ['two-element aud', { aud: [AUD, 'another-client'] }, /audience/],
      ['empty aud', { aud: '' }, /audience/],
      ['empty aud array', { aud: [] }, /audience/],
    ];
    for (const [name, overrides, reason] of cases) {
      const res = await p.api.post('/auth/credentials', {
        type: 'OAUTH',
        accountId,
        oidcToken: oidcToken({ ...(await freshClaims(p.api)), ...overrides }),
      });
      expect(res.status, `${name}: ${res.text}`).toBe(401);
      expect401(res, reason);
    }
    expect((await p.api.get('/auth/credentials', { query: { accountId } })).body).toEqual({ data: [] });
    // iat read from the platform clock just before the request, so little time has passed since.
    const sixtySeconds = await p.api.post('/auth/credentials', {
      type: 'OAUTH',
      accountId,
      oidcToken: oidcToken(await freshClaims(p.api, { iat: (await platformNowSeconds(p.api)) - 60 })),
    });
    expect(sixtySeconds.status, sixtySeconds.text).toBe(201);
  });

  it('400 INVALID_INPUT naming oidcToken for a malformed JWT and for the retired sandbox-valid-oidc-token', async () => {
    const { accountId } = await newWallet(p.api);
    const claims = await freshClaims(p.api);
    const enc = (v: string) => Buffer.from(v).toString('base64url');
    for (const token of [
      'not-a-jwt',
      'a.b.c',
      `${enc('{"alg":"RS256"}')}.${enc('[1,2]')}.sig`,
      `${enc('not json')}.${enc(JSON.stringify(claims))}.sig`,
      oidcToken(claims).split('.').slice(0, 2).join('.'),
    ]) {
      expectOidcTokenError(await p.api.post('/auth/credentials', { type: 'OAUTH', accountId, oidcToken: token }));
    }
    expectOidcTokenError(
      await p.api.post('/auth/credentials', { type: 'OAUTH', accountId, oidcToken: 'sandbox-valid-oidc-token' }),
      /legacy/,
    );
    expectError(await p.api.post('/auth/credentials', { type: 'OAUTH', accountId }), 400, 'INVALID_INPUT');
    expectError(
      await p.api.post('/auth/credentials', { type: 'OAUTH', accountId, oidcToken: oidcToken(claims), nickname: 'x' }),
      400,
      'INVALID_INPUT',
    );
    expect((await p.api.get('/auth/credentials', { query: { accountId } })).body).toEqual({ data: [] });
  });

  it('a PRODUCTION platform answers 501 (Corridor cannot check the token signature offline)', async () => {
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    await walletSetup(prod);
    const { accountId } = await newWallet(prod.api);
    const now = Math.floor(Date.now() / 1000);
    const res = await prod.api.post('/auth/credentials', {
      type: 'OAUTH',
      accountId,
      oidcToken: oidcToken({ iss: GOOGLE, aud: AUD, sub: 'prod-user', iat: now, exp: now + 3600 }),
    });
    expectError(res, 501, 'NOT_IMPLEMENTED');
    expect(res.body.message).toMatch(/signature/);
    expect((await prod.api.get('/auth/credentials', { query: { accountId } })).body).toEqual({ data: [] });
  });
});

describe('POST /auth/credentials/{id}/verify (OAUTH)', () => {
  it('compressed clientPublicKey: 200 AuthSession with encryptedSessionSigningKey (spec §2); the decrypted key and the client key both stamp for the session', async () => {
    const cred = await walletWithOauth(p.api);
    const client = keyPair();
    const res = await verify(p.api, cred.id, await verifyToken(p.api, cred.claims, client.publicKey), client.publicKey);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^Session:/),
      accountId: cred.accountId,
      type: 'OAUTH',
      nickname: cred.claims.email,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      expiresAt: expect.any(String),
      encryptedSessionSigningKey: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]+$/),
    });
    const patched = await patchSignedBy(p.api, cred.accountId, client);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.privateEnabled).toBe(true);
    // The session key sealed to the client's key signs too (either key mode works).
    const sessionKey = keyFromPrivate(openSessionKey(res.body.encryptedSessionSigningKey, client));
    expect(sessionKey.publicKey).not.toBe(client.publicKey);
    const again = await patchSignedBy(p.api, cred.accountId, sessionKey);
    expect(again.status, again.text).toBe(200);
  });

  it('uncompressed clientPublicKey: encryptedSessionSigningKey opens with decryptCredentialBundle and the decrypted key stamps a signed op', async () => {
    const cred = await walletWithOauth(p.api);
    const client = keyPair();
    const res = await verify(
      p.api,
      cred.id,
      await verifyToken(p.api, cred.claims, client.publicKeyUncompressed),
      client.publicKeyUncompressed,
    );
    expect(res.status, res.text).toBe(200);
    const sessionKey = keyFromPrivate(openSessionKey(res.body.encryptedSessionSigningKey, client));
    const update = (o?: { headers: Record<string, string> }) =>
      p.api.patch(`/internal-accounts/${cred.accountId}`, { privateEnabled: true }, o);
    const byClient = await update();
    expectError(
      await update(signed(await stamp(client, byClient.body.payloadToSign), byClient.body.requestId)),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    const patched = await patchSignedBy(p.api, cred.accountId, sessionKey);
    expect(patched.status, patched.text).toBe(200);
  });

  it('401 with a reason for a wrong nonce, no nonce, another sub and a stale token; a good token still works', async () => {
    const cred = await walletWithOauth(p.api);
    const client = keyPair();
    const now = await platformNowSeconds(p.api);
    expect401(await verify(p.api, cred.id, await verifyToken(p.api, cred.claims, keyPair().publicKey), client.publicKey), /nonce/);
    expect401(
      await verify(p.api, cred.id, await verifyToken(p.api, cred.claims, client.publicKey, { nonce: undefined }), client.publicKey),
      /nonce/,
    );
    expect401(
      await verify(
        p.api,
        cred.id,
        await verifyToken(p.api, cred.claims, client.publicKey, { sub: `${String(cred.claims.sub)}0` }),
        client.publicKey,
      ),
      /iss\/aud\/sub/,
    );
    expect401(
      await verify(p.api, cred.id, await verifyToken(p.api, cred.claims, client.publicKey, { iat: now - 70 }), client.publicKey),
      /stale/,
    );
    expect((await p.api.get('/auth/sessions', { query: { accountId: cred.accountId } })).body).toEqual({ data: [] });
    const ok = await verify(p.api, cred.id, await verifyToken(p.api, cred.claims, client.publicKey), client.publicKey);
    expect(ok.status, ok.text).toBe(200);
  });

  it('the nonce hashes the exact clientPublicKey text: the same key in upper case or uncompressed form does not match; another aud or issuer is another identity', async () => {
    const cred = await walletWithOauth(p.api);
    const client = keyPair();
    const token = await verifyToken(p.api, cred.claims, client.publicKey);
    expect401(await verify(p.api, cred.id, token, client.publicKey.toUpperCase()), /nonce/);
    expect401(await verify(p.api, cred.id, token, client.publicKeyUncompressed), /nonce/);
    expect401(
      await verify(p.api, cred.id, await verifyToken(p.api, cred.claims, client.publicKey, { aud: 'another-client' }), client.publicKey),
      /iss\/aud\/sub/,
    );
    expect401(
      await verify(
        p.api,
        cred.id,
        await verifyToken(p.api, cred.claims, client.publicKey, { iss: 'https://appleid.apple.com' }),
        client.publicKey,
      ),
      /iss\/aud\/sub/,
    );
  });

  it('400 for the retired sandbox-valid-oidc-token, a malformed token or clientPublicKey, and a PASSKEY body; /challenge on OAUTH is 400', async () => {
    const cred = await walletWithOauth(p.api);
    const client = keyPair();
    expectOidcTokenError(await verify(p.api, cred.id, 'sandbox-valid-oidc-token', client.publicKey), /legacy/);
    expectOidcTokenError(await verify(p.api, cred.id, 'a.b.c', client.publicKey));
    const badKey = expectError(
      await verify(p.api, cred.id, await verifyToken(p.api, cred.claims, '04abcd'), '04abcd'),
      400,
      'INVALID_INPUT',
    );
    expect(badKey.body.details.errors[0].field).toBe('clientPublicKey');
    const missingKey = expectError(
      await p.api.post(`/auth/credentials/${cred.id}/verify`, {
        type: 'OAUTH',
        oidcToken: await verifyToken(p.api, cred.claims, client.publicKey),
      }),
      400,
      'INVALID_INPUT',
    );
    expect(missingKey.body.details.errors[0].field).toBe('clientPublicKey');
    const typed = expectError(
      await p.api.post(`/auth/credentials/${cred.id}/verify`, { type: 'EMAIL_OTP', encryptedOtpBundle: '{}' }),
      400,
      'INVALID_INPUT',
    );
    expect(typed.body.details.errors[0].field).toBe('type');

    const ch = expectError(
      await p.api.post(`/auth/credentials/${cred.id}/challenge`, { clientPublicKey: client.publicKey }),
      400,
      'INVALID_INPUT',
    );
    expect(ch.body.message).toMatch(/OAUTH/);
    expectError(await p.api.post(`/auth/credentials/${cred.id}/challenge`, {}), 400, 'INVALID_INPUT');
  });

  it("404 for an unknown or another platform's credential", async () => {
    const cred = await walletWithOauth(p.api);
    const client = keyPair();
    const token = await verifyToken(p.api, cred.claims, client.publicKey);
    expectError(
      await verify(p.api, 'AuthMethod:00000000-0000-7000-8000-000000000000', token, client.publicKey),
      404,
      'REFERENCE_NOT_FOUND',
    );
    const other = await srv.newPlatform();
    expectError(await verify(other.api, cred.id, token, client.publicKey), 404, 'REFERENCE_NOT_FOUND');
  });
});
