/** A real webhook receiver for tests: records each request's raw body bytes and headers. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { noteWebhook } from './conformance.ts';
import { closeServer, listenLoopback } from './loopback.ts';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  /** The parsed envelope. `any`: tests read its fields; the assertions are the type check. */
  // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
  body: any;
}

export interface Reply {
  status: number;
  body?: string;
  headers?: Record<string, string>;
  /** Answer only after this long (a slow receiver). */
  delayMs?: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Decides each response (default 200 "ok"); `n` counts earlier requests for the same event id. */
  respond: (r: Received, n: number) => Reply;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hooks'): Promise<Receiver> {
  const received: Received[] = [];
  const rec: Receiver = { url: '', received, respond: () => ({ status: 200, body: 'ok' }), close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      const r: Received = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, raw, body };
      noteWebhook(body);
      const n = received.filter((x) => x.body?.id !== undefined && x.body?.id === r.body?.id).length;
      received.push(r);
      const reply = rec.respond(r, n);
      const answer = () => {
        res.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
        res.end(reply.body ?? '');
      };
      if (reply.delayMs) setTimeout(answer, reply.delayMs);
      else answer();
    });
  });
  rec.url = await listenLoopback(server, path);
  rec.close = () => closeServer(server);
  return rec;
}

/** Polls until `fn` returns a truthy value (or fails after `ms`). */
export async function waitFor<T>(fn: () => Promise<T> | T, ms = 10_000): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}
