/**
 * One load run with autocannon, in this process: fixed connections, pipelining 1, for a duration.
 * Latency percentiles are computed from every response's own timing (autocannon's hrtime, µs
 * resolution) rather than from autocannon's histogram, which rounds to whole milliseconds.
 *
 * Several origins (`--processes`: Corridor servers sharing one database) get one autocannon
 * instance each, all running at once, with the connections split between them as evenly as
 * possible; their results are combined into one (counts and req/s summed, percentiles over every
 * response of every instance).
 */
import autocannon, { type AutocannonOptions, type AutocannonRequest, type Instance, type Result } from 'autocannon';
import type { HttpRequest, RequestFactory } from './scenarios/types.ts';

export interface LoadOptions {
  /** `http://127.0.0.1:<port>`, or several: the load is spread over them (see the file comment). */
  origin: string | readonly string[];
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

const current = new Set<Instance>();

/** Stops a run in progress (SIGINT). */
export function stopLoad(): void {
  for (const instance of current) instance.stop();
}

/** The origins of `LoadOptions.origin` (or `PacedOptions.origin`) as a list. */
export function originList(origin: string | readonly string[]): readonly string[] {
  return typeof origin === 'string' ? [origin] : origin;
}

/** `total` connections over `n` origins as evenly as possible, the first ones taking the remainder. */
export function splitConnections(total: number, n: number): number[] {
  return Array.from({ length: n }, (_, i) => Math.floor(total / n) + (i < total % n ? 1 : 0));
}

function toAutocannon(r: HttpRequest): AutocannonRequest {
  const out: AutocannonRequest = { method: r.method, path: r.path, headers: { ...r.headers } };
  if (r.body !== undefined) out.body = r.body;
  return out;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const origins = originList(o.origin);
  const split = splitConnections(o.connections, origins.length);
  // One counter for every instance: a factory's `seq` stays unique within the run (idempotency keys).
  let seq = 0;
  const request = o.request;
  const optionsFor = (origin: string, connections: number): AutocannonOptions => {
    const opts: AutocannonOptions = {
      url: origin,
      connections,
      pipelining: 1,
      duration: o.duration,
      timeout: 10,
      title: o.title,
    };
    if (typeof request === 'function') {
      // Called before each request; autocannon re-encodes the request, so this costs loader CPU.
      opts.requests = [{ setupRequest: (req) => ({ ...req, ...toAutocannon(request(seq++)) }) }];
    } else {
      // Encoded once and replayed as-is: the cheapest path for the load generator.
      opts.requests = [toAutocannon(request)];
    }
    return opts;
  };

  let latencies = new Float64Array(1 << 16);
  let n = 0;
  const cpuBefore = process.cpuUsage();
  const t0 = performance.now();
  // An origin left without a connection (fewer connections than origins) gets no load.
  const instances = origins.flatMap((origin, i) => (split[i]! > 0 ? [autocannon(optionsFor(origin, split[i]!))] : []));
  for (const instance of instances) {
    current.add(instance);
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      if (n === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[n++] = responseTime;
    });
  }
  let results: Result[];
  try {
    results = await Promise.all(instances);
  } finally {
    for (const instance of instances) current.delete(instance);
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpuBefore);

  const sorted = latencies.subarray(0, n).sort();
  const pct = (p: number) => percentile(sorted, p);
  const statusCodes: Record<string, number> = {};
  for (const result of results) {
    for (const [code, s] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = (statusCodes[code] ?? 0) + Number(s.count);
  }
  const sum = (f: (r: Result) => number) => results.reduce((acc, r) => acc + f(r), 0);
  return {
    // Each instance's mean of its per-second samples, summed over the instances (all ran at once).
    reqPerSec: sum((r) => r.requests.average),
    requests: n,
    p50Ms: pct(50),
    p99Ms: pct(99),
    maxMs: percentile(sorted, 100),
    non2xx: sum((r) => r.non2xx),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
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
