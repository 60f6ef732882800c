/**
 * OAUTH credentials (spec §4.4): an OIDC identity (iss, aud, sub) registered from a token, and a
 * one-call login with a fresh token whose nonce binds the session's `clientPublicKey`.
 *
 * Corridor cannot fetch an identity provider's keys (it runs offline), so it cannot check a real
 * token's signature: OAUTH is a sandbox feature.
 */
import { errors } from '../../http/errors.ts';
import type { AuthCredentialRow } from '../../store/schema-auth.ts';
import type { Unit } from '../../unit.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import type { CredentialVerify } from './auth.schemas.ts';
import type { NewCredential } from './credentials.service.ts';
import { checkOidcToken } from './crypto.ts';
import type { OidcResult } from './crypto-identity.ts';
import { createSession, type IssuedSession } from './sessions.service.ts';

type OauthVerify = Extract<CredentialVerify, { type: 'OAUTH' }>;

/** A malformed token is bad input (400); a well-formed one that fails a check is a wallet 401. */
function checked(result: OidcResult): Extract<OidcResult, { ok: true }> {
  if (result.ok) return result;
  if (result.malformed) throw errors.invalidField('oidcToken', result.reason);
  throw errors.walletAuthFailed('UNAUTHORIZED', result.reason);
}

/** A new OAUTH credential for the identity `oidcToken` names. */
export function prepareOauthCredential(u: Unit, oidcToken: string): NewCredential {
  if (!isSandbox(u.platform)) throw errors.oauthUnavailable();
  const { identity, email } = checked(checkOidcToken(oidcToken, { nowMs: u.nowMs }));
  const { iss, aud, sub } = identity;
  return {
    type: 'OAUTH',
    nickname: email ?? sub,
    uniqueKey: `OAUTH:${JSON.stringify([iss, aud, sub])}`,
    oidcIdentity: { iss, aud, sub },
  };
}

/** An OAUTH login: a fresh token of the credential's identity, its nonce bound to clientPublicKey. */
export async function verifyOauth(u: Unit, cred: AuthCredentialRow, body: OauthVerify): Promise<IssuedSession> {
  if (!isSandbox(u.platform)) throw errors.oauthUnavailable();
  const identity = JSON.parse(cred.oidc_identity ?? '{}') as { iss: string; aud: string; sub: string };
  checked(checkOidcToken(body.oidcToken, { nowMs: u.nowMs, expectIdentity: identity, clientPublicKey: body.clientPublicKey }));
  return createSession(u, cred, { clientPublicKey: body.clientPublicKey });
}
