/**
 * Hostile input, every operation of the served OpenAPI document: malformed, oversized, wrongly
 * typed and deeply nested bodies, unknown fields at every depth, wrong content types, garbage and
 * other-platform path ids, bad query strings and headers, wrong methods, and seeded random
 * mutations (test/fuzz/cases.ts). For every response: never a 5xx; the spec's error body with a
 * catalogued code; a 4xx from the operation's documented set plus generic ones; no stack traces or
 * internals; no change to either platform's state from rejected requests; another platform's id
 * answered exactly like an id that exists nowhere.
 *
 * Deterministic per seed: the seed is printed; `FUZZ_SEED=<n>` reproduces a run and
 * `FUZZ_ITERATIONS=<n>` sets the random cases per operation (default 6) and turns on every structural variant for a long run.
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../src/config.ts';
import { startServer } from '../helpers/server.ts';
import { baselineBody, pathSlot } from '../helpers/api/baselines.ts';
import { generate, type FuzzCase } from './cases.ts';
import { closeClient, harness, loopBlocks, send, type RawResponse } from './client.ts';
import { operationsOf, type Operation } from '../helpers/api/operations.ts';
import { check } from './oracle.ts';
import { fuzzIterations, fuzzSeed, Rng } from './rng.ts';
import { diff, snapshot } from '../helpers/api/state.ts';
import { buildWorld, quiesce } from '../helpers/api/world.ts';

const SEED = fuzzSeed();
// FUZZ_ITERATIONS set: a long run (that many random cases per operation, every structural
// variant, a field budget that grows with it); unset: the bounded CI run.
const THOROUGH = process.env.FUZZ_ITERATIONS !== undefined && process.env.FUZZ_ITERATIONS !== '';
const RANDOM_CASES = fuzzIterations(6);
const FIELD_BUDGET = THOROUGH ? Math.max(60, RANDOM_CASES * 4) : 30;
console.log(
  `[fuzz] operations: seed=${SEED} randomCases=${RANDOM_CASES} fieldBudget=${FIELD_BUDGET} thorough=${THOROUGH} — reproduce with FUZZ_SEED=${SEED}${THOROUGH ? ` FUZZ_ITERATIONS=${RANDOM_CASES}` : ''}`,
);

// A frozen clock: nothing becomes due on its own while the fuzzer compares state snapshots
// (quote expiry, delayed sandbox outcomes); work due "now" still runs and is awaited.
const NOW = Date.now();
const srv = await startServer({ deps: { clock: { nowMs: () => NOW } } });
afterAll(async () => {
  closeClient();
  await srv.close();
});

const docRes = await send(srv.origin, { method: 'GET', path: `${BASE_PATH}/openapi.json`, headers: { accept: 'application/json' } });
// Destructive operations last, so an accepted case (a bug, reported) spoils as little as possible.
const rank = (o: Operation) => (o.operationId === 'sandboxReset' ? 3 : o.method === 'DELETE' ? 2 : o.method === 'GET' ? 0 : 1);
harness('reading the OpenAPI document');
const ops: Operation[] = operationsOf(docRes.json).sort((a, b) => rank(a) - rank(b));
const withAgents = ops.some((o) => o.path.startsWith(`${BASE_PATH}/agents/me`));
harness('building the worlds');
const A = await buildWorld(srv, await srv.newPlatform({ name: 'Fuzz target A' }), withAgents);
const B = await buildWorld(srv, await srv.newPlatform({ name: 'Fuzz other B' }), withAgents);
await quiesce(srv, [A.platform.id, B.platform.id], NOW);
const root = new Rng(SEED);

/** FUZZ_REPORT=<file>: every violation also goes there as one JSON line (for triage of long runs). */
function report(entry: Record<string, unknown>): void {
  if (process.env.FUZZ_REPORT) fs.appendFileSync(process.env.FUZZ_REPORT, `${JSON.stringify({ seed: SEED, ...entry })}\n`);
}
const sentPerOp = new Map<string, number>();

function describeCase(c: FuzzCase, res: RawResponse | undefined): string {
  const hdrs = Object.entries(c.req.headers)
    .filter(([k]) => k !== 'accept')
    .map(([k, v]) => `${k}: ${k === 'authorization' ? `${v.slice(0, 24)}…` : JSON.stringify(v.slice(0, 80))}`)
    .join('; ');
  const body = c.req.body ? ` body(${c.req.body.length}B)=${JSON.stringify(c.req.body.subarray(0, 160).toString('utf8'))}` : '';
  const resText = res ? `→ ${res.status} ${res.text.slice(0, 300)}` : '→ no response';
  return `  [${c.label}] ${c.req.method} ${c.req.path.slice(0, 160)} {${hdrs}}${body}\n    ${resText}`;
}

async function runOperation(op: Operation): Promise<string[]> {
  const violations: string[] = [];
  const rng = root.fork(op.key);
  const cases = generate({ op, A, B, rng, randomCases: RANDOM_CASES, fieldBudget: FIELD_BUDGET, thorough: THOROUGH, ops });
  sentPerOp.set(op.key, cases.length);
  const pairs = new Map<string, { c: FuzzCase; res: RawResponse }[]>();
  harness('snapshot');
  let baseA = await snapshot(srv, A.platform.id);
  const baseB = await snapshot(srv, B.platform.id);
  let since: string[] = [];
  // A read must change nothing whatever it is answered, so reads compare only first and last state.
  const safe = op.method === 'GET';
  for (const c of cases) {
    if (!c.exp.mustReject && !safe) {
      // A case that may be accepted: the rejected requests before it must have changed nothing.
      harness('snapshot');
      const now = await snapshot(srv, A.platform.id);
      const d = diff(baseA, now);
      if (d.length) violations.push(`state of A changed by rejected requests (${d.join(', ')}) among:\n${since.join('\n')}`);
      baseA = now;
      since = [];
    }
    let res: RawResponse | undefined;
    try {
      res = await send(srv.origin, c.req);
    } catch (err) {
      violations.push(`request failed (${(err as Error).message})\n${describeCase(c, undefined)}`);
      continue;
    }
    const v = check(op, c.exp, res, c.req);
    if (v.length) {
      violations.push(`${v.join('; ')}\n${describeCase(c, res)}`);
      report({
        op: op.operationId,
        label: c.label,
        problems: v,
        status: res.status,
        body: res.text.slice(0, 300),
        method: c.req.method,
        path: c.req.path.slice(0, 200),
      });
    }
    if (c.pair) pairs.set(c.pair, [...(pairs.get(c.pair) ?? []), { c, res }]);
    if (res.status < 400 && !safe) {
      // Accepted: let its delayed work finish, then compare against the state after it.
      harness('quiesce');
      await quiesce(srv, [A.platform.id], NOW);
      baseA = await snapshot(srv, A.platform.id);
      since = [];
    } else if (since.length < 400) {
      since.push(describeCase(c, res));
    }
  }
  harness('snapshot');
  const d = diff(baseA, await snapshot(srv, A.platform.id));
  if (d.length)
    violations.push(`state of A changed by ${safe ? 'reads' : 'rejected requests'} (${d.join(', ')}) among:\n${since.join('\n')}`);
  const dB = diff(baseB, await snapshot(srv, B.platform.id));
  if (dB.length) violations.push(`state of platform B changed (${dB.join(', ')}) by requests against A`);
  for (const [pair, list] of pairs) {
    const keyOf = (r: RawResponse) => `${r.status} ${(r.json as { code?: string } | undefined)?.code}`;
    if (list.length === 2 && keyOf(list[0]!.res) !== keyOf(list[1]!.res)) {
      violations.push(
        `another platform's id is distinguishable from an unknown id (${pair}):\n${list.map((x) => describeCase(x.c, x.res)).join('\n')}`,
      );
    }
  }
  const ledger = await srv.ledger(A.platform.id);
  if (!ledger.ok) violations.push(`ledger check of A failed: ${JSON.stringify(ledger).slice(0, 500)}`);
  // No request may hold the event loop (and with it every tenant) for more than 200 ms.
  violations.push(...(await loopBlocks(0)));
  return violations;
}

describe(`fuzz every operation of the OpenAPI document (seed ${SEED})`, () => {
  it('reads the document: core, embedded-wallet auth and (when present) agent operations', () => {
    expect(ops.length).toBeGreaterThan(50);
    const paths = ops.map((o) => o.path);
    expect(paths).toContain(`${BASE_PATH}/auth/credentials/{id}/verify`);
    expect(paths).toContain(`${BASE_PATH}/quotes/{quoteId}/execute`);
    // Every operation with a body has a schema-valid baseline, so its mutations test one fault at a time.
    const noBaseline = ops.filter((o) => o.body && baselineBody(o, A)?.source === 'none').map((o) => o.operationId);
    expect(noBaseline, 'add a valid body to HAND in test/helpers/api/baselines.ts').toEqual([]);
    // Every path parameter is filled with a real id of the right kind (else its cases test little).
    const unmapped = ops.flatMap((o) => o.pathParams.filter((p) => pathSlot(o, p.name) === undefined).map((p) => `${o.key} {${p.name}}`));
    expect(unmapped, 'map these in pathSlot (test/helpers/api/baselines.ts)').toEqual([]);
  });

  for (const op of ops) {
    it(`${op.key} (${op.operationId})`, async () => {
      const violations = await runOperation(op);
      expect(violations, `seed ${SEED} (FUZZ_SEED=${SEED} reproduces):\n${violations.join('\n')}`).toEqual([]);
    });
  }

  it('no request blocked the event loop for more than 200 ms', async () => {
    expect(await loopBlocks()).toEqual([]);
  });

  it('sent hostile requests to every operation', () => {
    const starved = ops.filter((o) => (sentPerOp.get(o.key) ?? 0) < 10).map((o) => `${o.key}: ${sentPerOp.get(o.key) ?? 0}`);
    expect(starved).toEqual([]);
    const total = [...sentPerOp.values()].reduce((a, b) => a + b, 0);
    console.log(`[fuzz] operations: ${ops.length} operations, ${total} requests (seed ${SEED})`);
  });
});
