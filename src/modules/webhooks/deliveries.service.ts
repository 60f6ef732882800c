/**
 * The webhook delivery log: outbox events with their attempts, as the platform sees them. Times are
 * on the platform's clock; every query filters on platform_id.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../deps.ts';
import { errors } from '../../http/errors.ts';
import { pageOf, type PageRequest } from '../../lib/paging.ts';
import { iso } from '../../lib/time.ts';
import { isParked } from '../../outbox/outbox.ts';
import type { Database, OutboxEventRow, PlatformRow, WebhookAttemptRow } from '../../store/schema.ts';
import { isSandbox, settingsOf } from '../platforms/platform-settings.ts';
import { attemptsOf, findEvent, type LastAttempt, lastAttempts, listEvents } from './deliveries.repo.ts';
import type { DeliveryListQueryT, WebhookAttemptWire, WebhookDeliveryDetailWire, WebhookDeliveryWire } from './deliveries.schemas.ts';

function deliveryToWire(e: OutboxEventRow, last: LastAttempt | undefined, platform: PlatformRow, clock: Clock): WebhookDeliveryWire {
  const w: WebhookDeliveryWire = {
    id: e.id,
    type: e.type,
    resourceId: e.resource_id,
    status: e.status as WebhookDeliveryWire['status'],
    createdAt: e.created_at,
    attemptCount: e.attempts,
  };
  if (last) {
    w.lastAttemptAt = last.at;
    if (last.response_status !== null) w.lastResponseStatus = last.response_status;
    if (last.error !== null) w.lastError = last.error;
  }
  // next_attempt_ms is on the system clock (0 or past: due now; parked: due as soon as the older
  // event of its resource is done, shown as now); events of a platform without an endpoint are not
  // tried at all, so they have no next attempt.
  if (e.status === 'PENDING' && settingsOf(platform).webhookEndpoint) {
    const due = isParked(e) ? 0 : Number(e.next_attempt_ms);
    w.nextAttemptAt = iso(Math.max(due, clock.nowMs()) + Number(platform.clock_offset_ms));
  }
  return w;
}

/**
 * An attempt as the platform sees it. The receiver's body is shown to SANDBOX platforms only: a
 * PRODUCTION platform's attempts are stored without it, and one stored before that rule is not shown.
 */
function attemptToWire(a: WebhookAttemptRow, platform: PlatformRow): WebhookAttemptWire {
  const w: WebhookAttemptWire = { attempt: a.attempt, at: a.at, url: a.url, latencyMs: a.latency_ms };
  if (a.response_status !== null) w.responseStatus = a.response_status;
  if (a.response_body !== null && isSandbox(platform)) w.responseBody = a.response_body;
  if (a.error !== null) w.error = a.error;
  return w;
}

/** GET /webhooks/deliveries: newest first, keyset on the (time-ordered) event id. */
export async function listDeliveries(
  db: Kysely<Database>,
  platform: PlatformRow,
  clock: Clock,
  q: Omit<DeliveryListQueryT, 'cursor' | 'limit'>,
  { limit, afterId }: PageRequest,
) {
  const { rows, totalCount } = await listEvents(
    db,
    platform.id,
    { type: q.type, status: q.status, resourceId: q.resourceId },
    limit,
    afterId,
  );
  const last = await lastAttempts(
    db,
    platform.id,
    rows.slice(0, limit).map((e) => e.id),
  );
  return pageOf(rows, limit, totalCount, (e) => deliveryToWire(e, last.get(e.id), platform, clock));
}

/** GET /webhooks/deliveries/{id}: the event, its data and every attempt. 404 unless it is the platform's. */
export async function getDelivery(
  db: Kysely<Database>,
  platform: PlatformRow,
  clock: Clock,
  id: string,
): Promise<WebhookDeliveryDetailWire> {
  const e = await findEvent(db, platform.id, id);
  if (!e) throw errors.notFound('Webhook delivery', id);
  const attempts = await attemptsOf(db, platform.id, id);
  return {
    ...deliveryToWire(e, attempts.at(-1), platform, clock),
    data: JSON.parse(e.payload) as Record<string, unknown>,
    attempts: attempts.map((a) => attemptToWire(a, platform)),
  };
}
