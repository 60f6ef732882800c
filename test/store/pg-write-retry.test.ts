/**
 * Every write operation is retried as a whole on a serialization failure (PostgreSQL lane only).
 *
 * Every write of a platform's data runs in a unit of work that takes the platform write lock first
 * (src/store/platform-lock.ts: `select pg_advisory_xact_lock_shared(…)`, or `pg_advisory_xact_lock`
 * for a sandbox reset, unqualified). This file's server connects with `search_path=<its schema>,
 * pg_catalog`, so functions of the same names and signatures in its schema shadow the built-ins:
 * once armed, the first call for the target platform raises SQLSTATE 40001 — as if PostgreSQL had
 * rolled the transaction back on a conflict — and every other call takes the real lock. Arming is a
 * sequence value (`nextval` is not rolled back with the failed transaction), and so is firing.
 *
 * For every write operation of the served document (POST, PUT, PATCH, DELETE) but the operator's
 * (platform tokens, agent tokens, and the public device-code redemption), a valid request goes to
 * each of two identical worlds: to the reference world as is, to the other with the failure armed.
 * The injected one must have fired, must not be a 5xx, and must be answered as the reference was
 * (status, and error code).
 *
 * The firing is the request's own: the server's clock is frozen and the worlds have no webhook
 * endpoint, so nothing runs in the background for the target platform between arming and the
 * request (the job runner and the deliverer's claims take the lock with pg_try_advisory_xact_lock_shared,
 * which is not shadowed), and an arming that did not fire is cleared before the next request.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTransientConflict } from '../../src/store/retry.ts';
import { operationsOf, type Operation } from '../helpers/api/operations.ts';
import { sendOperation, type Caller } from '../helpers/api/request.ts';
import { buildWorld, quiesce, type World } from '../helpers/api/world.ts';
import type { Res } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const base = process.env.TEST_DATABASE_URL;
if (!base) throw new Error('pg-write-retry runs on the postgres lane (TEST_DATABASE_URL)');
/** This file's schema (test/helpers/pg-schema.setup.ts puts it in the URL's search_path). */
const schema = /search_path=([a-z0-9_]+)/.exec(new URL(base).searchParams.get('options') ?? '')?.[1];
if (!schema) throw new Error(`no search_path schema in TEST_DATABASE_URL options: ${base}`);
/** The same database with pg_catalog searched after the schema: the schema's functions shadow the built-ins. */
const shadowUrl = (() => {
  const u = new URL(base);
  u.searchParams.set('options', `-c search_path=${schema},pg_catalog`);
  return u.toString();
})();

/** The platform lock's second key (src/store/platform-lock.ts): the first 32 bits of SHA-256 of the id. */
const platformKey = (platformId: string) => createHash('sha256').update(platformId).digest().readInt32BE(0);

const INJECTOR = `
create sequence ${schema}.test_conflict_armed;
create sequence ${schema}.test_conflict_fired;
create table ${schema}.test_conflict_target (platform_key int4 not null);
insert into ${schema}.test_conflict_target values (0);

-- Fires (40001) when armed more often than it has fired, for the target platform only.
create function ${schema}.test_conflict_fire(k2 int4) returns void language plpgsql as $$
declare armed bigint; fired bigint;
begin
  if k2 is distinct from (select platform_key from ${schema}.test_conflict_target) then return; end if;
  select case when is_called then last_value else 0 end into armed from ${schema}.test_conflict_armed;
  select case when is_called then last_value else 0 end into fired from ${schema}.test_conflict_fired;
  if armed > fired then
    perform nextval('${schema}.test_conflict_fired');
    raise exception 'injected serialization failure (test/store/pg-write-retry.test.ts)' using errcode = '40001';
  end if;
end $$;

create function ${schema}.pg_advisory_xact_lock_shared(k1 int4, k2 int4) returns void language plpgsql as $$
begin
  perform ${schema}.test_conflict_fire(k2);
  perform pg_catalog.pg_advisory_xact_lock_shared(k1, k2);
end $$;

create function ${schema}.pg_advisory_xact_lock(k1 int4, k2 int4) returns void language plpgsql as $$
begin
  perform ${schema}.test_conflict_fire(k2);
  perform pg_catalog.pg_advisory_xact_lock(k1, k2);
end $$;
`;

const fired = async (): Promise<number> => {
  const r = await control.query(`select case when is_called then last_value else 0 end as n from ${schema}.test_conflict_fired`);
  return Number(r.rows[0].n);
};
const arm = async (platformId: string): Promise<void> => {
  await control.query(`update ${schema}.test_conflict_target set platform_key = $1`, [platformKey(platformId)]);
  await control.query(`select nextval('${schema}.test_conflict_armed')`);
};

/** Fired as often as armed: an arming that did not fire is not left for the next request. */
const disarm = async (): Promise<void> => {
  await control.query(`select setval('${schema}.test_conflict_fired', (select last_value from ${schema}.test_conflict_armed))`);
};

// The injector exists before the server's first statement (nothing is prepared against the
// built-in), and the server runs on a frozen clock: nothing becomes due on its own between a
// request and its twin.
const NOW = Date.now();
const control = new pg.Client({ connectionString: shadowUrl });
await control.connect();
await control.query(INJECTOR);
const srv: TestServer = await startServer({ deps: { clock: { nowMs: () => NOW } }, env: { DATABASE_URL: shadowUrl } });
afterAll(async () => {
  await srv.close();
  await control.end();
});

describe('the injector', () => {
  it('fails the first platform lock of the target platform once per arming, with SQLSTATE 40001', async () => {
    const client = new pg.Client({ connectionString: shadowUrl });
    await client.connect();
    try {
      const lock = async (platformId: string) => {
        await client.query('begin');
        try {
          await client.query('select pg_advisory_xact_lock_shared($1::int4, $2::int4)', [1, platformKey(platformId)]);
          return 'locked';
        } catch (err) {
          return (err as { code?: string }).code;
        } finally {
          await client.query('rollback');
        }
      };
      const before = await fired();
      await arm('Platform:target');
      expect(await lock('Platform:other')).toBe('locked');
      expect(await lock('Platform:target')).toBe('40001');
      expect(await lock('Platform:target')).toBe('locked');
      expect(await fired()).toBe(before + 1);
      expect(isTransientConflict({ code: '40001' })).toBe(true);
    } finally {
      await client.end();
    }
  });
});

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Writes first, deletions next, the sandbox reset last (it empties the platform). */
const rank = (o: Operation) => (o.operationId === 'sandboxReset' ? 2 : o.method === 'DELETE' ? 1 : 0);

const doc = (await srv.anon.get('/openapi.json')).body;
const writeOps = operationsOf(doc)
  .filter((o) => WRITES.has(o.method) && o.auth !== 'admin')
  .sort((a, b) => rank(a) - rank(b));

/** What must match between a request and its twin: the status and, for an error, its code. */
const answer = (res: Res) => ({ status: res.status, code: res.status >= 400 ? res.body?.code : undefined });

describe('every write operation is retried on a serialization failure', () => {
  /** The reference world (no failure) and its twin (the failure injected into each first attempt). */
  let ref: World;
  let twin: World;

  beforeAll(async () => {
    ref = await buildWorld(srv, await srv.newPlatform({ name: 'Retry reference' }), true);
    twin = await buildWorld(srv, await srv.newPlatform({ name: 'Retry twin' }), true);
    await quiesce(srv, [ref.platform.id, twin.platform.id], NOW);
  });

  it('covers the write operations of platform and agent tokens', () => {
    expect(writeOps.filter((o) => o.auth === 'basic').length).toBeGreaterThan(30);
    expect(writeOps.filter((o) => o.auth === 'agent').length).toBeGreaterThan(3);
  });

  for (const op of writeOps) {
    it(`${op.key} (${op.operationId})`, async () => {
      const caller = (w: World): Caller =>
        op.auth === 'agent' ? { bearer: w.agentToken! } : op.auth === 'basic' ? { basic: w.platform.creds } : {};
      const expected = await sendOperation(srv.origin, op, ref, caller(ref));
      await quiesce(srv, [ref.platform.id, twin.platform.id], NOW);

      const before = await fired();
      await arm(twin.platform.id);
      const res = await sendOperation(srv.origin, op, twin, caller(twin)).finally(disarm);
      const what = `${op.key}: injected ${res.status} ${res.text.slice(0, 300)}; reference ${expected.status} ${expected.text.slice(0, 300)}`;
      expect(await fired(), `the injected failure did not fire: ${what}`).toBe(before + 1);
      expect(res.status, what).toBeLessThan(500);
      expect(answer(res), what).toEqual(answer(expected));
      await quiesce(srv, [ref.platform.id, twin.platform.id], NOW);
    });
  }
});
