/**
 * Recording an attempt's outcome (see the module comment of deliverer.ts): the attempt log row, the
 * event's next status under the retry rules, the reply hook's effect, and the next event of the
 * resource unparked — in one transaction holding the platform's write lock.
 */
import type { Kysely } from 'kysely';
import type { Clock, Ids } from '../deps.ts';
import { isParked } from '../outbox/outbox.ts';
import { lockPlatformShared } from '../store/platform-lock.ts';
import type { Database, OutboxEventRow, PlatformRow } from '../store/schema.ts';
import type { Claimed } from './claim-queries.ts';

const RETRY_BASE_MS = 30_000;
const RETRY_CAP_MS = 30 * 60_000;
const RETRY_WINDOW_MS = 7 * 24 * 3600_000;
const NO_RETRY_TYPES = new Set(['TEST', 'INCOMING_PAYMENT.PENDING']);

export interface AttemptResult {
  url: string;
  status: number | null;
  /** The first 4 KiB of the answer; null without one, and in what a PRODUCTION platform is shown. */
  body: string | null;
  error: string | null;
  latencyMs: number;
}

/** What a reply hook is given: the event, its platform, and the receiver's answer. */
export interface WebhookReply {
  event: OutboxEventRow;
  platform: PlatformRow;
  /** The HTTP status; null when no response arrived (network error, timeout). */
  status: number | null;
  /** The first 4 KiB of the response body (in memory only for PRODUCTION platforms: never logged). */
  body: string | null;
  error: string | null;
}

/**
 * Whether the answer counts as delivered (overriding "2xx is delivered"); undefined keeps the
 * usual rule. Retry rules still apply to an answer that does not count.
 */
export type ReplyVerdict = { delivered: boolean } | undefined;

/**
 * Runs in the transaction that records the attempt; what it writes commits with the log row. If it
 * throws, the attempt is still recorded (without the hook's effect) and the error is reported.
 */
export type ReplyHook = (trx: Kysely<Database>, reply: WebhookReply) => Promise<ReplyVerdict>;

/** The retry delay after failed attempt number `attempt` (1-based). */
export function retryDelayMs(attempt: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** Math.min(attempt - 1, 30), RETRY_CAP_MS);
}

/**
 * Records attempt `c` (its answer `r`, made at platform time `at`). Nothing is recorded when a reset
 * deleted the event while the attempt was in flight.
 */
export async function writeOutcome(
  db: Kysely<Database>,
  clock: Clock,
  ids: Ids,
  c: Claimed,
  at: string,
  r: AttemptResult,
  hook: ReplyHook | undefined,
): Promise<void> {
  const e = c.event;
  await db.transaction().execute(async (trx) => {
    await lockPlatformShared(trx, e.platform_id);
    // A reset deleted the event while its attempt was in flight: there is nothing to record (the
    // lock keeps a reset from deleting it between this read and the writes below).
    const exists = await trx.selectFrom('outbox_events').select('id').where('id', '=', e.id).executeTakeFirst();
    if (!exists) return;
    let verdict: ReplyVerdict;
    if (hook) {
      const platform = await trx.selectFrom('platforms').selectAll().where('id', '=', e.platform_id).executeTakeFirst();
      if (platform) verdict = await hook(trx, { event: e, platform, status: r.status, body: r.body, error: r.error });
    }
    const ok = verdict ? verdict.delivered : r.status !== null && r.status >= 200 && r.status < 300;
    let status = 'DELIVERED';
    let next = 0;
    if (!ok) {
      const delay = retryDelayMs(e.attempts - e.schedule_base);
      const nowPlatform = Date.parse(at);
      const withinWindow = nowPlatform + delay <= Date.parse(e.first_attempt_at ?? at) + RETRY_WINDOW_MS;
      if (r.status === 409 || NO_RETRY_TYPES.has(e.type) || !withinWindow) status = 'FAILED';
      else {
        status = 'PENDING';
        next = clock.nowMs() + delay;
      }
    }
    await trx
      .insertInto('webhook_attempts')
      .values({
        id: ids.next('WebhookAttempt'),
        platform_id: e.platform_id,
        event_id: e.id,
        attempt: e.attempts,
        at,
        url: r.url,
        response_status: r.status,
        latency_ms: r.latencyMs,
        // PRODUCTION platforms: the receiver's answer is never stored (nor shown).
        response_body: c.target.keepBody ? r.body : null,
        error: r.error,
      })
      .execute();
    const moved = await trx
      .updateTable('outbox_events')
      .set({ status, next_attempt_ms: next })
      .where('id', '=', e.id)
      .where('status', '=', 'DELIVERING')
      .where('attempts', '=', e.attempts)
      .executeTakeFirst();
    // Done with (delivered or given up): the next event of its resource may go (fast path; the
    // sweep catches what this misses). That is its oldest PENDING event — if parked, it is made
    // due; the ones behind it stay parked until it is done in turn. (One seek on
    // outbox_events_resource_status: a range on next_attempt_ms would walk all parked events.)
    if (status !== 'PENDING' && Number(moved.numUpdatedRows) === 1) {
      const head = await trx
        .selectFrom('outbox_events')
        .select(['id', 'next_attempt_ms'])
        .where('platform_id', '=', e.platform_id)
        .where('resource_id', '=', e.resource_id)
        .where('status', '=', 'PENDING')
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      if (head && isParked(head)) {
        await trx
          .updateTable('outbox_events')
          .set({ next_attempt_ms: 0 })
          .where('id', '=', head.id)
          .where('status', '=', 'PENDING')
          .execute();
      }
    }
  });
}
