/**
 * `Idempotency-Key` handling for routes whose effect must happen once (used by src/http/write.ts,
 * inside the request's unit of work).
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
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { canonicalJson } from '../lib/canonical-json.ts';
import { prepared } from '../store/prepared.ts';
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
  return (
    createHash('sha256')
      .update(req.method)
      .update('\n')
      .update(req.url)
      .update('\n')
      // Canonical: the same body with its keys in another order is the same request.
      .update(req.body === undefined ? '' : canonicalJson(req.body))
      .digest('hex')
  );
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

/** Whether the route declares `Idempotency-Key` among its headers (then a request's key is honoured). */
export function takesIdempotencyKey(req: FastifyRequest): boolean {
  const headers = req.routeOptions.schema?.headers as { properties?: Record<string, unknown> } | undefined;
  return headers?.properties?.[IDEMPOTENCY_HEADER] !== undefined;
}

/** A request's key, as stored: `scope` separates callers of one platform (an agent's keys are its own). */
export interface StoredKey {
  key: string;
  hash: string;
}

/** The stored key of `req` under `scope` (undefined: the platform's own), with its request hash. */
export function storedKeyOf(req: FastifyRequest, key: string, scope: string | undefined): StoredKey {
  return { key: scope === undefined ? key : `${scope}:${key}`, hash: requestHash(req) };
}

/**
 * Runs `effect` once per key, inside the caller's unit of work: the first time, its outcome is
 * stored with the key (both commit or neither does); later, the stored outcome is answered
 * (`hit`), a different request under the key is a 409, and a key whose first request has not
 * committed yet is a 409 too.
 */
export async function once(
  trx: Kysely<Database>,
  platformId: string,
  nowIso: string,
  k: StoredKey,
  effect: () => Promise<Outcome>,
): Promise<Outcome & { hit?: boolean }> {
  const inserted = await insertKey.first(trx, { platformId, key: k.key, hash: k.hash, at: nowIso });
  if (inserted === undefined) {
    const prior = await selectKey.first(trx, { platformId, key: k.key });
    if (!prior) throw new Error(`idempotency key ${k.key} neither inserted nor found`);
    if (prior.request_hash !== k.hash) throw errors.idempotencyKeyReused();
    if (prior.response_status === IN_FLIGHT) throw errors.idempotencyInProgress();
    const body = prior.response_body === '' ? undefined : (JSON.parse(prior.response_body) as unknown);
    return { status: prior.response_status, body, hit: true };
  }
  const result = await effect();
  await storeResponse.run(trx, {
    platformId,
    key: k.key,
    status: result.status,
    body: result.body === undefined ? '' : JSON.stringify(result.body),
  });
  return result;
}

// Money-moving requests carry a key: its statements are compiled once (see store/prepared.ts).
const insertKey = prepared((db, a: { platformId: string; key: string; hash: string; at: string }) =>
  db
    .insertInto('idempotency_keys')
    .values({
      platform_id: a.platformId,
      key: a.key,
      request_hash: a.hash,
      response_status: IN_FLIGHT,
      response_body: '',
      created_at: a.at,
    })
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
