/**
 * SCA factors: the list (SMS_OTP for every SCA customer, plus its ACTIVE TOTP and passkey), and the
 * enrollment of TOTP and PASSKEY (start → PENDING row, confirm → ACTIVE), and a passkey's deletion.
 *
 * - TOTP: start answers a fresh 20-byte secret (hex `secret`, `secretBase32Encoded`, an otpauth://
 *   URI; SHA-1, 6 digits, 30 s); confirm takes that secret back with a current code (on sandbox
 *   platforms 123456 too) and answers 8 recovery codes, shown once (digests are kept). One TOTP
 *   per customer: a second start is 409 CONFLICT (a lost one is cleared by a 2FA reset).
 * - PASSKEY: start answers WebAuthn creation options over a fresh challenge; confirm verifies the
 *   credential with the embedded wallet's WebAuthn code. One passkey per customer (409
 *   PASSKEY_ALREADY_ENROLLED); DELETE /sca/factors/{credentialId} removes it.
 * - A pending enrollment lives 5 minutes; a new start replaces it. A wrong code or credential is 400.
 * - Confirming the replacement of a factor cleared by a 2FA reset completes that reset's enrollment.
 */
import type { AppContext } from '../../context.ts';
import { iso } from '../../lib/time.ts';
import type { CustomerRow, PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { sameCredentialId } from '../../wallet/crypto/passkey.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { activeFactor, CHALLENGE_TTL_MS } from './sca-challenges.ts';
import { requireScaCustomer } from './sca.customer.ts';
import { scaErrors } from './sca.errors.ts';
import {
  advertisedRpId,
  checkRegistration,
  isSandboxTotpCode,
  newRecoveryCodes,
  newTotpSecret,
  normaliseTotpSecret,
  relyingParty,
  totpStep,
  totpUri,
} from './sca.proofs.ts';
import { deleteFactor, factorsOf, insertFactor, resetsIn, updateFactor, updateReset } from './sca.repo.ts';
import type { ScaFactorConfirmRequest, ScaFactorConfirmResponse, ScaFactorEnrollStart, ScaFactorView } from './sca.schemas.ts';
import type { ScaFactorRow } from './sca.tables.ts';
import { openTotpSecret, sealTotpSecret } from './sca.totp-check.ts';

const PASSKEY_NAME = 'Passkey';

function passkeyView(row: ScaFactorRow): ScaFactorView {
  return { factor: 'PASSKEY', credentialId: row.credential_id ?? '', name: PASSKEY_NAME };
}

/** GET /sca/factors. */
export async function listFactors(ctx: AppContext, platform: PlatformRow, customerId: string): Promise<{ factors: ScaFactorView[] }> {
  const customer = await requireScaCustomer(ctx.db, platform.id, customerId);
  const rows = await factorsOf(ctx.db, platform.id, customer.id);
  const factors: ScaFactorView[] = [{ factor: 'SMS_OTP' }];
  if (activeFactor(rows, 'TOTP')) factors.push({ factor: 'TOTP' });
  const passkey = activeFactor(rows, 'PASSKEY');
  if (passkey) factors.push(passkeyView(passkey));
  return { factors };
}

/** A PENDING row of `factor` for the customer, replacing a PENDING one. */
async function pendingRow(u: Unit, rows: ScaFactorRow[], customerId: string, factor: 'TOTP' | 'PASSKEY'): Promise<ScaFactorRow> {
  const old = rows.find((r) => r.factor === factor);
  if (old) await deleteFactor(u.trx, u.platform.id, old.id);
  return {
    id: u.deps.ids.next('ScaFactor'),
    platform_id: u.platform.id,
    customer_id: customerId,
    factor,
    status: 'PENDING',
    totp_secret: null,
    recovery_codes: null,
    totp_last_step: null,
    registration_challenge: null,
    credential_id: null,
    public_key: null,
    sign_count: 0,
    origin: null,
    rp_id: null,
    transports: null,
    expires_at: iso(u.nowMs + CHALLENGE_TTL_MS),
    created_at: u.at,
    updated_at: u.at,
  };
}

function appName(u: Unit): string {
  return settingsOf(u.platform).embeddedWalletConfig?.appName ?? u.platform.name;
}

/** POST /sca/factors. */
export async function startEnrollment(u: Unit, customerId: string, type: 'TOTP' | 'PASSKEY'): Promise<ScaFactorEnrollStart> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  const rows = await factorsOf(u.trx, u.platform.id, customer.id, { forUpdate: true });
  if (type === 'TOTP') {
    if (activeFactor(rows, 'TOTP')) throw scaErrors.totpAlreadyEnrolled();
    const row = await pendingRow(u, rows, customer.id, 'TOTP');
    const secret = newTotpSecret(u);
    await insertFactor(u.trx, { ...row, totp_secret: sealTotpSecret(u, row.id, secret.base32) });
    const label = (JSON.parse(customer.data) as { email?: string }).email ?? customer.id;
    return { type: 'TOTP', secret: secret.hex, secretBase32Encoded: secret.base32, totpUri: totpUri(secret.base32, appName(u), label) };
  }
  if (activeFactor(rows, 'PASSKEY')) throw scaErrors.passkeyAlreadyEnrolled();
  const row = await pendingRow(u, rows, customer.id, 'PASSKEY');
  const challenge = u.deps.secretRng.bytes(32).toString('base64url');
  await insertFactor(u.trx, { ...row, registration_challenge: challenge });
  const rpId = advertisedRpId(u);
  return {
    type: 'PASSKEY',
    options: creationOptions(u, customer, challenge, rpId),
    allowedOrigins: relyingParty(u).origins ?? [],
    relyingPartyId: rpId ?? '',
  };
}

function creationOptions(u: Unit, customer: CustomerRow, challenge: string, rpId: string | undefined): Record<string, unknown> {
  const data = JSON.parse(customer.data) as { email?: string; fullName?: string };
  return {
    challenge,
    rp: { name: appName(u), ...(rpId ? { id: rpId } : {}) },
    user: {
      id: Buffer.from(customer.id, 'utf8').toString('base64url'),
      name: data.email ?? customer.id,
      displayName: data.fullName ?? data.email ?? customer.id,
    },
    pubKeyCredParams: [
      { type: 'public-key', alg: -7 },
      { type: 'public-key', alg: -257 },
    ],
    timeout: CHALLENGE_TTL_MS,
    attestation: 'none',
    authenticatorSelection: { residentKey: 'preferred', userVerification: 'preferred' },
    excludeCredentials: [],
  };
}

/** The customer's unexpired PENDING row of `factor`, or a 400 on `field`. */
function pendingOf(u: Unit, rows: ScaFactorRow[], factor: 'TOTP' | 'PASSKEY', field: string): ScaFactorRow {
  const row = rows.find((r) => r.factor === factor && r.status === 'PENDING');
  if (!row || row.expires_at === null || Date.parse(row.expires_at) <= u.nowMs) {
    throw scaErrors.proofRejected(
      field,
      `no pending ${factor} enrollment (none was started, or it expired); start one with POST /sca/factors`,
    );
  }
  return row;
}

/** POST /sca/factors/confirm. */
export async function confirmEnrollment(u: Unit, customerId: string, body: ScaFactorConfirmRequest): Promise<ScaFactorConfirmResponse> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  const rows = await factorsOf(u.trx, u.platform.id, customer.id, { forUpdate: true });
  if (body.type === 'TOTP') {
    if (activeFactor(rows, 'TOTP')) throw scaErrors.totpAlreadyEnrolled();
    const row = pendingOf(u, rows, 'TOTP', 'secret');
    const secret = openTotpSecret(u, row);
    if (normaliseTotpSecret(body.secret) !== secret) throw scaErrors.proofRejected('secret', 'is not the secret of the pending enrollment');
    const step = totpStep(secret, body.code, u.nowMs, null);
    if (step === undefined && !isSandboxTotpCode(u, body.code))
      throw scaErrors.proofRejected('code', 'is not the current code of this secret');
    const recovery = newRecoveryCodes(u);
    await updateFactor(u.trx, u.platform.id, row.id, {
      status: 'ACTIVE',
      recovery_codes: JSON.stringify(recovery.digests),
      totp_last_step: step ?? null,
      expires_at: null,
      updated_at: u.at,
    });
    await completeReplacement(u, customer.id, 'TOTP');
    return { type: 'TOTP', recoveryCodes: recovery.codes };
  }
  if (activeFactor(rows, 'PASSKEY')) throw scaErrors.passkeyAlreadyEnrolled();
  const row = pendingOf(u, rows, 'PASSKEY', 'credential');
  const configured = relyingParty(u).origins;
  if (configured && !configured.includes(body.origin))
    throw scaErrors.proofRejected('origin', `must be one of ${JSON.stringify(configured)}`);
  const reg = await checkRegistration(u, body.credential, row.registration_challenge ?? '');
  if (!reg.ok) throw scaErrors.proofRejected(reg.field, reg.reason);
  if (reg.origin !== body.origin) throw scaErrors.proofRejected('origin', 'is not the origin the credential was produced against');
  const active: ScaFactorRow = {
    ...row,
    status: 'ACTIVE',
    registration_challenge: null,
    credential_id: reg.credentialId,
    public_key: reg.publicKey,
    sign_count: reg.counter,
    origin: reg.origin,
    rp_id: reg.rpId,
    transports: JSON.stringify(reg.transports),
    expires_at: null,
    updated_at: u.at,
  };
  const { id: _id, platform_id: _p, customer_id: _c, factor: _f, created_at: _created, ...set } = active;
  await updateFactor(u.trx, u.platform.id, row.id, set);
  await completeReplacement(u, customer.id, 'PASSKEY');
  return { type: 'PASSKEY', factor: passkeyView(active) };
}

/** A 2FA reset of `factor` waiting for the replacement's enrollment: enrollmentStatus COMPLETED. */
async function completeReplacement(u: Unit, customerId: string, factor: 'TOTP' | 'PASSKEY'): Promise<void> {
  const waiting = await resetsIn(u.trx, u.platform.id, customerId, { factor, status: 'COMPLETED', enrollmentStatus: 'PENDING' });
  for (const r of waiting) await updateReset(u.trx, u.platform.id, r.id, { enrollment_status: 'COMPLETED', updated_at: u.at });
}

/** DELETE /sca/factors/{credentialId}: the customer's passkey with that credential id (else 404). */
export async function deletePasskey(u: Unit, customerId: string, credentialId: string): Promise<void> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  const rows = await factorsOf(u.trx, u.platform.id, customer.id, { forUpdate: true });
  const passkey = activeFactor(rows, 'PASSKEY');
  if (!passkey || passkey.credential_id === null || !sameCredentialId(passkey.credential_id, credentialId)) {
    throw scaErrors.notFound('SCA factor', credentialId);
  }
  await deleteFactor(u.trx, u.platform.id, passkey.id);
}
