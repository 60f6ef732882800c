/**
 * A local webhook receiver for developers (`corridor webhooks listen`): it checks each request's
 * signature against a platform's public key with the README's own `verifyWebhook`, prints one line
 * per request and answers as a well-behaved receiver would:
 *
 * - 401 for a missing or invalid signature (checked over the raw bytes, before parsing, as the
 *   README tells receivers to);
 * - 400 for a correctly signed body that is not a JSON envelope `{id, type, …}`;
 * - 200 otherwise — which is also how a receiver approves `INCOMING_PAYMENT.PENDING`;
 * - 405 for anything but POST, 413 for a body over 1 MiB. Any path is accepted.
 *
 * With `forwardTo`, a correctly signed envelope is also sent on to that URL — the same bytes, the
 * same signature headers — and the listener answers with the target's answer (its status and body;
 * 502 when it cannot be reached in FORWARD_TIMEOUT_MS), so the developer's app decides: it can
 * approve or refuse an `INCOMING_PAYMENT.PENDING`, and a failure there is retried by Corridor.
 *
 * Only the public key is ever held here; nothing secret is printed.
 */
import { createPublicKey } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { verifyWebhook } from './verify.ts';

/** The path printed in the listener's URL (every path is accepted). */
export const LISTEN_PATH = '/webhooks';
const MAX_BODY_BYTES = 1024 * 1024;

export interface ListenOptions {
  /** 0 picks a free port; the chosen one is in the returned url. */
  port: number;
  host: string;
  /** SPKI PEM of the platform's webhook key (GET /webhooks/signing-key). */
  publicKeyPem: string;
  /** One JSON object per request instead of a text line. */
  json?: boolean;
  /** Where each request's line goes (without the newline). */
  write: (line: string) => void;
  /** An http(s) URL each correctly signed envelope is forwarded to (see the module comment). */
  forwardTo?: string | undefined;
}

/** How long a forward may take before the listener answers 502. */
const FORWARD_TIMEOUT_MS = 10_000;
/** The most of the target's answer passed back. */
const MAX_FORWARD_REPLY_BYTES = 64 * 1024;
/** Request headers not passed on (they describe this hop, not the webhook). */
const HOP_HEADERS = new Set(['host', 'connection', 'keep-alive', 'content-length', 'transfer-encoding', 'upgrade', 'expect']);

/** What became of one forward: the target's answer, or why there was none. */
export type Forwarded = { status: number; ms: number; body: string; contentType: string } | { error: string; ms: number };

/** Sends the request on, bytes and signature headers as received. */
export async function forward(url: string, raw: Buffer, headers: IncomingHttpHeaders): Promise<Forwarded> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || HOP_HEADERS.has(k)) continue;
    out[k] = Array.isArray(v) ? v.join(', ') : v;
  }
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: out,
      body: new Uint8Array(raw),
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    const body = Buffer.from(await res.arrayBuffer())
      .subarray(0, MAX_FORWARD_REPLY_BYTES)
      .toString('utf8');
    return {
      status: res.status,
      ms: performance.now() - started,
      body,
      contentType: res.headers.get('content-type') ?? 'text/plain; charset=utf-8',
    };
  } catch (err) {
    const cause = err instanceof Error ? ((err.cause as { code?: string } | undefined)?.code ?? err.name) : String(err);
    return { error: cause === 'TimeoutError' ? `no answer in ${FORWARD_TIMEOUT_MS / 1000} s` : cause, ms: performance.now() - started };
  }
}

/** The line's forward part: `-> forwarded 204 in 3 ms`, or the failure. */
function forwardText(f: Forwarded): string {
  return 'error' in f ? `  -> forward FAILED (${f.error}): 502` : `  -> forwarded ${f.status} in ${Math.round(f.ms)} ms`;
}

export interface Listener {
  url: string;
  port: number;
  close(): Promise<void>;
}

export type SignatureCheck = 'ok' | 'missing' | 'invalid';

/** What the listener made of one request. */
export interface Inspected {
  status: 200 | 400 | 401;
  signature: SignatureCheck;
  /** The parsed body when it is a JSON envelope, else undefined. */
  event: Envelope | undefined;
}

interface Envelope {
  id: string;
  type: string;
  timestamp?: unknown;
  data?: unknown;
}

/**
 * Throws unless `pem` is a P-256 public key (a private key PEM is refused: the listener needs the
 * public half only, and a secret should not be passed around for this).
 */
export function checkPublicKeyPem(pem: string): void {
  if (/PRIVATE KEY/.test(pem)) throw new Error('expected a public key (SPKI PEM), got a private key');
  const key = createPublicKey(pem);
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('expected an ECDSA P-256 public key');
  }
}

/** The signature header: X-Grid-Signature, or X-Service-Signature (both carry the same value). */
function signatureOf(headers: IncomingHttpHeaders): string | undefined {
  const v = headers['x-grid-signature'] ?? headers['x-service-signature'];
  return Array.isArray(v) ? v[0] : v;
}

export function inspect(raw: Buffer, headers: IncomingHttpHeaders, publicKeyPem: string): Inspected {
  const header = signatureOf(headers);
  let signature: SignatureCheck = 'missing';
  if (header !== undefined) {
    try {
      signature = verifyWebhook(raw, header, publicKeyPem) ? 'ok' : 'invalid';
    } catch {
      // A header that is not {"v","s"} JSON, or a signature that is not DER, is simply invalid.
      signature = 'invalid';
    }
  }
  const event = parseEnvelope(raw);
  const status = signature !== 'ok' ? 401 : event ? 200 : 400;
  return { status, signature, event };
}

function parseEnvelope(raw: Buffer): Envelope | undefined {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { id, type } = body as Record<string, unknown>;
  return typeof id === 'string' && typeof type === 'string' ? (body as Envelope) : undefined;
}

/** The resource an event is about: `data.id` when there is one (a TEST event has none). */
function resourceOf(event: Envelope | undefined): string | undefined {
  const data = event?.data;
  const id = typeof data === 'object' && data !== null ? (data as { id?: unknown }).id : undefined;
  return typeof id === 'string' ? id : undefined;
}

/** `time  type  id  resource  signature ok|INVALID (why)`, with the answer when it is not 200. */
export function formatLine(at: Date, r: Inspected, bytes: number): string {
  const sig =
    r.signature === 'ok' ? 'signature ok' : r.signature === 'missing' ? 'signature INVALID (no signature header)' : 'signature INVALID';
  const fields = r.event ? [r.event.type, r.event.id, resourceOf(r.event) ?? '-'] : [`(not a JSON envelope, ${bytes} bytes)`];
  const answer = r.status === 200 ? '' : `  -> ${r.status}`;
  return `${at.toISOString()}  ${fields.join('  ')}  ${sig}${answer}`;
}

function formatJson(at: Date, r: Inspected, f?: Forwarded): string {
  return JSON.stringify({
    receivedAt: at.toISOString(),
    status: f ? ('error' in f ? 502 : f.status) : r.status,
    signature: r.signature,
    resourceId: resourceOf(r.event) ?? null,
    event: r.event ?? null,
    ...(f ? { forwarded: 'error' in f ? { error: f.error } : { status: f.status, ms: Math.round(f.ms) } } : {}),
  });
}

const REPLY_TEXT: Record<Inspected['status'], string> = {
  200: 'ok',
  400: 'not a JSON webhook envelope',
  401: 'invalid or missing signature',
};

/** The URL to put in `webhookEndpoint`: a wildcard bind address is reached over loopback. */
function urlFor(host: string, port: number): string {
  const h = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${h.includes(':') ? `[${h}]` : h}:${port}${LISTEN_PATH}`;
}

export async function startListener(o: ListenOptions): Promise<Listener> {
  checkPublicKeyPem(o.publicKeyPem);
  const server: Server = createServer((req, res) => {
    const reply = (status: number, text: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
      res.end(text);
    };
    if (req.method !== 'POST') {
      reply(405, 'POST webhooks here', { allow: 'POST' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(c);
    });
    req.on('end', () => {
      if (tooLarge) {
        reply(413, 'body too large', { connection: 'close' });
        return;
      }
      const raw = Buffer.concat(chunks);
      const r = inspect(raw, req.headers, o.publicKeyPem);
      const at = new Date();
      if (o.forwardTo === undefined || r.status !== 200) {
        o.write(o.json ? formatJson(at, r) : formatLine(at, r, raw.length));
        reply(r.status, REPLY_TEXT[r.status]);
        return;
      }
      void forward(o.forwardTo, raw, req.headers).then((f) => {
        o.write(o.json ? formatJson(at, r, f) : `${formatLine(at, r, raw.length)}${forwardText(f)}`);
        if ('error' in f) reply(502, `forward to ${o.forwardTo} failed: ${f.error}`);
        else if (f.status === 204 || f.status === 304) {
          res.writeHead(f.status);
          res.end();
        } else reply(f.status, f.body, { 'content-type': f.contentType });
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  if (!addr || typeof addr !== 'object') throw new Error('the listener did not bind');
  return {
    url: urlFor(o.host, addr.port),
    port: addr.port,
    close: () =>
      new Promise<void>((resolve) => {
        // The deliverer keeps connections alive; drop them so close() does not wait on them.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
