/**
 * flow: a payment from quote to delivered webhook. The request is the `payment` scenario's
 * (`POST /quotes {immediatelyExecute: true}` from a funded internal account to a succeeding external
 * account); the flow ends when that payment's `OUTGOING_PAYMENT.COMPLETED` webhook reaches a loopback
 * receiver in the bench process with a valid signature (bench/flow-receiver.ts).
 *
 * Correlation: each request carries a unique `description` (`bench-flow:<n>`), which the quote copies
 * to its transaction and so to the webhook's payload; the factory notes the time it hands request n
 * to autocannon, which writes it at once. No response needs to be read.
 *
 * Beside autocannon's HTTP figures it reports (see docs/performance.md, "Scenarios"): flows/s (COMPLETED
 * webhooks that arrived in the measured window), flow latency for the payments sent in the window,
 * how many payments were still undelivered when the load stopped (and 1 s, 5 s later) and how long
 * the backlog took to drain. The ground truth for "payments made" is the server's count of the
 * platform's outgoing transactions (a request autocannon built as it stopped may never have been
 * sent). The run fails on any bad signature, and when any payment's COMPLETED webhook has not arrived
 * DRAIN_LIMIT_S after the load stopped.
 */
import { nowUs, startFlowReceiver, type FlowReceiver, type WebhookEnvelope } from '../flow-receiver.ts';
import { fundedPayer } from './payment.ts';
import type { CorridorHandle, MeasuredWindow, Scenario, ScenarioReport } from './types.ts';

/** Amount per payment (cents); the account is funded for far more than a run can spend. */
const AMOUNT = 100;
/** Marks the bench's payments; the number after it indexes the send times. */
const DESCRIPTION_PREFIX = 'bench-flow:';
const COMPLETED = 'OUTGOING_PAYMENT.COMPLETED';
/** How long after the load stops every payment's COMPLETED webhook must have arrived (BENCH_FLOW_DRAIN_S overrides). */
const DRAIN_LIMIT_S = Number(process.env.BENCH_FLOW_DRAIN_S ?? 120);
/** How long setup waits for the probe payment's webhook. */
const PROBE_TIMEOUT_MS = 15_000;

export const flowScenario: Scenario = {
  name: 'flow',
  summary:
    'POST /quotes with immediatelyExecute, until its OUTGOING_PAYMENT.COMPLETED webhook reaches a signature-checking loopback receiver',
  async setup(corridor) {
    if (!(DRAIN_LIMIT_S > 0 && Number.isFinite(DRAIN_LIMIT_S)))
      throw new Error(`flow: BENCH_FLOW_DRAIN_S must be a number of seconds > 0 (got "${process.env.BENCH_FLOW_DRAIN_S}")`);
    const creds = await corridor.newPlatform('Bench flow');
    const headers = { authorization: creds.authorization };
    const base = corridor.basePath;
    const { accountId, externalId } = await fundedPayer(corridor, headers, 'flow');

    const key = await corridor.request('GET', `${base}/webhooks/signing-key`, { headers });
    if (key.status !== 200) throw new Error(`flow: signing key answered ${key.status}: ${JSON.stringify(key.body)}`);
    const flows = new FlowTracker();
    const receiver = await startFlowReceiver((key.body as { publicKey: string }).publicKey, (e, at) => flows.onEvent(e, at));
    const finish = async () => {
      // The bare route's run uses the same factory: stop recording; nothing more will arrive.
      flows.stop();
      // A PostgreSQL database outlives the run: wipe the platform's history so that its undelivered
      // events are not retried against this dead endpoint by the Corridor processes of later runs.
      if (corridor.store === 'postgres') {
        const reset = await corridor.request('POST', `${base}/sandbox/reset`, { headers });
        if (reset.status >= 300)
          process.stderr.write(`bench: flow: POST /sandbox/reset answered ${reset.status}: ${JSON.stringify(reset.body)}\n`);
      }
      await receiver.close();
    };
    try {
      // A new endpoint gets one TEST event first; the tracker counts it with the rest and ignores it.
      const config = await corridor.request('PATCH', `${base}/config`, { headers, json: { webhookEndpoint: receiver.url } });
      if (config.status !== 200) throw new Error(`flow: PATCH /config answered ${config.status}: ${JSON.stringify(config.body)}`);

      const path = `${base}/quotes`;
      const json = JSON.stringify({
        source: { sourceType: 'ACCOUNT', accountId },
        destination: { destinationType: 'ACCOUNT', accountId: externalId },
        lockedCurrencySide: 'SENDING',
        lockedCurrencyAmount: AMOUNT,
        immediatelyExecute: true,
      });
      // The body up to its closing brace: each request appends its own description (cheaper for the loader than re-serialising).
      const head = `${json.slice(0, -1)},"description":"${DESCRIPTION_PREFIX}`;
      const body = (n: number) => `${head}${n}"}`;
      const requestHeaders = { ...headers, 'content-type': 'application/json' };

      // The probe is flow 0: one payment all the way to its signed webhook before any load.
      flows.sent(0);
      const probe = await corridor.request('POST', path, { headers, json: JSON.parse(body(0)) });
      if (probe.status !== 201) throw new Error(`flow: probe answered ${probe.status}: ${JSON.stringify(probe.body)}`);
      if (!(await flows.waitForDelivered(1, PROBE_TIMEOUT_MS))) {
        throw new Error(
          `flow: the probe payment's ${COMPLETED} webhook did not arrive within ${PROBE_TIMEOUT_MS / 1000} s (receiver: ${receiver.requests} requests, ${receiver.badSignatures} bad signatures; events ${flows.eventTypes()})`,
        );
      }

      let next = 1;
      return {
        request: () => {
          const n = next++;
          flows.sent(n);
          return { method: 'POST', path, headers: requestHeaders, body: body(n) };
        },
        baseline: { method: 'POST', path, status: 201, body: probe.body },
        extraReport: async (window) => {
          try {
            return await flowReport(corridor, headers, flows, receiver, window);
          } finally {
            await finish();
          }
        },
      };
    } catch (err) {
      await finish();
      throw err;
    }
  },
};

/** Send times by flow number, and what the receiver got: each payment's first COMPLETED webhook. */
class FlowTracker {
  private sentUs = new Float64Array(1 << 16);
  /** One past the highest flow number sent. */
  private sentCount = 0;
  private tracking = true;
  /** Transaction ids whose COMPLETED webhook arrived (at-least-once delivery: repeats are counted apart). */
  readonly completed = new Set<string>();
  /** Per delivered flow, in arrival order: when its request was sent and when its webhook arrived (µs). */
  readonly deliveredSentUs: number[] = [];
  readonly deliveredArrivedUs: number[] = [];
  /** Arrival time of every verified event, any type. */
  readonly eventArrivedUs: number[] = [];
  duplicates = 0;
  /** COMPLETED webhooks whose description names no request the bench sent. */
  unknown = 0;
  private readonly byType = new Map<string, number>();

  sent(n: number): void {
    if (!this.tracking) return;
    if (n >= this.sentUs.length) {
      const grown = new Float64Array(Math.max(this.sentUs.length * 2, n + 1));
      grown.set(this.sentUs);
      this.sentUs = grown;
    }
    this.sentUs[n] = nowUs();
    this.sentCount = Math.max(this.sentCount, n + 1);
  }

  /** Requests handed to autocannon within [fromUs, toUs]. */
  sentBetween(fromUs: number, toUs: number): number {
    let k = 0;
    for (let i = 0; i < this.sentCount; i++) {
      const t = this.sentUs[i]!;
      if (t >= fromUs && t <= toUs) k++;
    }
    return k;
  }

  stop(): void {
    this.tracking = false;
  }

  onEvent(e: WebhookEnvelope, arrivedUs: number): void {
    if (!this.tracking) return;
    this.byType.set(e.type, (this.byType.get(e.type) ?? 0) + 1);
    this.eventArrivedUs.push(arrivedUs);
    if (e.type !== COMPLETED) return;
    const txId = String(e.data.id);
    if (this.completed.has(txId)) {
      this.duplicates++;
      return;
    }
    this.completed.add(txId);
    const d = e.data.description;
    const n = typeof d === 'string' && d.startsWith(DESCRIPTION_PREFIX) ? Number(d.slice(DESCRIPTION_PREFIX.length)) : NaN;
    const sentUs = Number.isInteger(n) && n < this.sentUs.length ? this.sentUs[n]! : 0;
    if (sentUs === 0) {
      this.unknown++;
      return;
    }
    this.deliveredSentUs.push(sentUs);
    this.deliveredArrivedUs.push(arrivedUs);
  }

  async waitForDelivered(count: number, timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    while (this.completed.size < count) {
      if (Date.now() > end) return false;
      await sleep(20);
    }
    return true;
  }

  /** `TYPE×n, …` for messages. */
  eventTypes(): string {
    return [...this.byType].map(([t, n]) => `${t}×${n}`).join(', ') || 'none';
  }
}

/**
 * Waits (up to DRAIN_LIMIT_S after the load stopped) until every payment the platform made has its
 * COMPLETED webhook, then computes the figures from the recorded times.
 */
async function flowReport(
  corridor: CorridorHandle,
  headers: Record<string, string>,
  flows: FlowTracker,
  receiver: FlowReceiver,
  w: MeasuredWindow,
): Promise<ScenarioReport> {
  const countPayments = async (): Promise<number> => {
    const r = await corridor.request('GET', `${corridor.basePath}/transactions?type=OUTGOING&limit=1`, { headers });
    const total = (r.body as { totalCount?: unknown }).totalCount;
    if (r.status !== 200 || typeof total !== 'number')
      throw new Error(`flow: counting payments answered ${r.status}: ${JSON.stringify(r.body)}`);
    return total;
  };
  const deadlineUs = w.endUs + DRAIN_LIMIT_S * 1e6;
  let made = await countPayments();
  for (;;) {
    if (flows.completed.size >= made) {
      // Count again: a request still in flight when the load stopped may have committed since.
      await sleep(250);
      const again = await countPayments();
      if (again === made) break;
      made = again;
      continue;
    }
    if (nowUs() > deadlineUs) break;
    await sleep(100);
    made = await countPayments();
  }

  const windowS = (w.endUs - w.startUs) / 1e6;
  const inWindow = (us: number) => us >= w.startUs && us <= w.endUs;
  const arrivedBy = (us: number) => flows.deliveredArrivedUs.filter((a) => a <= us).length;
  const latencies = new Float64Array(flows.deliveredSentUs.length);
  let timed = 0;
  let lastArrivalUs = -Infinity;
  for (let i = 0; i < flows.deliveredSentUs.length; i++) {
    const sent = flows.deliveredSentUs[i]!;
    const arrived = flows.deliveredArrivedUs[i]!;
    lastArrivalUs = Math.max(lastArrivalUs, arrived);
    if (inWindow(sent)) latencies[timed++] = (arrived - sent) / 1000;
  }
  const sorted = latencies.subarray(0, timed).sort();
  const undelivered = made - flows.completed.size;
  // With every payment delivered, a request sent in the window without a webhook never reached the
  // server (autocannon stopped as it was written): the timed flows are all of them. Otherwise the
  // missing ones count as slower than the drain limit, so a percentile that falls among them is
  // shown as "> limit" instead of being taken from the survivors only.
  const population = undelivered > 0 ? Math.max(timed, flows.sentBetween(w.startUs, w.endUs)) : timed;
  const pct = (p: number): number | string => {
    if (population === 0) return 'n/a';
    const rank = Math.min(population, Math.max(1, Math.ceil((p / 100) * population)));
    return rank > timed ? `> ${DRAIN_LIMIT_S * 1000}` : r2(sorted[rank - 1]!);
  };
  const r2 = (v: number) => Math.round(v * 100) / 100;

  const figures: Record<string, number | string> = {
    'payments made': made,
    'flows/s': Math.round(flows.deliveredArrivedUs.filter(inWindow).length / windowS),
    'flow p50 ms': pct(50),
    'flow p99 ms': pct(99),
    'flow max ms': pct(100),
    'flows timed': population > timed ? `${timed} of ${population}` : timed,
    'webhooks/s': Math.round(flows.eventArrivedUs.filter(inWindow).length / windowS),
    'undelivered at stop': Math.max(0, made - arrivedBy(w.endUs)),
    'undelivered at +1 s': Math.max(0, made - arrivedBy(w.endUs + 1e6)),
    'undelivered at +5 s': Math.max(0, made - arrivedBy(w.endUs + 5e6)),
    'drain s': undelivered > 0 ? `> ${DRAIN_LIMIT_S}` : r2(Math.max(0, (lastArrivalUs - w.endUs) / 1e6)),
    'bad signatures': receiver.badSignatures,
    'duplicate COMPLETED': flows.duplicates,
  };
  const failures: string[] = [];
  if (receiver.badSignatures > 0)
    failures.push(`flow: ${receiver.badSignatures} webhook request(s) with a missing or invalid X-Service-Signature`);
  if (receiver.badBodies > 0) failures.push(`flow: ${receiver.badBodies} signed webhook request(s) whose body was not an event`);
  if (flows.unknown > 0) failures.push(`flow: ${flows.unknown} ${COMPLETED} webhook(s) for payments the bench did not send`);
  if (undelivered > 0)
    failures.push(
      `flow: ${undelivered} of ${made} payments had no ${COMPLETED} webhook ${DRAIN_LIMIT_S} s after the load stopped (events received: ${flows.eventTypes()})`,
    );
  if (undelivered < 0)
    failures.push(`flow: ${flows.completed.size} payments delivered ${COMPLETED} but the platform has only ${made} outgoing transactions`);
  return {
    figures,
    notes: [
      `flow latency: from sending POST /quotes to its ${COMPLETED} webhook arriving with a valid signature, for the payments sent in the measured window ("> ${DRAIN_LIMIT_S * 1000}": among those still undelivered);`,
      'flows/s and webhooks/s: COMPLETED webhooks and all webhooks that arrived in the window; undelivered: payments made (warm-up included) without their COMPLETED webhook yet;',
      'drain s: from the end of the load to the last COMPLETED webhook. The bare route has no flow equivalent: its row compares the HTTP request only.',
    ],
    failures,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
