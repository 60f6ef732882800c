/**
 * The transactional outbox: a state change writes its webhook events here in the same database
 * transaction, so an event exists if and only if the change committed. Delivery happens later.
 */
import type { Kysely } from 'kysely';
import { prepared, type Prepared } from '../store/prepared.ts';
import type { Database, OutboxEventRow } from '../store/schema.ts';
import type { WebhookType } from '../webhook-delivery/catalogue.ts';

export interface EventInput {
  id: string;
  platformId: string;
  /** A type from the event catalogue (src/webhook-delivery/catalogue.ts): an unknown one does not typecheck. */
  type: WebhookType;
  resourceId: string;
  data: unknown;
  /** The event timestamp, on the platform's clock. */
  at: string;
}

export async function enqueueEvent(trx: Kysely<Database>, e: EventInput): Promise<void> {
  await insertEvent.defer(trx, {
    id: e.id,
    platformId: e.platformId,
    type: e.type,
    resourceId: e.resourceId,
    payload: JSON.stringify(e.data),
    at: e.at,
  });
}

/**
 * Several events in one INSERT (a payment step writes two or three): cheaper than one statement
 * each. The rows are the same as `enqueueEvent` writes, in the given order.
 */
export async function enqueueEvents(trx: Kysely<Database>, events: readonly EventInput[]): Promise<void> {
  for (let i = 0; i < events.length; i += MAX_EVENTS_PER_INSERT) {
    const chunk = events.slice(i, i + MAX_EVENTS_PER_INSERT);
    if (chunk.length === 1) {
      await enqueueEvent(trx, chunk[0]!);
      continue;
    }
    const args: Record<string, unknown> = {};
    chunk.forEach((e, n) => {
      args[`id${n}`] = e.id;
      args[`platformId${n}`] = e.platformId;
      args[`type${n}`] = e.type;
      args[`resourceId${n}`] = e.resourceId;
      args[`payload${n}`] = JSON.stringify(e.data);
      args[`at${n}`] = e.at;
    });
    await insertEvents(chunk.length).defer(trx, args);
  }
}

const MAX_EVENTS_PER_INSERT = 8;
const multiInserts = new Map<number, Prepared<Record<string, unknown>, unknown>>();

function insertEvents(n: number): Prepared<Record<string, unknown>, unknown> {
  let stmt = multiInserts.get(n);
  if (!stmt) {
    stmt = prepared((db, a: Record<string, unknown>) =>
      db.insertInto('outbox_events').values(
        Array.from({ length: n }, (_, i) => ({
          id: a[`id${i}`] as string,
          platform_id: a[`platformId${i}`] as string,
          type: a[`type${i}`] as string,
          resource_id: a[`resourceId${i}`] as string,
          payload: a[`payload${i}`] as string,
          created_at: a[`at${i}`] as string,
          status: 'PENDING',
          attempts: 0,
          next_attempt_ms: 0,
        })),
      ),
    );
    multiInserts.set(n, stmt);
  }
  return stmt;
}

// Every state change writes events: the INSERT is compiled once (see store/prepared.ts).
const insertEvent = prepared((db, a: { id: string; platformId: string; type: string; resourceId: string; payload: string; at: string }) =>
  db.insertInto('outbox_events').values({
    id: a.id,
    platform_id: a.platformId,
    type: a.type,
    resource_id: a.resourceId,
    payload: a.payload,
    created_at: a.at,
    status: 'PENDING',
    attempts: 0,
    // Due at once: 0 is before any clock reading.
    next_attempt_ms: 0,
  }),
);

/**
 * next_attempt_ms of a parked event (waiting behind an older event of its resource; see
 * webhook-delivery/deliverer.ts): never due by time (2^52 ms is ~140,000 years away). Anything at
 * or above PARKED_MIN counts as parked, so a clock shift that skipped it cannot unpark it by accident.
 */
export const PARKED_MS = 2 ** 52;
export const PARKED_MIN = 2 ** 51;

export function isParked(e: Pick<OutboxEventRow, 'next_attempt_ms'>): boolean {
  return Number(e.next_attempt_ms) >= PARKED_MIN;
}
