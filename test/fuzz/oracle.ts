/**
 * The properties every fuzz response must have, as a function from (case, response) to a list of
 * violations (empty: fine). Kept free of test-framework calls so the runner can collect every
 * violation of a run and report them together.
 */
import { ERROR_CATALOGUE, isCatalogued } from '../../src/http/errors.ts';
import type { RawRequest, RawResponse } from './client.ts';
import type { Operation } from '../helpers/api/operations.ts';

export interface Expectation {
  /** The request is invalid by construction: any 2xx/3xx is a violation. */
  mustReject: boolean;
  /** Statuses this case may get beyond the operation's documented 4xx (e.g. 400 for a malformed URL). */
  extraAllowed?: number[];
  /** The case must get exactly this status (auth failures: 401; another platform's id: see sameAs). */
  exact?: number;
  /** Exactly this error code. */
  exactCode?: string;
}

/** Statuses any operation may answer to a hostile request, besides what it documents. */
export const GENERIC_STATUSES = [405, 413, 415];

const ERROR_KEYS = new Set(['status', 'code', 'message', 'details', 'reason']);

/** Signs of an internal error or implementation detail leaking into a response body. */
const LEAKS: [RegExp, string][] = [
  [/\n\s+at [^\n]+:\d+:\d+/, 'stack trace'],
  [/\bat (?:async )?[\w.<>]+ \((?:file:\/\/|\/|node:)/, 'stack frame'],
  [/node_modules/, 'node_modules path'],
  [/(?:\/work\/|\/home\/|\/tmp\/|\/usr\/|[A-Z]:\\\\)/, 'filesystem path'],
  [/\.(?:ts|js|mjs):\d+/, 'source location'],
  [
    /SQLITE_[A-Z]+|syntax error at or near|violates (?:unique|foreign key|check|not-null) constraint|relation "[^"]+"|invalid byte sequence/i,
    'database error text',
  ],
  [/\b(?:TypeError|ReferenceError|RangeError|SyntaxError): /, 'JavaScript error text'],
];

export function allowedStatuses(op: Operation, exp: Expectation): Set<number> {
  const out = new Set<number>();
  for (const s of op.documented) if (s >= 400 && s < 500) out.add(s);
  for (const s of GENERIC_STATUSES) out.add(s);
  for (const s of exp.extraAllowed ?? []) out.add(s);
  return out;
}

/**
 * Checks one response; returns the violations (empty when it has every property). With `req`, the
 * leak patterns skip what the response echoes of the request itself: a 404 naming a random path id
 * that happens to read `J:\\` has leaked nothing.
 */
export function check(op: Operation, exp: Expectation, res: RawResponse, req?: RawRequest): string[] {
  const v: string[] = [];
  if (res.status >= 500) v.push(`5xx: ${res.status}`);
  if (res.status >= 400) v.push(...checkErrorBody(res));
  else if (exp.mustReject) v.push(`accepted an invalid request with ${res.status}`);
  if (res.status >= 400 && res.status < 500) {
    const allowed = allowedStatuses(op, exp);
    if (!allowed.has(res.status)) v.push(`status ${res.status} not in the expected set {${[...allowed].sort().join(', ')}}`);
  }
  if (exp.exact !== undefined && res.status !== exp.exact) v.push(`expected status ${exp.exact}, got ${res.status}`);
  if (exp.exactCode !== undefined && (res.json as { code?: unknown } | undefined)?.code !== exp.exactCode)
    v.push(`expected code ${exp.exactCode}`);
  const own = req ? withoutEchoes(res, req) : res.text;
  for (const [re, what] of LEAKS) if (re.test(own)) v.push(`body leaks ${what}`);
  return v;
}

/** What the request sent, as text the server could echo: decoded path segments, query values, the body. */
function requestTexts(req: RawRequest): string[] {
  const decode = (s: string) => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  const q = req.path.indexOf('?');
  const pathPart = q < 0 ? req.path : req.path.slice(0, q);
  const query = q < 0 ? '' : req.path.slice(q + 1);
  const out = pathPart.split('/').map(decode);
  for (const kv of query.split('&')) out.push(...kv.split('=').map((x) => decode(x.replace(/\+/g, ' '))));
  if (req.body) out.push(req.body.toString('utf8'));
  // Longest first, so an echo is removed whole rather than a shorter input inside it.
  return out.filter((t) => t.length >= 3).sort((a, b) => b.length - a.length);
}

/** The response body, re-serialised with every string in it stripped of the request's own texts. */
function withoutEchoes(res: RawResponse, req: RawRequest): string {
  if (res.json === undefined) return res.text;
  const texts = requestTexts(req);
  const scrub = (x: unknown): unknown => {
    if (typeof x === 'string') return texts.reduce((s, t) => s.split(t).join('‹input›'), x);
    if (Array.isArray(x)) return x.map(scrub);
    if (x !== null && typeof x === 'object') return Object.fromEntries(Object.entries(x).map(([k, val]) => [k, scrub(val)]));
    return x;
  };
  return JSON.stringify(scrub(res.json));
}

/** The spec's error body: `{status, code, message, details?}` (+ `reason` on wallet 401s), as JSON. */
export function checkErrorBody(res: RawResponse): string[] {
  const v: string[] = [];
  const ct = String(res.headers['content-type'] ?? '');
  if (!/^application\/json\b/.test(ct)) v.push(`error content-type is "${ct}"`);
  const b = res.json;
  if (b === null || typeof b !== 'object' || Array.isArray(b)) return [...v, 'error body is not a JSON object'];
  const body = b as Record<string, unknown>;
  for (const k of Object.keys(body)) if (!ERROR_KEYS.has(k)) v.push(`error body has unknown key "${k}"`);
  if (body.status !== res.status) v.push(`body.status ${String(body.status)} ≠ HTTP ${res.status}`);
  if (typeof body.code !== 'string') v.push('body.code is not a string');
  else if (!isCatalogued(res.status, body.code)) {
    const known = (ERROR_CATALOGUE as Record<number, readonly string[]>)[res.status];
    v.push(known ? `code ${body.code} is not in the catalogue for ${res.status}` : `status ${res.status} has no catalogue entry`);
  }
  if (typeof body.message !== 'string' || body.message.length === 0) v.push('body.message is not a non-empty string');
  if (body.details !== undefined && (body.details === null || typeof body.details !== 'object' || Array.isArray(body.details)))
    v.push('body.details is not an object');
  if (body.reason !== undefined && typeof body.reason !== 'string') v.push('body.reason is not a string');
  return v;
}
