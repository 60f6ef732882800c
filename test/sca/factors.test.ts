/**
 * SCA factors over HTTP: listScaFactors, startScaFactorEnrollment, confirmScaFactorEnrollment,
 * deleteScaFactor — TOTP checked with an independent RFC 6238 implementation (node:crypto), passkeys
 * with a real software WebAuthn authenticator, the TOTP secret sealed at rest.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { SoftwareAuthenticator } from '../helpers/webauthn.ts';
import { advance, base32Decode, fieldOf, limitedClient, platformNow, scaCustomer, totp, usCustomer, wrongCode } from './sca-helpers.ts';

const SECRET_KEY = 'sca-factors-test-secret-key-0123456789abcdef';
let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;

beforeAll(async () => {
  srv = await startServer({ env: { CORRIDOR_SECRET_KEY: SECRET_KEY } });
  p = await srv.newPlatform({ name: 'SCA factors' });
  other = await srv.newPlatform({ name: 'Other platform' });
});
afterAll(async () => srv?.close());

const q = (customerId: string) => ({ query: { customerId } });

describe('listScaFactors', () => {
  it('lists SMS_OTP for every SCA customer', async () => {
    const c = await scaCustomer(p.api);
    const res = await p.api.get('/sca/factors', q(c));
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ factors: [{ factor: 'SMS_OTP' }] });
  });

  it('is 409 for a customer outside the EEA, 404 for an unknown or another platform’s customer, 400 without customerId', async () => {
    expectError(await p.api.get('/sca/factors', q(await usCustomer(p.api))), 409, 'CONFLICT');
    expectError(await other.api.get('/sca/factors', q(await scaCustomer(p.api))), 404, 'USER_NOT_FOUND');
    expectError(await p.api.get('/sca/factors', q('Customer:019542f5-b3e7-7d02-8000-00000000dead')), 404, 'USER_NOT_FOUND');
    const bad = expectError(await p.api.get('/sca/factors'), 400, 'INVALID_INPUT');
    expect(JSON.stringify(bad.body.details)).toContain('customerId');
    expectError(await srv.anon.get('/sca/factors', q('Customer:x')), 401, 'UNAUTHORIZED');
  });

  it('a business with an EEA address is an SCA customer; its business country alone does not make one', async () => {
    const eea = await p.api.post('/customers', {
      customerType: 'BUSINESS',
      platformCustomerId: `biz-${Date.now()}`,
      businessInfo: { legalName: 'Acme GmbH', country: 'DE', incorporatedOn: '2018-03-14', taxId: 'DE123' },
      address: { line1: 'Hauptstr. 1', postalCode: '10115', country: 'DE' },
    });
    expect(eea.status, eea.text).toBe(201);
    expect((await p.api.get('/sca/factors', q(eea.body.id))).status).toBe(200);
    const us = await p.api.post('/customers', {
      customerType: 'BUSINESS',
      platformCustomerId: `biz-us-${Date.now()}`,
      businessInfo: { legalName: 'Acme GmbH US', country: 'DE', incorporatedOn: '2018-03-14', taxId: 'DE124' },
      address: { line1: '1 Main St', postalCode: '94105', country: 'US' },
    });
    expect(us.status, us.text).toBe(201);
    expectError(await p.api.get('/sca/factors', q(us.body.id)), 409, 'CONFLICT');
  });
});

describe('TOTP enrollment', () => {
  it('start → confirm with a real RFC 6238 code → listed; recovery codes shown once; secret sealed at rest', async () => {
    const c = await scaCustomer(p.api);
    const start = await p.api.post('/sca/factors', { type: 'TOTP' }, q(c));
    expect(start.status, start.text).toBe(200);
    const { secret, secretBase32Encoded, totpUri } = start.body;
    expect(start.body.type).toBe('TOTP');
    expect(secret).toMatch(/^[0-9a-f]{40}$/);
    expect(base32Decode(secretBase32Encoded).toString('hex')).toBe(secret);
    const uri = new URL(totpUri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.searchParams.get('secret')).toBe(secretBase32Encoded);
    expect(uri.searchParams.get('algorithm')).toBe('SHA1');
    expect(uri.searchParams.get('digits')).toBe('6');
    expect(uri.searchParams.get('period')).toBe('30');

    // The stored secret is sealed (CORRIDOR_SECRET_KEY is set): neither form appears in the row.
    const row = await srv.app.ctx.db.selectFrom('sca_factors').selectAll().where('customer_id', '=', c).executeTakeFirstOrThrow();
    expect(row.totp_secret).toMatch(/^enc:v1:/);
    expect(row.totp_secret).not.toContain(secretBase32Encoded);

    const key = base32Decode(secretBase32Encoded);
    const code = totp(key, await platformNow(p.api));
    const wrong = await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret, code: wrongCode(code) }, q(c));
    expect(fieldOf(expectError(wrong, 400, 'INVALID_INPUT'))).toBe('code');
    const other = await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret: 'ab'.repeat(20), code }, q(c));
    expect(fieldOf(expectError(other, 400, 'INVALID_INPUT'))).toBe('secret');

    const ok = await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret, code }, q(c));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.type).toBe('TOTP');
    expect(ok.body.recoveryCodes).toHaveLength(8);
    for (const r of ok.body.recoveryCodes) expect(r).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    const stored = await srv.app.ctx.db
      .selectFrom('sca_factors')
      .select('recovery_codes')
      .where('customer_id', '=', c)
      .executeTakeFirstOrThrow();
    for (const r of ok.body.recoveryCodes) expect(stored.recovery_codes).not.toContain(r);

    expect((await p.api.get('/sca/factors', q(c))).body.factors).toEqual([{ factor: 'SMS_OTP' }, { factor: 'TOTP' }]);
    // A replayed confirmation finds no pending enrollment; a second TOTP is refused.
    expectError(await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret, code }, q(c)), 409, 'CONFLICT');
    expectError(await p.api.post('/sca/factors', { type: 'TOTP' }, q(c)), 409, 'CONFLICT');
  });

  it('accepts the base32 secret and, on sandbox, the code 123456; a pending enrollment expires after 5 minutes', async () => {
    const c = await scaCustomer(p.api);
    const start = await p.api.post('/sca/factors', { type: 'TOTP' }, q(c));
    await advance(p.api, 301);
    const late = await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret: start.body.secret, code: '123456' }, q(c));
    expect(fieldOf(expectError(late, 400, 'INVALID_INPUT'))).toBe('secret');
    const again = await p.api.post('/sca/factors', { type: 'TOTP' }, q(c));
    const ok = await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret: again.body.secretBase32Encoded, code: '123456' }, q(c));
    expect(ok.status, ok.text).toBe(200);
  });

  it('rejects bad input with the field: unknown type, unknown fields, missing code', async () => {
    const c = await scaCustomer(p.api);
    expect(fieldOf(expectError(await p.api.post('/sca/factors', { type: 'SMS_OTP' }, q(c)), 400, 'INVALID_INPUT'))).toBe('type');
    expectError(await p.api.post('/sca/factors', { type: 'TOTP', extra: 1 }, q(c)), 400, 'INVALID_INPUT');
    const missing = await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret: 'x' }, q(c));
    expect(JSON.stringify(expectError(missing, 400, 'INVALID_INPUT').body.details)).toContain('code');
  });
});

describe('passkey enrollment', () => {
  it('start → confirm with a real WebAuthn registration → listed with its credentialId → deleted', async () => {
    const c = await scaCustomer(p.api);
    const auth = new SoftwareAuthenticator({ rpId: 'app.example.com' });
    const start = await p.api.post('/sca/factors', { type: 'PASSKEY' }, q(c));
    expect(start.status, start.text).toBe(200);
    expect(start.body).toMatchObject({ type: 'PASSKEY', allowedOrigins: expect.any(Array), relyingPartyId: expect.any(String) });
    const options = start.body.options;
    expect(options.challenge).toEqual(expect.any(String));
    expect(options.user.id).toEqual(expect.any(String));

    // A credential over another challenge, or from another origin than claimed, is refused.
    const forged = auth.register('AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    const bad = await p.api.post('/sca/factors/confirm', { type: 'PASSKEY', origin: auth.origin, credential: forged }, q(c));
    expect(fieldOf(expectError(bad, 400, 'INVALID_INPUT'))).toBe('credential');
    const credential = auth.register(options.challenge);
    const wrongOrigin = await p.api.post('/sca/factors/confirm', { type: 'PASSKEY', origin: 'https://evil.example.com', credential }, q(c));
    expect(fieldOf(expectError(wrongOrigin, 400, 'INVALID_INPUT'))).toBe('origin');

    const ok = await p.api.post('/sca/factors/confirm', { type: 'PASSKEY', origin: auth.origin, credential }, q(c));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({ type: 'PASSKEY', factor: { factor: 'PASSKEY', credentialId: auth.credentialId, name: 'Passkey' } });
    const list = await p.api.get('/sca/factors', q(c));
    expect(list.body.factors).toEqual([{ factor: 'SMS_OTP' }, { factor: 'PASSKEY', credentialId: auth.credentialId, name: 'Passkey' }]);

    expectError(await p.api.post('/sca/factors', { type: 'PASSKEY' }, q(c)), 409, 'PASSKEY_ALREADY_ENROLLED');
    expectError(await other.api.delete(`/sca/factors/${auth.credentialId}`, q(c)), 404, 'USER_NOT_FOUND');
    expectError(await p.api.delete('/sca/factors/not-a-credential', q(c)), 404, 'REFERENCE_NOT_FOUND');
    const del = await p.api.delete(`/sca/factors/${auth.credentialId}`, q(c));
    expect(del.status, del.text).toBe(204);
    expectError(await p.api.delete(`/sca/factors/${auth.credentialId}`, q(c)), 404, 'REFERENCE_NOT_FOUND');
    expect((await p.api.get('/sca/factors', q(c))).body.factors).toEqual([{ factor: 'SMS_OTP' }]);
    // Deleted, a new one can be enrolled.
    expect((await p.api.post('/sca/factors', { type: 'PASSKEY' }, q(c))).status).toBe(200);
  });

  it('confirm without a start is 400 on credential; origin is required', async () => {
    const c = await scaCustomer(p.api);
    const auth = new SoftwareAuthenticator();
    const none = await p.api.post('/sca/factors/confirm', { type: 'PASSKEY', origin: auth.origin, credential: auth.register('abc') }, q(c));
    expect(fieldOf(expectError(none, 400, 'INVALID_INPUT'))).toBe('credential');
    const noOrigin = await p.api.post('/sca/factors/confirm', { type: 'PASSKEY', credential: {} }, q(c));
    expect(JSON.stringify(expectError(noOrigin, 400, 'INVALID_INPUT').body.details)).toContain('origin');
  });
});

describe('configured relying party (CORRIDOR_WEBAUTHN_ORIGINS / _RP_IDS, the wallet’s)', () => {
  it('advertises and enforces them', async () => {
    const s = await startServer({
      env: { CORRIDOR_WEBAUTHN_ORIGINS: 'https://app.example.com', CORRIDOR_WEBAUTHN_RP_IDS: 'app.example.com' },
    });
    try {
      const pp = await s.newPlatform();
      const c = await scaCustomer(pp.api);
      const start = await pp.api.post('/sca/factors', { type: 'PASSKEY' }, q(c));
      expect(start.body.allowedOrigins).toEqual(['https://app.example.com']);
      expect(start.body.relyingPartyId).toBe('app.example.com');
      expect(start.body.options.rp.id).toBe('app.example.com');
      const stranger = new SoftwareAuthenticator({ rpId: 'other.example.com' });
      const refused = await pp.api.post(
        '/sca/factors/confirm',
        { type: 'PASSKEY', origin: stranger.origin, credential: stranger.register(start.body.options.challenge) },
        q(c),
      );
      expect(fieldOf(expectError(refused, 400, 'INVALID_INPUT'))).toBe('origin');
      const auth = new SoftwareAuthenticator({ rpId: 'app.example.com' });
      const ok = await pp.api.post(
        '/sca/factors/confirm',
        { type: 'PASSKEY', origin: 'https://app.example.com', credential: auth.register(start.body.options.challenge) },
        q(c),
      );
      expect(ok.status, ok.text).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe('permissions and scope', () => {
  it('a VIEW-only token reads but cannot enroll or delete (403); non-SCA customers get 409 everywhere', async () => {
    const c = await scaCustomer(p.api);
    const viewer = await limitedClient(p, ['VIEW']);
    expect((await viewer.get('/sca/factors', q(c))).status).toBe(200);
    expectError(await viewer.post('/sca/factors', { type: 'TOTP' }, q(c)), 403, 'FORBIDDEN');
    expectError(await viewer.post('/sca/factors/confirm', { type: 'TOTP', secret: 'x', code: '1' }, q(c)), 403, 'FORBIDDEN');
    expectError(await viewer.delete('/sca/factors/x', q(c)), 403, 'FORBIDDEN');
    const us = await usCustomer(p.api);
    expectError(await p.api.post('/sca/factors', { type: 'TOTP' }, q(us)), 409, 'CONFLICT');
    expectError(await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret: 'x', code: '123456' }, q(us)), 409, 'CONFLICT');
    expectError(await p.api.delete('/sca/factors/x', q(us)), 409, 'CONFLICT');
    expectError(await other.api.post('/sca/factors', { type: 'TOTP' }, q(c)), 404, 'USER_NOT_FOUND');
  });
});

describe('malformed proofs', () => {
  it('garbage passkey material is a 400, never a 500', async () => {
    const c = await scaCustomer(p.api);
    const junk = [
      {},
      { credentialId: 1, clientDataJson: [], attestationObject: null },
      { credentialId: '!!', clientDataJson: '%%', attestationObject: '??' },
      { id: 'abc', response: { clientDataJSON: 'e30', attestationObject: 'AAAA' } },
      {
        credentialId: 'abc',
        clientDataJson: Buffer.from('{"origin":"https://x.example","challenge":"x","type":"webauthn.create"}').toString('base64url'),
        attestationObject: 'oA',
      },
    ];
    await p.api.post('/sca/factors', { type: 'PASSKEY' }, q(c));
    for (const credential of junk) {
      const res = await p.api.post('/sca/factors/confirm', { type: 'PASSKEY', origin: 'https://x.example', credential }, q(c));
      expect(res.status, res.text).toBe(400);
    }
    const enroll = await p.api.post('/sca/factors', { type: 'PASSKEY' }, q(c));
    const auth = new SoftwareAuthenticator({ rpId: 'app.example.com' });
    const confirmed = await p.api.post(
      '/sca/factors/confirm',
      { type: 'PASSKEY', origin: auth.origin, credential: auth.register(enroll.body.options.challenge) },
      q(c),
    );
    expect(confirmed.status, confirmed.text).toBe(200);
    expect((await p.api.post('/sca/login/start', { factor: 'PASSKEY' }, q(c))).status).toBe(200);
    for (const passkeyAssertion of [
      {},
      { credentialId: auth.credentialId, clientDataJson: 'e30', authenticatorData: 'AA', signature: 'AA' },
      { response: 5 },
    ]) {
      const res = await p.api.post(
        '/sca/login/complete',
        { factor: 'PASSKEY', passkeyAssertion, origin: auth.origin, endUserIpAddress: '1.2.3.4' },
        q(c),
      );
      expect(fieldOf(expectError(res, 400, 'INVALID_INPUT'))).toBe('passkeyAssertion');
      await p.api.post('/sca/record-event', { eventType: 'RESET_PASSWORD_COMPLETED' }, q(c));
    }
  });
});
