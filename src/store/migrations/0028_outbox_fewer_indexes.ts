/**
 * Two of the outbox's seven indexes give way (issue #26): every payment writes five events, and each
 * index is one more entry per event to insert, log and keep. What they served is served by the
 * indexes that stay:
 * - `outbox_events_resource (platform_id, resource_id, id)`: the resource filter of
 *   GET /webhooks/deliveries and the first event about a resource seek
 *   `outbox_events_resource_status (platform_id, resource_id, status, id)` on its first two columns
 *   and order the handful of events a resource has.
 * - `outbox_events_platform_status_id (platform_id, status, id)`: the status filter seeks
 *   `outbox_events_platform_due (platform_id, status, next_attempt_ms, id)` on its first two columns;
 *   a page of a common status is then a top-N sort of the rows its total already counts.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0028OutboxFewerIndexes: Migration = {
  name: '0028_outbox_fewer_indexes',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema.dropIndex('outbox_events_resource').execute();
    await db.schema.dropIndex('outbox_events_platform_status_id').execute();
  },
};
