/**
 * Beneficiary trust over HTTP: startBeneficiaryTrust / confirmBeneficiaryTrust, the untrust pair,
 * and DELETE /customers/external-accounts/{id} on a trusted account (409 BENEFICIARY_TRUSTED).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { platformExternal } from '../helpers/payments.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advance,
  base32Decode,
  externalAccount,
  fieldOf,
  limitedClient,
  platformNow,
  scaCustomer,
  totp,
  usCustomer,
} from './sca-helpers.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'SCA trust' });
  other = await srv.newPlatform({ name: 'Other platform' });
});
afterAll(async () => srv?.close());

const path = (id: string, action: string) => `/customers/external-accounts/${id}/${action}`;

async function trusted(id: string, code = '123456'): Promise<void> {
  const start = await p.api.post(path(id, 'trust'));
  expect(start.status, start.text).toBe(200);
  const ok = await p.api.post(path(id, 'trust/confirm'), { challengeId: start.body.scaChallenge.id, code });
  expect(ok.status, ok.text).toBe(200);
}

describe('trust and untrust', () => {
  it('trust → confirm → trusted; delete is 409 BENEFICIARY_TRUSTED; untrust → confirm → deletable', async () => {
    const c = await scaCustomer(p.api);
    const acct = await externalAccount(p.api, c);
    const start = await p.api.post(path(acct, 'trust'));
    expect(start.status, start.text).toBe(200);
    const ch = start.body.scaChallenge;
    expect(ch).toEqual({
      id: expect.stringMatching(/^ScaChallenge:/),
      expiresAt: expect.any(String),
      factor: 'SMS_OTP',
      availableFactors: ['SMS_OTP'],
    });
    const now = await platformNow(p.api);
    expect(Date.parse(ch.expiresAt) - now).toBeLessThanOrEqual(300_000);

    const ok = await p.api.post(path(acct, 'trust/confirm'), { challengeId: ch.id, code: '123456' });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({ trusted: true });
    // Replayed confirmation: already trusted.
    expectError(await p.api.post(path(acct, 'trust/confirm'), { challengeId: ch.id, code: '123456' }), 409, 'CONFLICT');
    expectError(await p.api.post(path(acct, 'trust')), 409, 'CONFLICT');
    expectError(await p.api.delete(`/customers/external-accounts/${acct}`), 409, 'BENEFICIARY_TRUSTED');

    expectError(await p.api.post(path(acct, 'untrust/confirm'), { code: '123456' }), 409, 'CONFLICT'); // no pending untrust
    const un = await p.api.post(path(acct, 'untrust'));
    expect(un.status, un.text).toBe(200);
    const done = await p.api.post(path(acct, 'untrust/confirm'), { code: '123456' }); // challengeId is optional
    expect(done.status, done.text).toBe(200);
    expect(done.body).toEqual({ trusted: false });
    expectError(await p.api.post(path(acct, 'untrust')), 409, 'CONFLICT');
    expect((await p.api.delete(`/customers/external-accounts/${acct}`)).status).toBe(204);
  });

  it('wrong code 400 (counted: the 5th voids the challenge, then 429), wrong challengeId 400, expired 400', async () => {
    const c = await scaCustomer(p.api);
    const acct = await externalAccount(p.api, c);
    expectError(await p.api.post(path(acct, 'trust/confirm'), { code: '123456' }), 409, 'CONFLICT'); // no start
    const start = await p.api.post(path(acct, 'trust'));
    const id = start.body.scaChallenge.id;
    expect(
      fieldOf(
        expectError(await p.api.post(path(acct, 'trust/confirm'), { challengeId: 'ScaChallenge:x', code: '123456' }), 400, 'INVALID_INPUT'),
      ),
    ).toBe('challengeId');
    for (let i = 4; i >= 1; i--) {
      const wrong = expectError(await p.api.post(path(acct, 'trust/confirm'), { challengeId: id, code: '000000' }), 400, 'INVALID_INPUT');
      expect(fieldOf(wrong)).toBe('code');
      expect(wrong.body.details.attemptsRemaining).toBe(i);
    }
    expectError(await p.api.post(path(acct, 'trust/confirm'), { challengeId: id, code: '000000' }), 400, 'INVALID_INPUT');
    const limited = expectError(await p.api.post(path(acct, 'trust/confirm'), { challengeId: id, code: '123456' }), 429, 'RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);

    const again = await p.api.post(path(acct, 'trust'));
    await advance(p.api, 301);
    const late = await p.api.post(path(acct, 'trust/confirm'), { challengeId: again.body.scaChallenge.id, code: '123456' });
    expect(fieldOf(expectError(late, 400, 'INVALID_INPUT'))).toBe('code');
    expect((await p.api.delete(`/customers/external-accounts/${acct}`)).status).toBe(204); // never trusted
  });

  it('a code of the enrolled TOTP is accepted (RFC 6238, independent implementation)', async () => {
    const c = await scaCustomer(p.api);
    const enroll = await p.api.post('/sca/factors', { type: 'TOTP' }, { query: { customerId: c } });
    const key = base32Decode(enroll.body.secretBase32Encoded);
    const first = totp(key, await platformNow(p.api));
    expect(
      (await p.api.post('/sca/factors/confirm', { type: 'TOTP', secret: enroll.body.secret, code: first }, { query: { customerId: c } }))
        .status,
    ).toBe(200);
    await advance(p.api, 60);
    const acct = await externalAccount(p.api, c);
    const start = await p.api.post(path(acct, 'trust'));
    expect(start.body.scaChallenge.availableFactors).toEqual(['SMS_OTP', 'TOTP']);
    await trusted(acct, totp(key, await platformNow(p.api)));
  });

  it('exactly one of code / passkeyAssertion; origin with the assertion; unknown fields 400', async () => {
    const c = await scaCustomer(p.api);
    const acct = await externalAccount(p.api, c);
    await p.api.post(path(acct, 'trust'));
    expect(fieldOf(expectError(await p.api.post(path(acct, 'trust/confirm'), {}), 400, 'INVALID_INPUT'))).toBe('code');
    expect(fieldOf(expectError(await p.api.post(path(acct, 'trust/confirm'), { passkeyAssertion: {} }), 400, 'INVALID_INPUT'))).toBe(
      'origin',
    );
    const both = await p.api.post(path(acct, 'trust/confirm'), { code: '123456', passkeyAssertion: {}, origin: 'https://a.example' });
    expect(fieldOf(expectError(both, 400, 'INVALID_INPUT'))).toBe('passkeyAssertion');
    const extra = await p.api.post(path(acct, 'trust/confirm'), { code: '123456', endUserIpAddress: '1.2.3.4' });
    expect(JSON.stringify(expectError(extra, 400, 'INVALID_INPUT').body.details)).toContain('endUserIpAddress');
    expectError(await p.api.post(path(acct, 'trust'), { any: 1 }), 400, 'INVALID_INPUT');
    // None counted: the right code still works.
    expect((await p.api.post(path(acct, 'trust/confirm'), { code: '123456' })).body).toEqual({ trusted: true });
  });

  it('404 for platform accounts, unknown ids and another platform’s; 409 for a non-SCA customer; 403 for VIEW', async () => {
    const c = await scaCustomer(p.api);
    const acct = await externalAccount(p.api, c);
    const platformAcct = await platformExternal(p, '001');
    expectError(await p.api.post(path(platformAcct, 'trust')), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.post(path('ExternalAccount:019542f5-b3e7-7d02-8000-00000000dead', 'trust')), 404, 'REFERENCE_NOT_FOUND');
    expectError(await other.api.post(path(acct, 'trust')), 404, 'REFERENCE_NOT_FOUND');
    expectError(await other.api.post(path(acct, 'untrust/confirm'), { code: '123456' }), 404, 'REFERENCE_NOT_FOUND');
    const us = await externalAccount(p.api, await usCustomer(p.api));
    expectError(await p.api.post(path(us, 'trust')), 409, 'CONFLICT');
    expectError(await p.api.post(path(us, 'trust/confirm'), { code: '123456' }), 409, 'CONFLICT');
    const viewer = await limitedClient(p, ['VIEW']);
    for (const action of ['trust', 'untrust']) expectError(await viewer.post(path(acct, action)), 403, 'FORBIDDEN');
    for (const action of ['trust/confirm', 'untrust/confirm'])
      expectError(await viewer.post(path(acct, action), { code: '1' }), 403, 'FORBIDDEN');
  });
});
