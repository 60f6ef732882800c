/**
 * The dashboard's one way to the server: the public API under BASE_PATH with the signed-in
 * credentials (kept in sessionStorage: gone when the tab closes), and the operator's /_admin reads.
 */

export const BASE = '/2025-10-13';

export type Session =
  | { mode: 'platform'; clientId: string; secret: string; platformName: string }
  | { mode: 'operator'; token: string; platformId: string | undefined; platformName: string };

const KEY = 'corridor.dashboard.session';

export function loadSession(): Session | undefined {
  try {
    const raw = sessionStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Session) : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(s: Session | undefined): void {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
}

/** An API error as the spec's error body carries it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function authHeaders(s: Session): Record<string, string> {
  if (s.mode === 'platform') return { authorization: `Basic ${btoa(`${s.clientId}:${s.secret}`)}` };
  // Operator mode: the admin bearer plus the platform it acts on (src/http/auth.ts).
  const h: Record<string, string> = { authorization: `Bearer ${s.token}` };
  if (s.platformId) h['x-corridor-platform'] = s.platformId;
  return h;
}

/** JSON in and out; a non-2xx answer throws an ApiError with the body's code and message. */
export async function call<T>(s: Session, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(s), accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const url = path.startsWith('/_admin') ? path : `${BASE}${path}`;
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const e = (parsed ?? {}) as { code?: string; message?: string };
    throw new ApiError(res.status, e.code ?? String(res.status), e.message ?? res.statusText);
  }
  return parsed as T;
}

export const get = <T>(s: Session, path: string, query: Record<string, string | number | undefined> = {}) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
  const qs = q.toString();
  return call<T>(s, 'GET', qs ? `${path}?${qs}` : path);
};
export const post = <T>(s: Session, path: string, body?: unknown) => call<T>(s, 'POST', path, body);

/** The list envelope every paged API route returns. */
export interface PageOf<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

/** Wire objects are read field by field for display. */
export type Wire = Record<string, unknown> & { id: string };
