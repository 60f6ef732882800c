/**
 * The one way a route writes. `write` opens a unit of work (src/unit.ts) on the caller's platform —
 * one transaction holding the platform write lock, its events written before commit, retried as a
 * whole on a PostgreSQL deadlock or serialisation failure — and, when the route declares the
 * `Idempotency-Key` header, runs the effect once per key (src/http/idempotency.ts). The handler's
 * service gets the unit and returns the outcome; `write` sends it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.ts';
import type { PlatformRow } from '../store/schema.ts';
import { runUnit, type Unit, type UnitOptions } from '../unit.ts';
import { idempotencyKeyOf, once, storedKeyOf, takesIdempotencyKey, type Outcome } from './idempotency.ts';

export type { Outcome };

export const ok = (body: unknown): Outcome => ({ status: 200, body });
export const created = (body: unknown): Outcome => ({ status: 201, body });
export const accepted = (body: unknown): Outcome => ({ status: 202, body });
export const noContent: Outcome = { status: 204, body: undefined };

/** Whom a write acts for: the platform, and whose idempotency keys it uses (an agent's are its own). */
function callerOf(req: FastifyRequest): { platform: PlatformRow; keyScope: string | undefined } {
  if (req.platformAuth) return { platform: req.platformAuth.platform, keyScope: undefined };
  if (req.agentAuth) return { platform: req.agentAuth.platform, keyScope: req.agentAuth.agent.id };
  throw new Error(`write route ${req.routeOptions.url} has no authenticated platform or agent`);
}

/** Runs `fn` in a unit of work for the request's caller and sends its outcome. */
export async function write(
  app: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  fn: (u: Unit) => Promise<Outcome>,
  opts?: UnitOptions,
): Promise<FastifyReply> {
  const caller = callerOf(req);
  return writeFor(app, caller.platform, req, reply, caller.keyScope, fn, opts);
}

/**
 * `write` for a route whose platform is not its caller's (a device code's redemption names its own
 * platform): the unit opens on `platform`, read inside it when given as an id.
 */
export async function writeFor(
  app: AppContext,
  platform: PlatformRow | string,
  req: FastifyRequest,
  reply: FastifyReply,
  keyScope: string | undefined,
  fn: (u: Unit) => Promise<Outcome>,
  opts?: UnitOptions,
): Promise<FastifyReply> {
  const key = takesIdempotencyKey(req) ? idempotencyKeyOf(req) : undefined;
  const stored = key === undefined ? undefined : storedKeyOf(req, key, keyScope);
  const outcome = await runUnit(
    app,
    platform,
    (u): Promise<Outcome & { hit?: boolean }> =>
      stored === undefined ? fn(u) : once(u.trx, u.platform.id, iso(u.deps.clock.nowMs()), stored, () => fn(u)),
    opts,
  );
  if (outcome.hit) reply.header('Idempotency-Hit', 'true');
  reply.code(outcome.status);
  return outcome.body === undefined ? reply.send() : reply.send(outcome.body);
}

/**
 * `write` for a route that talks to the outside world between two writes (a webhook replay sends
 * the event once its claim commits): `fn` runs in the unit — retried as a whole, no side effect
 * outside the store — and `then` runs after it commits, outside any transaction, and answers.
 * No idempotency: such routes take no key.
 */
export async function writeThen<T>(
  app: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  fn: (u: Unit) => Promise<T>,
  then: (t: T) => Promise<Outcome>,
): Promise<FastifyReply> {
  if (takesIdempotencyKey(req)) throw new Error(`writeThen route ${req.routeOptions.url} must not take an Idempotency-Key`);
  const claimed = await runUnit(app, callerOf(req).platform, fn);
  const outcome = await then(claimed);
  reply.code(outcome.status);
  return outcome.body === undefined ? reply.send() : reply.send(outcome.body);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
