/**
 * One webhook POST over node:http / node:https with keep-alive connections: a 10 s deadline for the
 * whole exchange (connect, request, status, body), redirects never followed (the caller reports
 * them), at most the first 4 KiB of the answer read, and an abort on shutdown (`close`).
 *
 * Guarded requests (PRODUCTION platforms, see target-guard.ts) refuse IP-literal hosts that are not
 * globally routable before connecting, and resolve names through `guardedLookup`, so the address
 * connected to is the one checked. They use agents of their own: a pooled connection made without
 * the check (a sandbox platform's) is never reused for a guarded request to the same host.
 */
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, literalRefusal, plainLookup, systemResolveAll, type ResolveAll } from './target-guard.ts';

export const REQUEST_TIMEOUT_MS = 10_000;
export const MAX_RESPONSE_BYTES = 4096;

/** The receiver's answer, or why there was none. */
export type HttpOutcome =
  | { status: number; body: string; location: string | undefined; error?: undefined }
  | { status?: undefined; error: string };

export interface SendOptions {
  /** Check the target (PRODUCTION platforms without CORRIDOR_WEBHOOK_ALLOW_PRIVATE). */
  guarded: boolean;
}

const SHUTTING_DOWN = 'aborted: server shutting down';

interface AgentPair {
  http: http.Agent;
  https: https.Agent;
}

export class WebhookSender {
  private readonly lookup: ReturnType<typeof guardedLookup>;
  private readonly openLookup: ReturnType<typeof plainLookup> | undefined;
  private readonly open: AgentPair;
  private readonly guarded: AgentPair;
  /** Aborts of the requests in flight (one set, rather than a listener per request on a shared signal). */
  private readonly inFlight = new Set<() => void>();
  private closed = false;

  /** `resolveAll`: a resolver of the deliverer's own (tests); by default the system's (dns.lookup). */
  constructor(resolveAll?: ResolveAll) {
    this.lookup = guardedLookup(resolveAll ?? systemResolveAll);
    // Unguarded requests resolve as node:net does by default, unless a resolver was given.
    this.openLookup = resolveAll ? plainLookup(resolveAll) : undefined;
    const openOptions = { keepAlive: true, ...(this.openLookup ? { lookup: this.openLookup } : {}) };
    this.open = { http: new http.Agent(openOptions), https: new https.Agent(openOptions) };
    this.guarded = {
      http: new http.Agent({ keepAlive: true, lookup: this.lookup }),
      https: new https.Agent({ keepAlive: true, lookup: this.lookup }),
    };
  }

  /** Aborts the requests in flight (`aborted: server shutting down`), refuses new ones, closes the pooled connections. */
  close(): void {
    this.closed = true;
    for (const abort of [...this.inFlight]) abort();
    for (const a of [this.open.http, this.open.https, this.guarded.http, this.guarded.https]) a.destroy();
  }

  post(target: string, body: Buffer, headers: Record<string, string>, o: SendOptions): Promise<HttpOutcome> {
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return Promise.resolve({ error: 'the endpoint is not a valid URL' });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.resolve({ error: `unsupported scheme ${url.protocol}` });
    if (url.username !== '' || url.password !== '') return Promise.resolve({ error: 'an endpoint URL with credentials is not supported' });
    if (o.guarded) {
      const refused = literalRefusal(url);
      if (refused !== undefined) return Promise.resolve({ error: refused });
    }
    if (this.closed) return Promise.resolve({ error: SHUTTING_DOWN });
    const secure = url.protocol === 'https:';
    const agents = o.guarded ? this.guarded : this.open;
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    return new Promise<HttpOutcome>((resolve) => {
      let settled = false;
      const finish = (out: HttpOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inFlight.delete(onAbort);
        resolve(out);
      };
      const options: https.RequestOptions = {
        method: 'POST',
        hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, 'content-length': String(body.length) },
        agent: secure ? agents.https : agents.http,
        ...(o.guarded ? { lookup: this.lookup } : this.openLookup ? { lookup: this.openLookup } : {}),
      };
      const req = secure ? https.request(options) : http.request(options);
      const timer = setTimeout(() => {
        finish({ error: `no response within ${REQUEST_TIMEOUT_MS / 1000} s` });
        req.destroy();
      }, REQUEST_TIMEOUT_MS);
      timer.unref();
      const onAbort = () => {
        finish({ error: SHUTTING_DOWN });
        req.destroy();
      };
      this.inFlight.add(onAbort);
      req.on('error', (err) => finish({ error: describeError(err) }));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let total = 0;
        const answer = (): HttpOutcome => ({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).subarray(0, MAX_RESPONSE_BYTES).toString('utf8'),
          location: res.headers.location,
        });
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          chunks.push(chunk);
          total += chunk.length;
          if (total >= MAX_RESPONSE_BYTES) {
            // Enough: the rest is not read (the connection is dropped rather than drained).
            finish(answer());
            res.destroy();
          }
        });
        res.on('end', () => finish(answer()));
        res.on('error', (err) => finish({ error: describeError(err) }));
        res.on('close', () => finish(res.complete ? answer() : { error: 'the connection closed before the response ended' }));
      });
      req.end(body);
    });
  }
}

/** A connection error as the attempt log shows it: `CODE: message` (a refusal: its message). */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ERR_WEBHOOK_TARGET_REFUSED') return err.message;
  if (err instanceof AggregateError && err.errors.length > 0) {
    return [...new Set(err.errors.map(describeError))].join('; ');
  }
  return code ? `${code}: ${err.message}` : err.message;
}
