/**
 * The proofs SCA checks: SMS codes (the sandbox's is 123456; nothing is ever sent), TOTP codes
 * (RFC 6238: HMAC-SHA1, 6 digits, 30 s, on the platform's clock, with the maintained `otpauth`
 * package) and passkey assertions and registrations (the embedded wallet's WebAuthn verification,
 * src/wallet/crypto/passkey.ts through modules/auth/crypto.ts, with the wallet's relying-party
 * configuration CORRIDOR_WEBAUTHN_RP_IDS / CORRIDOR_WEBAUTHN_ORIGINS).
 */
import { Secret, TOTP } from 'otpauth';
import type { Unit } from '../../unit.ts';
import { verifyPasskeyAssertion, verifyPasskeyRegistration } from '../auth/crypto.ts';
import { codeDigest, codeMatches } from '../contact-verification/codes.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import type { PasskeyAssertion, PasskeyAttestation } from '../../wallet/crypto/passkey.ts';
import type { ScaFactorRow } from './sca.tables.ts';

/** The sandbox's fixed SMS code (and the TOTP code the sandbox also accepts), as the live sandbox documents. */
export const SANDBOX_SCA_CODE = '123456';

// ── SMS ──────────────────────────────────────────────────────────────────────────────────────

/**
 * The keyed digest of a new SMS code. Sandbox: always 123456. Production: a random 6-digit code that
 * is never delivered (Corridor has no SMS gateway) nor kept in clear.
 */
export function newSmsCodeDigest(u: Unit): string {
  const code = isSandbox(u.platform) ? SANDBOX_SCA_CODE : String(u.deps.secretRng.bytes(4).readUInt32BE(0) % 1_000_000).padStart(6, '0');
  return codeDigest(u, code);
}

export function smsCodeMatches(digest: string, code: string): boolean {
  return codeMatches(digest, code);
}

// ── TOTP ─────────────────────────────────────────────────────────────────────────────────────

const TOTP_PERIOD_S = 30;
const TOTP_DIGITS = 6;

/** A fresh 20-byte TOTP secret, as base32 (what is stored, sealed) and hex (the live `secret`). */
export function newTotpSecret(u: Unit): { base32: string; hex: string } {
  const secret = new Secret({ buffer: new Uint8Array(u.deps.secretRng.bytes(20)).buffer });
  return { base32: secret.base32, hex: secret.hex.toLowerCase() };
}

/** The secret a client threads back, normalised to base32 (it may send the hex or the base32 form); undefined if neither. */
export function normaliseTotpSecret(given: string): string | undefined {
  const s = given.trim();
  try {
    if (/^[0-9a-fA-F]{40}$/.test(s)) return Secret.fromHex(s).base32;
    if (/^[A-Za-z2-7]{32}=*$/.test(s)) return Secret.fromBase32(s.toUpperCase().replace(/=+$/, '')).base32;
  } catch {
    return undefined;
  }
  return undefined;
}

export function totpUri(base32: string, issuer: string, label: string): string {
  return new TOTP({
    issuer,
    label,
    secret: Secret.fromBase32(base32),
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_S,
  }).toString();
}

/**
 * The time step a TOTP `code` is valid for at `nowMs` (±1 step of drift), or undefined. A step at or
 * before `lastStep` is refused (a code is accepted once).
 */
export function totpStep(base32: string, code: string, nowMs: number, lastStep: number | null): number | undefined {
  if (!/^\d{6}$/.test(code)) return undefined;
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(base32),
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_S,
    timestamp: nowMs,
    window: 1,
  });
  if (delta === null) return undefined;
  const step = Math.floor(nowMs / 1000 / TOTP_PERIOD_S) + delta;
  return lastStep !== null && step <= lastStep ? undefined : step;
}

/** The sandbox also accepts 123456 wherever a TOTP code is taken (as the live sandbox documents). */
export function isSandboxTotpCode(u: Unit, code: string): boolean {
  return isSandbox(u.platform) && code === SANDBOX_SCA_CODE;
}

// ── Recovery codes ───────────────────────────────────────────────────────────────────────────

const RECOVERY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const RECOVERY_CODES = 8;

/** Fresh recovery codes (`XXXX-XXXX-XXXX`) and their keyed digests (what is stored). */
export function newRecoveryCodes(u: Unit): { codes: string[]; digests: string[] } {
  const codes: string[] = [];
  for (let i = 0; i < RECOVERY_CODES; i++) {
    const bytes = u.deps.secretRng.bytes(12);
    const chars = [...bytes].map((b) => RECOVERY_ALPHABET[b % RECOVERY_ALPHABET.length]).join('');
    codes.push(`${chars.slice(0, 4)}-${chars.slice(4, 8)}-${chars.slice(8, 12)}`);
  }
  return { codes, digests: codes.map((c) => codeDigest(u, c)) };
}

/** The index of the unused recovery code `code` matches, or -1. */
export function recoveryCodeIndex(digests: readonly string[], code: string): number {
  const normal = code.trim().toUpperCase();
  return digests.findIndex((d) => codeMatches(d, normal));
}

// ── Passkeys ─────────────────────────────────────────────────────────────────────────────────

/** The relying party: the embedded wallet's (server configuration); unset lists mean "derived from the origin". */
export function relyingParty(u: Unit): { rpIds: string[] | undefined; origins: string[] | undefined } {
  return { rpIds: u.app.config.wallet.rpIds, origins: u.app.config.wallet.origins };
}

/** The RP ID advertised to clients: the first configured one, else the host of the first configured origin, else none. */
export function advertisedRpId(u: Unit): string | undefined {
  const { rpIds, origins } = relyingParty(u);
  if (rpIds?.[0]) return rpIds[0];
  return origins?.[0] ? new URL(origins[0]).hostname : undefined;
}

type Opaque = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A credential in the wallet's field names or the WebAuthn JSON form (`id`, `response.clientDataJSON` …). */
export function toAttestation(c: Opaque): PasskeyAttestation | undefined {
  const r = (typeof c.response === 'object' && c.response !== null ? c.response : c) as Opaque;
  const credentialId = str(c.credentialId) ?? str(c.rawId) ?? str(c.id);
  const clientDataJson = str(r.clientDataJson) ?? str(r.clientDataJSON);
  const attestationObject = str(r.attestationObject);
  if (!credentialId || !clientDataJson || !attestationObject) return undefined;
  const transports = Array.isArray(r.transports) ? r.transports.filter((t): t is string => typeof t === 'string') : undefined;
  return { credentialId, clientDataJson, attestationObject, ...(transports ? { transports } : {}) };
}

/** An assertion in the wallet's field names or the WebAuthn JSON form. */
export function toAssertion(a: Opaque): PasskeyAssertion | undefined {
  const r = (typeof a.response === 'object' && a.response !== null ? a.response : a) as Opaque;
  const credentialId = str(a.credentialId) ?? str(a.rawId) ?? str(a.id);
  const clientDataJson = str(r.clientDataJson) ?? str(r.clientDataJSON);
  const authenticatorData = str(r.authenticatorData);
  const signature = str(r.signature);
  if (!credentialId || !clientDataJson || !authenticatorData || !signature) return undefined;
  const userHandle = str(r.userHandle);
  return { credentialId, clientDataJson, authenticatorData, signature, ...(userHandle ? { userHandle } : {}) };
}

/** The origins an assertion for `passkey` may come from: the configured ones, else the one it registered from. */
export function assertionOrigins(u: Unit, passkey: ScaFactorRow): string[] {
  return relyingParty(u).origins ?? (passkey.origin ? [passkey.origin] : []);
}

/** WebAuthn assertion request options over the service challenge H (the client signs UTF-8(H)). */
export function assertionOptions(passkey: ScaFactorRow, serviceChallenge: string, timeoutMs: number): Opaque {
  return {
    challenge: Buffer.from(serviceChallenge, 'utf8').toString('base64url'),
    rpId: passkey.rp_id,
    allowCredentials: [{ type: 'public-key', id: passkey.credential_id, transports: JSON.parse(passkey.transports ?? '[]') as string[] }],
    userVerification: 'preferred',
    timeout: timeoutMs,
  };
}

/** Checks `assertion` from `origin` over H against the customer's passkey: the new sign count, or why not. */
export async function checkAssertion(
  passkey: ScaFactorRow,
  assertion: Opaque,
  origin: string,
  serviceChallenge: string,
): Promise<{ ok: true; newCounter: number } | { ok: false; reason: string }> {
  const parsed = toAssertion(assertion);
  if (!parsed) return { ok: false, reason: 'the assertion lacks credentialId, clientDataJson, authenticatorData or signature' };
  return verifyPasskeyAssertion({
    assertion: parsed,
    expectedChallenge: serviceChallenge,
    credential: {
      credentialId: passkey.credential_id ?? '',
      publicKey: passkey.public_key ?? '',
      counter: passkey.sign_count,
      origin,
      rpId: passkey.rp_id ?? '',
    },
  });
}

/** Checks a registration over `challenge`: the verified key, or why not (and which field). */
export async function checkRegistration(u: Unit, credential: Opaque, challenge: string) {
  const attestation = toAttestation(credential);
  if (!attestation) return { ok: false as const, field: 'credential', reason: 'lacks credentialId, clientDataJson or attestationObject' };
  const { rpIds, origins } = relyingParty(u);
  const r = await verifyPasskeyRegistration({ attestation, expectedChallenge: challenge, rpIds, origins });
  if (!r.ok) return { ok: false as const, field: 'credential', reason: r.reason };
  return { ...r, transports: attestation.transports ?? [] };
}
