/**
 * The per-transaction challenge API the payments module builds quote authorisation on
 * (src/modules/sca/sca-challenges.ts), driven in units of work of a real server's store; the customers,
 * factors, sessions and locks it reads are set up over HTTP. Subjects are stand-in quote ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/http/errors.ts';
import {
  attemptChallenge,
  closeChallenge,
  isScaCustomer,
  isTrustedBeneficiary,
  issueChallenge,
  pendingChallenge,
  resendChallenge,
  satisfyChallenge,
  type ScaProof,
} from '../../src/modules/sca/sca-challenges.ts';
import { platformNowMs } from '../../src/lib/time.ts';
import { runUnit, type Unit } from '../../src/unit.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { SoftwareAuthenticator } from '../helpers/webauthn.ts';
import { advance, externalAccount, scaCustomer, usCustomer } from './sca-helpers.ts';

let srv: TestServer;
let p: PlatformHandle;
let seq = 0;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'SCA challenges' });
});
afterAll(async () => srv?.close());

const unit = <T>(fn: (u: Unit) => Promise<T>) => runUnit(srv.app.ctx, p.id, fn);
const subject = () => `Quote:019542f5-b3e7-7d02-8000-${String(++seq).padStart(12, '0')}`;

/** The ApiError `fn` throws (fails when it does not throw one). */
async function thrown(fn: () => Promise<unknown>): Promise<ApiError> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

const satisfy = (customerId: string, subjectId: string, proof: ScaProof, requireSession = false) =>
  unit((u) => satisfyChallenge(u, { customerId, subjectId, proof, requireSession }));
const attempt = (customerId: string, subjectId: string, proof: ScaProof) =>
  unit((u) => attemptChallenge(u, { customerId, subjectId, proof, requireSession: false }));

describe('issue, read, satisfy', () => {
  it('an SMS challenge: wire shape, 5 minutes, satisfied once (then 409), an SCA customer only', async () => {
    const c = await scaCustomer(p.api);
    const s = subject();
    expect(await isScaCustomer(srv.app.ctx.db, p.id, c)).toBe(true);
    expect(await isScaCustomer(srv.app.ctx.db, p.id, await usCustomer(p.api))).toBe(false);
    const wire = await unit((u) => issueChallenge(u, { customerId: c, subjectId: s, purpose: 'PAYOUT', factor: 'SMS_OTP' }));
    expect(wire).toEqual({
      id: expect.stringMatching(/^ScaChallenge:/),
      expiresAt: expect.any(String),
      factor: 'SMS_OTP',
      availableFactors: ['SMS_OTP'],
      purpose: 'PAYOUT',
    });
    const platform = await srv.app.ctx.db.selectFrom('platforms').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    const now = platformNowMs(srv.app.ctx.deps.clock, platform);
    expect(Date.parse(wire.expiresAt) - now).toBeLessThanOrEqual(300_000);
    expect(await pendingChallenge(srv.app.ctx.db, p.id, s, now)).toEqual(wire);

    const wrong = await attempt(c, s, { code: '000000' });
    expect(wrong?.status).toBe(400);
    expect(wrong?.details).toMatchObject({ errors: [{ field: 'code' }], attemptsRemaining: 4 });
    expect((await thrown(() => satisfy(c, s, {}))).details).toMatchObject({ errors: [{ field: 'code' }] });
    expect((await thrown(() => satisfy(c, s, { passkeyAssertion: {} }))).details).toMatchObject({ errors: [{ field: 'origin' }] });
    expect((await thrown(() => satisfy(c, s, { code: '1', passkeyAssertion: {}, origin: 'https://x.example' }))).details).toMatchObject({
      errors: [{ field: 'passkeyAssertion' }],
    });
    await satisfy(c, s, { code: '123456', endUserIpAddress: '203.0.113.42' });
    expect(await pendingChallenge(srv.app.ctx.db, p.id, s, now)).toBeUndefined();
    const replay = await thrown(() => satisfy(c, s, { code: '123456' }));
    expect([replay.status, replay.code]).toEqual([409, 'CONFLICT']);
    const us = await thrown(() =>
      unit((u) => issueChallenge(u, { customerId: 'Customer:nope', subjectId: subject(), purpose: null, factor: 'SMS_OTP' })),
    );
    expect([us.status, us.code]).toEqual([404, 'USER_NOT_FOUND']);
  });

  it('a new challenge replaces the pending one; close ends it; expiry is 400; the 5th wrong proof voids it (429)', async () => {
    const c = await scaCustomer(p.api);
    const s = subject();
    const first = await unit((u) => issueChallenge(u, { customerId: c, subjectId: s, purpose: null, factor: 'SMS_OTP' }));
    const second = await unit((u) => issueChallenge(u, { customerId: c, subjectId: s, purpose: null, factor: 'SMS_OTP' }));
    expect(second.id).not.toBe(first.id);
    expect(second.purpose).toBeUndefined();
    await unit((u) => closeChallenge(u, s));
    await unit((u) => closeChallenge(u, s)); // no-op
    expect((await thrown(() => satisfy(c, s, { code: '123456' }))).status).toBe(409);

    const s2 = subject();
    await unit((u) => issueChallenge(u, { customerId: c, subjectId: s2, purpose: null, factor: 'SMS_OTP' }));
    for (let i = 0; i < 5; i++) expect((await attempt(c, s2, { code: '999999' }))?.status).toBe(400);
    const voided = await thrown(() => satisfy(c, s2, { code: '123456' }));
    expect([voided.status, voided.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(voided.headers?.['Retry-After'])).toBeGreaterThan(0);

    const s3 = subject();
    await unit((u) => issueChallenge(u, { customerId: c, subjectId: s3, purpose: null, factor: 'SMS_OTP' }));
    await advance(p.api, 301);
    const expired = await thrown(() => satisfy(c, s3, { code: '123456' }));
    expect([expired.status, expired.code]).toEqual([400, 'INVALID_INPUT']);
  });

  it('a thrown wrong proof is rolled back with its unit (satisfyChallenge); attemptChallenge keeps the count', async () => {
    const c = await scaCustomer(p.api);
    const s = subject();
    await unit((u) => issueChallenge(u, { customerId: c, subjectId: s, purpose: null, factor: 'SMS_OTP' }));
    await thrown(() => satisfy(c, s, { code: '000000' }));
    expect((await attempt(c, s, { code: '000000' }))?.details?.attemptsRemaining).toBe(4);
  });

  it('requireSession: 409 SCA_SESSION_REQUIRED without a login session; a lock is 423', async () => {
    const c = await scaCustomer(p.api);
    const s = subject();
    await unit((u) => issueChallenge(u, { customerId: c, subjectId: s, purpose: null, factor: 'SMS_OTP' }));
    const noSession = await thrown(() => satisfy(c, s, { code: '123456' }, true));
    expect([noSession.status, noSession.code]).toEqual([409, 'SCA_SESSION_REQUIRED']);
    const start = await p.api.post('/sca/login/start', { factor: 'SMS_OTP' }, { query: { customerId: c } });
    const login = await p.api.post(
      '/sca/login/complete',
      { factor: 'SMS_OTP', challengeId: start.body.challengeId, code: '123456', endUserIpAddress: '203.0.113.1' },
      { query: { customerId: c } },
    );
    expect(login.status, login.text).toBe(200);
    for (let i = 0; i < 5; i++) await p.api.post('/sca/record-event', { eventType: 'FAILED_LOGIN_ATTEMPT' }, { query: { customerId: c } });
    const locked = await thrown(() => satisfy(c, s, { code: '123456' }, true));
    expect([locked.status, locked.code]).toEqual([423, 'ACCOUNT_LOCKED']);
    expect(locked.details).toMatchObject({ suspended: false, failedAttempts: 5 });
    await p.api.post('/sca/record-event', { eventType: 'RESET_PASSWORD_COMPLETED' }, { query: { customerId: c } });
    // The password reset revoked the session.
    expect((await thrown(() => satisfy(c, s, { code: '123456' }, true))).code).toBe('SCA_SESSION_REQUIRED');
    await satisfy(c, s, { code: '123456' }, false);
  });

  it('a PASSKEY challenge needs an enrolled passkey (400) and verifies a real assertion', async () => {
    const c = await scaCustomer(p.api);
    const s = subject();
    const refused = await thrown(() => unit((u) => issueChallenge(u, { customerId: c, subjectId: s, purpose: null, factor: 'PASSKEY' })));
    expect([refused.status, refused.details]).toEqual([400, { errors: [{ field: 'scaFactor', message: 'PASSKEY is not enrolled' }] }]);
    const auth = new SoftwareAuthenticator({ rpId: 'app.example.com' });
    const enroll = await p.api.post('/sca/factors', { type: 'PASSKEY' }, { query: { customerId: c } });
    await p.api.post(
      '/sca/factors/confirm',
      { type: 'PASSKEY', origin: auth.origin, credential: auth.register(enroll.body.options.challenge) },
      { query: { customerId: c } },
    );

    const wire = await unit((u) => issueChallenge(u, { customerId: c, subjectId: s, purpose: 'TRANSFER', factor: 'PASSKEY' }));
    expect(wire.availableFactors).toEqual(['SMS_OTP', 'PASSKEY']);
    expect(wire.passkeyAllowedOrigins).toBeUndefined();
    const options = wire.passkeyAssertionOptions as { challenge: string; rpId: string };
    expect(options.rpId).toBe('app.example.com');
    expect((await thrown(() => satisfy(c, s, { code: '123456' }))).details).toMatchObject({ errors: [{ field: 'code' }] });
    const forged = await attempt(c, s, { passkeyAssertion: { ...auth.assert('', { challengeB64: 'AAAA' }) }, origin: auth.origin });
    expect(forged?.details).toMatchObject({ errors: [{ field: 'passkeyAssertion' }] });
    await satisfy(c, s, { passkeyAssertion: { ...auth.assert('', { challengeB64: options.challenge }) }, origin: auth.origin });
  });
});

describe('resend', () => {
  it('one resend per 30 s, 5 per challenge (429 with Retry-After); never extends expiresAt; SMS only', async () => {
    const c = await scaCustomer(p.api);
    const s = subject();
    const wire = await unit((u) => issueChallenge(u, { customerId: c, subjectId: s, purpose: null, factor: 'SMS_OTP' }));
    const tooSoon = await thrown(() => unit((u) => resendChallenge(u, { customerId: c, subjectId: s })));
    expect([tooSoon.status, tooSoon.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(tooSoon.headers?.['Retry-After'])).toBeGreaterThan(0);
    expect(Number(tooSoon.headers?.['Retry-After'])).toBeLessThanOrEqual(30);
    for (let i = 0; i < 5; i++) {
      await advance(p.api, 31);
      await unit((u) => resendChallenge(u, { customerId: c, subjectId: s }));
    }
    await advance(p.api, 31);
    const exhausted = await thrown(() => unit((u) => resendChallenge(u, { customerId: c, subjectId: s })));
    expect([exhausted.status, exhausted.code]).toEqual([429, 'RATE_LIMITED']);
    const platform = await srv.app.ctx.db.selectFrom('platforms').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow();
    const now = platformNowMs(srv.app.ctx.deps.clock, platform);
    expect((await pendingChallenge(srv.app.ctx.db, p.id, s, now))?.expiresAt).toBe(wire.expiresAt);
    await advance(p.api, 300);
    const gone = await thrown(() => unit((u) => resendChallenge(u, { customerId: c, subjectId: s })));
    expect([gone.status, gone.code]).toEqual([409, 'CONFLICT']);
    const none = await thrown(() => unit((u) => resendChallenge(u, { customerId: c, subjectId: subject() })));
    expect([none.status, none.code]).toEqual([409, 'CONFLICT']);
  });
});

describe('trusted beneficiaries', () => {
  it('isTrustedBeneficiary follows trust and untrust', async () => {
    const c = await scaCustomer(p.api);
    const acct = await externalAccount(p.api, c);
    expect(await isTrustedBeneficiary(srv.app.ctx.db, p.id, acct)).toBe(false);
    await p.api.post(`/customers/external-accounts/${acct}/trust`);
    await p.api.post(`/customers/external-accounts/${acct}/trust/confirm`, { code: '123456' });
    expect(await isTrustedBeneficiary(srv.app.ctx.db, p.id, acct)).toBe(true);
  });
});
