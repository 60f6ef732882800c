/**
 * Crash safety of money movement: the seeded workload drives the real `corridor start` process and
 * SIGKILLs it at seeded points — while a burst of keyed money requests is in flight and delayed
 * outcomes are pending, or while a clock advance is running the due ones — then restarts it on the
 * same store. The auditor treats an answered request as committed; a request cut off by the kill
 * is sent again with its Idempotency-Key, which replays it if it committed and runs it if it did
 * not, so exactly one effect must show. After each restart every balance, every transaction (none
 * lost, none unknown) and the ledger check must agree with the model; at the end the clock is
 * advanced past every delayed outcome, each must have happened, and every event in the store's
 * outbox must have reached the loopback receiver at least once. (Webhook delivery under a crash
 * on its own is test/webhooks/crash.test.ts.)
 *
 * The seed fixes the operations, amounts and kill points; set WORKLOAD_CRASH_SEED to try another.
 * Longer: `npm run test:workload -- --seed N --steps 400 --crashes 10 [--store postgres]`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { killChildren } from '../helpers/child.ts';
import { laneStore } from '../helpers/server.ts';
import { Workload } from './lib/driver.ts';
import { startTarget, type Target } from './lib/target.ts';

const SEED = Number(process.env.WORKLOAD_CRASH_SEED ?? 7);
const STEPS = 75;
const CRASHES = 3;

let target: Target | undefined;
afterAll(async () => {
  killChildren();
  await target?.close().catch(() => undefined);
});

describe(`crash safety under the workload (${laneStore()})`, () => {
  it(`seed ${SEED}: ${CRASHES} SIGKILLs in ${STEPS} steps lose no committed movement, apply none twice, and every delayed outcome and webhook still happens`, async () => {
    target = await startTarget({ store: laneStore(), databaseUrl: process.env.TEST_DATABASE_URL, mode: 'child' });
    const r = await new Workload({ seed: SEED, steps: STEPS, target, crashes: CRASHES }).run();
    console.log(
      `[workload crash ${laneStore()}] seed ${SEED}: ${JSON.stringify(r.crash)}; ${r.transactions} transactions, ${r.webhookEvents} webhook events, ${(r.durationMs / 1000).toFixed(1)} s`,
    );
    expect(r.crash.kills).toBe(CRASHES);
    // The kills found work in flight: requests cut off, and delayed outcomes waiting.
    expect(r.crash.cutOff + r.crash.advancesCutOff).toBeGreaterThan(0);
    expect(r.crash.pendingTimersAtKills).toBeGreaterThan(0);
    expect(r.webhookEvents).toBeGreaterThan(r.transactions);
    const t = target;
    target = undefined;
    await t.close();
  }, 240_000);
});
