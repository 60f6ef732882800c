/**
 * `Idempotency-Key` handling for routes whose effect must happen once.
 *
 * The key row is inserted in the same database transaction as the effect and updated with the
 * response before commit, so a committed effect always has its stored response and a rolled-back
 * one leaves no key behind (a failed request can be retried with the same key). Two concurrent
 * requests with one key serialise on the key's primary key: on PostgreSQL the second insert waits
 * for the first transaction and then finds its row; on SQLite transactions are already serial.
 * A replay answers with the stored status and body and `Idempotency-Hit: true`; the same key with
 * a different method, path or body is a 409 `CONFLICT`.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.ts';
import { prepared } from '../store/prepared.ts';
import { retryOnConflict } from '../store/retry.ts';
import type { Database } from '../store/schema.ts';
import { errors } from './errors.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export interface Outcome {
  status: number;
  body: unknown;
}

/** Placeholder status of a key whose transaction has not committed yet. */
const IN_FLIGHT = 0;

function requestHash(req: FastifyRequest): string {
  return createHash('sha256')
    .update(req.method)
    .update('\n')
    .update(req.url)
    .update('\n')
    .update(req.body === undefined ? '' : JSON.stringify(req.body))
    .digest('hex');
}

/** Reads and checks the header; undefined when the request has none. */
export function idempotencyKeyOf(req: FastifyRequest): string | undefined {
  const raw = req.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || !KEY_PATTERN.test(key)) {
    throw errors.invalidField('Idempotency-Key', 'must be 1-255 printable ASCII characters');
  }
  return key;
}

/**
 * Runs `effect` in one transaction, once per (platform, Idempotency-Key), and sends its outcome.
 * Without the header it simply runs `effect` in a transaction.
 */
export async function runOnce(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  platformId: string,
  effect: (trx: Kysely<Database>) => Promise<Outcome>,
): Promise<FastifyReply> {
  const key = idempotencyKeyOf(req);
  const outcome = await retryOnConflict(() => ctx.db.transaction().execute(async (trx): Promise<Outcome & { hit?: boolean }> => {
    if (key === undefined) return effect(trx);
    const hash = requestHash(req);
    const inserted = await insertKey.first(trx, { platformId, key, hash, at: new Date(ctx.deps.clock.nowMs()).toISOString() });
    if (inserted === undefined) {
      const prior = await selectKey.first(trx, { platformId, key });
      if (!prior) throw new Error(`idempotency key ${key} neither inserted nor found`);
      if (prior.request_hash !== hash) throw errors.idempotencyKeyReused();
      if (prior.response_status === IN_FLIGHT) throw errors.idempotencyInProgress();
      return { status: prior.response_status, body: JSON.parse(prior.response_body) as unknown, hit: true };
    }
    const result = await effect(trx);
    await storeResponse.run(trx, { platformId, key, status: result.status, body: JSON.stringify(result.body) });
    return result;
  }));
  if (outcome.hit) reply.header('Idempotency-Hit', 'true');
  return reply.code(outcome.status).send(outcome.body);
}

// Money-moving requests carry a key: its statements are compiled once (see store/prepared.ts).
const insertKey = prepared((db, a: { platformId: string; key: string; hash: string; at: string }) =>
  db
    .insertInto('idempotency_keys')
    .values({ platform_id: a.platformId, key: a.key, request_hash: a.hash, response_status: IN_FLIGHT, response_body: '', created_at: a.at })
    .onConflict((oc) => oc.columns(['platform_id', 'key']).doNothing())
    .returning('key'),
);

const selectKey = prepared((db, a: { platformId: string; key: string }) =>
  db.selectFrom('idempotency_keys').selectAll().where('platform_id', '=', a.platformId).where('key', '=', a.key),
);

const storeResponse = prepared((db, a: { platformId: string; key: string; status: number; body: string }) =>
  db
    .updateTable('idempotency_keys')
    .set({ response_status: a.status, response_body: a.body })
    .where('platform_id', '=', a.platformId)
    .where('key', '=', a.key),
);
