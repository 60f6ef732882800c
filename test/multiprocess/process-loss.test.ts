/**
 * Losing one process of a scale-out cluster loses nothing (README "Scaling out on PostgreSQL"):
 * the seeded workload with its auditor (test/workload/lib) drives three real `corridor start`
 * processes on one PostgreSQL database through a round-robin balancer, and SIGKILLs one of them at
 * seeded points while the other two keep serving — once with a burst of keyed money requests in
 * flight, once during a sandbox clock advance sent to the process that dies (its drain running the
 * due jobs and webhooks). Meanwhile the webhook receiver holds its answers, so the process killed
 * has delivery attempts in flight: their leases (20 s) are orphaned.
 *
 * Then, without restarting it, the run goes on for a few seeded steps on the survivors, which must:
 * answer their own requests as if nothing happened; take the dead process's cut-off requests, sent
 * again to them with their Idempotency-Keys (one effect each, whether it had committed or not);
 * run the delayed jobs it held (its row locks went with its connections); and send again every
 * webhook delivery it had in flight once the lease ran out — the process comes back only after that.
 *
 * After every step and at the end the auditor checks what it always does: every answer, balance
 * and transaction against the model (no movement lost or doubled), the ledger check, every delayed
 * outcome happening; and at the end every committed outbox event delivered at least once with a
 * valid signature and none left mid-delivery, and every job of the platform DONE at its first
 * attempt (none run twice).
 *
 * The seed fixes the operations, amounts, kill points and victims' choice; set PROCESS_LOSS_SEED to
 * try another (the interleaving across processes still varies). Longer: `npm run test:workload --
 * --seed N --steps 300 --processes 3 --crashes 5 --store postgres --database-url URL`.
 * PostgreSQL only (SQLite is single-process by design).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { killChildren } from '../helpers/child.ts';
import { Workload } from '../workload/lib/driver.ts';
import { startTarget, type Target } from '../workload/lib/target.ts';

const SEED = Number(process.env.PROCESS_LOSS_SEED ?? 11);
const PROCESSES = 3;
const STEPS = 50;
/** Two kills: a burst of money requests, then a clock advance (every third kill is one). */
const KILLS = 2;

let target: Target | undefined;
afterAll(async () => {
  killChildren();
  await target?.close().catch(() => undefined);
});

describe('losing one process of three on one PostgreSQL', () => {
  it(`seed ${SEED}: ${KILLS} SIGKILLs of one process in ${STEPS} steps — the survivors take over its requests, jobs and webhook attempts; nothing lost or doubled`, async () => {
    const started = Date.now();
    target = await startTarget({ store: 'postgres', databaseUrl: process.env.TEST_DATABASE_URL, mode: 'cluster', processes: PROCESSES });
    const startMs = Date.now() - started;
    const r = await new Workload({ seed: SEED, steps: STEPS, target, crashes: KILLS }).run();
    const loss = r.processLoss!;
    console.log(
      `[process loss] seed ${SEED}: ${JSON.stringify(r.crash)}; ${JSON.stringify(loss)}; ${r.transactions} transactions, ${r.webhookEvents} webhook events; ` +
        `start ${(startMs / 1000).toFixed(1)} s, run ${(r.durationMs / 1000).toFixed(1)} s`,
    );
    expect(loss.processes).toBe(PROCESSES);
    expect(r.crash.kills).toBe(KILLS);
    expect(loss.victims).toHaveLength(KILLS);
    expect(loss.restarts).toBe(KILLS);
    // The kills found work in flight: money requests at the dead process (sent again to the
    // survivors), requests the survivors answered meanwhile, delayed outcomes waiting.
    expect(loss.cutOffAtVictim).toBeGreaterThan(0);
    expect(loss.answeredBySurvivors).toBeGreaterThan(0);
    expect(r.crash.pendingTimersAtKills).toBeGreaterThan(0);
    // The survivors ran steps alone, and sent again each delivery the dead process had in flight
    // (found through /proc: Linux).
    expect(loss.survivorSteps).toBeGreaterThan(0);
    if (process.platform === 'linux') expect(loss.orphanedAttempts).toBeGreaterThan(0);
    expect(loss.takenOver).toBe(loss.orphanedAttempts);
    // Every process served.
    expect(loss.served).toHaveLength(PROCESSES);
    for (const n of loss.served) expect(n).toBeGreaterThan(0);
    expect(r.webhookEvents).toBeGreaterThan(r.transactions);
    const t = target;
    target = undefined;
    await t.close();
  }, 300_000);
});
