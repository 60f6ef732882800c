/**
 * A customer's login security: the cumulative failed-login counter and the lockout schedule it
 * drives, and the SCA login session. The state is one row per customer (sca_customer_states),
 * absent until something is recorded; the caller holds the customer's row lock.
 *
 * Lockout schedule (count after the failure → lock, from that failure): 5 → 15 min, 6 → 30 min,
 * 7 → 1 h, 8 → 24 h, ≥ 9 → suspended (no automatic expiry). Only RESET_PASSWORD_COMPLETED resets
 * the counter, lifts a suspension and revokes the session.
 */
import { iso } from '../../lib/time.ts';
import type { Unit } from '../../unit.ts';
import { findState, saveState } from './sca.repo.ts';
import { type LockDetails, scaErrors } from './sca.errors.ts';
import type { ScaCustomerStateRow } from './sca.tables.ts';

/** An SCA login session's lifetime. */
export const SESSION_TTL_MS = 180 * 24 * 3600_000;
const MINUTE = 60_000;
/** The lock a failed-attempt count starts (ms), or 'SUSPEND'. */
export function lockFor(failedAttempts: number): number | 'SUSPEND' | undefined {
  if (failedAttempts >= 9) return 'SUSPEND';
  return ({ 5: 15 * MINUTE, 6: 30 * MINUTE, 7: 60 * MINUTE, 8: 24 * 60 * MINUTE } as Record<number, number>)[failedAttempts];
}

/** The customer's state row, or a fresh one (not written). */
export async function stateOf(u: Unit, customerId: string): Promise<ScaCustomerStateRow> {
  return (
    (await findState(u.trx, u.platform.id, customerId, { forUpdate: true })) ?? {
      platform_id: u.platform.id,
      customer_id: customerId,
      failed_attempts: 0,
      locked_until: null,
      suspended: 0,
      session_expires_at: null,
      sms_number: null,
      created_at: u.at,
      updated_at: u.at,
    }
  );
}

/** The lock details as the wire shows them (a lock that has run out shows lockedUntil null). */
export function lockDetails(state: ScaCustomerStateRow, nowMs: number): LockDetails {
  const suspended = state.suspended === 1;
  const lockedUntil = !suspended && state.locked_until !== null && Date.parse(state.locked_until) > nowMs ? state.locked_until : null;
  return { suspended, lockedUntil, failedAttempts: state.failed_attempts };
}

/** Whether the customer's login is locked or suspended now. */
export function isLocked(state: ScaCustomerStateRow, nowMs: number): boolean {
  const d = lockDetails(state, nowMs);
  return d.suspended || d.lockedUntil !== null;
}

/** 423 ACCOUNT_LOCKED when the customer's login is locked or suspended. */
export function assertNotLocked(state: ScaCustomerStateRow, nowMs: number): void {
  if (isLocked(state, nowMs)) throw scaErrors.locked(lockDetails(state, nowMs));
}

/** Counts one failed login and applies the schedule; writes and returns the new state. */
export async function recordFailedLogin(u: Unit, state: ScaCustomerStateRow): Promise<ScaCustomerStateRow> {
  const failed = state.failed_attempts + 1;
  const lock = lockFor(failed);
  const next: ScaCustomerStateRow = {
    ...state,
    failed_attempts: failed,
    suspended: lock === 'SUSPEND' ? 1 : state.suspended,
    locked_until: typeof lock === 'number' ? iso(u.nowMs + lock) : lock === 'SUSPEND' ? null : state.locked_until,
    updated_at: u.at,
  };
  await saveState(u.trx, next);
  return next;
}

/** RESET_PASSWORD_COMPLETED: counter to 0, no lock, no suspension, the session revoked. */
export async function recordPasswordReset(u: Unit, state: ScaCustomerStateRow): Promise<ScaCustomerStateRow> {
  const next: ScaCustomerStateRow = {
    ...state,
    failed_attempts: 0,
    locked_until: null,
    suspended: 0,
    session_expires_at: null,
    updated_at: u.at,
  };
  await saveState(u.trx, next);
  return next;
}

/** Opens (or renews) the customer's SCA session; returns its end. */
export async function openSession(u: Unit, state: ScaCustomerStateRow): Promise<string> {
  const expiresAt = iso(u.nowMs + SESSION_TTL_MS);
  await saveState(u.trx, { ...state, session_expires_at: expiresAt, updated_at: u.at });
  return expiresAt;
}

/** Whether the customer has an unexpired SCA login session. */
export function hasSession(state: ScaCustomerStateRow, nowMs: number): boolean {
  return state.session_expires_at !== null && Date.parse(state.session_expires_at) > nowMs;
}
