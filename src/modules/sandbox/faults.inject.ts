/**
 * Applying fault rules: to API requests (a preValidation hook: after authentication and after the
 * body has been received, before it is validated and long before any unit of work opens) and to
 * webhook deliveries (a check the deliverer calls before it sends). Only SANDBOX platforms' requests
 * and deliveries are ever affected.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.ts';
import { errors } from '../../http/errors.ts';
import { platformNowMs } from '../../lib/time.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import { faultCache, type FaultSnapshot } from './faults.cache.ts';
import { roll, ruleFor, servedRouteKey } from './faults.rules.ts';

/** The routes that configure faults are never faulted (a catch-all rule must not lock its owner out). */
export const FAULTS_PATH = '/sandbox/faults';

/** What the routes need from the hook: the keys of the routes a rule may name. */
export interface FaultInjection {
  faultableRoutes: ReadonlySet<string>;
}

const isExempt = (url: string, prefix: string) => url === `${prefix}${FAULTS_PATH}` || url.startsWith(`${prefix}${FAULTS_PATH}/`);

/**
 * Installs the request side. Call after `installAuth` (its onRequest hook must run first: this one
 * reads the caller's platform) and before the routes are registered (it collects their keys).
 */
export function installFaultInjection(app: FastifyInstance, db: Kysely<Database>, deps: Deps, prefix: string): FaultInjection {
  const faultableRoutes = new Set<string>();
  app.addHook('onRoute', (route: RouteOptions) => {
    const auth = route.config?.auth;
    if ((auth !== 'platform' && auth !== 'agent') || isExempt(route.url, prefix)) return;
    for (const m of Array.isArray(route.method) ? route.method : [route.method]) {
      const key = servedRouteKey(m, route.url, prefix);
      if (key !== undefined && m !== 'HEAD') faultableRoutes.add(key);
    }
  });
  const cache = faultCache(db);
  // Callback style with a synchronous path: a platform without rules costs a Map lookup, no promise.
  // preValidation, not onRequest: the server's request timeout (CORRIDOR_REQUEST_TIMEOUT_MS) runs
  // until the whole request has been received, so a delay taken while a large body still waited
  // unread in the socket ended as a 400 "Request timed out" blamed on the client. By preValidation
  // Fastify has read the body (streamed multipart uploads excepted: their handler reads them).
  app.addHook('preValidation', (req, _reply, done) => {
    const platform = req.platformAuth?.platform ?? req.agentAuth?.platform;
    if (platform === undefined || platform.environment !== 'SANDBOX') return done();
    const snap = cache.fresh();
    if (snap !== undefined && !snap.has(platform.id)) return done();
    applyRouteFault(req, platform, snap ?? cache.current(), deps, prefix).then(() => done(), done);
  });
  return { faultableRoutes };
}

async function applyRouteFault(
  req: FastifyRequest,
  platform: PlatformRow,
  snapshot: FaultSnapshot | Promise<FaultSnapshot>,
  deps: Deps,
  prefix: string,
): Promise<void> {
  const faults = (await snapshot).get(platform.id);
  const url = req.routeOptions.url;
  if (faults === undefined || url === undefined || isExempt(url, prefix)) return;
  const key = servedRouteKey(req.method, url, prefix);
  const rule = key === undefined ? undefined : ruleFor(faults.routes, key, platformNowMs(deps.clock, platform));
  if (rule === undefined) return;
  // A timer: the event loop serves everyone else meanwhile, and no connection or transaction is held
  // (authentication has finished; validation and the handler, and so any unit of work, have not started).
  if (rule.latencyMs) await sleep(rule.latencyMs);
  if (roll(deps.rng, rule.errorRate)) throw injectedError(rule.errorStatus ?? 503, rule.route ?? key!);
}

/** The answer of an injected failure: the catalogue's code for the status, saying it was injected. */
function injectedError(status: 500 | 503, rule: string) {
  const details = { injectedFault: { route: rule } };
  return status === 503
    ? errors.coded(503, 'SERVICE_UNAVAILABLE', `Service temporarily unavailable (sandbox fault injection: ${rule})`, details)
    : errors.coded(500, 'INTERNAL_ERROR', `Internal error (sandbox fault injection: ${rule})`, details);
}

/**
 * The delivery side, for the deliverer: whether to drop this attempt of an event of `type` of the
 * platform at platform time `nowMs`. The cache holds SANDBOX platforms' rules only.
 */
export function deliveryFaults(db: Kysely<Database>, deps: Pick<Deps, 'rng'>): DropCheck {
  const cache = faultCache(db);
  return async (platformId, type, nowMs) => {
    const faults = (cache.fresh() ?? (await cache.current())).get(platformId);
    if (faults === undefined) return false;
    return roll(deps.rng, ruleFor(faults.events, type, nowMs)?.dropRate);
  };
}

export type DropCheck = (platformId: string, eventType: string, platformNowMs: number) => Promise<boolean>;
