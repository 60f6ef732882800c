/**
 * A raw HTTP/1.1 client over node:http for hostile requests: the path goes out exactly as written
 * (no URL normalisation, malformed percent-encoding kept), header values may carry any byte
 * 0x20-0xff (latin1 strings are sent byte for byte), and the body is sent as given bytes. fetch
 * would refuse or rewrite most of these.
 */
import http from 'node:http';
import net from 'node:net';
import { checkResponse } from '../helpers/conformance.ts';
import { describeBlocks, startLoopWatchdog, type LoopWatchdog } from '../helpers/loop-watchdog.ts';

export interface RawRequest {
  method: string;
  /** Path and query, sent verbatim. */
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: unknown;
}

/**
 * The fuzz suites run the server in this process: the watchdog sees every request block the event
 * loop for more than 200 ms (the request is named in the report). Work of the harness itself
 * (setup, state snapshots) is labelled `harness: …` and not held against the server.
 *
 * One watchdog and one connection pool per test file: a worker may run several files one after the
 * other with this module loaded once, so `closeClient` (each file's afterAll) stops them and the
 * next use starts fresh ones — no file sees another's blocks, and none is left unwatched.
 */
let current: { watchdog: LoopWatchdog; agent: http.Agent } | undefined;

function client(): { watchdog: LoopWatchdog; agent: http.Agent } {
  if (!current) {
    current = { watchdog: startLoopWatchdog(), agent: new http.Agent({ keepAlive: true, maxSockets: 4 }) };
    current.watchdog.note('harness: setup');
  }
  return current;
}
client();

/** Marks what the harness does next, so a block in it is not blamed on a request. */
export function harness(what: string): void {
  client().watchdog.note(`harness: ${what}`);
}

/** Requests that blocked the event loop for more than 200 ms since the last call (one line each). */
export async function loopBlocks(waitMs?: number): Promise<string[]> {
  return describeBlocks((await client().watchdog.take(waitMs)).filter((b) => !b.during.startsWith('harness:')));
}

/** Latin1 string whose bytes are the UTF-8 encoding of `s`: how to put UTF-8 into a header. */
export function utf8Header(s: string): string {
  return Buffer.from(s, 'utf8').toString('latin1');
}

export function send(origin: string, req: RawRequest, timeoutMs = 20_000): Promise<RawResponse> {
  const url = new URL(origin);
  const { watchdog, agent } = client();
  watchdog.note(`${req.method} ${req.path.slice(0, 300)}`);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = String(req.body.length);
    const r = http.request(
      { host: url.hostname, port: Number(url.port), method: req.method, path: req.path, headers, agent, setHost: true },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if (text !== '') {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          // The answer to a hostile request is checked against the live schema too (issue #21).
          if (json !== undefined) {
            const type = res.headers['content-type'];
            // The check's own work (parsing the live document, compiling a validator) is the harness's.
            harness('live-schema check');
            try {
              checkResponse(req.method, req.path, res.statusCode ?? 0, Array.isArray(type) ? type[0]! : (type ?? null), json);
            } catch (err) {
              reject(err);
              return;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    r.setTimeout(timeoutMs, () => r.destroy(new Error(`timeout after ${timeoutMs} ms: ${req.method} ${req.path.slice(0, 200)}`)));
    r.on('error', reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

/**
 * Writes `bytes` on a fresh TCP connection and returns everything the server answers before it
 * closes (or `waitMs` passes): for requests no HTTP client library would produce.
 */
export function sendBytes(origin: string, bytes: Buffer | string, waitMs = 2_000): Promise<string> {
  const url = new URL(origin);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(url.port), url.hostname, () => socket.write(bytes));
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(Buffer.concat(chunks).toString('latin1'));
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', done);
    socket.on('close', done);
    socket.on('error', done);
  });
}

/** Splits a raw HTTP/1.1 response into status, headers and body. */
export function parseRawResponse(raw: string): { status: number; headers: Record<string, string>; body: string } | undefined {
  const m = /^HTTP\/1\.1 (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(raw);
  if (!m) return undefined;
  const headers: Record<string, string> = {};
  for (const line of m[2]!.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(m[1]), headers, body: m[3]! };
}

/** Ends this file's use of the client (afterAll): its connections and its watchdog. */
export function closeClient(): void {
  if (!current) return;
  current.agent.destroy();
  void current.watchdog.stop();
  current = undefined;
}
