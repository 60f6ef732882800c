/**
 * Sandbox OIDC claim checks (spec §4.12 item 4): good tokens pass on register and verify; each
 * claim rule, the nonce binding, the identity match and the legacy literal fail with a reason.
 */
import { describe, expect, it } from 'vitest';
import {
  checkOidcRegistrationToken,
  checkOidcVerificationToken,
  LEGACY_SANDBOX_OIDC_TOKEN,
  oidcNonceForClientPublicKey,
  type OidcCheck,
  type OidcFailure,
} from '../../src/wallet/crypto/oidc.ts';
import { generateP256KeyPair, uncompressPublicKeyHex } from '../../src/wallet/crypto/keys.ts';
import { OIDC_VECTOR } from './vectors.ts';

const NOW_MS = Date.UTC(2026, 0, 15, 12, 0, 0);
const NOW = NOW_MS / 1000;

const b64u = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
function token(claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'RS256', typ: 'JWT' }): string {
  return `${b64u(header)}.${b64u(claims)}.sandbox-signature`;
}
const baseClaims = {
  iss: 'https://accounts.google.com',
  aud: '1234567.apps.googleusercontent.com',
  sub: '1122334455',
  email: 'user@example.com',
  iat: NOW - 10,
  exp: NOW + 3600,
};
const identity = { iss: baseClaims.iss, aud: baseClaims.aud, sub: baseClaims.sub };

function expectFailure(result: { ok: true } | OidcFailure, check: OidcCheck, code: OidcFailure['code'] = 'OIDC_TOKEN_INVALID') {
  expect(result.ok).toBe(false);
  if (!result.ok) {
    expect({ check: result.check, code: result.code }).toEqual({ check, code });
    expect(result.reason.length).toBeGreaterThan(0);
  }
}

describe('OIDC registration token', () => {
  it('a good token passes and yields the identity and email', () => {
    expect(checkOidcRegistrationToken(token(baseClaims), { nowMs: NOW_MS })).toMatchObject({
      ok: true,
      identity,
      email: 'user@example.com',
    });
    for (const iss of ['accounts.google.com', 'https://appleid.apple.com']) {
      expect(checkOidcRegistrationToken(token({ ...baseClaims, iss }), { nowMs: NOW_MS })).toMatchObject({ ok: true, identity: { iss } });
    }
    expect(checkOidcRegistrationToken(token({ ...baseClaims, aud: ['one-aud'] }), { nowMs: NOW_MS })).toMatchObject({
      ok: true,
      identity: { aud: 'one-aud' },
    });
    const noEmail = checkOidcRegistrationToken(token({ ...baseClaims, email: undefined }), { nowMs: NOW_MS });
    expect(noEmail.ok && noEmail.email).toBe(undefined);
  });

  it('the OpenAPI example token passes at its own iat (dummy RS256 signature ignored)', () => {
    const result = checkOidcRegistrationToken(OIDC_VECTOR.exampleToken, { nowMs: (OIDC_VECTOR.exampleIat + 30) * 1000 });
    expect(result).toMatchObject({
      ok: true,
      identity: { iss: 'https://accounts.google.com', sub: '1122334455', aud: '1234567.apps.googleusercontent.com' },
      email: 'user@example.com',
    });
    expectFailure(checkOidcRegistrationToken(OIDC_VECTOR.exampleToken, { nowMs: NOW_MS }), 'iat');
  });

  it('applies the iat window: 60 s old plus 5 s skew, and not in the future beyond the skew', () => {
    expect(checkOidcRegistrationToken(token({ ...baseClaims, iat: NOW - 65 }), { nowMs: NOW_MS }).ok).toBe(true);
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, iat: NOW - 66 }), { nowMs: NOW_MS }), 'iat');
    expect(checkOidcRegistrationToken(token({ ...baseClaims, iat: NOW + 5 }), { nowMs: NOW_MS }).ok).toBe(true);
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, iat: NOW + 6 }), { nowMs: NOW_MS }), 'iat');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, iat: String(NOW) }), { nowMs: NOW_MS }), 'iat');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, iat: undefined }), { nowMs: NOW_MS }), 'iat');
  });

  it('requires exp after the request', () => {
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, exp: NOW }), { nowMs: NOW_MS }), 'exp');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, exp: NOW - 1 }), { nowMs: NOW_MS }), 'exp');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, exp: undefined }), { nowMs: NOW_MS }), 'exp');
    expect(checkOidcRegistrationToken(token({ ...baseClaims, exp: NOW + 1 }), { nowMs: NOW_MS }).ok).toBe(true);
  });

  it('rejects bad iss, aud and sub', () => {
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, iss: 'https://evil.example.com' }), { nowMs: NOW_MS }), 'iss');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, iss: undefined }), { nowMs: NOW_MS }), 'iss');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, aud: '' }), { nowMs: NOW_MS }), 'aud');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, aud: ['a', 'b'] }), { nowMs: NOW_MS }), 'aud');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, aud: [] }), { nowMs: NOW_MS }), 'aud');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, aud: [7] }), { nowMs: NOW_MS }), 'aud');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, sub: '' }), { nowMs: NOW_MS }), 'sub');
    expectFailure(checkOidcRegistrationToken(token({ ...baseClaims, sub: 42 }), { nowMs: NOW_MS }), 'sub');
    // A configured issuer list replaces the default.
    expect(
      checkOidcRegistrationToken(token({ ...baseClaims, iss: 'https://idp.test' }), { nowMs: NOW_MS, issuers: ['https://idp.test'] }).ok,
    ).toBe(true);
  });

  it('rejects the legacy literal and anything not JWT-shaped as malformed', () => {
    expectFailure(checkOidcRegistrationToken(LEGACY_SANDBOX_OIDC_TOKEN, { nowMs: NOW_MS }), 'legacy', 'OIDC_TOKEN_MALFORMED');
    for (const bad of [
      '',
      'a.b',
      'a.b.c.d',
      `${b64u({ alg: 'RS256' })}.${b64u([1])}.x`,
      `${b64u({ alg: 'RS256' })}.not-json.x`,
      `not-json.${b64u(baseClaims)}.x`,
      'x'.repeat(20000),
    ]) {
      expectFailure(checkOidcRegistrationToken(bad, { nowMs: NOW_MS }), 'format', 'OIDC_TOKEN_MALFORMED');
    }
  });
});

describe('OIDC verification token', () => {
  const client = generateP256KeyPair();

  it('the nonce is SHA-256 of the key text (the §6 example key)', () => {
    const uncompressed = uncompressPublicKeyHex(OIDC_VECTOR.compressedKey);
    expect(uncompressed.startsWith('04f45f2a')).toBe(true);
    expect(uncompressed.endsWith('78be2')).toBe(true);
    expect(oidcNonceForClientPublicKey(uncompressed)).toBe(OIDC_VECTOR.uncompressedNonce);
    // The text, not the key: another encoding or case of the same key gives another nonce.
    expect(oidcNonceForClientPublicKey(OIDC_VECTOR.compressedKey)).not.toBe(OIDC_VECTOR.uncompressedNonce);
    expect(oidcNonceForClientPublicKey(uncompressed.toUpperCase())).not.toBe(OIDC_VECTOR.uncompressedNonce);
  });

  it('a good token bound to clientPublicKey passes, in either key encoding', () => {
    for (const clientPublicKey of [client.publicKeyHex, client.publicKeyUncompressedHex]) {
      const t = token({ ...baseClaims, nonce: oidcNonceForClientPublicKey(clientPublicKey) });
      expect(checkOidcVerificationToken(t, { nowMs: NOW_MS, identity, clientPublicKey })).toMatchObject({ ok: true, identity });
    }
  });

  it('fails on a wrong or missing nonce, another identity, or a stale token', () => {
    const clientPublicKey = client.publicKeyHex;
    const nonce = oidcNonceForClientPublicKey(clientPublicKey);
    const opts = { nowMs: NOW_MS, identity, clientPublicKey };
    expectFailure(
      checkOidcVerificationToken(token({ ...baseClaims, nonce: oidcNonceForClientPublicKey(client.publicKeyUncompressedHex) }), opts),
      'nonce',
    );
    expectFailure(checkOidcVerificationToken(token({ ...baseClaims, nonce: nonce.toUpperCase() }), opts), 'nonce');
    expectFailure(checkOidcVerificationToken(token(baseClaims), opts), 'nonce');
    expectFailure(checkOidcVerificationToken(token({ ...baseClaims, nonce: 5 }), opts), 'nonce');
    expectFailure(checkOidcVerificationToken(token({ ...baseClaims, nonce, sub: 'someone-else' }), opts), 'identity');
    expectFailure(checkOidcVerificationToken(token({ ...baseClaims, nonce, aud: 'other-client' }), opts), 'identity');
    expectFailure(checkOidcVerificationToken(token({ ...baseClaims, nonce, iss: 'https://appleid.apple.com' }), opts), 'identity');
    expectFailure(checkOidcVerificationToken(token({ ...baseClaims, nonce, iat: NOW - 120 }), opts), 'iat');
    expectFailure(checkOidcVerificationToken(token({ ...baseClaims, nonce, exp: NOW - 1 }), opts), 'exp');
    expectFailure(checkOidcVerificationToken(LEGACY_SANDBOX_OIDC_TOKEN, opts), 'legacy', 'OIDC_TOKEN_MALFORMED');
  });
});
