/**
 * OAUTH credentials in the sandbox (spec §4.12 item 4, crypto-formats.md §6): a JWT-shaped ID token
 * whose signature segment may be a dummy; the claims are checked.
 *   - iss: a supported issuer; aud: non-empty string or one-element string array; sub: non-empty;
 *   - iat: numeric, at most 60 s before the request (5 s clock skew allowed); exp: numeric, after the request;
 *   - on verify: (iss, aud, sub) equal the registered identity, and nonce = lowercase hex SHA-256 of the
 *     UTF-8 text of `clientPublicKey` exactly as sent (the hex string, not the key bytes).
 * The legacy literal `sandbox-valid-oidc-token` is rejected. Production would first check the
 * signature with jose `jwtVerify` against the issuer's JWKS; this module does the claim rules only.
 */
import { createHash } from 'node:crypto';
import { decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';

export const SANDBOX_OIDC_ISSUERS: readonly string[] = ['https://accounts.google.com', 'accounts.google.com', 'https://appleid.apple.com'];
export const LEGACY_SANDBOX_OIDC_TOKEN = 'sandbox-valid-oidc-token';
export const OIDC_MAX_AGE_SECONDS = 60;
export const OIDC_CLOCK_SKEW_SECONDS = 5;
/** Longest token accepted. */
export const MAX_OIDC_TOKEN_LENGTH = 16_384;

/** The registered identity of an OAUTH credential. */
export interface OidcIdentity {
  iss: string;
  aud: string;
  sub: string;
}

export type OidcCheck = 'format' | 'legacy' | 'iss' | 'aud' | 'sub' | 'iat' | 'exp' | 'nonce' | 'identity';

export interface OidcFailure {
  ok: false;
  /** MALFORMED: not a JWT (the spec allows 400 INVALID_INPUT). INVALID: a claim check failed (401 with reason). */
  code: 'OIDC_TOKEN_MALFORMED' | 'OIDC_TOKEN_INVALID';
  check: OidcCheck;
  reason: string;
}

export interface CheckedOidcToken {
  ok: true;
  identity: OidcIdentity;
  /** The `email` claim when present (the credential nickname). */
  email?: string;
  claims: JWTPayload;
}

export interface OidcCheckOptions {
  /** The request time (the platform's clock), in ms since the epoch. */
  nowMs: number;
  /** Supported issuers; defaults to {@link SANDBOX_OIDC_ISSUERS}. */
  issuers?: readonly string[];
}

/** The nonce a verify token must carry for `clientPublicKey`: lowercase hex SHA-256 of its exact text. */
export function oidcNonceForClientPublicKey(clientPublicKey: string): string {
  return createHash('sha256').update(clientPublicKey, 'utf8').digest('hex');
}

function invalid(check: OidcCheck, reason: string): OidcFailure {
  return { ok: false, code: 'OIDC_TOKEN_INVALID', check, reason };
}

/** Registration rules: shape, issuer, audience, subject, freshness. */
export function checkOidcRegistrationToken(token: string, opts: OidcCheckOptions): CheckedOidcToken | OidcFailure {
  if (token === LEGACY_SANDBOX_OIDC_TOKEN) {
    return {
      ok: false,
      code: 'OIDC_TOKEN_MALFORMED',
      check: 'legacy',
      reason: 'the legacy sandbox OIDC token is no longer accepted; send a JWT-shaped ID token',
    };
  }
  if (typeof token !== 'string' || token.length > MAX_OIDC_TOKEN_LENGTH) {
    return { ok: false, code: 'OIDC_TOKEN_MALFORMED', check: 'format', reason: 'the OIDC token is not a JWT' };
  }
  let claims: JWTPayload;
  try {
    decodeProtectedHeader(token);
    claims = decodeJwt(token);
  } catch {
    return {
      ok: false,
      code: 'OIDC_TOKEN_MALFORMED',
      check: 'format',
      reason: 'the OIDC token is not a JWT (three base64url segments with JSON header and claims)',
    };
  }

  const issuers = opts.issuers ?? SANDBOX_OIDC_ISSUERS;
  if (typeof claims.iss !== 'string' || !issuers.includes(claims.iss))
    return invalid('iss', `the token issuer is not supported (supported: ${issuers.join(', ')})`);

  let aud: string | undefined;
  if (typeof claims.aud === 'string') aud = claims.aud;
  else if (Array.isArray(claims.aud) && claims.aud.length === 1 && typeof claims.aud[0] === 'string') aud = claims.aud[0];
  if (!aud) return invalid('aud', 'the token audience must be a non-empty string or a one-element string array');

  if (typeof claims.sub !== 'string' || claims.sub.length === 0) return invalid('sub', 'the token subject is missing or empty');

  const nowSeconds = opts.nowMs / 1000;
  if (typeof claims.iat !== 'number' || !Number.isFinite(claims.iat)) return invalid('iat', 'the token has no numeric iat');
  if (claims.iat > nowSeconds + OIDC_CLOCK_SKEW_SECONDS) return invalid('iat', 'the token iat is in the future');
  if (nowSeconds - claims.iat > OIDC_MAX_AGE_SECONDS + OIDC_CLOCK_SKEW_SECONDS) {
    return invalid('iat', `the token is stale: iat is more than ${OIDC_MAX_AGE_SECONDS} seconds before the request`);
  }
  if (typeof claims.exp !== 'number' || !Number.isFinite(claims.exp)) return invalid('exp', 'the token has no numeric exp');
  if (claims.exp * 1000 <= opts.nowMs) return invalid('exp', 'the token has expired');

  const email = typeof claims.email === 'string' ? claims.email : undefined;
  return { ok: true, identity: { iss: claims.iss, aud, sub: claims.sub }, ...(email !== undefined ? { email } : {}), claims };
}

/** Verify rules: everything of registration, the registered identity, and the nonce binding to `clientPublicKey`. */
export function checkOidcVerificationToken(
  token: string,
  opts: OidcCheckOptions & { identity: OidcIdentity; clientPublicKey: string },
): CheckedOidcToken | OidcFailure {
  const checked = checkOidcRegistrationToken(token, opts);
  if (!checked.ok) return checked;
  const { identity } = checked;
  if (identity.iss !== opts.identity.iss || identity.aud !== opts.identity.aud || identity.sub !== opts.identity.sub) {
    return invalid('identity', 'the token iss/aud/sub do not match the registered credential');
  }
  const nonce = checked.claims.nonce;
  if (typeof nonce !== 'string') return invalid('nonce', 'the token has no nonce');
  if (nonce !== oidcNonceForClientPublicKey(opts.clientPublicKey))
    return invalid('nonce', 'the token nonce is not the SHA-256 of clientPublicKey');
  return checked;
}
