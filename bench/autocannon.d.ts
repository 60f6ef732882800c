// The part of autocannon 8's programmatic API the bench uses (the package ships no types).
// See node_modules/autocannon/README.md, "API" and "Results".
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** Called before each request; returns the request to send (falsy restarts the sequence). */
    setupRequest?: (req: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest | undefined;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
  }

  export interface AutocannonOptions {
    url: string;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    amount?: number;
    /** Seconds. */
    timeout?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    requests?: AutocannonRequest[];
    title?: string;
    bailout?: number;
    excludeErrorStats?: boolean;
  }

  export interface Histogram {
    min: number;
    max: number;
    average: number;
    mean: number;
    stddev: number;
    total: number;
    sent?: number;
    p2_5: number;
    p50: number;
    p75: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
    p99_99: number;
    p99_999: number;
  }

  export interface Result {
    title?: string;
    url: string;
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    /** Seconds. */
    duration: number;
    errors: number;
    timeouts: number;
    mismatches: number;
    non2xx: number;
    resets: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
    start: Date;
    finish: Date;
    connections: number;
    pipelining: number;
  }

  export interface Instance extends EventEmitter, PromiseLike<Result> {
    stop(): void;
    on(event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): this;
    on(event: 'reqError', listener: (error: Error) => void): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
  }

  interface Autocannon {
    (opts: AutocannonOptions): Instance;
    (opts: AutocannonOptions, cb: (err: Error | null, result: Result) => void): Instance;
  }

  const autocannon: Autocannon;
  export default autocannon;
}
