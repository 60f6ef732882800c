/**
 * Checking a code against the customer's enrolled TOTP factor: the current RFC 6238 code (±1 step;
 * a step is accepted once), an unused recovery code (consumed), or on sandbox platforms 123456.
 * The secret is stored sealed (SECRET_COLUMNS.scaTotpSecret) and opened only here and at confirm.
 */
import { SECRET_COLUMNS, secretRef } from '../../store/secret-box.ts';
import type { Unit } from '../../unit.ts';
import { isSandboxTotpCode, recoveryCodeIndex, totpStep } from './sca.proofs.ts';
import { updateFactor } from './sca.repo.ts';
import type { ScaFactorRow } from './sca.tables.ts';

/** The clear base32 secret of a TOTP factor row. */
export function openTotpSecret(u: Unit, row: ScaFactorRow): string {
  if (row.totp_secret === null) throw new Error(`TOTP factor ${row.id} has no secret`);
  return u.app.secrets.open(row.totp_secret, secretRef(SECRET_COLUMNS.scaTotpSecret, row.id));
}

/** The stored (sealed) form of a TOTP secret for the factor row `id`. */
export function sealTotpSecret(u: Unit, id: string, base32: string): string {
  return u.app.secrets.seal(base32, secretRef(SECRET_COLUMNS.scaTotpSecret, id));
}

/** Whether `code` proves the TOTP factor `totp` (undefined: none enrolled → false); records what it consumed. */
export async function totpCheck(u: Unit, totp: ScaFactorRow | undefined, code: string): Promise<boolean> {
  if (!totp) return false;
  if (isSandboxTotpCode(u, code)) return true;
  const step = totpStep(openTotpSecret(u, totp), code, u.nowMs, totp.totp_last_step);
  if (step !== undefined) {
    await updateFactor(u.trx, u.platform.id, totp.id, { totp_last_step: step, updated_at: u.at });
    return true;
  }
  const digests = JSON.parse(totp.recovery_codes ?? '[]') as string[];
  const i = recoveryCodeIndex(digests, code);
  if (i < 0) return false;
  const rest = digests.filter((_, j) => j !== i);
  await updateFactor(u.trx, u.platform.id, totp.id, { recovery_codes: JSON.stringify(rest), updated_at: u.at });
  return true;
}
