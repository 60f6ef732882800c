/**
 * PATCH /customers/{customerId} changing the email (phone number) of a customer whose embedded
 * wallet holds an EMAIL_OTP (SMS_OTP) credential: 202 with a challenge, then the retry stamped by a
 * wallet session (real stamps, @turnkey/api-key-stamper) updates the customer and the credential
 * together; every refusal of the retry (401, 409) leaves both unchanged; a customer without tied
 * credentials is updated at once (live operation `updateCustomerById`; facts-auth §1.2, §4.4).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicHeader, expectError, type Client, type Res } from '../helpers/http.ts';
import { create, individual, type Wire } from '../helpers/customers.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advanceClock,
  encryptOtp,
  keyPair,
  otpLogin,
  signed,
  signedCall,
  stamp,
  walletSetup,
  walletWithSession,
  type KeyPair,
  type Session,
} from '../helpers/wallet-auth.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let seq = 0;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Contact change' });
  other = await srv.newPlatform({ name: 'Another platform' });
  await walletSetup(p);
  await walletSetup(other);
});
afterAll(async () => srv?.close());

const fresh = (what: 'email' | 'phone') => {
  seq += 1;
  return what === 'email' ? `moved${seq}-${Date.now()}@example.com` : `+1415555${String(1000 + seq).slice(-4)}`;
};

interface Wallet {
  accountId: string;
  customerId: string;
  credentialId: string;
  session: Session;
}

const patch = (api: Client, w: { customerId: string }, body: Record<string, unknown>, o?: { headers: Record<string, string> }) =>
  api.patch(`/customers/${w.customerId}`, { customerType: 'INDIVIDUAL', ...body }, o);

async function customer(w: { customerId: string }): Promise<Wire> {
  const res = await p.api.get(`/customers/${w.customerId}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function credentials(api: Client, accountId: string): Promise<Wire[]> {
  const res = await api.get('/auth/credentials', { query: { accountId } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** The 202 of a contact change, checked: the challenge shape and the activity it asks to sign. */
function expectChallenge(res: Res, activity: Record<string, unknown>): { payloadToSign: string; requestId: string } {
  expect(res.status, res.text).toBe(202);
  expect(res.body).toEqual({
    payloadToSign: expect.any(String),
    requestId: expect.stringMatching(/^Request:/),
    expiresAt: expect.any(String),
  });
  expect(JSON.parse(res.body.payloadToSign)).toMatchObject(activity);
  return res.body;
}

describe('email change of a customer with an EMAIL_OTP credential', () => {
  it('202 (nothing written), then the stamped retry updates the customer and the credential together', async () => {
    const w: Wallet = await walletWithSession(p.api);
    const before = await customer(w);
    const email = fresh('email');
    const body = { email, fullName: 'Renamed Holder' };
    const ch = expectChallenge(await patch(p.api, w, body), {
      type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL',
      parameters: { userEmail: email, userId: w.customerId },
    });
    expect(await customer(w)).toEqual(before);
    expect((await credentials(p.api, w.accountId))[0].nickname).toBe(before.email);

    const done = await patch(p.api, w, body, signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId));
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ id: w.customerId, email, fullName: 'Renamed Holder' });
    expect(await customer(w)).toEqual(done.body);
    const [cred] = await credentials(p.api, w.accountId);
    expect(cred).toMatchObject({ id: w.credentialId, type: 'EMAIL_OTP', nickname: email });

    // Sent again as it was, it changes nothing more: the customer already has that email (200).
    const repeated = await patch(p.api, w, body, signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId));
    expect(repeated.status, repeated.text).toBe(200);
    expect(repeated.body).toEqual(done.body);
    // The request id is single use: once the email moved on, replaying it cannot move it back.
    const next = fresh('email');
    const { result: onward } = await signedCall((o) => patch(p.api, w, { email: next }, o), w.session.key);
    expect(onward.status, onward.text).toBe(200);
    const reused = expectError(
      await patch(p.api, w, body, signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId)),
      401,
      'UNAUTHORIZED',
    );
    expect(reused.body.reason).toMatch(/already used/);
    expect((await customer(w)).email).toBe(onward.body.email);
  });

  it("the live CLI's retry: Grid-Wallet-Signature and Request-Id headers, as `customers update --wallet-signature --request-id` sends them", async () => {
    const w: Wallet = await walletWithSession(p.api);
    const email = fresh('email');
    const url = `${srv.baseUrl}/customers/${w.customerId}`;
    const body = JSON.stringify({ customerType: 'INDIVIDUAL', email });
    const headers = { Authorization: basicHeader(p.creds), Accept: 'application/json', 'Content-Type': 'application/json' };
    const first = await fetch(url, { method: 'PATCH', headers, body });
    expect(first.status).toBe(202);
    const ch = (await first.json()) as { payloadToSign: string; requestId: string };
    const retry = await fetch(url, {
      method: 'PATCH',
      headers: { ...headers, 'Grid-Wallet-Signature': await stamp(w.session.key, ch.payloadToSign), 'Request-Id': ch.requestId },
      body,
    });
    expect(retry.status).toBe(200);
    expect(((await retry.json()) as Wire).email).toBe(email);
  });

  it('an OTP sent to the old address no longer logs in after the change', async () => {
    const w: Wallet = await walletWithSession(p.api);
    const sent = await p.api.post(`/auth/credentials/${w.credentialId}/challenge`, {});
    expect(sent.status, sent.text).toBe(200);
    const email = fresh('email');
    const { result } = await signedCall((o) => patch(p.api, w, { email }, o), w.session.key);
    expect(result.status, result.text).toBe(200);
    const login = await p.api.post(`/auth/credentials/${w.credentialId}/verify`, {
      type: 'EMAIL_OTP',
      encryptedOtpBundle: await encryptOtp(sent.body.otpEncryptionTargetBundle, '000000', keyPair()),
    });
    expectError(login, 401, 'UNAUTHORIZED');
  });

  describe('a refused retry changes nothing', () => {
    let w: Wallet;
    let body: Record<string, unknown>;
    let ch: { payloadToSign: string; requestId: string };
    let before: Wire;

    beforeAll(async () => {
      w = await walletWithSession(p.api);
      body = { email: fresh('email') };
      ch = expectChallenge(await patch(p.api, w, body), { type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL' });
      before = await customer(w);
    });

    async function refused(res: Res, code: string, reason?: RegExp): Promise<void> {
      expectError(res, 401, code);
      if (reason) expect(res.body.reason).toMatch(reason);
      expect(await customer(w)).toEqual(before);
      expect((await credentials(p.api, w.accountId))[0].nickname).toBe(before.email);
    }

    it('a stamp over another payload (tampered): 401 WALLET_SIGNATURE_INVALID', async () => {
      const tampered = JSON.parse(ch.payloadToSign) as Wire;
      tampered.parameters.userEmail = 'attacker@example.com';
      await refused(
        await patch(p.api, w, body, signed(await stamp(w.session.key, JSON.stringify(tampered)), ch.requestId)),
        'WALLET_SIGNATURE_INVALID',
      );
    });

    it("a stamp by a key that is no session of the customer's wallet (foreign): 401 WALLET_SIGNATURE_INVALID", async () => {
      const stranger: KeyPair = keyPair();
      await refused(
        await patch(p.api, w, body, signed(await stamp(stranger, ch.payloadToSign), ch.requestId)),
        'WALLET_SIGNATURE_INVALID',
        /not an active session/,
      );
      const otherWallet: Wallet = await walletWithSession(p.api);
      await refused(
        await patch(p.api, w, body, signed(await stamp(otherWallet.session.key, ch.payloadToSign), ch.requestId)),
        'WALLET_SIGNATURE_INVALID',
      );
    });

    it('a malformed stamp, a missing header, another body: 401 with the matching code', async () => {
      await refused(await patch(p.api, w, body, signed('not-a-stamp', ch.requestId)), 'WALLET_SIGNATURE_MALFORMED');
      await refused(await patch(p.api, w, body, signed(await stamp(w.session.key, ch.payloadToSign))), 'REQUEST_ID_MISSING');
      await refused(await patch(p.api, w, body, { headers: { 'request-id': ch.requestId } }), 'WALLET_SIGNATURE_MISSING');
      await refused(
        await patch(p.api, w, { ...body, fullName: 'Sneaked In' }, signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId)),
        'WALLET_SIGNATURE_BODY_MISMATCH',
      );
      await refused(
        await patch(p.api, w, body, signed(await stamp(w.session.key, ch.payloadToSign), 'Request:019542f5-b3e7-7d02-8000-000000000099')),
        'UNAUTHORIZED',
      );
    });

    it('a challenge of another operation, or of another customer, does not authorise this one', async () => {
      const exportChallenge = await p.api.post(`/internal-accounts/${w.accountId}/export`, {
        clientPublicKey: keyPair().publicKeyUncompressed,
      });
      expect(exportChallenge.status).toBe(202);
      await refused(
        await patch(p.api, w, body, signed(await stamp(w.session.key, exportChallenge.body.payloadToSign), exportChallenge.body.requestId)),
        'UNAUTHORIZED',
      );
      const v: Wallet = await walletWithSession(p.api);
      const theirs = expectChallenge(await patch(p.api, v, body), { type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL' });
      await refused(
        await patch(p.api, w, body, signed(await stamp(w.session.key, theirs.payloadToSign), theirs.requestId)),
        'UNAUTHORIZED',
      );
    });

    it('the same retry from another platform is 404; after all that, the right retry still succeeds', async () => {
      const res = await patch(other.api, w, body, signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId));
      expectError(res, 404, 'USER_NOT_FOUND');
      const ok = await patch(p.api, w, body, signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId));
      expect(ok.status, ok.text).toBe(200);
      expect(ok.body.email).toBe(body.email);
    });
  });

  it('an expired challenge (the platform clock past expiresAt) is 401', async () => {
    const q = await srv.newPlatform({ name: 'Challenge expiry' });
    await walletSetup(q);
    const w: Wallet = await walletWithSession(q.api);
    const body = { email: fresh('email') };
    const ch = expectChallenge(await patch(q.api, w, body), { type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL' });
    await advanceClock(q.api, 301);
    const res = await patch(q.api, w, body, signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId));
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.body.reason).toMatch(/expired/);
  });

  it("409 EMAIL_OTP_EMAIL_ALREADY_EXISTS when another wallet's EMAIL_OTP credential signs in with that email", async () => {
    const w: Wallet = await walletWithSession(p.api);
    const taken: Wallet = await walletWithSession(p.api);
    const theirEmail = (await customer(taken)).email as string;
    const res = expectError(await patch(p.api, w, { email: theirEmail.toUpperCase() }), 409, 'EMAIL_OTP_EMAIL_ALREADY_EXISTS');
    expect(res.body.details.errors).toEqual([{ field: 'email', message: expect.any(String) }]);
  });

  it('409 EMAIL_OTP_CREDENTIAL_SET_CHANGED when the tied credentials changed between the 202 and the retry', async () => {
    const w: Wallet = await walletWithSession(p.api);
    // A second credential (SMS_OTP) and its session, then the EMAIL_OTP credential revoked with it.
    const add = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId: w.accountId }, o), w.session.key);
    expect(add.result.status, add.result.text).toBe(201);
    const sms = await otpLogin(p.api, add.result.body.id, 'SMS_OTP');
    const body = { email: fresh('email') };
    const ch = expectChallenge(await patch(p.api, w, body), { type: 'ACTIVITY_TYPE_UPDATE_USER_EMAIL' });
    const revoke = await signedCall((o) => p.api.delete(`/auth/credentials/${w.credentialId}`, o), sms.key);
    expect(revoke.result.status, revoke.result.text).toBe(204);
    const before = await customer(w);
    const res = await patch(p.api, w, body, signed(await stamp(sms.key, ch.payloadToSign), ch.requestId));
    expectError(res, 409, 'EMAIL_OTP_CREDENTIAL_SET_CHANGED');
    expect(await customer(w)).toEqual(before);
    // With no EMAIL_OTP credential left, the same change now needs no signature.
    const direct = await patch(p.api, w, body);
    expect(direct.status, direct.text).toBe(200);
    expect(direct.body.email).toBe(body.email);
  });
});

describe('phone change of a customer with an SMS_OTP credential', () => {
  it('202 ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER, then the retry moves the customer and the SMS_OTP credential', async () => {
    const w: Wallet = await walletWithSession(p.api);
    const add = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId: w.accountId }, o), w.session.key);
    expect(add.result.status, add.result.text).toBe(201);
    const phoneNumber = fresh('phone');
    const ch = expectChallenge(await patch(p.api, w, { phoneNumber }), {
      type: 'ACTIVITY_TYPE_UPDATE_USER_PHONE_NUMBER',
      parameters: { userId: w.customerId, userPhoneNumber: phoneNumber },
    });
    const done = await patch(p.api, w, { phoneNumber }, signed(await stamp(w.session.key, ch.payloadToSign), ch.requestId));
    expect(done.status, done.text).toBe(200);
    expect(done.body.phoneNumber).toBe(phoneNumber);
    const creds = await credentials(p.api, w.accountId);
    expect(creds.find((c) => c.type === 'SMS_OTP')?.nickname).toBe(phoneNumber);
    // The EMAIL_OTP credential keeps its email.
    expect(creds.find((c) => c.type === 'EMAIL_OTP')?.nickname).toBe(done.body.email);
  });

  it("409 CONFLICT (SMS_OTP_PHONE_ALREADY_EXISTS) when another wallet's SMS_OTP credential uses the number", async () => {
    const a: Wallet = await walletWithSession(p.api);
    const b: Wallet = await walletWithSession(p.api);
    const phoneNumber = fresh('phone');
    for (const w of [a, b]) {
      const add = await signedCall((o) => p.api.post('/auth/credentials', { type: 'SMS_OTP', accountId: w.accountId }, o), w.session.key);
      expect(add.result.status, add.result.text).toBe(201);
    }
    const moved = await signedCall((o) => patch(p.api, a, { phoneNumber }, o), a.session.key);
    expect(moved.result.status, moved.result.text).toBe(200);
    const res = expectError(await patch(p.api, b, { phoneNumber }), 409, 'CONFLICT');
    expect(res.body.details.reason).toBe('SMS_OTP_PHONE_ALREADY_EXISTS');
  });
});

describe('updates that need no signature complete at once (signature headers ignored)', () => {
  it('a customer without embedded wallets, a wallet without OTP credentials, a change of the other contact, no change', async () => {
    const plain = await create(p.api, individual());
    const res = await p.api.patch(`/customers/${plain.id}`, { customerType: 'INDIVIDUAL', email: fresh('email') });
    expect(res.status, res.text).toBe(200);

    const w: Wallet = await walletWithSession(p.api);
    // Its EMAIL_OTP credential does not send to the phone: a phone change is immediate.
    const phone = await patch(p.api, w, { phoneNumber: fresh('phone') });
    expect(phone.status, phone.text).toBe(200);
    // The current email again is no change.
    const same = await patch(p.api, w, { email: (await customer(w)).email, fullName: 'Same Email' });
    expect(same.status, same.text).toBe(200);
    // Stray signature headers on an immediate update are ignored.
    const stray = await patch(
      p.api,
      w,
      { fullName: 'Stray Headers' },
      signed(await stamp(w.session.key, 'anything'), 'Request:019542f5-b3e7-7d02-8000-000000000042'),
    );
    expect(stray.status, stray.text).toBe(200);
    expect(stray.body.fullName).toBe('Stray Headers');
  });

  it('email and phone together is still a 400, before any challenge', async () => {
    const w: Wallet = await walletWithSession(p.api);
    const res = await patch(p.api, w, { email: fresh('email'), phoneNumber: fresh('phone') });
    expectError(res, 400, 'INVALID_INPUT');
  });
});
