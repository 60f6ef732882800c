/**
 * 2FA reset: recovering a lost factor behind a liveness check.
 *
 *   INITIATED --hosted page submitted--> PENDING_REVIEW --5 s (job)--> LIVENESS_PASSED (pass) / REJECTED (fail)
 *   LIVENESS_PASSED --complete--> COMPLETED
 *   INITIATED / PENDING_REVIEW / LIVENESS_PASSED --window ends (15 min, job)--> EXPIRED
 *
 * - Start: the factor must be SMS_OTP or an enrolled TOTP / PASSKEY (else 400 on `factor`); at most
 *   5 starts per customer in any 24 hours (429 RATE_LIMITED, Retry-After). It answers the reset id,
 *   `verificationLink` (the hosted liveness page Corridor serves: sca.hosted.ts; its token is the
 *   only credential, kept as a hash) and `expiresAt`; no `livenessAccessToken` (no embedded SDK).
 * - Complete: only LIVENESS_PASSED (else 400; COMPLETED again is 409). SMS_OTP needs `mobile`
 *   (400 otherwise) and records it as the customer's SCA SMS number (enrollmentStatus null); TOTP
 *   and PASSKEY delete that factor and leave enrollmentStatus PENDING until the customer enrolls a
 *   replacement (then COMPLETED, sca.factors.service.ts).
 * - All on the platform's clock: a sandbox clock advance runs the review and expiry jobs.
 */
import { createHash } from 'node:crypto';
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import type { JobHandler } from '../../jobs/jobs.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import type { PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { getPlatform } from '../platforms/platforms.repo.ts';
import { activeFactor } from './sca-challenges.ts';
import { requireScaCustomer } from './sca.customer.ts';
import { scaErrors } from './sca.errors.ts';
import {
  deleteFactor,
  factorsOf,
  findReset,
  findResetByTokenHash,
  insertReset,
  resetStartsSince,
  saveState,
  updateReset,
} from './sca.repo.ts';
import type { TwoFactorResetCompleteRequest, TwoFactorResetStart, TwoFactorResetStatus } from './sca.schemas.ts';
import { stateOf } from './sca.security.ts';
import type { ScaFactorValue, ScaResetRow } from './sca.tables.ts';

export const RESET_WINDOW_MS = 15 * 60_000;
export const RESET_REVIEW_DELAY_MS = 5_000;
export const MAX_RESET_STARTS = 5;
export const RESET_RATE_WINDOW_MS = 24 * 3600_000;
export const JOB_SCA_RESET_REVIEW = 'SCA_RESET_REVIEW';
export const JOB_SCA_RESET_EXPIRE = 'SCA_RESET_EXPIRE';

const TERMINAL = new Set(['COMPLETED', 'REJECTED', 'EXPIRED']);

export const tokenHash = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** The status a reset shows now: a non-terminal one past its window reads EXPIRED (before its job ran). */
export function effectiveStatus(row: ScaResetRow, nowMs: number): ScaResetRow['status'] {
  return !TERMINAL.has(row.status) && Date.parse(row.expires_at) <= nowMs ? 'EXPIRED' : row.status;
}

/** POST /sca/factors/reset (201). `pageBase` is the hosted page's URL the token is appended to. */
export async function startReset(u: Unit, customerId: string, factor: ScaFactorValue, pageBase: string): Promise<TwoFactorResetStart> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  if (factor !== 'SMS_OTP' && !activeFactor(await factorsOf(u.trx, u.platform.id, customer.id), factor)) {
    throw scaErrors.factorNotEnrolled('factor', factor);
  }
  const starts = await resetStartsSince(u.trx, u.platform.id, customer.id, iso(u.nowMs - RESET_RATE_WINDOW_MS));
  if (starts.length >= MAX_RESET_STARTS) {
    throw scaErrors.resetsLimited(MAX_RESET_STARTS, Date.parse(starts[0]!) + RESET_RATE_WINDOW_MS, u.nowMs);
  }
  const token = u.deps.secretRng.bytes(32).toString('base64url');
  const row: ScaResetRow = {
    id: u.deps.ids.next('TwoFactorReset'),
    platform_id: u.platform.id,
    customer_id: customer.id,
    factor,
    status: 'INITIATED',
    enrollment_status: null,
    link_token_hash: tokenHash(token),
    liveness_outcome: null,
    expires_at: iso(u.nowMs + RESET_WINDOW_MS),
    completed_at: null,
    created_at: u.at,
    updated_at: u.at,
  };
  await insertReset(u.trx, row);
  await u.schedule(JOB_SCA_RESET_EXPIRE, { resetId: row.id }, RESET_WINDOW_MS);
  return { resetId: row.id, verificationLink: `${pageBase}${token}`, expiresAt: row.expires_at };
}

function statusWire(row: ScaResetRow, nowMs: number): TwoFactorResetStatus {
  return {
    status: effectiveStatus(row, nowMs),
    factor: row.factor,
    enrollmentStatus: row.enrollment_status,
    expiresAt: row.expires_at,
    completedAt: row.completed_at,
  };
}

/** The customer's reset (404 another customer's or unknown). */
async function requireReset(db: AppContext['db'], platformId: string, customerId: string, resetId: string, forUpdate = false) {
  const row = await findReset(db, platformId, resetId, { forUpdate });
  if (!row || row.customer_id !== customerId) throw scaErrors.notFound('2FA reset', resetId);
  return row;
}

/** GET /sca/factors/reset/{resetId}. */
export async function getReset(ctx: AppContext, platform: PlatformRow, nowMs: number, customerId: string, resetId: string) {
  const customer = await requireScaCustomer(ctx.db, platform.id, customerId);
  return statusWire(await requireReset(ctx.db, platform.id, customer.id, resetId), nowMs);
}

/** POST /sca/factors/reset/{resetId}/complete (204). */
export async function completeReset(u: Unit, customerId: string, resetId: string, body: TwoFactorResetCompleteRequest): Promise<void> {
  const customer = await requireScaCustomer(u.trx, u.platform.id, customerId, { forUpdate: true });
  const row = await requireReset(u.trx, u.platform.id, customer.id, resetId, true);
  const status = effectiveStatus(row, u.nowMs);
  if (status === 'COMPLETED') throw scaErrors.noPendingChallenge(`reset ${row.id}: it is already COMPLETED`);
  if (status !== 'LIVENESS_PASSED') {
    throw scaErrors.proofRejected('resetId', `the reset is ${status}: it can be completed once its status is LIVENESS_PASSED`);
  }
  let enrollment: ScaResetRow['enrollment_status'] = null;
  if (row.factor === 'SMS_OTP') {
    if (!body.mobile) throw scaErrors.proofRejected('mobile', 'is required to complete an SMS_OTP reset');
    const number = `${body.mobile.countryCode}${body.mobile.number}`;
    if (!/^\+[1-9]\d{1,14}$/.test(number))
      throw scaErrors.proofRejected('mobile', 'countryCode and number make no E.164 number (at most 15 digits)');
    const state = await stateOf(u, customer.id);
    await saveState(u.trx, { ...state, sms_number: number, updated_at: u.at });
  } else {
    const factor = (await factorsOf(u.trx, u.platform.id, customer.id, { forUpdate: true })).find((f) => f.factor === row.factor);
    if (factor) await deleteFactor(u.trx, u.platform.id, factor.id);
    enrollment = 'PENDING';
  }
  await updateReset(u.trx, u.platform.id, row.id, {
    status: 'COMPLETED',
    enrollment_status: enrollment,
    completed_at: u.at,
    updated_at: u.at,
  });
}

// ── The hosted liveness page ─────────────────────────────────────────────────────────────────

export type PageView =
  | { kind: 'missing' }
  | { kind: 'open'; reset: ScaResetRow; sandbox: boolean; platformName: string }
  | { kind: 'closed'; status: ScaResetRow['status']; platformName: string; submitted?: boolean };

/** The platform a page token belongs to (its submission is a write of that platform). */
export async function resetPlatformOf(db: AppContext['db'], token: string): Promise<string | undefined> {
  return (await findResetByTokenHash(db, tokenHash(token)))?.platform_id;
}

function viewOf(row: ScaResetRow, platform: PlatformRow, nowMs: number): PageView {
  const status = effectiveStatus(row, nowMs);
  if (status !== 'INITIATED') return { kind: 'closed', status, platformName: platform.name };
  return { kind: 'open', reset: row, sandbox: platform.environment === 'SANDBOX', platformName: platform.name };
}

/** GET of the page. */
export async function openResetPage(ctx: AppContext, token: string): Promise<PageView> {
  const row = await findResetByTokenHash(ctx.db, tokenHash(token));
  const platform = row ? await getPlatform(ctx.db, row.platform_id) : undefined;
  if (!row || !platform) return { kind: 'missing' };
  return viewOf(row, platform, platformNowMs(ctx.deps.clock, platform));
}

/** POST of the page: pass or fail; INITIATED → PENDING_REVIEW, the outcome 5 s later. */
export async function submitResetPage(u: Unit, token: string, outcome: 'PASS' | 'FAIL'): Promise<PageView> {
  const row = await findResetByTokenHash(u.trx, tokenHash(token), { forUpdate: true });
  if (!row || row.platform_id !== u.platform.id) return { kind: 'missing' };
  const view = viewOf(row, u.platform, u.nowMs);
  if (view.kind !== 'open') return view;
  if (!view.sandbox) throw errors.sandboxOnly();
  await updateReset(u.trx, u.platform.id, row.id, { status: 'PENDING_REVIEW', liveness_outcome: outcome, updated_at: u.at });
  await u.schedule(JOB_SCA_RESET_REVIEW, { resetId: row.id }, RESET_REVIEW_DELAY_MS);
  return { kind: 'closed', status: 'PENDING_REVIEW', platformName: u.platform.name, submitted: true };
}

// ── Jobs ─────────────────────────────────────────────────────────────────────────────────────

/** The review's outcome: PENDING_REVIEW → LIVENESS_PASSED or REJECTED (unless the window closed first). */
export const scaResetReviewJob: JobHandler = async (u, job) => {
  const { resetId } = JSON.parse(job.payload) as { resetId: string };
  const row = await findReset(u.trx, u.platform.id, resetId, { forUpdate: true });
  if (row?.status !== 'PENDING_REVIEW' || effectiveStatus(row, u.nowMs) !== 'PENDING_REVIEW') return;
  await updateReset(u.trx, u.platform.id, row.id, {
    status: row.liveness_outcome === 'PASS' ? 'LIVENESS_PASSED' : 'REJECTED',
    updated_at: u.at,
  });
};

/** The window's end: a non-terminal reset becomes EXPIRED. */
export const scaResetExpireJob: JobHandler = async (u, job) => {
  const { resetId } = JSON.parse(job.payload) as { resetId: string };
  const row = await findReset(u.trx, u.platform.id, resetId, { forUpdate: true });
  if (!row || TERMINAL.has(row.status)) return;
  await updateReset(u.trx, u.platform.id, row.id, { status: 'EXPIRED', updated_at: u.at });
};
