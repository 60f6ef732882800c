/**
 * Fault rules (POST /sandbox/faults), as pure functions: checking a rule set beyond what its schema
 * says, compiling it into lookups by route and by event type, and the dice. No store, no Fastify.
 *
 * A rule names exactly one target: a `route` ("POST /quotes/{quoteId}/execute", as the OpenAPI
 * document spells it, `:quoteId` accepted too; or "*" for every faultable route) or an `eventType`
 * (a webhook event type, or "*"). Route rules add latency and/or answer 500/503 at a rate; event
 * rules drop deliveries at a rate. An exact rule wins over "*". A rule stops applying at `expiresAt`
 * (the platform's clock, like every sandbox timestamp).
 */
import type { Rng } from '../../deps.ts';
import type { FieldError } from '../../http/errors.ts';
import { isWebhookType } from '../../webhook-delivery/catalogue.ts';

/** A rule as stored and shown (normalised: route as given, errorStatus filled in when errorRate is). */
export interface FaultRule {
  route?: string;
  eventType?: string;
  latencyMs?: number;
  errorRate?: number;
  errorStatus?: 500 | 503;
  dropRate?: number;
  expiresAt?: string;
}

/** Most rules one platform may hold: enough for a suite's scenarios, small enough to scan per request. */
export const MAX_FAULT_RULES = 20;
/** Longest added latency: longer than a client's usual timeout, far below the server's request timeout. */
export const MAX_FAULT_LATENCY_MS = 30_000;
/** The wildcard target of a rule. */
export const ANY = '*';

/** A rule ready to apply: its expiry as epoch milliseconds (platform clock). */
export interface CompiledRule {
  rule: FaultRule;
  expiresMs: number;
}

/** A platform's rules, looked up by normalised route key and by event type. */
export interface CompiledFaults {
  routes: Map<string, CompiledRule>;
  events: Map<string, CompiledRule>;
}

/**
 * `METHOD /path` with every path parameter written `{}` (whatever its name), so the key of a rule
 * and the key of a served route compare equal: "post /quotes/{id}/execute/" → "POST /quotes/{}/execute".
 * Undefined when `s` is not of that shape.
 */
export function routeKey(s: string): string | undefined {
  if (s === ANY) return ANY;
  const m = /^([A-Za-z]+) (\/[^\s?#]*)$/.exec(s);
  if (!m) return undefined;
  let path = m[2]!.replace(/\{[^/{}]+\}|:[^/]+/g, '{}');
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return `${m[1]!.toUpperCase()} ${path}`;
}

/** The key of a served route: its method and URL pattern (`/2025-10-13/quotes/:quoteId`) without the prefix. */
export function servedRouteKey(method: string, url: string, prefix: string): string | undefined {
  if (!url.startsWith(`${prefix}/`)) return undefined;
  return routeKey(`${method} ${url.slice(prefix.length)}`);
}

export interface RuleContext {
  /** Keys (routeKey) of the routes a rule may name. */
  faultableRoutes: ReadonlySet<string>;
  /** The platform's clock now (an expiresAt must be later). */
  nowMs: number;
}

/** Problems of a rule set the schema cannot express, one per field (`rules.<i>.<field>`). */
export function checkRules(rules: readonly FaultRule[], ctx: RuleContext): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Map<string, number>();
  rules.forEach((r, i) => {
    const at = (field: string, message: string) => out.push({ field: `rules.${i}.${field}`, message });
    if ((r.route === undefined) === (r.eventType === undefined)) {
      out.push({ field: `rules.${i}`, message: 'must name exactly one of route and eventType' });
      return;
    }
    let target: string | undefined;
    if (r.route !== undefined) {
      const key = routeKey(r.route);
      if (key === undefined) at('route', 'must be "*" or "METHOD /path", e.g. "POST /quotes"');
      else if (key !== ANY && !ctx.faultableRoutes.has(key)) at('route', `no faultable operation ${r.route}`);
      if (r.dropRate !== undefined) at('dropRate', 'applies to eventType rules only');
      if (r.latencyMs === undefined && r.errorRate === undefined) at('route', 'needs latencyMs or errorRate');
      if (r.errorStatus !== undefined && r.errorRate === undefined) at('errorStatus', 'needs errorRate');
      target = key && `route ${key}`;
    } else {
      const type = r.eventType!;
      if (type !== ANY && !isWebhookType(type)) at('eventType', `unknown webhook event type ${type}`);
      for (const f of ['latencyMs', 'errorRate', 'errorStatus'] as const) if (r[f] !== undefined) at(f, 'applies to route rules only');
      if (r.dropRate === undefined) at('dropRate', 'is required for an eventType rule');
      target = `event ${type}`;
    }
    if (r.expiresAt !== undefined && !(Date.parse(r.expiresAt) > ctx.nowMs)) at('expiresAt', "must be after the platform's current time");
    if (target !== undefined) {
      const first = seen.get(target);
      if (first !== undefined) out.push({ field: `rules.${i}`, message: `targets the same ${target.split(' ')[0]} as rules.${first}` });
      else seen.set(target, i);
    }
  });
  return out;
}

/** The rules as stored: errorStatus 503 unless given (the answer of an overloaded server), expiresAt canonical. */
export function normaliseRules(rules: readonly FaultRule[]): FaultRule[] {
  return rules.map((r) => {
    const out: FaultRule = {};
    if (r.route !== undefined) out.route = r.route;
    if (r.eventType !== undefined) out.eventType = r.eventType;
    if (r.latencyMs !== undefined) out.latencyMs = r.latencyMs;
    if (r.errorRate !== undefined) {
      out.errorRate = r.errorRate;
      out.errorStatus = r.errorStatus ?? 503;
    }
    if (r.dropRate !== undefined) out.dropRate = r.dropRate;
    if (r.expiresAt !== undefined) out.expiresAt = new Date(Date.parse(r.expiresAt)).toISOString();
    return out;
  });
}

export function compileRules(rules: readonly FaultRule[]): CompiledFaults {
  const compiled: CompiledFaults = { routes: new Map(), events: new Map() };
  for (const rule of rules) {
    const c = { rule, expiresMs: rule.expiresAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(rule.expiresAt) };
    if (rule.eventType !== undefined) compiled.events.set(rule.eventType, c);
    else {
      const key = rule.route === undefined ? undefined : routeKey(rule.route);
      if (key !== undefined) compiled.routes.set(key, c);
    }
  }
  return compiled;
}

/** The rule for `key` in `rules` at platform time `nowMs`: the exact one, else the wildcard; expired ones do not count. */
export function ruleFor(rules: ReadonlyMap<string, CompiledRule>, key: string, nowMs: number): FaultRule | undefined {
  const exact = rules.get(key);
  if (exact && exact.expiresMs > nowMs) return exact.rule;
  const any = rules.get(ANY);
  return any && any.expiresMs > nowMs ? any.rule : undefined;
}

/**
 * True with probability `rate`. Rates 0 and 1 draw nothing, so rules that are all-or-nothing leave a
 * seeded run's random stream (ids, account details) exactly as it would be without them.
 */
export function roll(rng: Rng, rate: number | undefined): boolean {
  if (rate === undefined || rate <= 0) return false;
  if (rate >= 1) return true;
  return rng.bytes(4).readUInt32BE(0) / 2 ** 32 < rate;
}
