/**
 * The webhook delivery log: outbox events with their attempts, as the platform sees them. Times are
 * on the platform's clock; every query filters on platform_id.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../deps.ts';
import { errors } from '../../http/errors.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { iso } from '../../lib/time.ts';
import { isParked } from '../../outbox/outbox.ts';
import type { Database, OutboxEventRow, PlatformRow, WebhookAttemptRow } from '../../store/schema.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import type { DeliveryListQueryT, WebhookAttemptWire, WebhookDeliveryDetailWire, WebhookDeliveryWire } from './deliveries.schemas.ts';

type LastAttempt = Pick<WebhookAttemptRow, 'event_id' | 'attempt' | 'at' | 'response_status' | 'error'>;

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

function attemptToWire(a: WebhookAttemptRow): WebhookAttemptWire {
  const w: WebhookAttemptWire = { attempt: a.attempt, at: a.at, url: a.url, latencyMs: a.latency_ms };
  if (a.response_status !== null) w.responseStatus = a.response_status;
  if (a.response_body !== null) w.responseBody = a.response_body;
  if (a.error !== null) w.error = a.error;
  return w;
}

/** The latest attempt of each of `eventIds` (one small indexed read per page). */
async function lastAttempts(db: Kysely<Database>, platformId: string, eventIds: string[]): Promise<Map<string, LastAttempt>> {
  const out = new Map<string, LastAttempt>();
  if (eventIds.length === 0) return out;
  const rows = await db
    .selectFrom('webhook_attempts as a')
    .select(['a.event_id', 'a.attempt', 'a.at', 'a.response_status', 'a.error'])
    .where('a.platform_id', '=', platformId)
    .where('a.event_id', 'in', eventIds)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('webhook_attempts as b')
            .select('b.id')
            .whereRef('b.platform_id', '=', 'a.platform_id')
            .whereRef('b.event_id', '=', 'a.event_id')
            .whereRef('b.attempt', '>', 'a.attempt'),
        ),
      ),
    )
    .execute();
  for (const r of rows) out.set(r.event_id, r);
  return out;
}

/** GET /webhooks/deliveries: newest first, keyset on the (time-ordered) event id. */
export async function listDeliveries(db: Kysely<Database>, platform: PlatformRow, clock: Clock, q: DeliveryListQueryT) {
  const limit = q.limit ?? 20;
  let base = db.selectFrom('outbox_events').where('platform_id', '=', platform.id);
  if (q.type !== undefined) base = base.where('type', '=', q.type);
  if (q.status !== undefined) base = base.where('status', '=', q.status);
  if (q.resourceId !== undefined) base = base.where('resource_id', '=', q.resourceId);
  const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let rows = base.selectAll();
  const after = decodeCursor(q.cursor);
  if (after) rows = rows.where('id', '<', after);
  const events = await rows.orderBy('id', 'desc').limit(limit + 1).execute();
  const last = await lastAttempts(db, platform.id, events.slice(0, limit).map((e) => e.id));
  return toPage(events, limit, Number(total.n), (e) => deliveryToWire(e, last.get(e.id), platform, clock));
}

/** GET /webhooks/deliveries/{id}: the event, its data and every attempt. 404 unless it is the platform's. */
export async function getDelivery(db: Kysely<Database>, platform: PlatformRow, clock: Clock, id: string): Promise<WebhookDeliveryDetailWire> {
  const e = await db.selectFrom('outbox_events').selectAll().where('platform_id', '=', platform.id).where('id', '=', id).executeTakeFirst();
  if (!e) throw errors.notFound('Webhook delivery', id);
  const attempts = await db.selectFrom('webhook_attempts').selectAll().where('platform_id', '=', platform.id).where('event_id', '=', id).orderBy('attempt').execute();
  return {
    ...deliveryToWire(e, attempts.at(-1), platform, clock),
    data: JSON.parse(e.payload) as Record<string, unknown>,
    attempts: attempts.map(attemptToWire),
  };
}
