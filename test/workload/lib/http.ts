/**
 * The workload's HTTP client: JSON over fetch, like test/helpers/http.ts, but its base URL is read
 * at every request, so clients survive a server restart on a new port (and, on a cluster target,
 * each request goes to the balancer's next live process).
 */
import { checkResponse } from '../../helpers/conformance.ts';
import { basicHeader, type Creds, type Res } from '../../helpers/http.ts';

export type { Creds, Res };

/** A response body. `any` (like Res.body): the auditor reads fields one by one, and its checks are the type check. */
// biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
export type Wire = any;

export interface Send {
  headers?: Record<string, string>;
  query?: Record<string, string | number | boolean | undefined>;
}

export class Api {
  constructor(
    private readonly base: () => string,
    readonly auth: { basic?: Creds; bearer?: string } = {},
  ) {}

  with(auth: { basic?: Creds; bearer?: string }): Api {
    return new Api(this.base, auth);
  }

  /** The same credentials, every request to `baseUrl` (one process of a cluster, not the balancer). */
  at(baseUrl: string): Api {
    return new Api(() => baseUrl, this.auth);
  }

  get(path: string, o?: Send): Promise<Res> {
    return this.request('GET', path, undefined, o);
  }

  post(path: string, body?: unknown, o?: Send): Promise<Res> {
    return this.request('POST', path, body, o);
  }

  patch(path: string, body?: unknown, o?: Send): Promise<Res> {
    return this.request('PATCH', path, body, o);
  }

  /** POST multipart/form-data with one file part (`field`), as the SDK's uploads send it. */
  async postFile(path: string, field: string, content: string, filename: string, type: string): Promise<Res> {
    const form = new FormData();
    form.append(field, new Blob([content], { type }), filename);
    return this.request('POST', path, form);
  }

  async request(method: string, path: string, body?: unknown, o: Send = {}): Promise<Res> {
    const headers: Record<string, string> = { accept: 'application/json', ...o.headers };
    if (this.auth.basic) headers.authorization = basicHeader(this.auth.basic);
    if (this.auth.bearer) headers.authorization = `Bearer ${this.auth.bearer}`;
    // A FormData body sets its own multipart content type (with the boundary).
    const payload = body === undefined ? undefined : body instanceof FormData ? body : JSON.stringify(body);
    if (typeof payload === 'string') headers['content-type'] = 'application/json';
    let url = this.base() + path;
    if (o.query) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(o.query)) if (v !== undefined) qs.append(k, String(v));
      const s = qs.toString();
      if (s) url += `?${s}`;
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
