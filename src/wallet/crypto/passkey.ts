/**
 * PASSKEY verification: thin wrappers over `@simplewebauthn/server` that take the service's field
 * names (crypto-formats.md §5) and return typed results.
 *
 * - Registration: `attestation {credentialId, clientDataJson, attestationObject, transports?}` plus
 *   the integrator's base64url `challenge` (compared as bytes, so padding does not matter).
 *   The origin and RP ID are not in the request: unless the caller configures them, the origin in
 *   clientData is taken (https, or http on localhost) and the RP ID must be its hostname or a parent
 *   domain. Both are pinned on the returned credential and required on every assertion.
 * - Assertion: `assertion {credentialId, clientDataJson, authenticatorData, signature, userHandle?}`
 *   checked against the stored credential. The service's challenge is a hex string H and the
 *   WebAuthn challenge bytes are UTF-8(H) (Turnkey's WebauthnStamper convention).
 *
 * simplewebauthn does not bind `response.id` to the stored credential and defaults to requiring
 * user verification; both are handled here (UV is off by default: the published examples carry UP only).
 */
import { verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import type { AuthenticatorTransport } from '@simplewebauthn/server';

/** The legacy sandbox assertion signature that skips WebAuthn checks (sandbox platforms only — the caller decides). */
export const SANDBOX_PASSKEY_SIGNATURE = 'sandbox-valid-passkey-signature';

export interface PasskeyAttestation {
  credentialId: string;
  clientDataJson: string;
  attestationObject: string;
  transports?: string[];
}

export interface PasskeyAssertion {
  credentialId: string;
  clientDataJson: string;
  authenticatorData: string;
  signature: string;
  userHandle?: string | null;
}

/** What to persist for a registered passkey. */
export interface RegisteredPasskey {
  /** Canonical (unpadded) base64url credential id. */
  credentialId: string;
  /** COSE_Key bytes of the credential public key. */
  publicKey: Buffer;
  counter: number;
  transports: string[];
  /** The origin the credential was registered from; assertions must come from it. */
  origin: string;
  /** The RP ID the credential is scoped to; assertions must carry its hash. */
  rpId: string;
  userVerified: boolean;
  backedUp: boolean;
}

/** The stored values an assertion is checked against. */
export type StoredPasskey = Pick<RegisteredPasskey, 'credentialId' | 'publicKey' | 'counter' | 'origin' | 'rpId'> & {
  transports?: string[];
};

/** Which check failed. */
export type PasskeyCheck =
  | 'format'
  | 'credential'
  | 'type'
  | 'challenge'
  | 'origin'
  | 'rpId'
  | 'userPresence'
  | 'userVerification'
  | 'algorithm'
  | 'attestation'
  | 'signature'
  | 'counter';

export interface PasskeyFailure {
  ok: false;
  /** MALFORMED: fields cannot be decoded. INVALID: decoded, but a WebAuthn check failed. */
  code: 'PASSKEY_MALFORMED' | 'PASSKEY_INVALID';
  check: PasskeyCheck;
  reason: string;
}

export interface RelyingPartyPolicy {
  /** Allowed origins. Default: the clientData origin, when it is https or http on localhost. */
  origins?: string[];
  /** Allowed RP IDs. Default: the origin's hostname and its parent domains. */
  rpIds?: string[];
}

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

function isBase64url(s: unknown): s is string {
  return typeof s === 'string' && BASE64URL.test(s) && s.replace(/=+$/, '').length % 4 !== 1;
}

function b64uBytes(s: string): Buffer {
  return Buffer.from(s.replace(/=+$/, ''), 'base64url');
}

/** Canonical unpadded base64url of a base64url value (so ids compare as bytes). */
export function canonicalBase64url(s: string): string {
  return b64uBytes(s).toString('base64url');
}

/** True when two base64url credential ids denote the same bytes. */
export function sameCredentialId(a: string, b: string): boolean {
  return isBase64url(a) && isBase64url(b) && b64uBytes(a).equals(b64uBytes(b));
}

/** The WebAuthn challenge (base64url) a client signs for the service challenge H: base64url(UTF-8(H)). */
export function webauthnChallengeForServiceChallenge(serviceChallenge: string): string {
  return Buffer.from(serviceChallenge, 'utf8').toString('base64url');
}

/** The hostname of `origin` and each parent domain with at least two labels (`a.b.example.com` → 3 ids). */
export function rpIdCandidates(origin: string): string[] {
  let host: string;
  try {
    host = new URL(origin).hostname;
  } catch {
    return [];
  }
  if (host === '' || /^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith('[')) return host ? [host] : [];
  const labels = host.split('.');
  const out: string[] = [];
  for (let i = 0; i < labels.length; i++) {
    if (labels.length - i < 2 && i > 0) break;
    out.push(labels.slice(i).join('.'));
  }
  return out;
}

function isAcceptableOrigin(origin: string): boolean {
  try {
    const u = new URL(origin);
    if (u.origin !== origin) return false;
    return u.protocol === 'https:' || (u.protocol === 'http:' && (u.hostname === 'localhost' || u.hostname === '127.0.0.1'));
  } catch {
    return false;
  }
}

function fail(code: PasskeyFailure['code'], check: PasskeyCheck, reason: string): PasskeyFailure {
  return { ok: false, code, check, reason };
}

/** Reads clientDataJson just far enough to learn its origin; undefined when it is not decodable JSON. */
function clientDataOrigin(clientDataJson: string): string | undefined | null {
  try {
    const parsed = JSON.parse(b64uBytes(clientDataJson).toString('utf8')) as unknown;
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const origin = (parsed as Record<string, unknown>).origin;
    return typeof origin === 'string' ? origin : null;
  } catch {
    return undefined;
  }
}

/** Maps a simplewebauthn error message to the check it reports. */
function classify(err: unknown): PasskeyFailure {
  const message = err instanceof Error ? err.message : String(err);
  // Anchored on simplewebauthn's fixed message prefixes: the rest of a message echoes client values.
  const rules: [RegExp, PasskeyCheck][] = [
    [/^(Custom challenge verifier|Unexpected (registration|authentication) response challenge)/, 'challenge'],
    [
      /^(Unexpected (registration|authentication) response origin|Unexpected (cross-origin authentication response )?top origin|Detected cross-origin)/,
      'origin',
    ],
    [/^Unexpected RP ID hash/, 'rpId'],
    [/^User (not present|presence)/, 'userPresence'],
    [/^User verification/, 'userVerification'],
    [/^Response counter value/, 'counter'],
    [/^Unexpected (credential type|(registration|authentication) response type)/, 'type'],
    [/^(Credential public key was missing numeric alg|Unexpected public key alg)/, 'algorithm'],
    [/^(None attestation had|Unsupported Attestation Format)/, 'attestation'],
  ];
  for (const [re, check] of rules) if (re.test(message)) return fail('PASSKEY_INVALID', check, message);
  // Anything else is a decoding failure (CBOR, authenticator data, COSE key …).
  return fail('PASSKEY_MALFORMED', 'format', message);
}

/**
 * The clientData challenge against the integrator's: equal strings, or (when both are valid
 * base64url) equal bytes, so padding differences do not matter. String equality also covers
 * challenges that are not canonical base64url (the OpenAPI example's is 45 characters).
 */
function registrationChallengeMatches(clientDataChallenge: string, challenge: string): boolean {
  if (clientDataChallenge === challenge) return true;
  return isBase64url(clientDataChallenge) && isBase64url(challenge) && b64uBytes(clientDataChallenge).equals(b64uBytes(challenge));
}

function resolvePolicy(clientDataJson: string, policy: RelyingPartyPolicy): { origins: string[]; rpIds: string[] } | PasskeyFailure {
  const origin = clientDataOrigin(clientDataJson);
  if (origin === undefined) return fail('PASSKEY_MALFORMED', 'format', 'clientDataJson is not base64url of a JSON object');
  if (origin === null) return fail('PASSKEY_MALFORMED', 'format', 'clientDataJson has no origin');
  const origins = policy.origins ?? (isAcceptableOrigin(origin) ? [origin] : []);
  if (origins.length === 0) return fail('PASSKEY_INVALID', 'origin', `origin "${origin}" is not an https origin`);
  const rpIds = policy.rpIds ?? rpIdCandidates(origin);
  if (rpIds.length === 0) return fail('PASSKEY_INVALID', 'rpId', `no RP ID can be derived from origin "${origin}"`);
  return { origins, rpIds };
}

/**
 * Verifies a registration (`none` or any attestation simplewebauthn supports) against the
 * integrator's challenge. The caller checks uniqueness of `credentialId` and single use of the challenge.
 */
export async function verifyPasskeyRegistration(input: {
  attestation: PasskeyAttestation;
  challenge: string;
  relyingParty?: RelyingPartyPolicy;
  requireUserVerification?: boolean;
}): Promise<{ ok: true; passkey: RegisteredPasskey } | PasskeyFailure> {
  const { attestation, challenge } = input;
  for (const field of ['credentialId', 'clientDataJson', 'attestationObject'] as const) {
    if (!isBase64url(attestation[field])) return fail('PASSKEY_MALFORMED', 'format', `attestation.${field} is not base64url`);
  }
  if (typeof challenge !== 'string' || challenge.length === 0 || challenge.length > 1024) {
    return fail('PASSKEY_MALFORMED', 'format', 'challenge must be a non-empty string');
  }
  const policy = resolvePolicy(attestation.clientDataJson, input.relyingParty ?? {});
  if ('ok' in policy) return policy;
  const id = canonicalBase64url(attestation.credentialId);
  let result: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
  try {
    result = await verifyRegistrationResponse({
      response: {
        id,
        rawId: id,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: attestation.clientDataJson,
          attestationObject: attestation.attestationObject,
          transports: (attestation.transports ?? []) as AuthenticatorTransport[],
        },
      },
      expectedChallenge: (c: string) => registrationChallengeMatches(c, challenge),
      expectedOrigin: policy.origins,
      expectedRPID: policy.rpIds,
      requireUserVerification: input.requireUserVerification ?? false,
    });
  } catch (err) {
    return classify(err);
  }
  if (!result.verified) return fail('PASSKEY_INVALID', 'attestation', 'the attestation statement does not verify');
  const info = result.registrationInfo;
  if (info.credential.id !== id)
    return fail('PASSKEY_INVALID', 'credential', 'attestation.credentialId differs from the credential id in the authenticator data');
  if (info.rpID === undefined) return fail('PASSKEY_INVALID', 'rpId', 'the RP ID could not be matched');
  return {
    ok: true,
    passkey: {
      credentialId: id,
      publicKey: Buffer.from(info.credential.publicKey),
      counter: info.credential.counter,
      transports: attestation.transports ?? [],
      origin: info.origin,
      rpId: info.rpID,
      userVerified: info.userVerified,
      backedUp: info.credentialBackedUp,
    },
  };
}

/**
 * Verifies an assertion for `passkey` (looked up by the caller from the credential being verified)
 * over the service challenge H. Persist `newCounter` on success.
 */
export async function verifyPasskeyAssertion(input: {
  assertion: PasskeyAssertion;
  /** The service challenge issued by `/challenge` (lowercase hex); the client signed UTF-8(H). */
  challenge: string;
  passkey: StoredPasskey;
  requireUserVerification?: boolean;
}): Promise<{ ok: true; newCounter: number; userVerified: boolean } | PasskeyFailure> {
  const { assertion, passkey } = input;
  for (const field of ['credentialId', 'clientDataJson', 'authenticatorData', 'signature'] as const) {
    if (!isBase64url(assertion[field])) return fail('PASSKEY_MALFORMED', 'format', `assertion.${field} is not base64url`);
  }
  if (assertion.userHandle != null && !isBase64url(assertion.userHandle))
    return fail('PASSKEY_MALFORMED', 'format', 'assertion.userHandle is not base64url');
  if (!sameCredentialId(assertion.credentialId, passkey.credentialId)) {
    return fail('PASSKEY_INVALID', 'credential', 'assertion.credentialId is not the registered credential');
  }
  const expected = Buffer.from(input.challenge, 'utf8');
  const id = canonicalBase64url(assertion.credentialId);
  let result: Awaited<ReturnType<typeof verifyAuthenticationResponse>>;
  try {
    result = await verifyAuthenticationResponse({
      response: {
        id,
        rawId: id,
        type: 'public-key',
        clientExtensionResults: {},
        response: {
          clientDataJSON: assertion.clientDataJson,
          authenticatorData: assertion.authenticatorData,
          signature: assertion.signature,
          ...(assertion.userHandle != null ? { userHandle: assertion.userHandle } : {}),
        },
      },
      expectedChallenge: (c: string) => isBase64url(c) && b64uBytes(c).equals(expected),
      expectedOrigin: passkey.origin,
      expectedRPID: passkey.rpId,
      credential: {
        id: canonicalBase64url(passkey.credentialId),
        publicKey: new Uint8Array(passkey.publicKey),
        counter: passkey.counter,
        ...(passkey.transports ? { transports: passkey.transports as AuthenticatorTransport[] } : {}),
      },
      requireUserVerification: input.requireUserVerification ?? false,
    });
  } catch (err) {
    return classify(err);
  }
  if (!result.verified) return fail('PASSKEY_INVALID', 'signature', 'the assertion signature does not verify with the registered key');
  return { ok: true, newCounter: result.authenticationInfo.newCounter, userVerified: result.authenticationInfo.userVerified };
}
