/**
 * The outbox transactions behind a claim: claiming a platform's due events, the next event of a
 * resource, the unpark sweep (see the module comment of deliverer.ts for the rules). Each takes the
 * platform's write lock shared as its first statement, and only tries: while a reset holds or awaits
 * it, the platform is skipped (these take row locks and must not wait with them held).
 */
import type { ExpressionBuilder, Kysely } from 'kysely';
import { iso } from '../lib/time.ts';
import { PARKED_MIN, PARKED_MS } from '../outbox/outbox.ts';
import type { StoreKind } from '../store/db.ts';
import { tryLockPlatformShared } from '../store/platform-lock.ts';
import type { Database, OutboxEventRow } from '../store/schema.ts';

/**
 * How long a claimed attempt may take before another worker may take the event again: above the
 * request timeout (plus recording the outcome), so a live attempt is never taken over.
 */
export const LEASE_MS = 20_000;
/** Due events a claim looks at per platform: its share plus room for the ones it parks. */
const SCAN_SIZE = 200;

/** Where a platform's webhooks go, and how (from its configuration and environment). */
export interface Target {
  platformId: string;
  url: string;
  /** Refuse loopback, private, link-local and non-routable addresses (PRODUCTION, unless allowed). */
  guarded: boolean;
  /** Keep the receiver's answer in the attempt log (SANDBOX only; PRODUCTION logs never hold it). */
  keepBody: boolean;
}

/** A claimed event with what delivery needs from its platform. */
export interface Claimed {
  event: OutboxEventRow;
  target: Target;
  offsetMs: number;
}

/**
 * Takes the next attempt of `event` (read in `trx`, locked on PostgreSQL): DELIVERING with a lease,
 * attempts + 1. The compare-and-set on (status, attempts) backs the row lock, so two workers never
 * both claim one attempt; undefined when another worker took it first.
 */
export async function takeAttempt(
  trx: Kysely<Database>,
  event: OutboxEventRow,
  target: Target,
  offsetMs: number,
  now: number,
): Promise<Claimed | undefined> {
  const firstAt = event.first_attempt_at ?? iso(now + offsetMs);
  const attempts = event.attempts + 1;
  const r = await trx
    .updateTable('outbox_events')
    .set({ status: 'DELIVERING', attempts, next_attempt_ms: now + LEASE_MS, first_attempt_at: firstAt })
    .where('id', '=', event.id)
    .where('status', '=', event.status)
    .where('attempts', '=', event.attempts)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) !== 1) return undefined;
  return { event: { ...event, attempts, first_attempt_at: firstAt }, target, offsetMs };
}

/**
 * Events to claim, each with its platform's clock offset as of this transaction (a clock advance may
 * have just committed: attempts are logged on the platform clock) and whether it waits behind an
 * older undelivered event of its resource.
 */
export function candidates(trx: Kysely<Database>) {
  return trx
    .selectFrom('outbox_events as e')
    .innerJoin('platforms as p', 'p.id', 'e.platform_id')
    .selectAll('e')
    .select('p.clock_offset_ms as platform_offset')
    .select((eb) => olderUndelivered(eb).as('blocked'));
}

/** The store's tables with the outbox aliased as `e` (the event being considered). */
type WithE = Database & { e: Database['outbox_events'] };

/**
 * Whether `e` waits: an older event of the same platform and resource is still PENDING or
 * DELIVERING (an index seek on outbox_events_resource_status).
 */
export function olderUndelivered(eb: ExpressionBuilder<WithE, 'e'>) {
  return eb.exists(
    eb
      .selectFrom('outbox_events as o')
      .select('o.id')
      .whereRef('o.platform_id', '=', 'e.platform_id')
      .whereRef('o.resource_id', '=', 'e.resource_id')
      .where('o.status', 'in', ['PENDING', 'DELIVERING'])
      .whereRef('o.id', '<', 'e.id'),
  );
}

/**
 * Claims up to `room` of the platform's due events, at most one per resource (the oldest not yet
 * delivered), and parks the due events it finds waiting behind an older one.
 */
export async function claimFrom(
  db: Kysely<Database>,
  kind: StoreKind,
  t: Target,
  room: number,
  now: number,
): Promise<{ claimed: Claimed[]; parked: number }> {
  return db.transaction().execute(async (trx) => {
    // A reset of the platform holds or awaits its lock: leave its events to a later round.
    if (!(await tryLockPlatformShared(trx, t.platformId))) return { claimed: [], parked: 0 };
    // Due events in due order, each with whether an older event of its resource is undelivered.
    const due = (status: 'PENDING' | 'DELIVERING') => {
      let q = candidates(trx)
        .where('e.platform_id', '=', t.platformId)
        .where('e.status', '=', status)
        .where('e.next_attempt_ms', '<=', now)
        .orderBy('e.next_attempt_ms')
        .orderBy('e.id')
        .limit(SCAN_SIZE);
      // Several processes on one PostgreSQL: each claim takes events no one else holds and never
      // waits on a row lock. (Waiting deadlocked: two drains whose snapshots straddle a clock
      // shift or a park see the same rows in different due order and lock them crosswise.) A
      // caller draining one platform waits for the rows others hold in `drain` (see `busy`).
      if (kind === 'postgres') q = q.forUpdate('e').skipLocked();
      return q.execute();
    };
    // Expired leases first (a crashed worker's attempts), then PENDING events.
    const rows = [...(await due('DELIVERING')), ...(await due('PENDING'))];
    // The endpoint as of now, read after the events: an event this claim sees was committed with
    // this endpoint or an older one, never a newer (a PATCH /config that changes it emits a TEST
    // event in the same transaction, which must go to the new endpoint).
    const url = rows.length > 0 ? await currentEndpoint(trx, t.platformId) : t.url;
    if (!url) return { claimed: [], parked: 0 };
    const target = url === t.url ? t : { ...t, url };
    const out: Claimed[] = [];
    const toPark: string[] = [];
    const seen = new Set<string>();
    for (const { blocked, platform_offset, ...event } of rows) {
      const offsetMs = Number(platform_offset);
      // Blocked, or behind an event of its resource claimed in this batch: it waits.
      const waits = Boolean(Number(blocked)) || seen.has(event.resource_id);
      seen.add(event.resource_id);
      if (waits) {
        if (event.status === 'PENDING') toPark.push(event.id);
        continue;
      }
      if (out.length >= room) continue;
      const claimed = await takeAttempt(trx, event, target, offsetMs, now);
      if (claimed) out.push(claimed);
    }
    let parked = 0;
    if (toPark.length > 0) {
      const r = await trx
        .updateTable('outbox_events')
        .set({ next_attempt_ms: PARKED_MS })
        .where('id', 'in', toPark)
        .where('status', '=', 'PENDING')
        .where('next_attempt_ms', '<=', now)
        .executeTakeFirst();
      parked = Number(r.numUpdatedRows);
    }
    return { claimed: out, parked };
  });
}

/** The platform's webhookEndpoint as `trx` reads it now (config is compact JSON; settingsOf's rule). */
async function currentEndpoint(trx: Kysely<Database>, platformId: string): Promise<string | undefined> {
  const p = await trx.selectFrom('platforms').select('config').where('id', '=', platformId).executeTakeFirst();
  if (!p) return undefined;
  return (JSON.parse(p.config) as { webhookEndpoint?: string }).webhookEndpoint || undefined;
}

/**
 * Makes due the platform's parked events that no longer wait behind an older undelivered event of
 * their resource (only the oldest parked event of each resource can be one); returns how many.
 */
export async function unparkPlatform(db: Kysely<Database>, platformId: string): Promise<number> {
  return db.transaction().execute(async (trx) => {
    // Skipped while a reset holds or awaits the lock (the next sweep comes within a second).
    if (!(await tryLockPlatformShared(trx, platformId))) return 0;
    const r = await trx
      .updateTable('outbox_events as e')
      .set({ next_attempt_ms: 0 })
      .where('e.id', 'in', (eb) =>
        eb
          .selectFrom('outbox_events')
          .select((f) => f.fn.min<string>('id').as('id'))
          .where('platform_id', '=', platformId)
          .where('status', '=', 'PENDING')
          .where('next_attempt_ms', '>=', PARKED_MIN)
          .groupBy('resource_id'),
      )
      .where('e.status', '=', 'PENDING')
      .where('e.next_attempt_ms', '>=', PARKED_MIN)
      .where((eb) => eb.not(olderUndelivered(eb)))
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  });
}

/**
 * Claims the oldest undelivered event of `c`'s resource if it is due and nothing older of the
 * resource is undelivered (the order rule, checked as in `claimFrom`); undefined otherwise.
 */
export async function claimNextOf(db: Kysely<Database>, kind: StoreKind, c: Claimed, now: number): Promise<Claimed | undefined> {
  return db.transaction().execute(async (trx) => {
    if (!(await tryLockPlatformShared(trx, c.event.platform_id))) return undefined;
    let q = candidates(trx)
      .where('e.platform_id', '=', c.event.platform_id)
      .where('e.resource_id', '=', c.event.resource_id)
      .where('e.status', '=', 'PENDING')
      .orderBy('e.id')
      .limit(1);
    if (kind === 'postgres') q = q.forUpdate('e').skipLocked();
    const row = await q.executeTakeFirst();
    if (!row) return undefined;
    const { blocked, platform_offset, ...event } = row;
    if (Number(blocked) || Number(event.next_attempt_ms) > now) return undefined;
    // As in `claimFrom`: the endpoint read after the event, so never older than the event.
    const url = await currentEndpoint(trx, c.event.platform_id);
    if (!url) return undefined;
    return takeAttempt(trx, event, url === c.target.url ? c.target : { ...c.target, url }, Number(platform_offset), now);
  });
}

/**
 * True while the platform has attempts in flight (here or in another process), or due events
 * that a claim just passed over: on PostgreSQL, rows another worker holds locked right now.
 */
export async function busy(db: Kysely<Database>, platformId: string, now: number): Promise<boolean> {
  const row = await db
    .selectFrom('outbox_events')
    .select('id')
    .where('platform_id', '=', platformId)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'DELIVERING'), eb('next_attempt_ms', '>', now)]),
        eb.and([eb('status', '=', 'PENDING'), eb('next_attempt_ms', '<=', now)]),
      ]),
    )
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
