/** Passkey (WebAuthn) and OIDC checks for the auth module, over src/wallet/crypto/{passkey,oidc}.ts. */
import { checkOidcRegistrationToken, checkOidcVerificationToken, type OidcIdentity } from '../../wallet/crypto/oidc.ts';
import {
  verifyPasskeyAssertion as verifyAssertion,
  verifyPasskeyRegistration as verifyRegistration,
  type PasskeyAssertion,
  type PasskeyAttestation,
  type RelyingPartyPolicy,
} from '../../wallet/crypto/passkey.ts';

export type OidcResult = { ok: true; identity: OidcIdentity; email?: string } | { ok: false; malformed: boolean; reason: string };

/** Registration (no expectations) or verify (`expectIdentity` and the nonce bound to `clientPublicKey`). */
export function checkOidcToken(
  token: string,
  opts: { nowMs: number; expectIdentity?: OidcIdentity; clientPublicKey?: string },
): OidcResult {
  const r =
    opts.expectIdentity && opts.clientPublicKey !== undefined
      ? checkOidcVerificationToken(token, { nowMs: opts.nowMs, identity: opts.expectIdentity, clientPublicKey: opts.clientPublicKey })
      : checkOidcRegistrationToken(token, { nowMs: opts.nowMs });
  if (!r.ok) return { ok: false, malformed: r.code === 'OIDC_TOKEN_MALFORMED', reason: r.reason };
  return { ok: true, identity: r.identity, ...(r.email !== undefined ? { email: r.email } : {}) };
}

function policy(rpIds: string[] | undefined, origins: string[] | undefined): RelyingPartyPolicy {
  return { ...(rpIds ? { rpIds } : {}), ...(origins ? { origins } : {}) };
}

export interface RegisteredKey {
  credentialId: string;
  /** base64url COSE public key. */
  publicKey: string;
  counter: number;
  origin: string;
  rpId: string;
}

export async function verifyPasskeyRegistration(input: {
  attestation: PasskeyAttestation;
  expectedChallenge: string;
  rpIds: string[] | undefined;
  origins: string[] | undefined;
}): Promise<({ ok: true } & RegisteredKey) | { ok: false; field: string; reason: string }> {
  const r = await verifyRegistration({
    attestation: input.attestation,
    challenge: input.expectedChallenge,
    relyingParty: policy(input.rpIds, input.origins),
  });
  if (!r.ok) return { ok: false, field: r.check === 'challenge' ? 'challenge' : 'attestation', reason: r.reason };
  const p = r.passkey;
  return {
    ok: true,
    credentialId: p.credentialId,
    publicKey: p.publicKey.toString('base64url'),
    counter: p.counter,
    origin: p.origin,
    rpId: p.rpId,
  };
}

export async function verifyPasskeyAssertion(input: {
  assertion: PasskeyAssertion;
  /** The service challenge (hex) the client signed as UTF-8. */
  expectedChallenge: string;
  credential: RegisteredKey;
}): Promise<{ ok: true; newCounter: number } | { ok: false; reason: string }> {
  const c = input.credential;
  const r = await verifyAssertion({
    assertion: input.assertion,
    challenge: input.expectedChallenge,
    passkey: {
      credentialId: c.credentialId,
      publicKey: Buffer.from(c.publicKey, 'base64url'),
      counter: c.counter,
      origin: c.origin,
      rpId: c.rpId,
    },
  });
  if (r.ok) return { ok: true, newCounter: r.newCounter };
  // A decoding failure carries the parser's own message (e.g. an ASN.1 error for a garbage
  // signature); say which check failed, as every wallet 401 reason does (spec §4.12 item 6).
  return { ok: false, reason: r.code === 'PASSKEY_MALFORMED' ? `the assertion is malformed: ${r.reason}` : r.reason };
}
