/**
 * The workload driver (TigerBeetle's workload/auditor split): a seeded generator picks operations
 * (ops.ts) and sends them over HTTP; after every step the auditor compares what the server shows —
 * each response, every balance, the touched transactions, quotes and agent actions, the ledger
 * check — with its own model (model.ts). A failure names the seed, the step and the history;
 * the same seed replays the same operations and amounts.
 *
 * Time: on an in-process target the system clock is frozen, so the platform's time moves only
 * with the clock advances the workload issues, and delayed outcomes fire exactly when the model
 * says. On a child process (the crash run) real time flows too: an outcome due close to "now" may
 * or may not have happened yet, so the auditor looks at that resource and applies the outcome
 * once it shows, and insists only on outcomes that are clearly past due.
 *
 * Process loss (a cluster target: several processes on one PostgreSQL): a crash step SIGKILLs one
 * process while the others keep serving; the run goes on for a few seeded steps on the survivors,
 * which must take over what the dead one left (its requests, its jobs' row locks, its webhook
 * attempts' leases), and only then restarts it. See `crashStep`.
 */
import { describeBlocks, type LoopWatchdog } from '../../helpers/loop-watchdog.ts';
import { deferChecks, flushChecks } from '../../helpers/conformance.ts';
import { LEASE_MS } from '../../../src/webhook-delivery/deliverer.ts';
import type { Store } from '../../../src/store/db.ts';
import { Api, type Res, type Wire } from './http.ts';
import { AuditError, isCardTimer, Model, SCA_MAX_WRONG, type MInvitation, type MTx, type MQuote, type Timer } from './model.ts';
import { Ops } from './ops.ts';
import { WebhookReceiver } from './receiver.ts';
import { Rng } from './rng.ts';
import { WORKLOAD_ADMIN_TOKEN, type Conn, type ProcessRef, type Target } from './target.ts';
import { platformConfig } from './fixtures.ts';

export { AuditError };

/** A request whose effect must happen once: sent with an Idempotency-Key, checked by `apply`. */
export interface Planned {
  label: string;
  client: Api;
  path: string;
  body: unknown;
  headers?: Record<string, string>;
  /** Undefined for routes without Idempotency-Key. */
  key: string | undefined;
  /** Checks the response against the model's expectation and applies it (throws AuditError). */
  apply: (res: Res) => void | Promise<void>;
  /** Internal accounts whose balance it may take: a crash burst runs only disjoint ones. */
  debits: string[];
  /** What it exercises, for coverage (the status code is added). */
  feature?: string;
}

interface Sent {
  planned: Planned;
  status: number;
  body: unknown;
}

export interface WorkloadOptions {
  seed: number;
  steps: number;
  target: Target;
  /** SIGKILL the server (a child) or one of its processes (a cluster) at this many seeded points. */
  crashes?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
  /**
   * In-process targets: the event-loop watchdog. A step whose requests blocked the loop for more
   * than 200 ms fails the run like a wrong answer (the auditor's own work is not counted).
   */
  watchdog?: LoopWatchdog;
}

export interface WorkloadResult {
  seed: number;
  steps: number;
  ops: Record<string, number>;
  transactions: number;
  webhookEvents: number;
  crash: { kills: number; cutOff: number; replayHits: number; reExecuted: number; pendingTimersAtKills: number; advancesCutOff: number };
  /** Cluster targets only: what the kills of one process left to the others. */
  processLoss: ProcessLoss | undefined;
  features: string[];
  /** Same seed, same operations: the history with server-made ids masked. */
  fingerprint: string;
  durationMs: number;
}

/** A webhook delivery the receiver holds, with the live process that sent it (when found). */
type HeldDelivery = { id: string; type: string; from: ProcessRef | undefined };

export class WorkloadFailure extends Error {
  override name = 'WorkloadFailure';
  constructor(
    readonly seed: number,
    /** The step that failed (steps + 1: the final checks after the last step). */
    readonly step: number,
    replaySteps: number,
    crashes: number,
    readonly reason: unknown,
    readonly history: string[],
    diagnostics: string,
    processes = 1,
  ) {
    const why = reason instanceof Error ? reason.message : String(reason);
    const cluster = processes > 1 ? ` --processes ${processes} --store postgres --database-url …` : '';
    super(
      `workload seed ${seed} failed at step ${step}: ${why}\n` +
        `replay: npm run test:workload -- --seed ${seed} --steps ${replaySteps}${cluster}${crashes > 0 ? ` --crashes ${crashes} (the kill timing is not replayed exactly)` : ''}\n` +
        `last steps:\n${history.slice(-60).join('\n')}${diagnostics ? `\n${diagnostics}` : ''}`,
    );
  }
}

/** What losing processes of a cluster left behind, and what the survivors did with it. */
export interface ProcessLoss {
  processes: number;
  /** Slot killed at each kill. */
  victims: number[];
  /** Steps run while a process was down (on the survivors alone). */
  survivorSteps: number;
  restarts: number;
  /** Requests the kills cut off at the killed process (each resent to a survivor). */
  cutOffAtVictim: number;
  /** Requests answered by the survivors while the burst's process died. */
  answeredBySurvivors: number;
  /** Webhook deliveries the killed process had in flight at the receiver (their leases orphaned). */
  orphanedAttempts: number;
  /** Of those, events a surviving process sent again (after the lease ran out) before the restart. */
  takenOver: number;
  /** The longest wait from a kill to the survivors' takeover of its last orphaned attempt (ms). */
  maxTakeoverMs: number;
  /** Requests the balancer sent to each slot. */
  served: number[];
}

/** A cluster's process killed and not yet restarted. */
interface Down {
  victim: ProcessRef;
  step: number;
  /** The step before which it is restarted (after the survivors ran the ones in between). */
  restartAt: number;
  killedAt: number;
  /** Events whose delivery it had in flight, with how often the receiver had seen each then. */
  orphans: { id: string; type: string; seen: number }[];
}

/** Statuses after which a transaction changes no more (a COMPLETED one may still be returned). */
const FINAL_TX = new Set(['FAILED', 'EXPIRED', 'REJECTED']);

export class Workload {
  readonly rng: Rng;
  readonly model = new Model();
  readonly receiver = new WebhookReceiver();
  readonly admin: Api;
  /** The platform's client (all permissions). */
  api!: Api;
  anon: Api;
  platformId = '';
  step = 0;
  readonly history: string[] = [];
  readonly opCounts: Record<string, number> = {};
  /** The platform clock's offset from the system clock (ms), as the server last reported it. */
  offsetMs = 0;
  /** In-process: the platform's now (the system clock is frozen). */
  private frozenNowMs = 0;
  /** Resources to check after this step. */
  readonly touched = { txs: new Set<string>(), quotes: new Set<string>(), actions: new Set<string>() };
  /** Successful keyed requests, for replays. */
  readonly sent: Sent[] = [];
  private keySeq = 0;
  /** Moving average of a money request's round trip (ms). */
  private latencyMs = 10;
  /** What the run exercised (status codes per operation, scenarios, timers), for coverage checks. */
  readonly features = new Set<string>();
  readonly ops: Ops;
  readonly crash = { kills: 0, cutOff: 0, replayHits: 0, reExecuted: 0, pendingTimersAtKills: 0, advancesCutOff: 0 };
  /** Cluster targets: see ProcessLoss. */
  readonly loss: ProcessLoss;
  /** Cluster targets: the choices a kill adds (which process, how many steps before its restart). */
  private readonly lossRng: Rng;
  private down: Down | undefined;
  /** Cluster: the killed process's comeback under way (see `comeBack`), and its failure. */
  private comeback: Promise<void> | undefined;
  private comebackFailed: { err: unknown } | undefined;
  /** Cluster: a process came back since the last full check. */
  private restarted = false;
  /** The run is over (a comeback still waiting gives up). */
  private finished = false;
  private store: Store | undefined;

  constructor(readonly o: WorkloadOptions) {
    this.rng = new Rng(o.seed);
    // Separate from `rng`: a cluster run sends the same operations as a child run of the same seed.
    this.lossRng = new Rng(o.seed ^ 0x27d4eb2f);
    this.loss = {
      processes: o.target.processes,
      victims: [],
      survivorSteps: 0,
      restarts: 0,
      cutOffAtVictim: 0,
      answeredBySurvivors: 0,
      orphanedAttempts: 0,
      takenOver: 0,
      maxTakeoverMs: 0,
      served: [],
    };
    const base = () => o.target.baseUrl();
    this.admin = new Api(() => o.target.origin(), { bearer: WORKLOAD_ADMIN_TOKEN });
    this.anon = new Api(base);
    this.ops = new Ops(this);
  }

  get target(): Target {
    return this.o.target;
  }

  get deterministic(): boolean {
    return this.o.target.frozenClock;
  }

  /** The platform's current time (ms). */
  now(): number {
    return this.deterministic ? this.frozenNowMs : Date.now() + this.offsetMs;
  }

  /** How far from "now" a time must be for the auditor to say which side of it the server is on. */
  get margin(): number {
    return this.deterministic ? 0 : 3_000;
  }

  clearlyBefore(t: number): boolean {
    return this.now() + this.margin < t;
  }

  clearlyAfter(t: number): boolean {
    return this.now() - this.margin >= t;
  }

  /** The platform time a request at `res` happened at: exact in-process, else the server's own stamp. */
  timeOf(serverIso: string | undefined): number {
    if (this.deterministic) return this.frozenNowMs;
    return serverIso ? Date.parse(serverIso) : this.now();
  }

  /** In-process: a server timestamp must be exactly the model's now. */
  checkStamp(label: string, serverIso: unknown): void {
    if (this.deterministic && serverIso !== new Date(this.frozenNowMs).toISOString()) {
      throw new AuditError(
        `${label}: timestamp ${String(serverIso)}, expected the platform's now ${new Date(this.frozenNowMs).toISOString()}`,
      );
    }
  }

  /** Takes in a clock advance's answer (everything due up to its `now` has run: settle() then sees it). */
  applyAdvance(seconds: number, body: { now: string; offsetMs: number }): void {
    eq('advance offsetMs', body.offsetMs, this.offsetMs + seconds * 1000);
    this.offsetMs = body.offsetMs;
    if (this.deterministic) {
      this.frozenNowMs += seconds * 1000;
      this.checkStamp('advance now', body.now);
    }
  }

  nextKey(): string {
    this.keySeq += 1;
    return `wl-${this.o.seed}-${this.keySeq}`;
  }

  record(line: string): void {
    this.history.push(`#${this.step} ${line}`);
  }

  count(op: string): void {
    this.opCounts[op] = (this.opCounts[op] ?? 0) + 1;
  }

  // ---------------------------------------------------------------------------------------------
  // Sending

  /** Sends a planned request (with its Idempotency-Key) and applies its response. */
  async send(p: Planned): Promise<Res> {
    const res = await this.post(p);
    await this.applyResponse(p, res);
    return res;
  }

  async post(p: Planned): Promise<Res> {
    const headers = { ...p.headers, ...(p.key ? { 'idempotency-key': p.key } : {}) };
    const started = performance.now();
    const res = await p.client.post(p.path, p.body, { headers });
    // How long a money request takes now: crash kills are timed against it.
    this.latencyMs = 0.8 * this.latencyMs + 0.2 * (performance.now() - started);
    return res;
  }

  async applyResponse(p: Planned, res: Res, note = ''): Promise<void> {
    this.record(`${p.label}${note} → ${res.status}${summary(res)}`);
    await p.apply(res);
    // An error's code (an invitation's `code` is its link code: random, and no error).
    const code = res.status >= 400 && typeof res.body?.code === 'string' ? ` ${res.body.code}` : '';
    if (p.feature) this.features.add(`${p.feature} → ${res.status}${code}`);
    if (p.key && res.status >= 200 && res.status < 300) this.sent.push({ planned: p, status: res.status, body: res.body });
  }

  // ---------------------------------------------------------------------------------------------
  // Set-up

  async setup(): Promise<void> {
    await this.receiver.listen();
    const created = await this.admin.post('/_admin/platforms', { name: `Workload ${this.o.seed}` });
    expectStatus(created, 201, 'create platform');
    this.platformId = created.body.platform.id;
    this.api = new Api(() => this.target.baseUrl(), {
      basic: { id: created.body.token.clientId, secret: created.body.token.clientSecret },
    });
    const key = await this.api.get('/webhooks/signing-key');
    expectStatus(key, 200, 'signing key');
    this.receiver.publicKey = key.body.publicKey;
    const cfg = await this.api.patch('/config', platformConfig(this.receiver.url));
    expectStatus(cfg, 200, 'PATCH /config');
    const clock = await this.api.get('/sandbox/clock');
    expectStatus(clock, 200, 'GET /sandbox/clock');
    this.offsetMs = clock.body.offsetMs;
    this.frozenNowMs = Date.parse(clock.body.now);
    const accounts = await this.listAll(this.api, '/platform/internal-accounts');
    for (const a of accounts) {
      this.model.accounts.set(a.id, {
        id: a.id,
        currency: a.balance.currency.code,
        type: a.type,
        customerId: null,
        available: 0,
        pending: 0,
      });
    }
    this.record(`setup: platform ${this.platformId}, ${accounts.length} platform accounts, webhook receiver configured`);
    await this.ops.initial();
    await this.checkAll(true);
  }

  // ---------------------------------------------------------------------------------------------
  // Running

  async run(): Promise<WorkloadResult> {
    const started = Date.now();
    const crashSteps = this.crashSchedule();
    try {
      this.o.watchdog?.note('harness: setup');
      // The live-schema checks of this process's requests and webhooks run in the audit, not in
      // the steps whose event loop the watchdog measures (conformance.ts).
      if (this.o.watchdog) deferChecks(true);
      await this.setup();
      for (this.step = 1; this.step <= this.o.steps; this.step++) {
        const crash = crashSteps.has(this.step);
        // Cluster: a killed process comes back (in the background, while the survivors go on) once
        // its seeded steps on the survivors are done; it is back before the next kill.
        if (this.down && !this.comeback && (crash || this.step >= this.down.restartAt)) this.comeBack();
        if (crash && this.comeback) await this.comeback;
        this.throwIfComebackFailed();
        const onSurvivors = this.down !== undefined;
        this.o.watchdog?.note(`workload seed ${this.o.seed} step ${this.step}`);
        if (crash) await this.crashStep();
        else await this.ops.randomStep();
        if (onSurvivors) this.loss.survivorSteps += 1;
        await this.settle();
        this.o.watchdog?.note('harness: audit');
        const blocks = ((await this.o.watchdog?.take(0)) ?? []).filter((b) => !b.during.startsWith('harness:'));
        if (blocks.length > 0) throw new Error(describeBlocks(blocks).join('\n'));
        flushChecks();
        const restarted = this.restarted;
        this.restarted = false;
        // After a restart, everything: no movement lost or doubled, no transaction unknown to the model.
        await this.checkAll(crash || restarted || this.step % 20 === 0);
        if (this.step % 50 === 0) this.o.log?.(`[workload seed ${this.o.seed}] step ${this.step}/${this.o.steps}`);
      }
      this.step = this.o.steps + 1;
      this.throwIfComebackFailed();
      // Cluster: the final checks run while the last process killed comes back (it waits for the
      // survivors to take over its webhook attempts), and once more after.
      if (this.down && !this.comeback) this.comeBack();
      await this.ops.cards.beforeFinal();
      this.record('final: advance the clock past every delayed outcome');
      // (Past every card hold still open, too: their 7-day expiry.)
      await this.ops.advance(this.ops.cards.finalAdvance(2 * 3600));
      await this.settle();
      await this.checkAll(true);
      if (this.model.timers.some((t) => this.model.effective(t)))
        throw new AuditError(`delayed outcomes left after the final advance: ${JSON.stringify(this.model.timers)}`);
      const webhookEvents = await this.checkWebhooks();
      if (this.comeback) {
        await this.comeback;
        await this.checkAll(true);
      }
      this.throwIfComebackFailed();
      if (this.target.mode === 'cluster') await this.checkJobs();
      flushChecks();
      this.loss.served = this.target.served();
      return {
        seed: this.o.seed,
        steps: this.o.steps,
        ops: this.opCounts,
        transactions: this.model.txs.size,
        webhookEvents,
        crash: this.crash,
        processLoss: this.target.mode === 'cluster' ? this.loss : undefined,
        features: [...this.features].sort(),
        fingerprint: this.history.map((l) => l.replace(/[A-Za-z]+:[0-9a-f]{8}-[0-9a-f-]{27}/g, '<id>')).join('\n'),
        durationMs: Date.now() - started,
      };
    } catch (err) {
      // Replaying needs the same steps when kill points are spread over them, or the final checks ran.
      const replaySteps = (this.o.crashes ?? 0) > 0 ? this.o.steps : Math.min(this.step, this.o.steps);
      throw new WorkloadFailure(
        this.o.seed,
        this.step,
        replaySteps,
        this.o.crashes ?? 0,
        err,
        this.history,
        this.target.diagnostics(),
        this.target.processes,
      );
    } finally {
      // A comeback still under way (the run failed meanwhile) ends first: no process is left starting.
      this.finished = true;
      if (this.o.watchdog) deferChecks(false);
      await this.comeback?.catch(() => undefined);
      this.receiver.release();
      await this.receiver.close();
      await this.store?.close();
    }
  }

  /** The steps at which the server is killed: seeded, spread over the run (none on in-process targets). */
  private crashSchedule(): Set<number> {
    const n = this.o.crashes ?? 0;
    if (n === 0) return new Set();
    if (this.target.mode === 'in-process') throw new Error('crashes need a child-process or cluster target');
    // A separate generator: the crash points do not shift the operations' sequence.
    const r = new Rng(this.o.seed ^ 0x5bd1e995);
    const out = new Set<number>();
    const span = Math.floor(this.o.steps / n);
    for (let i = 0; i < n; i++) out.add(Math.min(this.o.steps, i * span + r.int(Math.floor(span / 3), span - 1) + 1));
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Delayed outcomes

  /**
   * Fires the model's due timers once the server shows them: outcomes due now (the job runner
   * takes them within its poll interval) and everything a clock advance covered. Waits for the
   * ones that must have happened; on a child process, applies the ones close to "now" only if
   * they already show.
   */
  async settle(): Promise<void> {
    for (let round = 0; round < 10; round++) {
      const due = this.model.dueTimers(this.now() + this.margin);
      if (due.length === 0) return;
      let progressed = false;
      for (const t of due) {
        if (!this.model.effective(t)) {
          // Nothing to observe: its payment already left the state it applies to.
          if (this.clearlyAfter(t.dueAt)) this.model.dropTimer(t);
          continue;
        }
        // Past due: the job runner (or the advance that covered it) must have run it, or will
        // within its poll interval; due in the next moments: it may or may not show yet.
        const must = this.deterministic || t.dueAt <= this.now();
        const seen = await this.observeTimer(t, must);
        if (!seen) continue;
        this.model.fire(t, seen.at);
        this.features.add(`timer ${t.kind}`);
        this.touch(t);
        progressed = true;
      }
      if (!progressed) return;
    }
  }

  private touch(t: Timer): void {
    if (isCardTimer(t)) this.ops.cards.touch(t);
    else if (t.kind === 'EXPIRE') {
      this.touched.quotes.add(t.ref);
      this.touched.txs.add(this.model.quotes.get(t.ref)!.txId);
    } else {
      this.touched.txs.add(t.ref);
      const q = this.model.tx(t.ref).quoteId;
      if (q) this.touched.quotes.add(q);
    }
  }

  /** Whether the server shows `t` fired (waiting up to 15 s when it must); with the platform time it fired at. */
  private async observeTimer(t: Timer, must: boolean): Promise<{ at: number } | undefined> {
    if (isCardTimer(t)) return this.ops.cards.observeTimer(t, must);
    const txId = t.kind === 'EXPIRE' ? this.model.quotes.get(t.ref)!.txId : t.ref;
    const want = this.model.statusAfter(t);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const res = await this.api.get(`/transactions/${txId}`);
      expectStatus(res, 200, `GET /transactions/${txId}`);
      if (res.body.status === want) {
        if (this.deterministic) this.checkStamp(`${t.kind} of ${txId} updatedAt`, res.body.updatedAt);
        return { at: this.timeOf(res.body.settledAt ?? res.body.updatedAt) };
      }
      if (!must) return undefined;
      if (Date.now() > deadline) {
        throw new AuditError(
          `${t.kind} of ${txId} was due at ${new Date(t.dueAt).toISOString()} (now ${new Date(this.now()).toISOString()}) but the transaction is still ${res.body.status}`,
        );
      }
      await sleep(20);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Checks

  /**
   * After every step: the ledger check, every balance against the model, the touched resources;
   * with `full`, every transaction (and no transaction the model does not know), every open quote
   * and every agent action. On a child process an outcome may land between reading one thing and
   * another, so a mismatch is retried after settling again.
   */
  async checkAll(full: boolean): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        // Independent reads: run together.
        await Promise.all([
          this.checkLedger(),
          this.checkBalances(),
          this.checkTouched(full),
          this.checkUnauthorised(),
          this.ops.cards.check(full),
        ]);
        break;
      } catch (err) {
        const racing = !this.deterministic && this.model.timers.some((t) => t.dueAt <= this.now() + 2 * this.margin);
        if (!(err instanceof AuditError) || !racing || attempt >= 20) throw err;
        await sleep(250);
        await this.settle();
      }
    }
    this.touched.txs.clear();
    this.touched.quotes.clear();
    this.touched.actions.clear();
    this.ops.cards.checked();
  }

  /** The store the auditor reads directly (opened on first use). */
  openedStore(): Store {
    this.store ??= this.target.openStore();
    return this.store;
  }

  /**
   * No unauthorised quote ever moves money (SCA, issue #23): no ledger entry of the store refers to
   * a quote that needed its customer's authorisation and never got it — parked in
   * PENDING_AUTHORIZATION, lapsed (FAILED SCA_NOT_COMPLETED), or never executed — nor to its
   * transaction. (The balance audit says the same per account: parking moves nothing in the model.)
   */
  async checkUnauthorised(): Promise<void> {
    const quotes = this.model.unauthorised();
    if (quotes.length === 0) return;
    this.store ??= this.target.openStore();
    const rows = await this.store.db
      .selectFrom('ledger_entries')
      .select(['id', 'kind', 'reference_id'])
      .where('platform_id', '=', this.platformId)
      .where(
        'reference_id',
        'in',
        quotes.flatMap((q) => [q.id, q.txId]),
      )
      .execute();
    if (rows.length > 0) {
      const status = (ref: string) => quotes.find((q) => q.id === ref || q.txId === ref)?.status;
      throw new AuditError(
        `money moved for quotes their SCA customer never authorised: ${rows
          .slice(0, 10)
          .map((r) => `${r.kind} ${r.id} of ${r.reference_id} (model: ${status(r.reference_id)})`)
          .join('; ')}`,
      );
    }
  }

  async checkLedger(): Promise<void> {
    const res = await this.admin.get('/_admin/ledger/check', { query: { platformId: this.platformId } });
    expectStatus(res, 200, 'ledger check');
    if (res.body.ok !== true || res.body.problems.length > 0) throw new AuditError(`ledger check: ${JSON.stringify(res.body.problems)}`);
  }

  async listAll(client: Api, path: string, query: Record<string, string | number | boolean | undefined> = {}): Promise<Wire[]> {
    if (path === '/platform/internal-accounts') {
      // Not paginated: a platform has one account per currency.
      const res = await client.get(path, { query });
      expectStatus(res, 200, `GET ${path}`);
      return res.body.data;
    }
    const out: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const res = await client.get(path, { query: { ...query, limit: 100, cursor } });
      expectStatus(res, 200, `GET ${path}`);
      out.push(...res.body.data);
      if (!res.body.hasMore) return out;
      cursor = res.body.nextCursor;
    }
    throw new AuditError(`GET ${path}: pagination did not end`);
  }

  async checkBalances(): Promise<void> {
    const lists = await Promise.all([
      this.listAll(this.api, '/platform/internal-accounts'),
      this.listAll(this.api, '/customers/internal-accounts'),
    ]);
    const listed = lists.flat();
    const seen = new Set<string>();
    const wrong: string[] = [];
    for (const a of listed) {
      seen.add(a.id);
      const m = this.model.accounts.get(a.id);
      if (!m) {
        wrong.push(`${a.id}: not in the model (${a.type} ${a.balance.amount})`);
        continue;
      }
      if (a.balance.amount !== m.available || a.totalBalance.amount !== m.available + m.pending) {
        wrong.push(
          `${a.id} (${m.currency} ${m.type}): balance ${a.balance.amount} / total ${a.totalBalance.amount}, model ${m.available} / ${m.available + m.pending}`,
        );
      }
    }
    for (const id of this.model.accounts.keys()) if (!seen.has(id)) wrong.push(`${id}: missing from the lists`);
    if (wrong.length > 0) throw new AuditError(`balances differ from the model:\n  ${wrong.join('\n  ')}`);
  }

  private async checkTouched(full: boolean): Promise<void> {
    if (full) {
      const listed = await this.listAll(this.api, '/transactions');
      // Card transactions are the card model's (card-ops.ts).
      this.ops.cards.checkListed(listed.filter((w) => w.type === 'CARD'));
      const all = listed.filter((w) => w.type !== 'CARD');
      const seen = new Set<string>();
      for (const w of all) {
        seen.add(w.id);
        const m = this.model.txs.get(w.id);
        if (!m) throw new AuditError(`the server has a transaction the model does not know: ${JSON.stringify(w)}`);
        checkTx(w, m);
      }
      for (const id of this.model.txs.keys())
        if (!seen.has(id)) throw new AuditError(`transaction ${id} is missing from GET /transactions`);
      for (const q of this.model.quotes.values())
        if (q.status === 'PENDING' || q.status === 'PENDING_AUTHORIZATION' || q.status === 'PROCESSING') this.touched.quotes.add(q.id);
      for (const a of this.model.actions.values()) this.touched.actions.add(a.id);
      await Promise.all(
        [...this.model.invitations.values()].map(async (inv) => {
          const res = await this.api.get(`/invitations/${inv.code}`);
          expectStatus(res, 200, `GET invitation #${inv.n}`);
          this.checkInvitation(res.body, inv);
        }),
      );
    } else {
      await Promise.all(
        [...this.touched.txs].map(async (id) => {
          const res = await this.api.get(`/transactions/${id}`);
          expectStatus(res, 200, `GET /transactions/${id}`);
          checkTx(res.body, this.model.tx(id));
        }),
      );
    }
    await Promise.all([
      ...[...this.touched.quotes].map(async (id) => {
        const res = await this.api.get(`/quotes/${id}`);
        expectStatus(res, 200, `GET /quotes/${id}`);
        this.checkQuote(res.body, this.model.quotes.get(id)!);
      }),
      ...[...this.touched.actions].map(async (id) => {
        const a = this.model.actions.get(id)!;
        const res = await this.ops.agentApi(a.agentId).get(`/agents/me/actions/${id}`);
        expectStatus(res, 200, `GET /agents/me/actions/${id}`);
        checkAction(res.body, a.status, a.txId);
      }),
    ]);
  }

  /** A quote on the wire: PENDING shows as EXPIRED once its time is up. */
  checkQuote(w: Wire, m: MQuote): void {
    let want: string = m.status;
    if (m.status === 'PENDING' && this.now() >= m.expiresAt) want = 'EXPIRED';
    const unclear = m.status === 'PENDING' && !this.clearlyBefore(m.expiresAt) && !this.clearlyAfter(m.expiresAt);
    if (w.status !== want && !(unclear && (w.status === 'PENDING' || w.status === 'EXPIRED'))) {
      throw new AuditError(`quote ${m.id}: status ${w.status}, model ${want}`);
    }
    if (m.status === 'PENDING_AUTHORIZATION') {
      // Its challenge shows until it is voided (then none is pending) or lapses (then the quote fails).
      const ch = m.challenge!;
      if (ch.wrong >= SCA_MAX_WRONG) eq(`quote ${m.id} scaChallenge (voided)`, w.scaChallenge, undefined);
      else if (this.clearlyBefore(ch.expiresAt)) {
        eq(`quote ${m.id} scaChallenge.id`, w.scaChallenge?.id, ch.id);
        eq(`quote ${m.id} scaChallenge.expiresAt`, w.scaChallenge?.expiresAt, new Date(ch.expiresAt).toISOString());
      }
    } else if (w.status === m.status) eq(`quote ${m.id} scaChallenge`, w.scaChallenge, undefined);
    eq(`quote ${m.id} totalSendingAmount`, w.totalSendingAmount, m.total);
    eq(`quote ${m.id} totalReceivingAmount`, w.totalReceivingAmount, m.receiving);
    eq(`quote ${m.id} feesIncluded`, w.feesIncluded, m.fees);
    eq(`quote ${m.id} transactionId`, w.transactionId, m.txId);
  }

  /** An invitation on the wire: a PENDING one reads EXPIRED once its time is up (either, within the margin). */
  checkInvitation(w: Wire, m: MInvitation): void {
    const label = `invitation #${m.n}`;
    const want = this.model.invitationStatus(m, this.now());
    const unclear = m.status === 'PENDING' && m.expiresAt !== null && !this.clearlyBefore(m.expiresAt) && !this.clearlyAfter(m.expiresAt);
    if (w.status !== want && !(unclear && (w.status === 'PENDING' || w.status === 'EXPIRED'))) {
      throw new AuditError(`${label}: status ${w.status}, model ${want}`);
    }
    eq(`${label} code`, w.code, m.code);
    eq(`${label} url`, w.url, `https://uma.me/i/${m.code}`);
    eq(`${label} inviterUma`, w.inviterUma, m.inviterUma);
    eq(`${label} createdAt`, w.createdAt, m.createdAt);
    eq(`${label} expiresAt`, w.expiresAt ?? null, m.expiresAt === null ? null : new Date(m.expiresAt).toISOString());
    eq(`${label} firstName`, w.firstName ?? null, m.firstName);
    eq(`${label} amountToSend`, w.amountToSend?.amount ?? null, m.amountToSend?.amount ?? null);
    eq(`${label} amountToSend currency`, w.amountToSend?.currency?.code ?? null, m.amountToSend?.currency ?? null);
    eq(`${label} inviteeUma`, w.inviteeUma ?? null, m.inviteeUma);
    eq(`${label} claimedAt`, w.claimedAt ?? null, m.claimedAt);
  }

  // ---------------------------------------------------------------------------------------------
  // Crashes

  /**
   * SIGKILLs the server while several keyed money requests are in flight (and delayed outcomes
   * are pending), restarts it on the same store and reconciles: a request that got a response
   * committed; one cut off is sent again with the same Idempotency-Key, which either replays what
   * committed or runs it now — exactly one effect either way, which the balances then prove.
   * Sometimes the kill lands on a clock advance instead, reconciled by reading the clock.
   *
   * On a cluster, one process dies and the others go on: the burst goes out round-robin over the
   * live processes, the webhook receiver holds its answers meanwhile (so the processes have
   * delivery attempts in flight), and the process killed is the seeded pick among those with both
   * unanswered requests and held deliveries (or either). The survivors must answer their requests
   * as if nothing happened; the dead process's cut-off requests are sent again, with their keys, to
   * the survivors at once. It is not restarted yet: `comeBack` brings it back after a few seeded
   * steps on the survivors, once they have sent again every delivery it had in flight (its lease
   * ran out); its jobs they take at once (the row locks went with its connections).
   */
  private async crashStep(): Promise<void> {
    this.count('crash');
    this.crash.kills += 1;
    const cluster = this.target.mode === 'cluster';
    if (cluster) this.receiver.hold();
    try {
      // Kill with delayed outcomes pending: if none is, start one (a pull that fails after 30 s).
      // Cluster: always, and its webhook events are held at the receiver, in flight in whichever
      // process claimed them, until the kill (see `killOne`).
      if (cluster || !this.model.timers.some((t) => this.model.effective(t) && t.dueAt > this.now())) await this.ops.delayedPull();
      if (cluster) await this.untilHolding();
      this.crash.pendingTimersAtKills += this.model.timers.filter((t) => this.model.effective(t)).length;
      // If no kill has cut anything off yet, the last one comes right after the requests leave, so
      // that path always runs.
      const nothingCutYet = this.crash.cutOff + this.crash.advancesCutOff === 0 && this.crash.kills === (this.o.crashes ?? 0);
      const fraction = this.rng.next();
      // Every third kill hits a clock advance (its drain running the due outcomes).
      if (this.crash.kills % 3 === 2) {
        await this.crashDuringAdvance(nothingCutYet ? 0 : Math.round(fraction * 3 * this.latencyMs));
        return;
      }
      const burst = await this.ops.burst(this.rng.int(3, 6));
      // The kill comes the moment a seeded number of them have answered, so the rest are in flight:
      // cut off before, during or just after their commit (which one is up to the server's timing).
      // Cluster: if no request was cut off at a killed process yet, the last burst kill comes right
      // after they leave (a run of two kills has only one: the second hits an advance).
      const lastBurst = Math.max(...[1, 2, 3].map((k) => (this.o.crashes ?? 0) - k + 1).filter((k) => k > 0 && k % 3 !== 2), 0);
      const cutNow = cluster ? this.loss.cutOffAtVictim === 0 && this.crash.kills === lastBurst : nothingCutYet;
      const killAfter = cutNow ? 0 : this.rng.int(0, burst.length - 1);
      const earlyMs = this.rng.int(0, 3);
      // Cluster: round-robin over the live processes, each request pinned so that where it went is
      // known, starting with those that have delivery attempts in flight (so that, however short the
      // burst, one process has both when it dies).
      // Read before the burst leaves, so that the kill follows the kill point at once (no /proc
      // scan between them: on a slow machine a burst could otherwise be answered in the meantime).
      const heldBefore = cluster ? this.heldDeliveries() : [];
      const holders = new Set(heldBefore.flatMap((h) => (h.from ? [h.from.slot] : [])));
      const live = this.target.live().sort((a, b) => Number(holders.has(b.slot)) - Number(holders.has(a.slot)));
      const sentTo = burst.map((_, i) => (cluster ? live[i % live.length]! : undefined));
      this.record(
        `crash: ${burst.length} requests in flight${cluster ? ` (to processes ${sentTo.map((p) => p!.slot).join(', ')})` : ''}, SIGKILL ${cluster ? 'one process ' : ''}once ${killAfter} answered${killAfter === 0 ? ` (after ${earlyMs} ms)` : ''}; ${this.crash.pendingTimersAtKills} delayed outcomes pending so far`,
      );
      let answered = 0;
      const unanswered = new Set(burst.map((_, i) => i));
      let killNow!: () => void;
      const killPoint = new Promise<void>((resolve) => (killNow = resolve));
      if (killAfter === 0) setTimeout(killNow, earlyMs);
      const inFlight = burst.map((p, i) => {
        const to = sentTo[i];
        return this.post(to ? { ...p, client: p.client.at(to.baseUrl) } : p).then(
          (res) => {
            answered += 1;
            unanswered.delete(i);
            if (answered === killAfter) killNow();
            return { p, i, res };
          },
          (err: unknown) => ({ p, i, err }),
        );
      });
      await killPoint;
      if (cluster) return await this.loseProcess(sentTo as ProcessRef[], unanswered, inFlight, heldBefore);
      await this.target.kill();
      const results = await Promise.all(inFlight);
      const cut: Planned[] = [];
      for (const r of results) {
        if ('res' in r) await this.applyResponse(r.p, r.res, ' (answered before the kill)');
        else cut.push(r.p);
      }
      await this.target.restart();
      this.record(`restart: ${cut.length} requests were cut off; sending them again with their keys`);
      for (const p of cut) await this.resend(p);
    } finally {
      if (cluster) this.receiver.release();
    }
  }

  /** Sends a request cut off by a kill again, with its key: a replay if it had committed, else its first run. */
  private async resend(p: Planned, note = ''): Promise<void> {
    this.crash.cutOff += 1;
    const res = await this.post(p);
    const hit = res.headers.get('idempotency-hit') === 'true';
    if (hit) this.crash.replayHits += 1;
    else this.crash.reExecuted += 1;
    await this.applyResponse(p, res, `${hit ? ' (replayed: it had committed)' : ' (re-sent: it had not committed)'}${note}`);
  }

  /**
   * Cluster: the kill point of a burst has come. Kills one live process (see `crashStep`), checks
   * that every request sent to a survivor was answered, and sends the dead one's cut-off requests
   * again through the balancer (the survivors).
   */
  private async loseProcess(
    sentTo: ProcessRef[],
    unanswered: Set<number>,
    inFlight: Promise<{ p: Planned; i: number; res: Res } | { p: Planned; i: number; err: unknown }>[],
    held: HeldDelivery[],
  ): Promise<void> {
    const inFlightAt = new Set([...unanswered].map((i) => sentTo[i]!.slot));
    const { victim, orphans } = await this.killOne(inFlightAt, undefined, held);
    const results = await Promise.all(inFlight);
    // The survivors' held deliveries are answered; the dead process's connections are gone.
    this.receiver.release();
    const cut: Planned[] = [];
    for (const r of results) {
      const at = sentTo[r.i]!;
      if ('res' in r) {
        if (at.slot !== victim.slot) this.loss.answeredBySurvivors += 1;
        await this.applyResponse(
          r.p,
          r.res,
          at.slot === victim.slot
            ? ` (answered by process ${at.slot} before it was killed)`
            : ` (answered by surviving process ${at.slot})`,
        );
      } else if (at.slot !== victim.slot) {
        throw new AuditError(
          `"${r.p.label}" sent to surviving process ${at.slot} got no answer when process ${victim.slot} was killed: ${String(r.err)}`,
        );
      } else cut.push(r.p);
    }
    this.record(
      `process ${victim.slot} killed: ${cut.length} of its requests cut off, sending them again with their keys to the survivors`,
    );
    for (const p of cut) {
      this.loss.cutOffAtVictim += 1;
      await this.resend(p, ' (by a survivor)');
    }
    this.goOnWithout(victim, orphans);
  }

  /** Cluster: waits (briefly) until the receiver holds a delivery, so some process has an attempt in flight. */
  private async untilHolding(): Promise<void> {
    const deadline = Date.now() + 5_000;
    while (this.receiver.holding().length === 0 && Date.now() < deadline) await sleep(20);
  }

  /** Cluster: the deliveries held at the receiver now, each with the live process that sent it (when found). */
  private heldDeliveries(): HeldDelivery[] {
    const held = this.receiver.holding();
    const conns = held.map((h): Conn => ({ clientPort: h.clientPort, serverPort: this.receiver.port }));
    const owners = this.target.connectionOwners(conns);
    return held.map((h, k) => ({ id: h.id, type: h.type, from: owners.get(conns[k]!) }));
  }

  /** Cluster: the live processes with deliveries held at the receiver (attempts in flight). */
  private holders(): Set<number> {
    return new Set(this.heldDeliveries().flatMap((h) => (h.from ? [h.from.slot] : [])));
  }

  /**
   * Cluster: SIGKILLs one live process — `only`, or the seeded pick among those with both requests
   * in flight (`inFlightAt`) and delivery attempts held at the receiver, else with held attempts,
   * else with requests in flight, else any — and returns it with the deliveries it had in flight
   * (their leases are orphaned: no one may take them before they run out).
   */
  private async killOne(
    inFlightAt: Set<number>,
    only?: ProcessRef,
    heldNow?: HeldDelivery[],
  ): Promise<{ victim: ProcessRef; orphans: Down['orphans'] }> {
    const live = this.target.live();
    const held = heldNow ?? this.heldDeliveries();
    const holders = new Set(held.flatMap((h) => (h.from ? [h.from.slot] : [])));
    const both = live.filter((p) => holders.has(p.slot) && inFlightAt.has(p.slot));
    const holding = live.filter((p) => holders.has(p.slot));
    const sending = live.filter((p) => inFlightAt.has(p.slot));
    const pool = only ? [only] : [both, holding, sending, live].find((l) => l.length > 0)!;
    const victim = this.lossRng.pick(pool);
    const orphans = held
      .filter((h) => h.from?.slot === victim.slot)
      .map((h) => ({ id: h.id, type: h.type, seen: this.receiver.deliveries.get(h.id) ?? 0 }));
    await this.target.kill(victim.slot);
    this.loss.victims.push(victim.slot);
    this.loss.orphanedAttempts += orphans.length;
    this.record(
      `SIGKILL process ${victim.slot} of ${live.length} live (requests in flight at ${[...inFlightAt].join(', ') || 'none'}; deliveries held from ${[...holders].join(', ') || 'none'}): ` +
        `${orphans.length} webhook attempts of its in flight`,
    );
    return { victim, orphans };
  }

  /** Cluster: the survivors go on alone for a few seeded steps before the dead process comes back. */
  private goOnWithout(victim: ProcessRef, orphans: Down['orphans']): void {
    const restartAt = this.step + this.lossRng.int(3, 10);
    this.down = { victim, step: this.step, restartAt, killedAt: Date.now(), orphans };
    this.record(`the survivors go on alone; process ${victim.slot} restarts before step ${restartAt}`);
  }

  /**
   * Cluster: starts bringing the killed process back, in the background while the survivors keep
   * running steps (a start takes seconds): once the survivors have sent again every webhook
   * delivery it had in flight (each is claimed again when its lease runs out: they must not wait
   * for the dead process), it is restarted on the same database and rejoins the balancer. The run
   * awaits it before the next kill and the final checks; a failure fails the next step.
   */
  private comeBack(): void {
    const p = this.restartKilled().finally(() => (this.comeback = undefined));
    this.comeback = p;
    p.catch((err: unknown) => (this.comebackFailed ??= { err }));
  }

  private throwIfComebackFailed(): void {
    if (this.comebackFailed) throw this.comebackFailed.err;
  }

  private async restartKilled(): Promise<void> {
    const d = this.down!;
    // A dead process's webhook attempts are sent again once their lease ends. (Its jobs have no
    // lease: PostgreSQL drops their row locks with its connections, and a survivor takes them.)
    const deadline = d.killedAt + LEASE_MS + 30_000;
    for (;;) {
      const waiting = d.orphans.filter((o) => (this.receiver.deliveries.get(o.id) ?? 0) <= o.seen);
      if (waiting.length === 0) break;
      if (this.finished) throw new AuditError('the run ended while a killed process waited to come back');
      if (Date.now() > deadline) {
        this.store ??= this.target.openStore();
        const rows = await this.store.db
          .selectFrom('outbox_events')
          .select(['id', 'type', 'status', 'attempts', 'next_attempt_ms'])
          .where(
            'id',
            'in',
            waiting.map((o) => o.id),
          )
          .execute();
        throw new AuditError(
          `the survivors did not send again ${waiting.length} webhook deliveries process ${d.victim.slot} had in flight when it was killed ` +
            `${((Date.now() - d.killedAt) / 1000).toFixed(1)} s ago (lease ${LEASE_MS / 1000} s; now ${Date.now()}): ${JSON.stringify(rows)}`,
        );
      }
      await sleep(100);
    }
    const waitedMs = Date.now() - d.killedAt;
    if (d.orphans.length > 0) {
      this.loss.takenOver += d.orphans.length;
      this.loss.maxTakeoverMs = Math.max(this.loss.maxTakeoverMs, waitedMs);
    }
    this.record(
      `restarting process ${d.victim.slot} (killed at step ${d.step})` +
        (d.orphans.length > 0
          ? `: the survivors sent again its ${d.orphans.length} webhook attempts in flight, ${(waitedMs / 1000).toFixed(1)} s after the kill`
          : ''),
    );
    await this.target.restart();
    this.loss.restarts += 1;
    this.down = undefined;
    this.restarted = true;
    this.record(
      `process ${d.victim.slot} is back (${((Date.now() - d.killedAt) / 1000).toFixed(1)} s after the kill) and rejoins the balancer`,
    );
  }

  private async crashDuringAdvance(delayMs: number): Promise<void> {
    const seconds = this.rng.pick([5, 40, 400]);
    // Cluster: the advance goes to the process that dies, its drain running the due work: the
    // seeded pick among those with delivery attempts in flight (else any).
    let victim: ProcessRef | undefined;
    if (this.target.mode === 'cluster') {
      const live = this.target.live();
      const holders = this.holders();
      const holding = live.filter((p) => holders.has(p.slot));
      victim = this.lossRng.pick(holding.length > 0 ? holding : live);
    }
    this.record(`crash: clock advance of ${seconds} s in flight${victim ? ` at process ${victim.slot}` : ''}, SIGKILL after ${delayMs} ms`);
    const before = this.offsetMs;
    const inFlight = (victim ? this.api.at(victim.baseUrl) : this.api).post('/sandbox/clock/advance', { seconds }).then(
      (res) => ({ res }),
      (err: unknown) => ({ err }),
    );
    await sleep(delayMs);
    let orphans: Down['orphans'] = [];
    if (victim) {
      ({ orphans } = await this.killOne(new Set([victim.slot]), victim));
    } else {
      await this.target.kill();
    }
    const r = await inFlight;
    if (victim) this.receiver.release();
    else await this.target.restart();
    // Cluster: the dead process's transaction (the advance, if it was committing) ends when
    // PostgreSQL drops its connection; read the clock until two reads a moment apart agree.
    const clock = victim ? await this.stableClock() : await this.api.get('/sandbox/clock');
    expectStatus(clock, 200, 'GET /sandbox/clock');
    const advanced = clock.body.offsetMs === before + seconds * 1000;
    if (!advanced && clock.body.offsetMs !== before)
      throw new AuditError(`clock offset ${clock.body.offsetMs} after the crash: neither ${before} nor ${before + seconds * 1000}`);
    if ('res' in r) {
      expectStatus(r.res, 200, 'clock advance');
      if (!advanced) throw new AuditError('a clock advance answered 200 but its offset was lost in the crash');
    } else {
      this.crash.advancesCutOff += 1;
    }
    // Whatever the advance made due runs after the restart (the job runner), drained or not:
    // settle() insists on every outcome now past due.
    this.offsetMs = clock.body.offsetMs;
    if (victim) {
      this.record(
        `process ${victim.slot} killed: the advance ${advanced ? 'committed' : 'did not commit'} (${'res' in r ? 'answered' : 'cut off'})`,
      );
      this.goOnWithout(victim, orphans);
    } else {
      this.record(`restart: the advance ${advanced ? 'committed' : 'did not commit'} (${'res' in r ? 'answered' : 'cut off'})`);
    }
  }

  private async stableClock(): Promise<Res> {
    let prev = await this.api.get('/sandbox/clock');
    for (let i = 0; i < 20; i++) {
      await sleep(300);
      const next = await this.api.get('/sandbox/clock');
      if (prev.status !== 200 || next.status !== 200 || next.body.offsetMs === prev.body.offsetMs) return next;
      prev = next;
    }
    return prev;
  }

  // ---------------------------------------------------------------------------------------------
  // Webhooks

  /**
   * The events the outbox holds are the ones the model's transitions call for: each payment's
   * event types in order, one BALANCE_UPDATED per ledger entry moving an account, one
   * AGENT_ACTION.PENDING_APPROVAL per action that waited for approval.
   */
  private checkEvents(rows: { type: string; resource_id: string; payload: string }[]): void {
    const payments = new Map<string, string[]>();
    const counts = new Map<string, number>();
    const claimed = new Map<string, number>();
    const wrong: string[] = [];
    for (const r of rows) {
      if (r.type.startsWith('INVITATION.')) {
        // Keyed by code: the outbox's resource id of an invitation is never on the wire.
        const data = JSON.parse(r.payload) as { code?: string; status?: string; inviteeUma?: string };
        const inv = this.model.invitations.get(String(data.code));
        if (r.type !== 'INVITATION.CLAIMED' || !inv)
          throw new AuditError(`an invitation event the model does not expect: ${r.type} ${r.payload}`);
        claimed.set(inv.code, (claimed.get(inv.code) ?? 0) + 1);
        if (data.status !== 'CLAIMED' || data.inviteeUma !== inv.inviteeUma)
          wrong.push(`invitation #${inv.n}: INVITATION.CLAIMED with ${data.status} ${data.inviteeUma}; model CLAIMED ${inv.inviteeUma}`);
      } else if (r.type.startsWith('BULK_UPLOAD.')) {
        if (this.model.bulkJobs.get(r.resource_id) !== r.type)
          throw new AuditError(`a bulk import event the model does not expect: ${r.type} ${r.resource_id}`);
        counts.set(`${r.type} ${r.resource_id}`, (counts.get(`${r.type} ${r.resource_id}`) ?? 0) + 1);
      } else if (/^(OUTGOING|INCOMING)_PAYMENT\./.test(r.type)) {
        if (!this.model.txs.has(r.resource_id))
          throw new AuditError(`a payment event for a transaction the model does not know: ${r.type} ${r.resource_id}`);
        payments.set(r.resource_id, [...(payments.get(r.resource_id) ?? []), r.type]);
      } else if (r.type === 'INTERNAL_ACCOUNT.BALANCE_UPDATED' || r.type === 'AGENT_ACTION.PENDING_APPROVAL') {
        counts.set(`${r.type} ${r.resource_id}`, (counts.get(`${r.type} ${r.resource_id}`) ?? 0) + 1);
      }
    }
    for (const inv of this.model.invitations.values()) {
      const got = claimed.get(inv.code) ?? 0;
      if (got !== (inv.status === 'CLAIMED' ? 1 : 0))
        wrong.push(`invitation #${inv.n} (${inv.status}): ${got} INVITATION.CLAIMED events; model ${inv.status === 'CLAIMED' ? 1 : 0}`);
    }
    for (const [job, type] of this.model.bulkJobs) {
      const got = counts.get(`${type} ${job}`) ?? 0;
      if (got !== 1) wrong.push(`${job}: ${got} ${type} events; model 1`);
    }
    for (const t of this.model.txs.values()) {
      const got = payments.get(t.id) ?? [];
      if (got.join() !== t.events.join()) wrong.push(`${t.id} (${t.kind}): events ${got.join(', ')}; model ${t.events.join(', ')}`);
    }
    for (const a of this.model.accounts.values()) {
      const got = counts.get(`INTERNAL_ACCOUNT.BALANCE_UPDATED ${a.id}`) ?? 0;
      const want = this.model.balanceEvents.get(a.id) ?? 0;
      if (got !== want) wrong.push(`${a.id} (${a.currency} ${a.type}): ${got} BALANCE_UPDATED events; model ${want}`);
    }
    for (const a of this.model.actions.values()) {
      const got = counts.get(`AGENT_ACTION.PENDING_APPROVAL ${a.id}`) ?? 0;
      if (got !== (a.announced ? 1 : 0)) wrong.push(`${a.id}: ${got} AGENT_ACTION.PENDING_APPROVAL events; model ${a.announced ? 1 : 0}`);
    }
    wrong.push(...this.ops.cards.eventProblems(rows));
    if (wrong.length > 0) throw new AuditError(`webhook events differ from the model:\n  ${wrong.slice(0, 20).join('\n  ')}`);
  }

  /**
   * Every event the store's outbox holds for the platform reaches the receiver at least once (with
   * a valid signature), and nothing arrives that the store does not hold.
   */
  async checkWebhooks(): Promise<number> {
    this.store ??= this.target.openStore();
    const store = this.store;
    const outbox = async () =>
      store.db
        .selectFrom('outbox_events')
        .select(['id', 'type', 'status', 'resource_id', 'payload'])
        .where('platform_id', '=', this.platformId)
        .orderBy('id')
        .execute();
    // A delivery the crash cut off is retried once its lease (20 s) ends; allow for that (a
    // cluster's last kill may come a few steps before the end, with a process's attempts in flight).
    const cluster = this.target.mode === 'cluster';
    const deadline = Date.now() + (cluster ? LEASE_MS + 40_000 : this.crash.kills > 0 ? 45_000 : 20_000);
    for (;;) {
      const rows = await outbox();
      // Cluster: also every attempt's outcome recorded (none left DELIVERING by a dead process's
      // lease that no survivor took over), whatever the receiver saw.
      const missing = rows.filter((r) => !this.receiver.acked.has(r.id) || (cluster && r.status === 'DELIVERING'));
      if (missing.length === 0) {
        const ids = new Set(rows.map((r) => r.id));
        const stray = [...this.receiver.acked.keys()].filter((id) => !ids.has(id));
        if (stray.length > 0) throw new AuditError(`the receiver got events the store does not hold: ${stray.slice(0, 5).join(', ')}`);
        for (const r of rows)
          if (this.receiver.acked.get(r.id) !== r.type)
            throw new AuditError(`event ${r.id}: delivered as ${this.receiver.acked.get(r.id)}, stored as ${r.type}`);
        if (this.receiver.badSignatures.length > 0)
          throw new AuditError(`webhooks with bad signatures: ${this.receiver.badSignatures.slice(0, 3).join('; ')}`);
        this.checkEvents(rows);
        return rows.length;
      }
      if (Date.now() > deadline) {
        throw new AuditError(`${missing.length} committed webhook events never arrived: ${JSON.stringify(missing.slice(0, 10))}`);
      }
      // Retries scheduled later on the platform clock are brought forward by advancing it.
      if (rows.some((r) => r.status === 'PENDING')) await this.ops.advance(60, true);
      await sleep(200);
    }
  }

  /**
   * Cluster: each of the platform's jobs ran once, whichever process ran it and whichever died
   * holding it: DONE at its first attempt (a run rolled back by a death does not count one), or
   * still PENDING untried; none failed or retried after an error.
   */
  async checkJobs(): Promise<void> {
    this.store ??= this.target.openStore();
    const rows = await this.store.db
      .selectFrom('jobs')
      .select(['id', 'kind', 'status', 'attempts', 'last_error'])
      .where('platform_id', '=', this.platformId)
      .execute();
    const wrong = rows.filter(
      (j) => j.last_error !== null || (j.status === 'DONE' ? j.attempts !== 1 : j.status !== 'PENDING' || j.attempts !== 0),
    );
    if (wrong.length > 0) throw new AuditError(`jobs not run exactly once: ${JSON.stringify(wrong.slice(0, 10))}`);
    if (rows.filter((j) => j.status === 'DONE').length === 0) throw new AuditError('no job ran');
  }
}

// ---------------------------------------------------------------------------------------------
// Wire checks

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function summary(res: Res): string {
  const b = res.body;
  if (!b || typeof b !== 'object') return '';
  if (typeof b.code === 'string' && res.status >= 400) return ` ${b.code}${b.details?.reason ? `/${b.details.reason}` : ''}`;
  const parts: string[] = [];
  if (typeof b.status === 'string') parts.push(b.status);
  if (typeof b.id === 'string') parts.push(b.id);
  if (b.failureReason) parts.push(b.failureReason);
  return parts.length ? ` ${parts.join(' ')}` : '';
}

export function eq(label: string, actual: unknown, expected: unknown): void {
  if (actual !== expected) throw new AuditError(`${label}: got ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`);
}

export function expectStatus(res: Res, status: number, label: string): void {
  if (res.status !== status) throw new AuditError(`${label}: expected ${status}, got ${res.status} ${res.text.slice(0, 600)}`);
}

/** The spec's error body with this status and code. */
export function expectError(res: Res, status: number, code: string, label: string): void {
  const b = res.body;
  if (res.status !== status || b?.status !== status || b?.code !== code || typeof b?.message !== 'string') {
    throw new AuditError(`${label}: expected ${status} ${code}, got ${res.status} ${res.text.slice(0, 600)}`);
  }
}

/** A transaction on the wire against the model. */
export function checkTx(w: Wire, m: MTx): void {
  const label = `transaction ${m.id} (${m.kind})`;
  eq(`${label} status`, w.status, m.status);
  if (m.failureReason !== undefined) eq(`${label} failureReason`, w.failureReason ?? null, m.failureReason);
  if (m.kind === 'TRANSFER_OUT' || m.kind === 'QUOTE') {
    if (m.refund === null) eq(`${label} refund`, w.refund, undefined);
    else {
      eq(`${label} refund.status`, w.refund?.status, m.refund.status);
      eq(`${label} refund.reason`, w.refund?.reason, m.refund.reason);
    }
  }
  if (m.kind !== 'UMA_RECEIVE') {
    eq(`${label} sentAmount`, w.sentAmount?.amount, m.amount);
    eq(`${label} sent currency`, w.sentAmount?.currency?.code, m.currency);
    eq(`${label} fees`, w.fees, m.fees);
  }
  eq(`${label} receivedAmount`, w.receivedAmount?.amount, m.received);
  eq(`${label} received currency`, w.receivedAmount?.currency?.code, m.receivedCurrency);
  if (m.quoteId) eq(`${label} quoteId`, w.quoteId, m.quoteId);
  if (FINAL_TX.has(m.status) && w.status !== m.status) throw new AuditError(`${label}: left final status ${m.status}`);
}

export function checkAction(w: Wire, status: string, txId: string | null): void {
  eq(`action ${w?.id} status`, w.status, status);
  eq(`action ${w?.id} transaction`, w.transaction?.id ?? null, txId);
}
