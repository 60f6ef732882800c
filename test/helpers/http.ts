/** A small HTTP client over fetch for tests: JSON in, JSON out, status and headers kept. */
import { checkResponse } from './conformance.ts';

export interface Creds {
  id: string;
  secret: string;
}

// biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
export interface Res<T = any> {
  status: number;
  // `any`: tests read arbitrary response fields; the assertions are the type check.
  body: T;
  headers: Headers;
  text: string;
}

export interface ReqOpts {
  headers?: Record<string, string>;
  /** Send this exact text as the body instead of JSON-encoding. */
  raw?: string;
  query?: Record<string, string | number | boolean | (string | number)[] | undefined>;
}

export function basicHeader(c: Creds): string {
  return `Basic ${Buffer.from(`${c.id}:${c.secret}`).toString('base64')}`;
}

export class Client {
  constructor(
    readonly base: string,
    readonly auth: { basic?: Creds; bearer?: string } = {},
  ) {}

  with(auth: { basic?: Creds; bearer?: string }): Client {
    return new Client(this.base, auth);
  }

  get(path: string, o?: ReqOpts) {
    return this.request('GET', path, undefined, o);
  }
  post(path: string, body?: unknown, o?: ReqOpts) {
    return this.request('POST', path, body, o);
  }
  patch(path: string, body?: unknown, o?: ReqOpts) {
    return this.request('PATCH', path, body, o);
  }
  put(path: string, body?: unknown, o?: ReqOpts) {
    return this.request('PUT', path, body, o);
  }
  delete(path: string, o?: ReqOpts) {
    return this.request('DELETE', path, undefined, o);
  }

  async request(method: string, path: string, body?: unknown, o: ReqOpts = {}): Promise<Res> {
    const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
    if (this.auth.basic) headers.authorization ??= basicHeader(this.auth.basic);
    if (this.auth.bearer) headers.authorization ??= `Bearer ${this.auth.bearer}`;
    let payload: string | undefined;
    if (o.raw !== undefined) payload = o.raw;
    else if (body !== undefined) payload = JSON.stringify(body);
    if (payload !== undefined) headers['content-type'] ??= 'application/json';
    let url = this.base + path;
    if (o.query) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(o.query)) {
        if (v === undefined) continue;
        for (const item of Array.isArray(v) ? v : [v]) qs.append(k, String(item));
      }
      const s = qs.toString();
      if (s) url += (url.includes('?') ? '&' : '?') + s;
    }
    const res = await fetch(url, { method, headers, body: payload });
    const text = await res.text();
    let parsed: unknown;
    if (text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    }
    // Every JSON answer is checked against the live API's schema for its operation (issue #21).
    if (parsed !== undefined) checkResponse(method, url, res.status, res.headers.get('content-type'), parsed);
    return { status: res.status, body: parsed, headers: res.headers, text };
  }
}

/** Asserts the spec's error body shape and returns it. */
export function expectError(res: Res, status: number, code: string): Res {
  if (res.status !== status || res.body?.code !== code || res.body?.status !== status || typeof res.body?.message !== 'string') {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${res.text}`);
  }
  return res;
}

/**
 * GET `path` exactly as given, with no URL normalisation by the client (fetch would resolve dot
 * segments and re-encode before sending): what a traversal probe needs.
 */
export async function rawGet(origin: string, path: string): Promise<{ status: number; body: string }> {
  const { request } = await import('node:http');
  const u = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}
