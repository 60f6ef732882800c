/**
 * The delivery log API: list indexes on the outbox (newest first per platform, by status, by type)
 * and where an event's current retry schedule starts (a replay or recover starts a new one).
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0007WebhookDeliveries: Migration = {
  name: '0007_webhook_deliveries',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    // Attempts made before the current retry schedule began: the backoff counts from it, while
    // attempt numbers in the log keep counting across replays.
    await db.schema
      .alterTable('outbox_events')
      .addColumn('schedule_base', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();

    // GET /webhooks/deliveries is a keyset scan on id per platform, optionally by status (FAILED is
    // rare; recover reads it too) or by event type. The resource filter uses outbox_events_resource.
    await db.schema.createIndex('outbox_events_platform_id').on('outbox_events').columns(['platform_id', 'id']).execute();
    await db.schema.createIndex('outbox_events_platform_status_id').on('outbox_events').columns(['platform_id', 'status', 'id']).execute();
    await db.schema.createIndex('outbox_events_platform_type_id').on('outbox_events').columns(['platform_id', 'type', 'id']).execute();
  },
};
