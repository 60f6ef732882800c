/**
 * One load run at a fixed offered rate (open loop, as wrk2 does): request i is due at
 * start + i ÷ rate whatever the server is doing, and its latency runs from that due time to its
 * response, so time a request spent waiting for a free connection counts (no coordinated omission).
 * This measures latency at a given throughput — "600 payments/s with p99 < 50 ms" — where the closed
 * loop of `load.ts` (N connections, each sending as soon as its last answer arrives) measures the
 * most the server can do, and a latency that is mostly the length of its own queue (N ÷ throughput).
 *
 * autocannon's own rate option is not used: it spends each connection's budget at the start of each
 * second, back to back, so a second's requests arrive as one burst.
 *
 * A warm-up (`warmup`) is the same run's first seconds, not counted: the window follows it without a
 * pause or new connections, as a steady state has none (docs/decisions.md; it did not, by itself,
 * make the first measured seconds of a fresh server as fast as the rest: docs/performance.md).
 *
 * Requests go over keep-alive connections of raw-http.ts (node:http's client cost the load generator,
 * which shares the machine with what it measures, several times the CPU per request).
 *
 * Several origins (`--processes`): request `seq` goes to origin `seq % n`, each origin through a
 * connection pool of its own with its share of the connections; the figures cover all of them together.
 */
import { originList, percentile, splitConnections, type LoadResult, type SecondStats } from './load.ts';
import { RawHttpPool, TimeoutError } from './raw-http.ts';
import type { HttpRequest, RequestFactory } from './scenarios/types.ts';

export interface PacedOptions {
  /** `http://127.0.0.1:<port>`, or several: requests go round-robin over them. */
  origin: string | readonly string[];
  request: HttpRequest | RequestFactory;
  /** Requests per second, evenly spaced. */
  rate: number;
  /** Seconds of sending that are measured. */
  duration: number;
  /**
   * Seconds of sending before the measured ones, at the same rate and over the same connections,
   * with no pause between: the measured window starts in the steady state the warm-up reached
   * (its payments still settling, its connections open), not from an idle server. Requests due in
   * the warm-up are sent and answered but not counted. Default 0.
   */
  warmup?: number;
  /** Called (synchronously) as the first measured request is sent: where CPU counters are read. */
  onWindowStart?: () => void;
  /** Most connections open at once (the pools' connections, split over the origins); requests beyond wait for one. */
  connections: number;
}

const TIMEOUT_MS = 10_000;

let stopped = false;

/** Stops a run in progress (SIGINT): no more requests are sent. */
export function stopPaced(): void {
  stopped = true;
}

export async function runPaced(o: PacedOptions): Promise<LoadResult> {
  stopped = false;
  const origins = originList(o.origin);
  const split = splitConnections(o.connections, origins.length);
  // Every origin needs a socket, even when there are fewer connections than origins.
  const targets = origins.map((origin, i) => new RawHttpPool(origin, Math.max(1, split[i]!), TIMEOUT_MS));
  const intervalMs = 1000 / o.rate;
  const warmupCount = Math.round(o.rate * (o.warmup ?? 0));
  const measured = Math.round(o.rate * o.duration);
  const total = warmupCount + measured;
  const latencies = new Float64Array(measured);
  const statusCodes: Record<string, number> = {};
  let n = 0;
  let non2xx = 0;
  let errors = 0;
  let timeouts = 0;
  let inWindow = 0;
  const start = performance.now();
  // The measured window: from the due time of its first request, for `duration` seconds.
  const t0 = start + warmupCount * intervalMs;
  const windowEnd = t0 + o.duration * 1000;
  let cpuBefore = process.cpuUsage();
  const outstanding = new Set<Promise<void>>();
  // Per second of due time: responses, summed and largest latency (`LoadResult.series`).
  const perSecond: SecondStats[] = [];

  const record = (dueAt: number, status: number) => {
    const end = performance.now();
    latencies[n++] = end - dueAt;
    const sec = Math.floor((dueAt - t0) / 1000);
    perSecond[sec] ??= { second: sec, responses: 0, meanMs: 0, maxMs: 0 };
    const b = perSecond[sec];
    b.responses++;
    b.meanMs += end - dueAt;
    b.maxMs = Math.max(b.maxMs, end - dueAt);
    if (end <= windowEnd) inWindow++;
    const code = String(status);
    statusCodes[code] = (statusCodes[code] ?? 0) + 1;
    if (status < 200 || status > 299) non2xx++;
  };

  const send = (seq: number, dueAt: number) => {
    const r = typeof o.request === 'function' ? o.request(seq) : o.request;
    const counted = seq >= warmupCount;
    const p = targets[seq % targets.length]!.request(r).then(
      (res) => {
        if (counted) record(dueAt, res.status);
      },
      (err: unknown) => {
        if (!counted) return;
        // A timeout is an error too (as it was with node:http's client, which destroyed the request).
        if (err instanceof TimeoutError) timeouts++;
        errors++;
      },
    );
    outstanding.add(p);
    void p.then(() => outstanding.delete(p));
  };

  let seq = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (seq < total && !stopped && start + seq * intervalMs <= now) {
        if (seq === warmupCount) {
          cpuBefore = process.cpuUsage();
          o.onWindowStart?.();
        }
        send(seq, start + seq * intervalMs);
        seq++;
      }
      if (seq < total && !stopped) setTimeout(tick, Math.max(0, start + seq * intervalMs - performance.now()));
      else resolve();
    };
    tick();
  });
  // Stopped before the window began: it begins (empty) now, so that callers' counters are read.
  if (seq <= warmupCount) o.onWindowStart?.();
  await Promise.all(outstanding);
  for (const t of targets) t.close();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpuBefore);

  const sorted = latencies.subarray(0, n).sort();
  const pct = (p: number) => percentile(sorted, p);
  return {
    // Answered within the sending window, per second: below the offered rate when the server falls behind.
    reqPerSec: inWindow / o.duration,
    requests: n,
    p50Ms: pct(50),
    p99Ms: pct(99),
    maxMs: pct(100),
    non2xx,
    errors,
    timeouts,
    statusCodes,
    seconds,
    loaderCpuSeconds: (cpu.user + cpu.system) / 1e6,
    series: perSecond.filter((b) => b !== undefined).map((b) => ({ ...b, meanMs: b.meanMs / b.responses })),
  };
}
