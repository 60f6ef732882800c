/** Webhook delivery: per-platform signing keys, the attempt log, and when an event was first tried. */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0006Webhooks: Migration = {
  name: '0006_webhooks',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('webhook_keys')
      .addColumn('platform_id', 'text', (c) => c.primaryKey())
      .addColumn('private_key_pem', 'text', (c) => c.notNull())
      .addColumn('public_key_pem', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('webhook_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('event_id', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('at', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('response_status', 'integer')
      .addColumn('latency_ms', 'integer', (c) => c.notNull())
      .addColumn('response_body', 'text')
      .addColumn('error', 'text')
      .execute();
    await db.schema.createIndex('webhook_attempts_event').on('webhook_attempts').columns(['platform_id', 'event_id', 'attempt']).execute();

    // Claiming due events of the platforms that have an endpoint.
    await db.schema
      .createIndex('outbox_events_platform_due')
      .on('outbox_events')
      .columns(['platform_id', 'status', 'next_attempt_ms'])
      .execute();

    // Platform-clock time of the first delivery attempt: retries stop 7 days after it.
    await db.schema.alterTable('outbox_events').addColumn('first_attempt_at', 'text').execute();
  },
};
