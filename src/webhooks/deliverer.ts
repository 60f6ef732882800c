/**
 * Webhook delivery from the outbox. A due event (status PENDING, next_attempt_ms <= now) of a
 * platform with a `webhookEndpoint` is claimed in a short transaction (status DELIVERING, a lease in
 * next_attempt_ms, attempts + 1), POSTed with no transaction open, and its outcome recorded in a
 * second transaction together with a `webhook_attempts` row.
 *
 * - Order: an event is never delivered while an older event (by id, i.e. creation order) of the
 *   same platform and resource is still PENDING or DELIVERING.
 * - Outcome: any 2xx → DELIVERED (a reply hook may decide otherwise, below). 409 → FAILED. TEST and
 *   INCOMING_PAYMENT.PENDING are never retried (FAILED unless delivered). Anything else (non-2xx,
 *   redirect, network error, 10 s timeout) retries after 30 s × 2^(n−1) (n: attempts since the schedule began), at most 30 min apart,
 *   while the next attempt falls within 7 days (platform clock) of the schedule's first; then FAILED.
 * - Reply hooks: a module may register a hook for an event type (`onReply`); it runs in the
 *   transaction that records the attempt, so the receiver's answer takes effect exactly when the
 *   attempt is logged (INCOMING_PAYMENT.PENDING: the platform's approval decision). It may say
 *   whether the answer counts as delivered. The deliverer knows no module: modules register.
 * - Replay (`replay`) sends an event again now under the same envelope id; recover (`recover`)
 *   requeues FAILED events. Both start a fresh retry schedule (backoff from 30 s, a new 7-day
 *   window) while attempt numbers keep counting, so each is unique in the log.
 * - Events of platforms without a webhookEndpoint are never claimed: they stay PENDING, untouched,
 *   and are delivered (in order) once an endpoint is configured.
 * - next_attempt_ms is on the system clock; a sandbox clock advance shifts PENDING events earlier
 *   (shiftPlatformSchedule) and then calls `drain(platformId)`, so retries follow the platform clock.
 * - A DELIVERING event whose lease (20 s: above the 10 s request timeout plus recording, short
 *   enough that a crashed process's attempts are retried soon) ran out is claimed again.
 * - Parking: a due event that waits behind an older one of its resource is parked (next_attempt_ms
 *   set to PARKED_MS) when a claim first meets it, so later claims do not walk past it again — a
 *   busy resource (one account's balance updates) would otherwise make every claim scan its whole
 *   backlog. Recording an event's final outcome unparks the next one of its resource. That is only
 *   the fast path: on PostgreSQL a park and an unpark in concurrent transactions can miss each
 *   other, so a sweep (`unparkReady`, each second and before draining one platform) unparks every
 *   parked event with nothing older undelivered: a missed unpark costs its event up to a second,
 *   never its delivery. The order rule itself is checked at every claim.
 * - Chains (PostgreSQL): after a delivered attempt, the same worker claims and sends the next due
 *   event of that resource at once (up to 10 in a row), so a busy resource is not held to one event
 *   per claim round.
 * - Slow receivers: a drain claims again once its attempts are answered or after half a second,
 *   whichever comes first, with at most 20 attempts of one platform and 40 in all in flight; so a
 *   receiver that takes up to the 10 s timeout delays its own events, not other platforms'.
 */
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Clock, Ids } from '../deps.ts';
import { errors } from '../http/errors.ts';
import { Poller } from '../lib/poller.ts';
import { iso, platformNowMs } from '../lib/time.ts';
import { settingsOf } from '../modules/platforms/platform-settings.ts';
import type { StoreKind } from '../store/db.ts';
import { isParked, PARKED_MIN, PARKED_MS } from '../outbox/outbox.ts';
import { retryOnConflict } from '../store/retry.ts';
import type { Database, OutboxEventRow, PlatformRow } from '../store/schema.ts';
import { signatureHeader, webhookSigningKey } from './keys.ts';

/**
 * How long a claimed attempt may take before another worker may take the event again: above the
 * request timeout (plus recording the outcome), so a live attempt is never taken over.
 */
export const LEASE_MS = 20_000;
const REQUEST_TIMEOUT_MS = 10_000;
const MAX_RESPONSE_BYTES = 4096;
/** Events one claim round takes, and attempts of one platform in flight at once (per drain). */
const BATCH_SIZE = 20;
/** Attempts in flight at once per drain, over all platforms. */
const MAX_IN_FLIGHT = 2 * BATCH_SIZE;
/**
 * How long a drain waits for its attempts before it claims again regardless: a slow receiver
 * (up to the 10 s timeout) holds its own attempts, not the other platforms' next ones.
 */
const PATIENCE_MS = 500;
/**
 * Events of one resource attempted one after another from one claim (see `attemptChain`). Only on
 * PostgreSQL, where a claim round costs several round trips: there chains of 10 cut the `flow`
 * bench's drain from over 120 s to 30 s. On SQLite a claim is cheap, and the batch waiting for its
 * longest chain made delivery slower (drain 63 s against 34 s), so there a chain is one event.
 */
const CHAIN_LENGTH = { postgres: 10, sqlite: 1 } as const;
/** Due events a claim looks at per platform: the batch plus room for the ones it parks. */
const SCAN_SIZE = 200;
/** How often the background loop sweeps parked events whose turn has come (see the module comment). */
const UNPARK_SWEEP_MS = 1_000;
const RETRY_BASE_MS = 30_000;
const RETRY_CAP_MS = 30 * 60_000;
const RETRY_WINDOW_MS = 7 * 24 * 3600_000;
/** How long `drain(platformId)` waits for attempts other workers have in flight. */
const DRAIN_WAIT_MS = REQUEST_TIMEOUT_MS + 5_000;
const NO_RETRY_TYPES = new Set(['TEST', 'INCOMING_PAYMENT.PENDING']);

export interface DelivererOptions {
  db: Kysely<Database>;
  kind: StoreKind;
  clock: Clock;
  ids: Ids;
  pollIntervalMs?: number;
  onError?: (err: unknown) => void;
}

/** A claimed event with what delivery needs from its platform. */
interface Claimed {
  event: OutboxEventRow;
  url: string;
  offsetMs: number;
}

export interface AttemptResult {
  url: string;
  status: number | null;
  body: string | null;
  error: string | null;
  latencyMs: number;
}

/** What a reply hook is given: the event, its platform, and the receiver's answer. */
export interface WebhookReply {
  event: OutboxEventRow;
  platform: PlatformRow;
  /** The HTTP status; null when no response arrived (network error, timeout). */
  status: number | null;
  /** The first 4 KiB of the response body. */
  body: string | null;
  error: string | null;
}

/**
 * Whether the answer counts as delivered (overriding "2xx is delivered"); undefined keeps the
 * usual rule. Retry rules still apply to an answer that does not count.
 */
export type ReplyVerdict = { delivered: boolean } | undefined;

/**
 * Runs in the transaction that records the attempt; what it writes commits with the log row. If it
 * throws, the attempt is still recorded (without the hook's effect) and the error is reported.
 */
export type ReplyHook = (trx: Kysely<Database>, reply: WebhookReply) => Promise<ReplyVerdict>;

/** The retry delay after failed attempt number `attempt` (1-based). */
export function retryDelayMs(attempt: number): number {
  return Math.min(RETRY_BASE_MS * 2 ** Math.min(attempt - 1, 30), RETRY_CAP_MS);
}

export class WebhookDeliverer {
  private readonly poller: Poller;
  /** Aborts attempts in flight when the app stops. */
  private readonly shutdown = new AbortController();
  /** Reply hooks by event type; modules register theirs (see `onReply`). */
  private readonly replyHooks = new Map<string, ReplyHook>();
  /** When the background loop last swept parked events (system clock). */
  private lastSweepMs = 0;
  /** Where the next claim starts in the list of platforms, so none waits behind another's backlog. */
  private platformTurn = 0;

  constructor(private readonly o: DelivererOptions) {
    this.poller = new Poller(() => this.drain(), o.pollIntervalMs ?? 100, (err) => o.onError?.(err));
  }

  start(): void {
    this.poller.start();
  }

  async stop(): Promise<void> {
    this.shutdown.abort();
    await this.poller.stop();
  }

  /** Registers the hook that acts on receivers' answers to events of `type` (one per type). */
  onReply(type: string, hook: ReplyHook): void {
    this.replyHooks.set(type, hook);
  }

  /**
   * Delivers every due event (optionally one platform's) until none is due; returns how many
   * attempts were made. For one platform it also waits (bounded) for attempts other workers have
   * in flight, so that after a sandbox clock advance everything due has been tried.
   */
  async drain(platformId?: string): Promise<number> {
    const deadline = Date.now() + DRAIN_WAIT_MS;
    if (platformId) {
      // Without an endpoint nothing of the platform is delivered (its events wait, PENDING).
      if ((await this.platformsWithEndpoint(platformId)).length === 0) return 0;
      await this.unparkReady(platformId);
    }
    const flight = new InFlight();
    try {
      for (;;) {
        if (this.poller.isStopped && !platformId) break;
        if (!platformId && Date.now() - this.lastSweepMs >= UNPARK_SWEEP_MS) {
          this.lastSweepMs = Date.now();
          await this.unparkReady(undefined);
        }
        const { claimed, parked } = await this.claim(platformId, flight);
        for (const c of claimed) flight.add(c.event.platform_id, this.attemptChain(c));
        if (flight.size > 0) {
          // Usually every attempt is answered within milliseconds and this waits for all of them,
          // then claims again. An attempt still running after PATIENCE_MS goes on in flight while
          // the next claim takes the other due events.
          await flight.settledOrAfter(PATIENCE_MS);
          continue;
        }
        if (claimed.length > 0 || parked > 0) continue;
        if (!platformId || Date.now() > deadline) break;
        // Another worker holds due events of this platform (claiming them), or has attempts in
        // flight whose outcome may unpark the next event of a resource: wait for it.
        if (!(await this.busy(platformId))) {
          if ((await this.unparkReady(platformId)) === 0) break;
          continue;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      // Every attempt started here has its outcome recorded before the drain returns (or stops).
      await flight.all();
    }
    return flight.attempts;
  }

  /** The platforms with a webhook endpoint (optionally just one), with what delivery needs. */
  private async platformsWithEndpoint(platformId: string | undefined): Promise<{ id: string; url: string }[]> {
    // Config is compact JSON; the URL is read from it below (settingsOf's rule).
    let q = this.o.db.selectFrom('platforms').select(['id', 'config']).where('config', 'like', '%"webhookEndpoint":"%');
    if (platformId) q = q.where('id', '=', platformId);
    const out: { id: string; url: string }[] = [];
    for (const p of await q.execute()) {
      const url = (JSON.parse(p.config) as { webhookEndpoint?: string }).webhookEndpoint;
      if (url) out.push({ id: p.id, url });
    }
    return out;
  }

  /**
   * Claims up to BATCH_SIZE due events, at most one per resource (the oldest not yet delivered),
   * and parks the due events it finds waiting behind an older one. Starts from the (few) platforms
   * that have an endpoint, so events of platforms without one — which stay PENDING — cost nothing
   * however many pile up; each platform's due events are read in due order straight off an index.
   * Within the drain's limits: MAX_IN_FLIGHT attempts in all, BATCH_SIZE per platform (so one
   * platform's slow receiver never takes every slot).
   */
  private async claim(platformId: string | undefined, flight: InFlight): Promise<{ claimed: Claimed[]; parked: number }> {
    const out: Claimed[] = [];
    let parked = 0;
    const room = Math.min(BATCH_SIZE, MAX_IN_FLIGHT - flight.size);
    if (room <= 0) return { claimed: out, parked };
    const platforms = await this.platformsWithEndpoint(platformId);
    const start = this.platformTurn++ % Math.max(platforms.length, 1);
    for (let k = 0; k < platforms.length && out.length < room; k++) {
      const p = platforms[(start + k) % platforms.length]!;
      const roomHere = Math.min(room - out.length, BATCH_SIZE - flight.of(p.id));
      if (roomHere <= 0) continue;
      // A claim never waits on a row lock; a deadlock with some other writer would still be
      // timing, not an error of the caller (a sandbox clock advance), so it is retried.
      const r = await retryOnConflict(() => this.claimFrom(p, roomHere));
      out.push(...r.claimed);
      parked += r.parked;
    }
    return { claimed: out, parked };
  }

  private async claimFrom(p: { id: string; url: string }, room: number): Promise<{ claimed: Claimed[]; parked: number }> {
    const now = this.o.clock.nowMs();
    return this.o.db.transaction().execute(async (trx) => {
      // Due events in due order, each with whether an older event of its resource is undelivered.
      const due = (status: 'PENDING' | 'DELIVERING') => {
        let q = candidates(trx)
          .where('e.platform_id', '=', p.id)
          .where('e.status', '=', status)
          .where('e.next_attempt_ms', '<=', now)
          .orderBy('e.next_attempt_ms')
          .orderBy('e.id')
          .limit(SCAN_SIZE);
        // Several processes on one PostgreSQL: each claim takes events no one else holds and never
        // waits on a row lock. (Waiting deadlocked: two drains whose snapshots straddle a clock
        // shift or a park see the same rows in different due order and lock them crosswise.) A
        // caller draining one platform waits for the rows others hold in `drain` (see `busy`).
        if (this.o.kind === 'postgres') q = q.forUpdate('e').skipLocked();
        return q.execute();
      };
      // Expired leases first (a crashed worker's attempts), then PENDING events.
      const rows = [...(await due('DELIVERING')), ...(await due('PENDING'))];
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
        const claimed = await takeAttempt(trx, event, p.url, offsetMs, now);
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

  /**
   * Makes due every parked event (optionally of one platform) that no longer waits behind an older
   * undelivered event of its resource; returns how many. Catches the unparks that concurrent
   * transactions missed (see the module comment); only platforms with an endpoint are looked at.
   *
   * Only the oldest parked event of each resource can be such an event, so only those are checked.
   * (Checking every parked event made PostgreSQL hash the resource's undelivered events and compare
   * each parked one against its whole bucket: one account's backlog of 20,000 balance updates cost
   * over a second per sweep, every second, and the `flow` bench's webhooks crawled at ~50/s.)
   */
  private async unparkReady(platformId: string | undefined): Promise<number> {
    const platforms = await this.platformsWithEndpoint(platformId);
    let n = 0;
    for (const p of platforms) {
      const r = await retryOnConflict(() =>
        this.o.db
          .updateTable('outbox_events as e')
          .set({ next_attempt_ms: 0 })
          .where('e.id', 'in', (eb) =>
            eb
              .selectFrom('outbox_events')
              .select((f) => f.fn.min<string>('id').as('id'))
              .where('platform_id', '=', p.id)
              .where('status', '=', 'PENDING')
              .where('next_attempt_ms', '>=', PARKED_MIN)
              .groupBy('resource_id'),
          )
          .where('e.status', '=', 'PENDING')
          .where('e.next_attempt_ms', '>=', PARKED_MIN)
          .where((eb) => eb.not(olderUndelivered(eb)))
          .executeTakeFirst(),
      );
      n += Number(r.numUpdatedRows);
    }
    return n;
  }

  /**
   * Attempts a claimed event, then, while each attempt is delivered, the next due event of the same
   * resource (up to CHAIN_LENGTH of the store in all); returns how many were attempted. A busy resource (one
   * account's balance updates) would otherwise get one event per claim round — its events may only
   * go one after another — and a claim round costs far more than one resource's next event.
   */
  private async attemptChain(first: Claimed): Promise<number> {
    let c: Claimed | undefined = first;
    let n = 0;
    while (c) {
      const result = await this.attempt(c);
      n++;
      const delivered = result.status !== null && result.status >= 200 && result.status < 300;
      if (!delivered || n >= CHAIN_LENGTH[this.o.kind] || this.shutdown.signal.aborted) break;
      c = await retryOnConflict(() => this.claimNextOf(c!));
    }
    return n;
  }

  /**
   * Claims the oldest undelivered event of `c`'s resource if it is due and nothing older of the
   * resource is undelivered (the order rule, checked as in `claimFrom`); undefined otherwise.
   */
  private async claimNextOf(c: Claimed): Promise<Claimed | undefined> {
    const now = this.o.clock.nowMs();
    return this.o.db.transaction().execute(async (trx) => {
      let q = candidates(trx)
        .where('e.platform_id', '=', c.event.platform_id)
        .where('e.resource_id', '=', c.event.resource_id)
        .where('e.status', '=', 'PENDING')
        .orderBy('e.id')
        .limit(1);
      if (this.o.kind === 'postgres') q = q.forUpdate('e').skipLocked();
      const row = await q.executeTakeFirst();
      if (!row) return undefined;
      const { blocked, platform_offset, ...event } = row;
      if (Boolean(Number(blocked)) || Number(event.next_attempt_ms) > now) return undefined;
      return takeAttempt(trx, event, c.url, Number(platform_offset), now);
    });
  }

  /**
   * True while the platform has attempts in flight (here or in another process), or due events
   * that a claim just passed over: on PostgreSQL, rows another worker holds locked right now.
   */
  private async busy(platformId: string): Promise<boolean> {
    const now = this.o.clock.nowMs();
    const row = await this.o.db
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

  /** One delivery attempt of a claimed event, and its outcome recorded. */
  private async attempt(c: Claimed): Promise<AttemptResult> {
    const at = iso(this.o.clock.nowMs() + c.offsetMs);
    let result: AttemptResult;
    try {
      result = await this.post(c, at);
    } catch (err) {
      // Signing or building the request failed (not the receiver): count it as a failed attempt.
      result = { url: c.url, status: null, body: null, error: err instanceof Error ? err.message : String(err), latencyMs: 0 };
    }
    await this.record(c, at, result);
    return result;
  }

  private async post(c: Claimed, at: string): Promise<AttemptResult> {
    const e = c.event;
    // Compact JSON; `payload` already is (it was written by JSON.stringify).
    const body = Buffer.from(`{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"timestamp":${JSON.stringify(at)},"data":${e.payload}}`);
    const signature = signatureHeader(body, await webhookSigningKey(this.o.db, e.platform_id));
    const started = performance.now();
    const latency = () => Math.round(performance.now() - started);
    try {
      const res = await fetch(c.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': signature, 'x-grid-signature': signature, 'user-agent': 'Corridor-Webhooks/1' },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), this.shutdown.signal]),
      });
      const text = await readLimited(res);
      const redirect = res.status >= 300 && res.status < 400 ? `redirect to ${res.headers.get('location') ?? '(no location)'} not followed` : null;
      return { url: c.url, status: res.status, body: text, error: redirect, latencyMs: latency() };
    } catch (err) {
      return { url: c.url, status: null, body: null, error: describeFetchError(err), latencyMs: latency() };
    }
  }

  /**
   * Records an attempt's outcome. A reply hook for the event's type runs in the same transaction;
   * if that transaction fails because of the hook, the attempt is recorded again without it (so
   * the log and the event's status never depend on the hook) and the error is reported.
   */
  private async record(c: Claimed, at: string, r: AttemptResult): Promise<void> {
    const hook = this.replyHooks.get(c.event.type);
    try {
      await retryOnConflict(() => this.writeOutcome(c, at, r, hook));
    } catch (err) {
      if (!hook) throw err;
      this.o.onError?.(err);
      const note = `reply not applied: ${err instanceof Error ? err.message : String(err)}`;
      await retryOnConflict(() => this.writeOutcome(c, at, { ...r, error: r.error ? `${r.error}; ${note}` : note }, undefined));
    }
  }

  private async writeOutcome(c: Claimed, at: string, r: AttemptResult, hook: ReplyHook | undefined): Promise<void> {
    const e = c.event;
    await this.o.db.transaction().execute(async (trx) => {
      let verdict: ReplyVerdict;
      if (hook) {
        const platform = await trx.selectFrom('platforms').selectAll().where('id', '=', e.platform_id).executeTakeFirst();
        if (platform) verdict = await hook(trx, { event: e, platform, status: r.status, body: r.body, error: r.error });
      }
      const ok = verdict ? verdict.delivered : r.status !== null && r.status >= 200 && r.status < 300;
      let status = 'DELIVERED';
      let next = 0;
      if (!ok) {
        const delay = retryDelayMs(e.attempts - e.schedule_base);
        const nowPlatform = Date.parse(at);
        const withinWindow = nowPlatform + delay <= Date.parse(e.first_attempt_at ?? at) + RETRY_WINDOW_MS;
        if (r.status === 409 || NO_RETRY_TYPES.has(e.type) || !withinWindow) status = 'FAILED';
        else {
          status = 'PENDING';
          next = this.o.clock.nowMs() + delay;
        }
      }
      await trx
        .insertInto('webhook_attempts')
        .values({
          id: this.o.ids.next('WebhookAttempt'),
          platform_id: e.platform_id,
          event_id: e.id,
          attempt: e.attempts,
          at,
          url: r.url,
          response_status: r.status,
          latency_ms: r.latencyMs,
          response_body: r.body,
          error: r.error,
        })
        .execute();
      const moved = await trx
        .updateTable('outbox_events')
        .set({ status, next_attempt_ms: next })
        .where('id', '=', e.id)
        .where('status', '=', 'DELIVERING')
        .where('attempts', '=', e.attempts)
        .executeTakeFirst();
      // Done with (delivered or given up): the next event of its resource may go (fast path; the
      // sweep catches what this misses). That is its oldest PENDING event — if parked, it is made
      // due; the ones behind it stay parked until it is done in turn. (One seek on
      // outbox_events_resource_status: a range on next_attempt_ms would walk all parked events.)
      if (status !== 'PENDING' && Number(moved.numUpdatedRows) === 1) {
        const head = await trx
          .selectFrom('outbox_events')
          .select(['id', 'next_attempt_ms'])
          .where('platform_id', '=', e.platform_id)
          .where('resource_id', '=', e.resource_id)
          .where('status', '=', 'PENDING')
          .orderBy('id')
          .limit(1)
          .executeTakeFirst();
        if (head && isParked(head)) {
          await trx.updateTable('outbox_events').set({ next_attempt_ms: 0 }).where('id', '=', head.id).where('status', '=', 'PENDING').execute();
        }
      }
    });
  }

  /**
   * Sends one event again now, under the same envelope id (receivers de-duplicate on it), and
   * records the attempt; a failure retries on a fresh schedule. Throws 404 for an id that is not
   * the platform's, 400 WEBHOOK_ENDPOINT_NOT_SET, and 409 while an attempt is in flight.
   */
  async replay(platform: PlatformRow, eventId: string): Promise<AttemptResult> {
    const url = settingsOf(platform).webhookEndpoint;
    const now = this.o.clock.nowMs();
    const offsetMs = Number(platform.clock_offset_ms);
    const at = iso(now + offsetMs);
    const event = await this.o.db.transaction().execute(async (trx) => {
      let q = trx.selectFrom('outbox_events').selectAll().where('platform_id', '=', platform.id).where('id', '=', eventId);
      if (this.o.kind === 'postgres') q = q.forUpdate();
      const e = await q.executeTakeFirst();
      if (!e) throw errors.notFound('Webhook delivery', eventId);
      if (!url) throw errors.webhookEndpointNotSet();
      const inFlight = () => errors.conflict(`An attempt to deliver ${eventId} is in flight; replay it once that attempt is recorded`);
      if (e.status === 'DELIVERING' && Number(e.next_attempt_ms) > now) throw inFlight();
      const claimed: OutboxEventRow = {
        ...e,
        status: 'DELIVERING',
        attempts: e.attempts + 1,
        schedule_base: e.attempts,
        first_attempt_at: at,
        next_attempt_ms: now + LEASE_MS,
      };
      // Compare-and-set, as in `claim`: a worker that took the event meanwhile wins.
      const r = await trx
        .updateTable('outbox_events')
        .set({ status: claimed.status, attempts: claimed.attempts, schedule_base: claimed.schedule_base, first_attempt_at: at, next_attempt_ms: claimed.next_attempt_ms })
        .where('id', '=', e.id)
        .where('status', '=', e.status)
        .where('attempts', '=', e.attempts)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) !== 1) throw inFlight();
      return claimed;
    });
    return this.attempt({ event, url: url!, offsetMs });
  }

  /**
   * Requeues the platform's FAILED events created at or after `since` (platform-clock ISO time),
   * each on a fresh retry schedule; the background loop delivers them in the usual (per-resource)
   * order. Returns their ids, oldest first. 400 WEBHOOK_ENDPOINT_NOT_SET without an endpoint.
   */
  async recover(platform: PlatformRow, since: string): Promise<string[]> {
    if (!settingsOf(platform).webhookEndpoint) throw errors.webhookEndpointNotSet();
    const rows = await this.o.db
      .updateTable('outbox_events')
      .set((eb) => ({ status: 'PENDING', next_attempt_ms: 0, first_attempt_at: null, schedule_base: eb.ref('attempts') }))
      .where('platform_id', '=', platform.id)
      .where('status', '=', 'FAILED')
      .where('created_at', '>=', since)
      .returning('id')
      .execute();
    return rows.map((r) => r.id).sort();
  }

  /**
   * POST /sandbox/webhooks/test: one TEST event to the platform's endpoint, now, recorded in the
   * outbox and the attempt log like any other (and never retried).
   */
  async sendTest(platform: PlatformRow, eventId: string): Promise<AttemptResult> {
    const url = settingsOf(platform).webhookEndpoint;
    if (!url) throw errors.webhookEndpointNotSet();
    const now = this.o.clock.nowMs();
    const offsetMs = Number(platform.clock_offset_ms);
    const at = iso(platformNowMs(this.o.clock, platform));
    const event: OutboxEventRow = {
      id: eventId,
      platform_id: platform.id,
      type: 'TEST',
      resource_id: platform.id,
      payload: '{}',
      created_at: at,
      status: 'DELIVERING',
      attempts: 1,
      next_attempt_ms: now + LEASE_MS,
      first_attempt_at: at,
      schedule_base: 0,
    };
    await this.o.db.insertInto('outbox_events').values(event).execute();
    return this.attempt({ event, url, offsetMs });
  }
}

/** The first MAX_RESPONSE_BYTES of a response body, as text; the rest is not read. */
async function readLimited(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < MAX_RESPONSE_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8');
}

function describeFetchError(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === 'TimeoutError') return `no response within ${REQUEST_TIMEOUT_MS / 1000} s`;
    if (err.name === 'AbortError') return 'aborted: server shutting down';
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ? `${cause.code}${cause.message ? `: ${cause.message}` : ''}` : err.message;
  }
  return String(err);
}

/**
 * The attempt chains one drain has running, counted per platform. The first failure (recording an
 * outcome failed) is thrown from the next wait, once the chains still running have finished, as a
 * drain that awaited its whole batch would have thrown it.
 */
class InFlight {
  private readonly running = new Set<Promise<void>>();
  private readonly perPlatform = new Map<string, number>();
  private failure: { err: unknown } | undefined;
  /** Attempts made by the chains that have finished. */
  attempts = 0;

  get size(): number {
    return this.running.size;
  }

  of(platformId: string): number {
    return this.perPlatform.get(platformId) ?? 0;
  }

  add(platformId: string, chain: Promise<number>): void {
    this.perPlatform.set(platformId, this.of(platformId) + 1);
    const p: Promise<void> = chain.then(
      (n) => {
        this.attempts += n;
      },
      (err: unknown) => {
        this.failure ??= { err };
      },
    );
    const done = p.finally(() => {
      this.running.delete(done);
      const left = this.of(platformId) - 1;
      if (left > 0) this.perPlatform.set(platformId, left);
      else this.perPlatform.delete(platformId);
    });
    this.running.add(done);
  }

  /** Waits until every chain has finished, or `ms` have passed, whichever is first. */
  async settledOrAfter(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([Promise.all(this.running), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    } finally {
      clearTimeout(timer);
    }
    await this.throwIfFailed();
  }

  /** Waits for every chain; then throws the first failure, if any. */
  async all(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
    await this.throwIfFailed();
  }

  private async throwIfFailed(): Promise<void> {
    if (!this.failure) return;
    const { err } = this.failure;
    this.failure = undefined;
    while (this.running.size > 0) await Promise.all(this.running);
    throw err;
  }
}

/**
 * Takes the next attempt of `event` (read in `trx`, locked on PostgreSQL): DELIVERING with a lease,
 * attempts + 1. The compare-and-set on (status, attempts) backs the row lock, so two workers never
 * both claim one attempt; undefined when another worker took it first.
 */
async function takeAttempt(trx: Kysely<Database>, event: OutboxEventRow, url: string, offsetMs: number, now: number): Promise<Claimed | undefined> {
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
  return { event: { ...event, attempts, first_attempt_at: firstAt }, url, offsetMs };
}

/**
 * Events to claim, each with its platform's clock offset as of this transaction (a clock advance may
 * have just committed: attempts are logged on the platform clock) and whether it waits behind an
 * older undelivered event of its resource.
 */
function candidates(trx: Kysely<Database>) {
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
function olderUndelivered(eb: ExpressionBuilder<WithE, 'e'>) {
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
