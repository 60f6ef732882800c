/**
 * The transactional outbox: a state change writes its webhook events here in the same database
 * transaction, so an event exists if and only if the change committed. Delivery happens later.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

export interface EventInput {
  id: string;
  platformId: string;
  type: string;
  resourceId: string;
  data: unknown;
  /** The event timestamp, on the platform's clock. */
  at: string;
}

export async function enqueueEvent(trx: Kysely<Database>, e: EventInput): Promise<void> {
  await trx
    .insertInto('outbox_events')
    .values({
      id: e.id,
      platform_id: e.platformId,
      type: e.type,
      resource_id: e.resourceId,
      payload: JSON.stringify(e.data),
      created_at: e.at,
      status: 'PENDING',
      attempts: 0,
      // Due at once: 0 is before any clock reading.
      next_attempt_ms: 0,
    })
    .execute();
}
