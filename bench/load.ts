/**
 * One load run with autocannon, in this process: fixed connections, pipelining 1, for a duration.
 * Latency percentiles are computed from every response's own timing (autocannon's hrtime, µs
 * resolution) rather than from autocannon's histogram, which rounds to whole milliseconds.
 */
import autocannon, { type AutocannonOptions, type AutocannonRequest, type Instance } from 'autocannon';
import type { HttpRequest, RequestFactory } from './scenarios/types.ts';

export interface LoadOptions {
  origin: string;
  request: HttpRequest | RequestFactory;
  connections: number;
  /** Seconds. */
  duration: number;
  title: string;
}

export interface LoadResult {
  /** Mean of autocannon's per-second request counts. */
  reqPerSec: number;
  /** All responses received. */
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
  /** Wall-clock seconds of the run. */
  seconds: number;
  /** CPU seconds this process (the load generator) used during the run. */
  loaderCpuSeconds: number;
  /** Open loop only (paced.ts): latency per second of the run, by the requests' due times. */
  series?: SecondStats[];
}

export interface SecondStats {
  /** Seconds from the start of the run. */
  second: number;
  responses: number;
  meanMs: number;
  maxMs: number;
}

let current: Instance | undefined;

/** Stops a run in progress (SIGINT). */
export function stopLoad(): void {
  current?.stop();
}

function toAutocannon(r: HttpRequest): AutocannonRequest {
  const out: AutocannonRequest = { method: r.method, path: r.path, headers: { ...r.headers } };
  if (r.body !== undefined) out.body = r.body;
  return out;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const opts: AutocannonOptions = {
    url: o.origin,
    connections: o.connections,
    pipelining: 1,
    duration: o.duration,
    timeout: 10,
    title: o.title,
  };
  if (typeof o.request === 'function') {
    const factory = o.request;
    let seq = 0;
    // Called before each request; autocannon re-encodes the request, so this costs loader CPU.
    opts.requests = [{ setupRequest: (req) => ({ ...req, ...toAutocannon(factory(seq++)) }) }];
  } else {
    // Encoded once and replayed as-is: the cheapest path for the load generator.
    opts.requests = [toAutocannon(o.request)];
  }

  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  const instance = autocannon(opts);
  current = instance;
  instance.on('response', (_client, _status, _bytes, responseTime) => {
    if (n === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[n++] = responseTime;
  });
  const result = await instance;
  current = undefined;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpuBefore);

  const sorted = latencies.subarray(0, n).sort();
  const pct = (p: number) => percentile(sorted, p);
  const statusCodes: Record<string, number> = {};
  for (const [code, s] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = Number(s.count);
  return {
    reqPerSec: result.requests.average,
    requests: n,
    p50Ms: pct(50),
    p99Ms: pct(99),
    maxMs: percentile(sorted, 100),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    seconds,
    loaderCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

/** The p-th percentile (nearest rank) of ascending `sorted`; NaN when it is empty. */
export function percentile(sorted: Float64Array, p: number): number {
  const n = sorted.length;
  return n === 0 ? NaN : sorted[Math.min(n - 1, Math.max(0, Math.ceil((p / 100) * n) - 1))]!;
}
