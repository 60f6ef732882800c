/**
 * PASSKEY registration and assertion through passkey.ts with the software authenticator, the
 * OpenAPI real-browser attestation, and each failing check reported with its name.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  rpIdCandidates,
  sameCredentialId,
  verifyPasskeyAssertion,
  verifyPasskeyRegistration,
  webauthnChallengeForServiceChallenge,
  type PasskeyCheck,
  type PasskeyFailure,
  type RegisteredPasskey,
} from '../../src/wallet/crypto/passkey.ts';
import { FLAG_AT, FLAG_UP, FLAG_UV, SoftwareAuthenticator } from '../helpers/webauthn.ts';
import { PASSKEY_REGISTRATION_EXAMPLE } from './vectors.ts';

const newChallenge = () => randomBytes(32).toString('base64url');
const serviceChallenge = () => createHash('sha256').update(randomBytes(16)).digest('hex');

function expectFailure(result: { ok: true } | PasskeyFailure, check: PasskeyCheck, code: PasskeyFailure['code'] = 'PASSKEY_INVALID') {
  expect(result.ok).toBe(false);
  if (!result.ok) {
    expect({ check: result.check, code: result.code }).toEqual({ check, code });
    expect(result.reason.length).toBeGreaterThan(0);
  }
}

async function registered(auth = new SoftwareAuthenticator()): Promise<{ auth: SoftwareAuthenticator; passkey: RegisteredPasskey }> {
  const challenge = newChallenge();
  const result = await verifyPasskeyRegistration({ attestation: auth.register(challenge), challenge });
  if (!result.ok) throw new Error(result.reason);
  return { auth, passkey: result.passkey };
}

describe('passkey registration', () => {
  it('verifies a none attestation and pins origin and RP ID', async () => {
    const auth = new SoftwareAuthenticator();
    const challenge = newChallenge();
    const result = await verifyPasskeyRegistration({ attestation: auth.register(challenge), challenge });
    expect(result).toMatchObject({
      ok: true,
      passkey: {
        credentialId: auth.credentialId,
        counter: 0,
        origin: 'https://wallet.example.com',
        rpId: 'wallet.example.com',
        transports: ['internal'],
        userVerified: false,
      },
    });
    if (result.ok) expect(result.passkey.publicKey.equals(auth.coseKey())).toBe(true);
  });

  it('compares the challenge as bytes (padding tolerated)', async () => {
    const auth = new SoftwareAuthenticator();
    const bytes = randomBytes(31); // base64url length not a multiple of 4
    const attestation = auth.register(bytes.toString('base64url'));
    const result = await verifyPasskeyRegistration({ attestation, challenge: `${bytes.toString('base64url')}=` });
    expect(result.ok).toBe(true);
  });

  it('accepts a parent domain as RP ID, and an explicitly configured policy', async () => {
    const auth = new SoftwareAuthenticator({ rpId: 'example.com', origin: 'https://wallet.example.com' });
    const challenge = newChallenge();
    const result = await verifyPasskeyRegistration({ attestation: auth.register(challenge), challenge });
    expect(result).toMatchObject({ ok: true, passkey: { rpId: 'example.com', origin: 'https://wallet.example.com' } });

    const local = new SoftwareAuthenticator({ rpId: 'localhost', origin: 'http://localhost:3000' });
    const c2 = newChallenge();
    expect(await verifyPasskeyRegistration({ attestation: local.register(c2), challenge: c2 })).toMatchObject({
      ok: true,
      passkey: { rpId: 'localhost' },
    });

    const c3 = newChallenge();
    const configured = await verifyPasskeyRegistration({
      attestation: auth.register(c3),
      challenge: c3,
      relyingParty: { origins: ['https://app.example.org'], rpIds: ['example.com'] },
    });
    expectFailure(configured, 'origin');
  });

  it('verifies the OpenAPI real-browser attestation (with the challenge inside its clientData)', async () => {
    const ex = PASSKEY_REGISTRATION_EXAMPLE;
    const result = await verifyPasskeyRegistration({ attestation: ex.attestation, challenge: ex.clientDataChallenge });
    expect(result).toMatchObject({
      ok: true,
      passkey: { rpId: 'dev.dontneeda.pw', origin: 'https://dev.dontneeda.pw', credentialId: ex.attestation.credentialId },
    });
    // The example body's own challenge differs by one letter.
    expectFailure(await verifyPasskeyRegistration({ attestation: ex.attestation, challenge: ex.bodyChallenge }), 'challenge');
  });

  it('reports each failed check', async () => {
    const auth = new SoftwareAuthenticator();
    const c = newChallenge();
    expectFailure(await verifyPasskeyRegistration({ attestation: auth.register(c), challenge: newChallenge() }), 'challenge');
    expectFailure(
      await verifyPasskeyRegistration({ attestation: auth.register(c, { origin: 'http://wallet.example.com' }), challenge: c }),
      'origin',
    );
    expectFailure(await verifyPasskeyRegistration({ attestation: auth.register(c, { origin: 'not a url' }), challenge: c }), 'origin');
    expectFailure(await verifyPasskeyRegistration({ attestation: auth.register(c, { rpId: 'evil.example.net' }), challenge: c }), 'rpId');
    expectFailure(await verifyPasskeyRegistration({ attestation: auth.register(c, { flags: FLAG_AT }), challenge: c }), 'userPresence');
    expectFailure(
      await verifyPasskeyRegistration({
        attestation: auth.register(c, { flags: FLAG_UP | FLAG_AT }),
        challenge: c,
        requireUserVerification: true,
      }),
      'userVerification',
    );
    expect(
      (
        await verifyPasskeyRegistration({
          attestation: auth.register(c, { flags: FLAG_UP | FLAG_UV | FLAG_AT }),
          challenge: c,
          requireUserVerification: true,
        })
      ).ok,
    ).toBe(true);
    expectFailure(await verifyPasskeyRegistration({ attestation: auth.register(c, { type: 'webauthn.get' }), challenge: c }), 'type');
    expectFailure(
      await verifyPasskeyRegistration({
        attestation: auth.register(c, { credentialIdOverride: randomBytes(32).toString('base64url') }),
        challenge: c,
      }),
      'credential',
    );
  });

  it('malformed fields → PASSKEY_MALFORMED', async () => {
    const auth = new SoftwareAuthenticator();
    const c = newChallenge();
    const good = auth.register(c);
    expectFailure(
      await verifyPasskeyRegistration({ attestation: { ...good, clientDataJson: 'not base64url!' }, challenge: c }),
      'format',
      'PASSKEY_MALFORMED',
    );
    expectFailure(
      await verifyPasskeyRegistration({ attestation: { ...good, credentialId: '' }, challenge: c }),
      'format',
      'PASSKEY_MALFORMED',
    );
    expectFailure(await verifyPasskeyRegistration({ attestation: good, challenge: '' }), 'format', 'PASSKEY_MALFORMED');
    expectFailure(
      await verifyPasskeyRegistration({ attestation: { ...good, clientDataJson: Buffer.from('[1]').toString('base64url') }, challenge: c }),
      'format',
      'PASSKEY_MALFORMED',
    );
    expectFailure(
      await verifyPasskeyRegistration({ attestation: { ...good, attestationObject: randomBytes(40).toString('base64url') }, challenge: c }),
      'format',
      'PASSKEY_MALFORMED',
    );
  });
});

describe('passkey assertion', () => {
  it('verifies assertions over UTF-8(H) and advances the counter', async () => {
    const { auth, passkey } = await registered();
    const h1 = serviceChallenge();
    const first = await verifyPasskeyAssertion({ assertion: auth.assert(h1), challenge: h1, passkey });
    expect(first).toEqual({ ok: true, newCounter: 1, userVerified: false });
    const h2 = serviceChallenge();
    const second = await verifyPasskeyAssertion({
      assertion: auth.assert(h2, { flags: FLAG_UP | FLAG_UV }),
      challenge: h2,
      passkey: { ...passkey, counter: 1 },
    });
    expect(second).toEqual({ ok: true, newCounter: 2, userVerified: true });
    // Authenticators that never count (always 0) pass while the stored counter is 0.
    const h3 = serviceChallenge();
    expect(await verifyPasskeyAssertion({ assertion: auth.assert(h3, { counter: 0 }), challenge: h3, passkey })).toMatchObject({
      ok: true,
      newCounter: 0,
    });
    // userHandle is accepted.
    const h4 = serviceChallenge();
    expect(
      (
        await verifyPasskeyAssertion({
          assertion: auth.assert(h4, { userHandle: 'dXNlcg' }),
          challenge: h4,
          passkey: { ...passkey, counter: 2 },
        })
      ).ok,
    ).toBe(true);
  });

  it('the WebAuthn challenge is base64url of the hex text', () => {
    expect(webauthnChallengeForServiceChallenge('6b35a4').startsWith('NmIzNWE0')).toBe(true);
    const h = serviceChallenge();
    expect(Buffer.from(webauthnChallengeForServiceChallenge(h), 'base64url').toString('utf8')).toBe(h);
  });

  it('reports each failed check', async () => {
    const { auth, passkey } = await registered();
    const h = serviceChallenge();
    const check = async (
      assertion: ReturnType<SoftwareAuthenticator['assert']>,
      stored: RegisteredPasskey = passkey,
      extra: { requireUserVerification?: boolean } = {},
    ) => verifyPasskeyAssertion({ assertion, challenge: h, passkey: stored, ...extra });

    expectFailure(await check(auth.assert(serviceChallenge())), 'challenge');
    // The raw hex bytes instead of UTF-8 of the hex text.
    expectFailure(await check(auth.assert(h, { challengeB64: Buffer.from(h, 'hex').toString('base64url') })), 'challenge');
    expectFailure(await check(auth.assert(h, { origin: 'https://evil.example.com' })), 'origin');
    expectFailure(await check(auth.assert(h, { rpId: 'example.com' })), 'rpId');
    expectFailure(await check(auth.assert(h, { flags: 0 })), 'userPresence');
    expectFailure(await check(auth.assert(h), passkey, { requireUserVerification: true }), 'userVerification');
    expectFailure(await check(auth.assert(h, { type: 'webauthn.create' })), 'type');
    expectFailure(await check(auth.assert(h, { counter: 5 }), { ...passkey, counter: 5 }), 'counter');
    expectFailure(await check(auth.assert(h, { counter: 4 }), { ...passkey, counter: 5 }), 'counter');
    // Same credential id, different key (a cloned or forged credential).
    expectFailure(await check(auth.assert(h, { signWith: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey })), 'signature');
    // Another credential's id.
    expectFailure(await check(auth.assert(h, { credentialId: randomBytes(32).toString('base64url') })), 'credential');
    // A valid assertion by another registered authenticator for this credential record.
    const other = await registered();
    expectFailure(await check(other.auth.assert(h)), 'credential');
    expectFailure(await check({ ...other.auth.assert(h), credentialId: passkey.credentialId }), 'signature');
  });

  it('a tampered signature or authenticator data fails', async () => {
    const { auth, passkey } = await registered();
    const h = serviceChallenge();
    const good = auth.assert(h);
    const sig = Buffer.from(good.signature, 'base64url');
    sig[sig.length - 1] = sig[sig.length - 1]! ^ 1;
    const badSig = await verifyPasskeyAssertion({ assertion: { ...good, signature: sig.toString('base64url') }, challenge: h, passkey });
    expect(badSig.ok).toBe(false);
    const data = Buffer.from(good.authenticatorData, 'base64url');
    data[36] = data[36]! ^ 1; // counter byte
    const badData = await verifyPasskeyAssertion({
      assertion: { ...good, authenticatorData: data.toString('base64url') },
      challenge: h,
      passkey,
    });
    expectFailure(badData, 'signature');
    // The untampered assertion still verifies.
    expect((await verifyPasskeyAssertion({ assertion: good, challenge: h, passkey })).ok).toBe(true);
  });

  it('malformed fields → PASSKEY_MALFORMED', async () => {
    const { auth, passkey } = await registered();
    const h = serviceChallenge();
    const good = auth.assert(h);
    for (const field of ['credentialId', 'clientDataJson', 'authenticatorData', 'signature'] as const) {
      expectFailure(
        await verifyPasskeyAssertion({ assertion: { ...good, [field]: 'a+b/c' }, challenge: h, passkey }),
        'format',
        'PASSKEY_MALFORMED',
      );
    }
    expectFailure(
      await verifyPasskeyAssertion({ assertion: { ...good, userHandle: '%%' }, challenge: h, passkey }),
      'format',
      'PASSKEY_MALFORMED',
    );
  });
});

describe('helpers', () => {
  it('rpIdCandidates walks up to the registrable-looking parent', () => {
    expect(rpIdCandidates('https://a.b.example.com')).toEqual(['a.b.example.com', 'b.example.com', 'example.com']);
    expect(rpIdCandidates('http://localhost:3000')).toEqual(['localhost']);
    expect(rpIdCandidates('https://127.0.0.1:8443')).toEqual(['127.0.0.1']);
    expect(rpIdCandidates('nope')).toEqual([]);
  });

  it('sameCredentialId compares bytes', () => {
    const id = randomBytes(20);
    expect(sameCredentialId(id.toString('base64url'), `${id.toString('base64url')}=`)).toBe(true);
    expect(sameCredentialId(id.toString('base64url'), randomBytes(20).toString('base64url'))).toBe(false);
    expect(sameCredentialId('+/', '+/')).toBe(false);
  });
});
