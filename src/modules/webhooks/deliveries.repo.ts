/** SQL for the webhook delivery log: outbox events and their attempts. Every query filters on platform_id. */
import type { Kysely } from 'kysely';
import type { Database, OutboxEventRow, WebhookAttemptRow } from '../../store/schema.ts';
import { guard } from '../../store/guard.ts';

export type LastAttempt = Pick<WebhookAttemptRow, 'event_id' | 'attempt' | 'at' | 'response_status' | 'error'>;

/** The latest attempt of each of `eventIds` (one small indexed read per page). */
export async function lastAttempts(db: Kysely<Database>, platformId: string, eventIds: string[]): Promise<Map<string, LastAttempt>> {
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

export interface DeliveryFilter {
  type?: string | undefined;
  status?: string | undefined;
  resourceId?: string | undefined;
}

/** One page of the platform's outbox events, newest first (keyset on the time-ordered id), plus the total that match. */
export async function listEvents(db: Kysely<Database>, platformId: string, f: DeliveryFilter, limit: number, afterId: string | undefined) {
  let base = db.selectFrom('outbox_events').where('platform_id', '=', platformId);
  if (f.type !== undefined) base = base.where('type', '=', f.type);
  if (f.status !== undefined) base = base.where('status', '=', f.status);
  if (f.resourceId !== undefined) base = base.where('resource_id', '=', f.resourceId);
  const total = await base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  let page = base.selectAll();
  if (afterId) page = page.where('id', '<', afterId);
  const rows = await page
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
  return { rows, totalCount: Number(total.n) };
}

/** The first (oldest) event of `type` about `resourceId`, if any. */
export async function firstEventAbout(
  db: Kysely<Database>,
  platformId: string,
  resourceId: string,
  type: string,
): Promise<Pick<OutboxEventRow, 'id' | 'type' | 'resource_id'> | undefined> {
  return db
    .selectFrom('outbox_events')
    .select(['id', 'type', 'resource_id'])
    .where('platform_id', '=', platformId)
    .where('resource_id', '=', resourceId)
    .where('type', '=', type)
    .orderBy('id')
    .executeTakeFirst();
}

export async function findEvent(db: Kysely<Database>, platformId: string, id: string): Promise<OutboxEventRow | undefined> {
  return db.selectFrom('outbox_events').selectAll().where('id', '=', id).where(guard('platform_id', platformId)).executeTakeFirst();
}

/** Every attempt of one event, oldest first. */
export async function attemptsOf(db: Kysely<Database>, platformId: string, eventId: string): Promise<WebhookAttemptRow[]> {
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('event_id', '=', eventId)
    .orderBy('attempt')
    .execute();
}
