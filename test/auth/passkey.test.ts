/**
 * PASSKEY credentials over HTTP with a software WebAuthn authenticator and the real client
 * libraries: registration (first directly, another through the signed retry), the login challenge
 * and the verify in both key modes, and every 400/401 rule of spec §4.3–4.5 and §4.12 item 3.
 *
 * Per-credential rate limits (5 challenges a minute, 5 failed verifies per 15 minutes) are real
 * here, so each test keeps under them on every credential it uses.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError, type Client, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { FLAG_AT, SoftwareAuthenticator, type RegisterOptions } from '../helpers/webauthn.ts';
import {
  advanceClock,
  keyFromPrivate,
  keyPair,
  newWallet,
  openSessionKey,
  registrationChallenge,
  signed,
  signedCall,
  stamp,
  walletSetup,
  walletWithSession,
  type KeyPair,
} from '../helpers/wallet-auth.ts';

const CHALLENGE_MS = 5 * 60_000;
const SESSION_MS = 15 * 60_000;
const LEGACY_SIGNATURE = 'sandbox-valid-passkey-signature';

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  await walletSetup(p);
});
afterAll(async () => srv?.close());

interface Passkey {
  id: string;
  accountId: string;
  auth: SoftwareAuthenticator;
}

function passkeyBody(
  accountId: string,
  auth: SoftwareAuthenticator,
  opts: { challenge?: string; nickname?: string; register?: RegisterOptions } = {},
) {
  const challenge = opts.challenge ?? registrationChallenge();
  return {
    type: 'PASSKEY',
    accountId,
    nickname: opts.nickname ?? 'Test passkey',
    challenge,
    attestation: auth.register(challenge, opts.register),
  };
}

/** A new wallet whose first credential is a passkey (201 directly). */
async function walletWithPasskey(api: Client): Promise<Passkey> {
  const { accountId } = await newWallet(api);
  const auth = new SoftwareAuthenticator();
  const res = await api.post('/auth/credentials', passkeyBody(accountId, auth));
  expect(res.status, res.text).toBe(201);
  return { id: res.body.id, accountId, auth };
}

async function challenge(
  api: Client,
  pk: Passkey,
  clientPublicKey: string,
): Promise<{ challenge: string; requestId: string; expiresAt: string }> {
  const res = await api.post(`/auth/credentials/${pk.id}/challenge`, { clientPublicKey });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

function verify(api: Client, pk: Pick<Passkey, 'id'>, assertion: unknown, requestId?: string): Promise<Res> {
  return api.post(
    `/auth/credentials/${pk.id}/verify`,
    { type: 'PASSKEY', assertion },
    requestId === undefined ? undefined : { headers: { 'request-id': requestId } },
  );
}

/** Challenge + assertion + verify with a compressed client key: the session's key pair. */
async function login(api: Client, pk: Passkey, client: KeyPair = keyPair()): Promise<{ id: string; key: KeyPair }> {
  const ch = await challenge(api, pk, client.publicKey);
  const res = await verify(api, pk, pk.auth.assert(ch.challenge), ch.requestId);
  expect(res.status, res.text).toBe(200);
  return { id: res.body.id, key: client };
}

/** A signed wallet action (PATCH privateEnabled) that succeeds only when `key` is an active session key of the wallet. */
async function patchSignedBy(api: Client, accountId: string, key: KeyPair): Promise<Res> {
  const { result } = await signedCall((o) => api.patch(`/internal-accounts/${accountId}`, { privateEnabled: true }, o), key);
  return result;
}

function expect401(res: Res, reason: RegExp): void {
  expectError(res, 401, 'UNAUTHORIZED');
  expect(res.body.reason).toMatch(reason);
  expect(res.body.details.reason).toBe(res.body.reason);
}

function expectFieldError(res: Res, field: string, message?: RegExp): void {
  expectError(res, 400, 'INVALID_INPUT');
  expect(res.body.details.errors[0].field, res.text).toBe(field);
  if (message) expect(res.body.details.errors[0].message).toMatch(message);
}

describe('POST /auth/credentials (PASSKEY)', () => {
  it('registers the first passkey directly (201 with credentialId) and a second through the signed retry (202 type PASSKEY → 201)', async () => {
    const { accountId } = await newWallet(p.api);
    const first = new SoftwareAuthenticator();
    const created = await p.api.post('/auth/credentials', passkeyBody(accountId, first, { nickname: 'Laptop' }));
    expect(created.status, created.text).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^AuthMethod:/),
      accountId,
      type: 'PASSKEY',
      credentialId: first.credentialId,
      nickname: 'Laptop',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const session = await login(p.api, { id: created.body.id, accountId, auth: first });

    const second = new SoftwareAuthenticator({ rpId: 'example.com', origin: 'https://app.example.com' });
    const body = passkeyBody(accountId, second, { nickname: 'Phone' });
    const { challenge: ch, result } = await signedCall((o) => p.api.post('/auth/credentials', body, o), session.key);
    expect(ch.body).toEqual({
      payloadToSign: expect.any(String),
      requestId: expect.stringMatching(/^Request:/),
      expiresAt: expect.any(String),
      type: 'PASSKEY',
    });
    expect(JSON.parse(ch.body.payloadToSign)).toMatchObject({
      type: 'ACTIVITY_TYPE_CREATE_AUTHENTICATORS_V2',
      parameters: { userId: accountId, authenticators: [{ authenticatorName: 'Phone', challenge: body.challenge }] },
    });
    expect(result.status, result.text).toBe(201);
    expect(result.body).toMatchObject({ type: 'PASSKEY', accountId, credentialId: second.credentialId, nickname: 'Phone' });
    expect(result.body).not.toHaveProperty('otpEncryptionTargetBundle');

    const list = await p.api.get('/auth/credentials', { query: { accountId } });
    expect(list.body.data.map((c: { credentialId: string }) => c.credentialId).sort()).toEqual(
      [first.credentialId, second.credentialId].sort(),
    );
    // The second passkey is bound to its own origin and RP ID (a parent domain of the origin) and logs in.
    const viaSecond = await login(p.api, { id: result.body.id, accountId, auth: second });
    expect(viaSecond.id).toMatch(/^Session:/);
  });

  it('refuses a WebAuthn credentialId already on the wallet with 400 PASSKEY_CREDENTIAL_ALREADY_EXISTS, on either leg', async () => {
    const pk = await walletWithPasskey(p.api);
    const session = await login(p.api, pk);
    // The same authenticator again, with a fresh registration challenge: refused on the first leg.
    expectError(await p.api.post('/auth/credentials', passkeyBody(pk.accountId, pk.auth)), 400, 'PASSKEY_CREDENTIAL_ALREADY_EXISTS');

    // Two pending adds of one new authenticator (two registration challenges): the second retry loses.
    const other = new SoftwareAuthenticator();
    const a = passkeyBody(pk.accountId, other);
    const b = passkeyBody(pk.accountId, other);
    const chA = await p.api.post('/auth/credentials', a);
    const chB = await p.api.post('/auth/credentials', b);
    expect([chA.status, chB.status]).toEqual([202, 202]);
    const okA = await p.api.post('/auth/credentials', a, signed(await stamp(session.key, chA.body.payloadToSign), chA.body.requestId));
    expect(okA.status, okA.text).toBe(201);
    expectError(
      await p.api.post('/auth/credentials', b, signed(await stamp(session.key, chB.body.payloadToSign), chB.body.requestId)),
      400,
      'PASSKEY_CREDENTIAL_ALREADY_EXISTS',
    );
    const list = await p.api.get('/auth/credentials', { query: { accountId: pk.accountId } });
    expect(list.body.data).toHaveLength(2);
  });

  it('takes a registration challenge once (400 naming challenge), on any wallet of the platform', async () => {
    const { accountId } = await newWallet(p.api);
    const challengeValue = registrationChallenge();
    const first = await p.api.post('/auth/credentials', passkeyBody(accountId, new SoftwareAuthenticator(), { challenge: challengeValue }));
    expect(first.status, first.text).toBe(201);
    const other = await newWallet(p.api);
    expectFieldError(
      await p.api.post('/auth/credentials', passkeyBody(other.accountId, new SoftwareAuthenticator(), { challenge: challengeValue })),
      'challenge',
      /already used/,
    );
    expect((await p.api.get('/auth/credentials', { query: { accountId: other.accountId } })).body).toEqual({ data: [] });

    // Two pending signed adds with one challenge (on two wallets): the second retry is refused.
    const a = await walletWithSession(p.api);
    const b = await walletWithSession(p.api);
    const shared = registrationChallenge();
    const bodyA = passkeyBody(a.accountId, new SoftwareAuthenticator(), { challenge: shared });
    const bodyB = passkeyBody(b.accountId, new SoftwareAuthenticator(), { challenge: shared });
    const chA = await p.api.post('/auth/credentials', bodyA);
    const chB = await p.api.post('/auth/credentials', bodyB);
    expect([chA.status, chB.status]).toEqual([202, 202]);
    const okA = await p.api.post(
      '/auth/credentials',
      bodyA,
      signed(await stamp(a.session.key, chA.body.payloadToSign), chA.body.requestId),
    );
    expect(okA.status, okA.text).toBe(201);
    expectFieldError(
      await p.api.post('/auth/credentials', bodyB, signed(await stamp(b.session.key, chB.body.payloadToSign), chB.body.requestId)),
      'challenge',
      /already used/,
    );
  });

  it("trims the nickname and takes 1–100 letters, digits, spaces and . _ - ' ( ); anything else is 400 naming nickname", async () => {
    const { accountId } = await newWallet(p.api);
    const auth = new SoftwareAuthenticator();
    const challengeValue = registrationChallenge();
    for (const nickname of ['   ', 'a'.repeat(101), 'key<script>', 'Schlüssel 🔑', 'tab\tinside', 'semi;colon', 'slash/name']) {
      const res = await p.api.post('/auth/credentials', passkeyBody(accountId, auth, { challenge: challengeValue, nickname }));
      expectFieldError(res, 'nickname');
    }
    expectFieldError(
      await p.api.post('/auth/credentials', passkeyBody(accountId, auth, { challenge: challengeValue, nickname: '' })),
      'nickname',
    );

    // The refused attempts consumed nothing: the same challenge registers with a valid nickname.
    const ok = await p.api.post(
      '/auth/credentials',
      passkeyBody(accountId, auth, { challenge: challengeValue, nickname: "  Clé (iPhone) - d'Ana_1.0 ٣  " }),
    );
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.nickname).toBe("Clé (iPhone) - d'Ana_1.0 ٣");

    const long = await newWallet(p.api);
    const hundred = await p.api.post(
      '/auth/credentials',
      passkeyBody(long.accountId, new SoftwareAuthenticator(), { nickname: 'n'.repeat(100) }),
    );
    expect(hundred.status, hundred.text).toBe(201);
    expect(hundred.body.nickname).toHaveLength(100);
  });

  it('refuses a bad attestation with 400 naming the field: wrong challenge, origin, RP ID, credential id, type, tampered object', async () => {
    const { accountId } = await newWallet(p.api);
    const auth = new SoftwareAuthenticator();
    const challengeValue = registrationChallenge();
    const base = passkeyBody(accountId, auth, { challenge: challengeValue });
    const attempt = (attestation: unknown) => p.api.post('/auth/credentials', { ...base, attestation });

    // clientDataJSON carries another challenge than the body's.
    expectFieldError(await attempt(auth.register(registrationChallenge())), 'challenge');
    // Not an https origin.
    expectFieldError(await attempt(auth.register(challengeValue, { origin: 'http://wallet.example.com' })), 'attestation', /origin/);
    // RP ID hash of a domain the origin does not belong to.
    expectFieldError(await attempt(auth.register(challengeValue, { rpId: 'evil.example.org' })), 'attestation', /RP ID/);
    // credentialId differs from the id in the authenticator data.
    expectFieldError(
      await attempt(auth.register(challengeValue, { credentialIdOverride: randomBytes(32).toString('base64url') })),
      'attestation',
      /credential/,
    );
    // An assertion's clientData type.
    expectFieldError(await attempt(auth.register(challengeValue, { type: 'webauthn.get' })), 'attestation');
    // No user presence.
    expectFieldError(await attempt(auth.register(challengeValue, { flags: FLAG_AT })), 'attestation', /present/i);

    // attestationObject tampered: a flipped bit in the CBOR map header, then one in the RP ID hash.
    const good = auth.register(challengeValue);
    const raw = Buffer.from(good.attestationObject, 'base64url');
    const header = Buffer.from(raw);
    header[0] = header[0]! ^ 0x01;
    expectFieldError(await attempt({ ...good, attestationObject: header.toString('base64url') }), 'attestation');
    const authDataAt = raw.indexOf(Buffer.from('authData')) + 'authData'.length + 2; // bstr head: 0x58 <len>
    const rpHash = Buffer.from(raw);
    rpHash[authDataAt] = rpHash[authDataAt]! ^ 0x80;
    expectFieldError(await attempt({ ...good, attestationObject: rpHash.toString('base64url') }), 'attestation', /RP ID/);
    // Not base64url at all: the schema names the field.
    expectFieldError(await attempt({ ...good, attestationObject: 'not base64url!' }), 'attestation.attestationObject');

    expect((await p.api.get('/auth/credentials', { query: { accountId } })).body).toEqual({ data: [] });
    const ok = await attempt(good);
    expect(ok.status, ok.text).toBe(201);
  });
});

describe('configured WebAuthn origins and RP IDs (CORRIDOR_WEBAUTHN_ORIGINS / _RP_IDS)', () => {
  let restricted: TestServer;
  beforeAll(async () => {
    restricted = await startServer({
      env: { CORRIDOR_WEBAUTHN_ORIGINS: 'https://wallet.example.com', CORRIDOR_WEBAUTHN_RP_IDS: 'wallet.example.com' },
    });
  });
  afterAll(async () => restricted?.close());

  it('registers from the configured origin and RP ID only (400 naming attestation otherwise)', async () => {
    const q = await restricted.newPlatform();
    await walletSetup(q);
    const { accountId } = await newWallet(q.api);
    const foreignOrigin = new SoftwareAuthenticator({ rpId: 'wallet.example.com', origin: 'https://other.example.com' });
    expectFieldError(await q.api.post('/auth/credentials', passkeyBody(accountId, foreignOrigin)), 'attestation', /origin/);
    const foreignRp = new SoftwareAuthenticator({ rpId: 'example.com', origin: 'https://wallet.example.com' });
    expectFieldError(await q.api.post('/auth/credentials', passkeyBody(accountId, foreignRp)), 'attestation', /RP ID/);
    const ok = await q.api.post('/auth/credentials', passkeyBody(accountId, new SoftwareAuthenticator()));
    expect(ok.status, ok.text).toBe(201);
  });
});

describe('POST /auth/credentials/{id}/challenge (PASSKEY)', () => {
  it('requires clientPublicKey (400 naming it) and enforces its pattern; returns {challenge (64 hex), credentialId, requestId, expiresAt}', async () => {
    const pk = await walletWithPasskey(p.api);
    const path = `/auth/credentials/${pk.id}/challenge`;
    expectFieldError(await p.api.post(path, {}), 'clientPublicKey');
    expectFieldError(await p.api.post(path), 'clientPublicKey');
    const key = keyPair();
    for (const bad of [
      '04abcd',
      `05${key.publicKey.slice(2)}`,
      `${key.publicKey}00`,
      `${key.publicKey.slice(0, 64)}zz`,
      key.publicKeyUncompressed.slice(0, 128),
    ]) {
      expectFieldError(await p.api.post(path, { clientPublicKey: bad }), 'clientPublicKey');
    }
    expectFieldError(await p.api.post(path, { clientPublicKey: key.publicKey, extra: true }), 'extra');

    const res = await p.api.post(path, { clientPublicKey: key.publicKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      id: pk.id,
      accountId: pk.accountId,
      type: 'PASSKEY',
      nickname: 'Test passkey',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      credentialId: pk.auth.credentialId,
      challenge: expect.stringMatching(/^[0-9a-f]{64}$/),
      requestId: expect.stringMatching(/^Request:[0-9a-f-]{36}$/),
      expiresAt: expect.any(String),
    });
    const now = Date.parse((await p.api.get('/sandbox/clock')).body.now);
    expect(Date.parse(res.body.expiresAt) - now).toBeGreaterThan(CHALLENGE_MS - 60_000);
    expect(Date.parse(res.body.expiresAt) - now).toBeLessThanOrEqual(CHALLENGE_MS);
    // Each call issues a new challenge (uncompressed keys are taken too).
    const again = await p.api.post(path, { clientPublicKey: key.publicKeyUncompressed });
    expect(again.status).toBe(200);
    expect(again.body.challenge).not.toBe(res.body.challenge);
    expect(again.body.requestId).not.toBe(res.body.requestId);
  });

  it("404 for an unknown or another platform's credential", async () => {
    const pk = await walletWithPasskey(p.api);
    const clientPublicKey = keyPair().publicKey;
    expectError(
      await p.api.post('/auth/credentials/AuthMethod:00000000-0000-7000-8000-000000000000/challenge', { clientPublicKey }),
      404,
      'REFERENCE_NOT_FOUND',
    );
    const other = await srv.newPlatform();
    expectError(await other.api.post(`/auth/credentials/${pk.id}/challenge`, { clientPublicKey }), 404, 'REFERENCE_NOT_FOUND');
    expectError(
      await other.api.post(
        `/auth/credentials/${pk.id}/verify`,
        { type: 'PASSKEY', assertion: pk.auth.assert('00') },
        { headers: { 'request-id': 'Request:00000000-0000-7000-8000-000000000000' } },
      ),
      404,
      'REFERENCE_NOT_FOUND',
    );
  });
});

describe('POST /auth/credentials/{id}/verify (PASSKEY)', () => {
  it('compressed clientPublicKey: 200 AuthSession with encryptedSessionSigningKey (spec §2); the decrypted key and the client key both stamp for the session', async () => {
    const pk = await walletWithPasskey(p.api);
    const client = keyPair();
    const ch = await challenge(p.api, pk, client.publicKey);
    const res = await verify(p.api, pk, pk.auth.assert(ch.challenge), ch.requestId);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^Session:/),
      accountId: pk.accountId,
      type: 'PASSKEY',
      nickname: 'Test passkey',
      credentialId: pk.auth.credentialId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      expiresAt: expect.any(String),
      encryptedSessionSigningKey: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]+$/),
    });
    expect(Date.parse(res.body.expiresAt) - Date.parse(res.body.createdAt)).toBe(SESSION_MS);
    const sessions = await p.api.get('/auth/sessions', { query: { accountId: pk.accountId } });
    expect(sessions.body.data.map((s: { id: string }) => s.id)).toEqual([res.body.id]);

    const patched = await patchSignedBy(p.api, pk.accountId, client);
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.privateEnabled).toBe(true);
    // The session key sealed to the client's key signs too (either key mode works).
    const sessionKey = keyFromPrivate(openSessionKey(res.body.encryptedSessionSigningKey, client));
    expect(sessionKey.publicKey).not.toBe(client.publicKey);
    const again = await patchSignedBy(p.api, pk.accountId, sessionKey);
    expect(again.status, again.text).toBe(200);
  });

  it('uncompressed clientPublicKey: encryptedSessionSigningKey opens with decryptCredentialBundle and the decrypted key stamps a signed op', async () => {
    const pk = await walletWithPasskey(p.api);
    const client = keyPair();
    const ch = await challenge(p.api, pk, client.publicKeyUncompressed);
    const res = await verify(p.api, pk, pk.auth.assert(ch.challenge), ch.requestId);
    expect(res.status, res.text).toBe(200);
    expect(res.body.encryptedSessionSigningKey).toMatch(/^[1-9A-HJ-NP-Za-km-z]+$/);
    const sessionKey = keyFromPrivate(openSessionKey(res.body.encryptedSessionSigningKey, client));
    expect(sessionKey.publicKey).not.toBe(client.publicKey);

    // The key it was sealed to is not the session key; the decrypted one is.
    const update = (o?: { headers: Record<string, string> }) =>
      p.api.patch(`/internal-accounts/${pk.accountId}`, { privateEnabled: true }, o);
    const byClient = await update();
    expectError(
      await update(signed(await stamp(client, byClient.body.payloadToSign), byClient.body.requestId)),
      401,
      'WALLET_SIGNATURE_INVALID',
    );
    const patched = await patchSignedBy(p.api, pk.accountId, sessionKey);
    expect(patched.status, patched.text).toBe(200);
    const list = await p.api.get('/auth/sessions', { query: { accountId: pk.accountId } });
    expect(list.body.data[0]).not.toHaveProperty('encryptedSessionSigningKey');
  });

  it('401 for a missing, unknown or foreign Request-Id and for a replay of a successful verify (Request-Id already consumed)', async () => {
    const pk = await walletWithPasskey(p.api);
    const other = await walletWithPasskey(p.api);
    const ch = await challenge(p.api, pk, keyPair().publicKey);
    const assertion = pk.auth.assert(ch.challenge);

    const missing = expectError(await verify(p.api, pk, assertion), 401, 'REQUEST_ID_MISSING');
    expect(missing.body.reason).toMatch(/Request-Id/);
    expect401(await verify(p.api, pk, assertion, 'Request:00000000-0000-7000-8000-000000000000'), /does not match/);
    // The Request-Id of another credential's challenge does not serve this one.
    const foreign = await challenge(p.api, other, keyPair().publicKey);
    expect401(await verify(p.api, pk, assertion, foreign.requestId), /does not match/);

    const ok = await verify(p.api, pk, assertion, ch.requestId);
    expect(ok.status, ok.text).toBe(200);
    // Replaying it (same assertion, then a newer one) finds the request consumed.
    expect401(await verify(p.api, pk, assertion, ch.requestId), /already used/);
    const sessions = await p.api.get('/auth/sessions', { query: { accountId: pk.accountId } });
    expect(sessions.body.data).toHaveLength(1);
  });

  it('401 for an expired challenge (the platform clock moved past 5 minutes)', async () => {
    const q = await srv.newPlatform();
    await walletSetup(q);
    const pk = await walletWithPasskey(q.api);
    const ch = await challenge(q.api, pk, keyPair().publicKey);
    await advanceClock(q.api, CHALLENGE_MS / 1000 + 1);
    expect401(await verify(q.api, pk, pk.auth.assert(ch.challenge), ch.requestId), /expired/);
    // A fresh challenge works.
    await login(q.api, pk);
  });

  it('401 naming the check for an assertion of another credential, a wrong challenge, a wrong origin and a cleared user-presence bit', async () => {
    const pk = await walletWithPasskey(p.api);
    const stranger = new SoftwareAuthenticator();
    const ch = await challenge(p.api, pk, keyPair().publicKey);

    expect401(await verify(p.api, pk, stranger.assert(ch.challenge), ch.requestId), /not the registered credential/);
    const otherChallenge = Buffer.from('f'.repeat(64), 'utf8').toString('base64url');
    expect401(await verify(p.api, pk, pk.auth.assert(ch.challenge, { challengeB64: otherChallenge }), ch.requestId), /challenge/);
    expect401(await verify(p.api, pk, pk.auth.assert(ch.challenge, { origin: 'https://evil.example.com' }), ch.requestId), /origin/);
    expect401(await verify(p.api, pk, pk.auth.assert(ch.challenge, { flags: 0 }), ch.requestId), /present/i);

    // None of them consumed the challenge: the real assertion still logs in.
    const ok = await verify(p.api, pk, pk.auth.assert(ch.challenge), ch.requestId);
    expect(ok.status, ok.text).toBe(200);
  });

  it('401 naming the check for a wrong RP ID, a bad signature (another key, garbage bytes) and a non-increasing counter', async () => {
    const pk = await walletWithPasskey(p.api);
    const ch = await challenge(p.api, pk, keyPair().publicKey);
    expect401(await verify(p.api, pk, pk.auth.assert(ch.challenge, { rpId: 'example.com' }), ch.requestId), /RP ID/);
    const cloned = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
    expect401(await verify(p.api, pk, pk.auth.assert(ch.challenge, { signWith: cloned }), ch.requestId), /signature/);
    expect401(await verify(p.api, pk, pk.auth.assert(ch.challenge, { signature: randomBytes(70) }), ch.requestId), /malformed/);

    const ok = await verify(p.api, pk, pk.auth.assert(ch.challenge, { counter: 7 }), ch.requestId);
    expect(ok.status, ok.text).toBe(200);
    // A fresh challenge, but the authenticator reports the counter already seen: a cloned authenticator.
    const next = await challenge(p.api, pk, keyPair().publicKey);
    expect401(await verify(p.api, pk, pk.auth.assert(next.challenge, { counter: 7 }), next.requestId), /counter/);
    const higher = await verify(p.api, pk, pk.auth.assert(next.challenge, { counter: 8 }), next.requestId);
    expect(higher.status, higher.text).toBe(200);
  });

  it('the legacy sandbox-valid-passkey-signature logs in on a sandbox platform and is refused (401) on a PRODUCTION one', async () => {
    const pk = await walletWithPasskey(p.api);
    const client = keyPair();
    const ch = await challenge(p.api, pk, client.publicKey);
    const res = await verify(p.api, pk, { ...pk.auth.assert(ch.challenge), signature: LEGACY_SIGNATURE }, ch.requestId);
    expect(res.status, res.text).toBe(200);
    expect((await patchSignedBy(p.api, pk.accountId, client)).status).toBe(200);

    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    await walletSetup(prod);
    const prodPk = await walletWithPasskey(prod.api);
    const prodCh = await challenge(prod.api, prodPk, keyPair().publicKey);
    expect401(
      await verify(prod.api, prodPk, { ...prodPk.auth.assert(prodCh.challenge), signature: LEGACY_SIGNATURE }, prodCh.requestId),
      /malformed/,
    );
    expect((await prod.api.get('/auth/sessions', { query: { accountId: prodPk.accountId } })).body).toEqual({ data: [] });
    // Production runs the real ceremony: a real assertion on the same challenge logs in.
    const ok = await verify(prod.api, prodPk, prodPk.auth.assert(prodCh.challenge), prodCh.requestId);
    expect(ok.status, ok.text).toBe(200);
  });

  it('400 for a verify body of another type and for a malformed assertion', async () => {
    const pk = await walletWithPasskey(p.api);
    const ch = await challenge(p.api, pk, keyPair().publicKey);
    const typed = await p.api.post(
      `/auth/credentials/${pk.id}/verify`,
      { type: 'OAUTH', oidcToken: 'a.b.c', clientPublicKey: keyPair().publicKey },
      { headers: { 'request-id': ch.requestId } },
    );
    expectFieldError(typed, 'type');
    const assertion = pk.auth.assert(ch.challenge);
    expectFieldError(
      await verify(p.api, pk, { ...assertion, authenticatorData: 'not base64url!' }, ch.requestId),
      'assertion.authenticatorData',
    );
    expectFieldError(await verify(p.api, pk, { ...assertion, extra: 1 }, ch.requestId), 'assertion.extra');
    const ok = await verify(p.api, pk, assertion, ch.requestId);
    expect(ok.status, ok.text).toBe(200);
  });

  it('a wallet with an OTP session adds a passkey that then logs in and its session signs', async () => {
    const w = await walletWithSession(p.api);
    const auth = new SoftwareAuthenticator();
    const body = passkeyBody(w.accountId, auth);
    const { result } = await signedCall((o) => p.api.post('/auth/credentials', body, o), w.session.key);
    expect(result.status, result.text).toBe(201);
    const session = await login(p.api, { id: result.body.id, accountId: w.accountId, auth });
    expect((await patchSignedBy(p.api, w.accountId, session.key)).status).toBe(200);
    // The passkey session may revoke the EMAIL_OTP credential (a session of another credential).
    const revoke = await signedCall((o) => p.api.delete(`/auth/credentials/${w.credentialId}`, o), session.key);
    expect(revoke.result.status, revoke.result.text).toBe(204);
  });
});
