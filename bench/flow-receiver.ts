/**
 * The `flow` scenario's webhook receiver: a loopback HTTP server inside the bench process that
 * checks every request as README "Verifying webhooks" tells receivers to — `X-Service-Signature`
 * (`{"v":"1","s":"<base64 DER>"}`, ECDSA P-256 SHA-256) over the exact bytes received, before
 * parsing — answers 200 (401 to a missing or bad signature) and hands each verified event, with the
 * time it arrived, to a callback.
 *
 * It runs on the bench's main thread, beside autocannon: its CPU (an ECDSA verification per event)
 * is part of the loader CPU the report prints, as a real platform's receiver is part of its flow.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';

/** A verified webhook envelope. */
export interface WebhookEnvelope {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

export interface FlowReceiver {
  url: string;
  /** Requests answered so far. */
  readonly requests: number;
  /** Requests whose signature was missing or did not verify (answered 401). */
  readonly badSignatures: number;
  /** Correctly signed requests whose body was not an event envelope (answered 400). */
  readonly badBodies: number;
  close(): Promise<void>;
}

/** CLOCK_MONOTONIC in µs: the clock bench/run.ts stamps the measured window with. */
export function nowUs(): number {
  return Number(process.hrtime.bigint()) / 1000;
}

/** True when `header` is a valid signature of `raw` by `key` (the README's check, with the key parsed once). */
export function signatureValid(raw: Buffer, header: string | string[] | undefined, key: KeyObject): boolean {
  if (typeof header !== 'string') return false;
  try {
    const { v, s } = JSON.parse(header) as { v?: unknown; s?: unknown };
    return v === '1' && typeof s === 'string' && verify('sha256', raw, key, Buffer.from(s, 'base64'));
  } catch {
    return false;
  }
}

/**
 * Starts the receiver on 127.0.0.1 (a free port). `onEvent` runs for each correctly signed event,
 * duplicates included (delivery is at least once). The server is unref'd: it never keeps the bench
 * process alive, even when a run fails before `close`.
 */
export async function startFlowReceiver(
  publicKeyPem: string,
  onEvent: (e: WebhookEnvelope, arrivedUs: number) => void,
): Promise<FlowReceiver> {
  // A KeyObject, not the PEM: crypto.verify would parse a PEM string again on every call (~3× the cost).
  const key = createPublicKey(publicKeyPem);
  let requests = 0;
  let badSignatures = 0;
  let badBodies = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrivedUs = nowUs();
      requests++;
      const raw = Buffer.concat(chunks);
      if (!signatureValid(raw, req.headers['x-service-signature'], key)) {
        badSignatures++;
        res.writeHead(401).end();
        return;
      }
      let e: WebhookEnvelope | undefined;
      try {
        const parsed = JSON.parse(raw.toString('utf8')) as Partial<WebhookEnvelope>;
        if (typeof parsed.id === 'string' && typeof parsed.type === 'string' && typeof parsed.data === 'object' && parsed.data !== null)
          e = parsed as WebhookEnvelope;
      } catch {
        // not JSON: answered 400 below
      }
      if (!e) {
        badBodies++;
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200).end();
      onEvent(e, arrivedUs);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  server.unref();
  const addr = server.address();
  if (!addr || typeof addr !== 'object') throw new Error('flow receiver did not bind');
  return {
    url: `http://127.0.0.1:${addr.port}/webhooks`,
    get requests() {
      return requests;
    },
    get badSignatures() {
      return badSignatures;
    },
    get badBodies() {
      return badBodies;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
