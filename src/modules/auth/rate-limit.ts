/**
 * Per-credential rate limits (spec: "repeated challenges or failed verifies on one credential →
 * 429 RATE_LIMITED with Retry-After"). Attempts are rows in `auth_attempts`, timed — when recorded
 * and when counted — on the clock their limit runs on (`clockMs`):
 * - the failed-verify lockout follows the platform's clock on a SANDBOX platform, so a sandbox
 *   clock advance past it lifts it (issue #21 item 6); PRODUCTION platforms have no sandbox clock
 *   and use the system clock;
 * - the challenge limit stays on the system clock everywhere: a clock advance does not lift it,
 *   waiting does.
 */
import { errors } from '../../http/errors.ts';
import type { Unit } from '../../unit.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { insertAttempt, recentAttempts } from './auth.repo.ts';

export interface RateLimit {
  kind: 'CHALLENGE' | 'VERIFY_FAILED';
  max: number;
  windowMs: number;
  /** On a sandbox platform, whether the window runs on the platform's clock (else the system clock). */
  sandboxClock: boolean;
}

export const RATE_LIMITS = {
  /** OTP re-issues and passkey challenges: 5 a minute (system clock). */
  challenge: { kind: 'CHALLENGE', max: 5, windowMs: 60_000, sandboxClock: false },
  /** Failed verifies (bad OTP, bad assertion, bad token, bad stamp): 5 per 15 minutes (platform clock on sandbox). */
  failedVerify: { kind: 'VERIFY_FAILED', max: 5, windowMs: 15 * 60_000, sandboxClock: true },
} as const satisfies Record<string, RateLimit>;

const LIMIT_OF: Record<RateLimit['kind'], RateLimit> = {
  CHALLENGE: RATE_LIMITS.challenge,
  VERIFY_FAILED: RATE_LIMITS.failedVerify,
};

/**
 * Now on the clock attempts of `kind` are timed by: the platform's (`u.nowMs`, sandbox offset
 * included) when the limit follows a sandbox platform's clock, else the system clock. The same
 * function times the records and the window, so the two always compare on one clock.
 */
function clockMs(u: Unit, kind: RateLimit['kind']): number {
  return LIMIT_OF[kind].sandboxClock && isSandbox(u.platform) ? u.nowMs : u.deps.clock.nowMs();
}

/** 429 when the credential already used up `limit` in its window. */
export async function enforceRateLimit(u: Unit, credentialId: string, limit: RateLimit): Promise<void> {
  const now = clockMs(u, limit.kind);
  const times = await recentAttempts(u.trx, credentialId, limit.kind, now - limit.windowMs, limit.max);
  if (times.length < limit.max) return;
  const oldest = times[times.length - 1]!;
  const retryAfter = Math.max(1, Math.ceil((oldest + limit.windowMs - now) / 1000));
  const what = limit.kind === 'CHALLENGE' ? 'challenges' : 'failed verifications';
  throw errors.credentialRateLimited(`Too many ${what} for credential ${credentialId}; retry in ${retryAfter} s`, retryAfter);
}

export async function recordAttempt(u: Unit, credentialId: string, kind: RateLimit['kind']): Promise<void> {
  await insertAttempt(u.trx, {
    id: u.deps.ids.next('AuthAttempt'),
    platform_id: u.platform.id,
    credential_id: credentialId,
    kind,
    at_ms: clockMs(u, kind),
  });
}
