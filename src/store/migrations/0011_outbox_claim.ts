/**
 * Indexes for claiming webhook events without scanning the backlog (see webhook-delivery/deliverer.ts):
 * - due events of one platform in due order, straight off the index (the sort key includes id);
 * - "is an older event of this resource still undelivered?" as one seek per status.
 * The platform-less due index of 0001 is no longer read by anything: claims always start from a
 * platform with an endpoint.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0011OutboxClaim: Migration = {
  name: '0011_outbox_claim',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema.dropIndex('outbox_events_due').execute();
    await db.schema.dropIndex('outbox_events_platform_due').execute();
    await db.schema
      .createIndex('outbox_events_platform_due')
      .on('outbox_events')
      .columns(['platform_id', 'status', 'next_attempt_ms', 'id'])
      .execute();
    await db.schema
      .createIndex('outbox_events_resource_status')
      .on('outbox_events')
      .columns(['platform_id', 'resource_id', 'status', 'id'])
      .execute();
  },
};
