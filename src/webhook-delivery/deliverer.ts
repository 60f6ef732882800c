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
 *   redirect, network error, refused target, 10 s timeout) retries after 30 s × 2^(n−1) (n: attempts
 *   since the schedule began), at most 30 min apart, while the next attempt falls within 7 days
 *   (platform clock) of the schedule's first; then FAILED.
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
 * - Fair shares (in-flight.ts): the process's delivery capacity is shared by all its drains: at
 *   most 20 attempts (chains) of one platform and 80 in all in flight, and a platform with none in
 *   flight always gets one (up to 256 in all). A drain claims again once the attempts it just
 *   started are answered or after a quarter second, whichever comes first; attempts still running
 *   stay in flight. So receivers that hang until the 10 s timeout hold their own platform's slots,
 *   and every other platform's next event is claimed at the next claim round.
 * - Targets (target-guard.ts): a PRODUCTION platform's webhooks go only to globally routable
 *   addresses, checked on the address each connection is made to (unless the operator sets
 *   `allowPrivate`, CORRIDOR_WEBHOOK_ALLOW_PRIVATE); a refused target is a failed attempt
 *   (`refused: 10.0.0.5 is a private address`), retried like any other. Its attempts are logged
 *   without the receiver's body (reply hooks still get it in memory), and a redirect's location is
 *   not logged. SANDBOX platforms may use any address, and their logs keep the first 4 KiB.
 * - Reset: every transaction here holds the platform's write lock shared (store/platform-lock.ts),
 *   as its first statement. Claims (claimFrom, claimNextOf, the unpark sweep) only try it and skip
 *   the platform while a reset holds or awaits it (they take row locks, and must not wait with them
 *   held); recording, replay, recover and the sandbox TEST event wait for it. An attempt whose event
 *   a reset deleted while it was in flight leaves no `webhook_attempts` row.
 * - Fault injection (sandbox platforms, `dropDelivery`): a dropped attempt sends nothing and is
 *   logged as failed ("dropped by fault injection"), then retried like any failed attempt.
 */
import type { Kysely } from 'kysely';
import type { Clock, Ids } from '../deps.ts';
import { errors } from '../http/errors.ts';
import { Poller } from '../lib/poller.ts';
import { toLiveNames } from '../lib/wire-names.ts';
import { iso, platformNowMs } from '../lib/time.ts';
import { settingsOf } from '../modules/platforms/platform-settings.ts';
import type { StoreKind } from '../store/db.ts';
import { lockRows } from '../store/row-lock.ts';
import { retryOnConflict } from '../store/retry.ts';
import type { SecretBox } from '../store/secret-box.ts';
import type { Database, OutboxEventRow, PlatformRow } from '../store/schema.ts';
import { busy, claimFrom, claimNextOf, LEASE_MS, unparkPlatform, type Claimed, type Target } from './claim-queries.ts';

import { REQUEST_TIMEOUT_MS, WebhookSender } from './http-sender.ts';
import { InFlight, Slots, type SlotLimits } from './in-flight.ts';
import { signatureHeader, webhookSigningKey } from './keys.ts';
import { writeOutcome, type AttemptResult, type ReplyHook } from './outcome.ts';
import { endpointRefusal, systemResolveAll, type ResolveAll } from './target-guard.ts';
import { guard } from '../store/guard.ts';

export { LEASE_MS };

/** An attempt claimed in a unit of work, to be sent (and recorded) by `deliver` once it commits. */
export type ClaimedAttempt = Claimed;
export { retryDelayMs, type AttemptResult, type ReplyHook, type ReplyVerdict, type WebhookReply } from './outcome.ts';

/**
 * How long a drain waits for the attempts it just started before it claims again regardless: a
 * slow receiver (up to the 10 s timeout) holds its own attempts, not the other platforms' next ones.
 */
const PATIENCE_MS = 250;
/**
 * Events of one resource attempted one after another from one claim (see `attemptChain`). Only on
 * PostgreSQL, where a claim round costs several round trips: there chains of 10 cut the `flow`
 * bench's drain from over 120 s to 30 s. On SQLite a claim is cheap, and the batch waiting for its
 * longest chain made delivery slower (drain 63 s against 34 s), so there a chain is one event.
 */
const CHAIN_LENGTH = { postgres: 10, sqlite: 1 } as const;
/** How often the background loop sweeps parked events whose turn has come (see the module comment). */
const UNPARK_SWEEP_MS = 1_000;
/** The error of an attempt that sandbox fault injection dropped (no request was sent). */
export const DROPPED = 'dropped by fault injection';
/** How long `drain(platformId)` waits for attempts other workers have in flight. */
const DRAIN_WAIT_MS = REQUEST_TIMEOUT_MS + 5_000;

export interface DelivererOptions {
  db: Kysely<Database>;
  kind: StoreKind;
  clock: Clock;
  ids: Ids;
  /** Opens the platforms' sealed signing keys. */
  secrets: SecretBox;
  /** CORRIDOR_WEBHOOK_ALLOW_PRIVATE: PRODUCTION platforms may reach loopback, private and link-local targets too. */
  allowPrivate?: boolean;
  /** CORRIDOR_WIRE_NAMES=live: event data names account types as the live API does (lib/wire-names.ts). */
  liveNames?: boolean;
  /** DNS for delivery and for the PATCH /config check (default: the system resolver, as dns.lookup). */
  resolveAll?: ResolveAll;
  /** Delivery capacity and fair shares (default: DEFAULT_SLOTS in in-flight.ts). */
  slots?: SlotLimits;
  pollIntervalMs?: number;
  onError?: (err: unknown) => void;
  /**
   * Sandbox fault injection (modules/sandbox/faults.inject.ts): whether to drop this attempt of an
   * event of `eventType` of the platform, at platform time `platformNowMs`. A dropped attempt sends
   * nothing and is recorded as failed, so it is retried on the usual schedule.
   */
  dropDelivery?: (platformId: string, eventType: string, platformNowMs: number) => Promise<boolean>;
}

export class WebhookDeliverer {
  private readonly poller: Poller;
  /** Set when the app stops: chains end after their current attempt (the sender aborts those). */
  private readonly shutdown = new AbortController();
  /** Reply hooks by event type; modules register theirs (see `onReply`). */
  private readonly replyHooks = new Map<string, ReplyHook>();
  /** When the background loop last swept parked events (system clock). */
  private lastSweepMs = 0;
  /** Where the next claim starts in the list of platforms, so none waits behind another's backlog. */
  private platformTurn = 0;
  /** The process's delivery capacity, shared by every drain (fair shares per platform). */
  private readonly slots: Slots;
  private readonly resolveAll: ResolveAll;
  private readonly sender: WebhookSender;

  constructor(private readonly o: DelivererOptions) {
    this.poller = new Poller(
      () => this.drain(),
      o.pollIntervalMs ?? 100,
      (err) => o.onError?.(err),
    );
    this.slots = new Slots(o.slots);
    this.resolveAll = o.resolveAll ?? systemResolveAll;
    this.sender = new WebhookSender(o.resolveAll);
  }

  start(): void {
    this.poller.start();
  }

  async stop(): Promise<void> {
    this.shutdown.abort();
    // Attempts in flight end at once (recorded as failed: aborted), so the running drain finishes.
    this.sender.close();
    await this.poller.stop();
  }

  /** Registers the hook that acts on receivers' answers to events of `type` (one per type). */
  onReply(type: string, hook: ReplyHook): void {
    this.replyHooks.set(type, hook);
  }

  /**
   * Why `url` may not be the platform's webhookEndpoint (`PATCH /config`): for a PRODUCTION platform
   * (unless allowPrivate), a loopback, private, link-local or non-routable target — by its host, or
   * by what its name resolves to now (see target-guard.ts); undefined when it may.
   */
  async endpointRefusal(platform: Pick<PlatformRow, 'id' | 'environment'>, url: string): Promise<string | undefined> {
    if (!this.targetOf(platform, url).guarded) return undefined;
    return endpointRefusal(url, this.resolveAll);
  }

  private targetOf(platform: Pick<PlatformRow, 'id' | 'environment'>, url: string): Target {
    const production = platform.environment !== 'SANDBOX';
    return { platformId: platform.id, url, guarded: production && this.o.allowPrivate !== true, keepBody: !production };
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
    const flight = new InFlight(this.slots);
    try {
      for (;;) {
        if (this.poller.isStopped && !platformId) break;
        if (!platformId && Date.now() - this.lastSweepMs >= UNPARK_SWEEP_MS) {
          this.lastSweepMs = Date.now();
          await this.unparkReady(undefined);
        }
        const { started, parked } = await this.claim(platformId, flight);
        if (flight.size > 0) {
          // Usually every attempt is answered within milliseconds and this waits for the ones just
          // started, then claims again. Attempts still running after PATIENCE_MS go on in flight
          // while the next claim takes other due events; when this round started none, the next
          // one comes when an attempt ends or after a poll interval (new events of other platforms).
          if (started.length > 0) await flight.settledOrAfter(started, PATIENCE_MS);
          else await flight.settledOrAfter('any', Math.min(PATIENCE_MS, this.o.pollIntervalMs ?? 100));
          continue;
        }
        if (started.length > 0 || parked > 0) continue;
        if (!platformId || Date.now() > deadline) break;
        // Another worker holds due events of this platform (claiming them), or has attempts in
        // flight whose outcome may unpark the next event of a resource: wait for it.
        if (!(await busy(this.o.db, platformId, this.o.clock.nowMs()))) {
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
  private async platformsWithEndpoint(platformId: string | undefined): Promise<Target[]> {
    // Config is compact JSON; the URL is read from it below (settingsOf's rule).
    let q = this.o.db.selectFrom('platforms').select(['id', 'environment', 'config']).where('config', 'like', '%"webhookEndpoint":"%');
    if (platformId) q = q.where('id', '=', platformId);
    const out: Target[] = [];
    for (const p of await q.execute()) {
      const url = (JSON.parse(p.config) as { webhookEndpoint?: string }).webhookEndpoint;
      if (url) out.push(this.targetOf(p, url));
    }
    return out;
  }

  /**
   * Claims due events, at most one per resource (the oldest not yet delivered), each platform up to
   * the room its fair share leaves (see in-flight.ts), starts their attempt chains, and parks the
   * due events it finds waiting behind an older one. Starts from the (few) platforms that have an
   * endpoint, so events of platforms without one — which stay PENDING — cost nothing however many
   * pile up; each platform's due events are read in due order straight off an index. Returns the
   * chains started (each settles when its attempts are recorded).
   */
  private async claim(platformId: string | undefined, flight: InFlight): Promise<{ started: Promise<void>[]; parked: number }> {
    const started: Promise<void>[] = [];
    let parked = 0;
    const targets = await this.platformsWithEndpoint(platformId);
    const start = this.platformTurn++ % Math.max(targets.length, 1);
    for (let k = 0; k < targets.length; k++) {
      const t = targets[(start + k) % targets.length]!;
      const room = this.slots.room(t.platformId);
      if (room <= 0) continue;
      // The room is held while claiming (other drains of this process claim meanwhile), then
      // handed to the chains started: no await between the release and their adds.
      this.slots.take(t.platformId, room);
      let r: Awaited<ReturnType<typeof claimFrom>>;
      try {
        // A claim never waits on a row lock; a deadlock with some other writer would still be
        // timing, not an error of the caller (a sandbox clock advance), so it is retried.
        r = await retryOnConflict(() => claimFrom(this.o.db, this.o.kind, t, room, this.o.clock.nowMs()));
      } finally {
        this.slots.release(t.platformId, room);
      }
      for (const c of r.claimed) started.push(flight.add(t.platformId, () => this.attemptChain(c)));
      parked += r.parked;
    }
    return { started, parked };
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
      // Its own transaction per platform, skipped while a reset holds or awaits the platform's lock.
      n += await retryOnConflict(() => unparkPlatform(this.o.db, p.platformId));
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
      c = await retryOnConflict(() => claimNextOf(this.o.db, this.o.kind, c!, this.o.clock.nowMs()));
    }
    return n;
  }

  /**
   * One delivery attempt of a claimed event, and its outcome recorded. The result keeps the
   * receiver's body only where the platform may see it (SANDBOX).
   */
  private async attempt(c: Claimed): Promise<AttemptResult> {
    const at = iso(this.o.clock.nowMs() + c.offsetMs);
    let result: AttemptResult;
    try {
      result = (await this.o.dropDelivery?.(c.event.platform_id, c.event.type, Date.parse(at)))
        ? { url: c.target.url, status: null, body: null, error: DROPPED, latencyMs: 0 }
        : await this.post(c, at);
    } catch (err) {
      // Signing or building the request failed (not the receiver): count it as a failed attempt.
      result = { url: c.target.url, status: null, body: null, error: err instanceof Error ? err.message : String(err), latencyMs: 0 };
    }
    await this.record(c, at, result);
    return c.target.keepBody ? result : { ...result, body: null };
  }

  private async post(c: Claimed, at: string): Promise<AttemptResult> {
    const e = c.event;
    const url = c.target.url;
    // Compact JSON; `payload` already is (it was written by JSON.stringify). Stored with the spec's
    // names, renamed as it leaves when the process runs with the live ones.
    const data = this.o.liveNames ? JSON.stringify(toLiveNames(JSON.parse(e.payload))) : e.payload;
    const body = Buffer.from(
      `{"id":${JSON.stringify(e.id)},"type":${JSON.stringify(e.type)},"timestamp":${JSON.stringify(at)},"data":${data}}`,
    );
    const signature = signatureHeader(body, await webhookSigningKey(this.o.db, e.platform_id, this.o.secrets));
    const started = performance.now();
    const out = await this.sender.post(
      url,
      body,
      {
        'content-type': 'application/json',
        'x-service-signature': signature,
        'x-grid-signature': signature,
        'user-agent': 'Corridor-Webhooks/1',
      },
      { guarded: c.target.guarded },
    );
    const latencyMs = Math.round(performance.now() - started);
    if (out.error !== undefined) return { url, status: null, body: null, error: out.error, latencyMs };
    let redirect: string | null = null;
    if (out.status >= 300 && out.status < 400) {
      // The location is part of the answer: shown to SANDBOX platforms only, like the body.
      redirect = c.target.keepBody ? `redirect to ${out.location ?? '(no location)'} not followed` : 'redirect not followed';
    }
    return { url, status: out.status, body: out.body, error: redirect, latencyMs };
  }

  /**
   * Records an attempt's outcome. A reply hook for the event's type runs in the same transaction;
   * if that transaction fails because of the hook, the attempt is recorded again without it (so
   * the log and the event's status never depend on the hook) and the error is reported.
   */
  private async record(c: Claimed, at: string, r: AttemptResult): Promise<void> {
    const hook = this.replyHooks.get(c.event.type);
    try {
      await retryOnConflict(() => writeOutcome(this.o.db, this.o.clock, this.o.ids, c, at, r, hook));
    } catch (err) {
      if (!hook) throw err;
      this.o.onError?.(err);
      const note = `reply not applied: ${err instanceof Error ? err.message : String(err)}`;
      await retryOnConflict(() =>
        writeOutcome(this.o.db, this.o.clock, this.o.ids, c, at, { ...r, error: r.error ? `${r.error}; ${note}` : note }, undefined),
      );
    }
  }

  /**
   * Replay, step 1, in the caller's unit of work (its transaction holds the platform write lock):
   * claims one event of the platform for an attempt now, under the same envelope id (receivers
   * de-duplicate on it), on a fresh retry schedule. Throws 404 for an id that is not the platform's,
   * 400 WEBHOOK_ENDPOINT_NOT_SET, and 409 while an attempt is in flight. Step 2 is `deliver`, outside
   * the transaction: it sends the event and records the attempt.
   */
  async claimReplay(trx: Kysely<Database>, platform: PlatformRow, eventId: string): Promise<ClaimedAttempt> {
    const url = settingsOf(platform).webhookEndpoint;
    const now = this.o.clock.nowMs();
    const offsetMs = Number(platform.clock_offset_ms);
    const at = iso(now + offsetMs);
    const q = trx.selectFrom('outbox_events').selectAll().where('id', '=', eventId).where(guard('platform_id', platform.id));
    const e = await lockRows(trx, q, { forUpdate: true }).executeTakeFirst();
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
      .set({
        status: claimed.status,
        attempts: claimed.attempts,
        schedule_base: claimed.schedule_base,
        first_attempt_at: at,
        next_attempt_ms: claimed.next_attempt_ms,
      })
      .where('id', '=', e.id)
      .where('status', '=', e.status)
      .where('attempts', '=', e.attempts)
      .executeTakeFirst();
    if (Number(r.numUpdatedRows) !== 1) throw inFlight();
    return { event: claimed, target: this.targetOf(platform, url), offsetMs };
  }

  /**
   * POST /sandbox/webhooks/test, step 1, in the caller's unit of work: one TEST event to the
   * platform's endpoint, written as claimed for an attempt now (recorded in the outbox and the attempt
   * log like any other, and never retried). Step 2 is `deliver`.
   */
  async claimTest(trx: Kysely<Database>, platform: PlatformRow, eventId: string): Promise<ClaimedAttempt> {
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
    await trx.insertInto('outbox_events').values(event).execute();
    return { event, target: this.targetOf(platform, url), offsetMs };
  }

  /** Step 2 of a replay or a test: sends the claimed attempt and records its outcome (its own transaction). */
  deliver(c: ClaimedAttempt): Promise<AttemptResult> {
    return this.attempt(c);
  }

  /**
   * Requeues the platform's FAILED events created at or after `since` (platform-clock ISO time),
   * each on a fresh retry schedule, in the caller's unit of work; the background loop delivers them
   * in the usual (per-resource) order. Returns their ids, oldest first. 400 WEBHOOK_ENDPOINT_NOT_SET
   * without an endpoint.
   */
  async recover(trx: Kysely<Database>, platform: PlatformRow, since: string): Promise<string[]> {
    if (!settingsOf(platform).webhookEndpoint) throw errors.webhookEndpointNotSet();
    const rows = await trx
      .updateTable('outbox_events')
      .set((eb) => ({ status: 'PENDING', next_attempt_ms: 0, first_attempt_at: null, schedule_base: eb.ref('attempts') }))
      .where('platform_id', '=', platform.id)
      .where('status', '=', 'FAILED')
      .where('created_at', '>=', since)
      .returning('id')
      .execute();
    return rows.map((r) => r.id).sort();
  }
}
