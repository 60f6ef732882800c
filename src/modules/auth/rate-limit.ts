/**
 * Per-credential rate limits (spec: "repeated challenges or failed verifies on one credential →
 * 429 RATE_LIMITED with Retry-After"). Attempts are rows in `auth_attempts` on the system clock —
 * a sandbox clock advance does not lift a limit, waiting does.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { ApiError } from '../../http/errors.ts';
import type { Database } from '../../store/schema.ts';

export interface RateLimit {
  kind: 'CHALLENGE' | 'VERIFY_FAILED';
  max: number;
  windowMs: number;
}

export const RATE_LIMITS = {
  /** OTP re-issues and passkey challenges: 5 a minute. */
  challenge: { kind: 'CHALLENGE', max: 5, windowMs: 60_000 },
  /** Failed verifies (bad OTP, bad assertion, bad token, bad stamp): 5 per 15 minutes. */
  failedVerify: { kind: 'VERIFY_FAILED', max: 5, windowMs: 15 * 60_000 },
} as const satisfies Record<string, RateLimit>;

/** 429 when the credential already used up `limit` in its window. */
export async function enforceRateLimit(db: Kysely<Database>, ctx: AppContext, credentialId: string, limit: RateLimit): Promise<void> {
  const now = ctx.deps.clock.nowMs();
  const rows = await db
    .selectFrom('auth_attempts')
    .select('at_ms')
    .where('credential_id', '=', credentialId)
    .where('kind', '=', limit.kind)
    .where('at_ms', '>', now - limit.windowMs)
    .orderBy('at_ms', 'desc')
    .limit(limit.max)
    .execute();
  if (rows.length < limit.max) return;
  const oldest = Number(rows[rows.length - 1]!.at_ms);
  const retryAfter = Math.max(1, Math.ceil((oldest + limit.windowMs - now) / 1000));
  const what = limit.kind === 'CHALLENGE' ? 'challenges' : 'failed verifications';
  throw new ApiError(429, 'RATE_LIMITED', `Too many ${what} for credential ${credentialId}; retry in ${retryAfter} s`, { retryAfterSeconds: retryAfter }, { 'Retry-After': String(retryAfter) });
}

export async function recordAttempt(db: Kysely<Database>, ctx: AppContext, platformId: string, credentialId: string, kind: RateLimit['kind']): Promise<void> {
  await db.insertInto('auth_attempts').values({ id: ctx.deps.ids.next('AuthAttempt'), platform_id: platformId, credential_id: credentialId, kind, at_ms: ctx.deps.clock.nowMs() }).execute();
}
