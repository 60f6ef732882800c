/**
 * `npm run test:workload -- --seed N --steps M [--store sqlite|postgres] [--database-url URL]
 *  [--crashes K] [--processes P] [--seeds S] [--quiet]`
 *
 * Runs the seeded workload against a fresh server and prints a summary; on a failure, the seed,
 * the step and the step history, and exits 1. Without --crashes the server runs in-process with a
 * frozen clock (the same seed replays exactly); with --crashes K it is the real `corridor start`
 * process, SIGKILLed at K seeded points and restarted on the same store. With --processes P (P > 1,
 * PostgreSQL only: --store postgres) it is P real processes on one database behind a round-robin
 * balancer (README, "Scaling out on PostgreSQL"); --crashes K then SIGKILLs one of them at K seeded
 * points while the others keep serving, runs a few seeded steps on the survivors (which must take
 * over its requests, jobs and webhook attempts) and only then restarts it. --seeds S runs seeds
 * N … N+S−1 one after the other. A usage error exits 2.
 *
 * Process loss, e.g.: `npm run test:workload -- --seed 6000 --steps 300 --processes 3 --crashes 5
 *  --store postgres --database-url postgres://postgres@127.0.0.1:5432/corridor_pl`
 */
import { startLoopWatchdog } from '../../helpers/loop-watchdog.ts';
import { parseArgs } from 'node:util';
import { killChildren } from '../../helpers/child.ts';
import { Workload, WorkloadFailure } from './driver.ts';
import { startTarget } from './target.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    steps: { type: 'string', default: '300' },
    seeds: { type: 'string', default: '1' },
    store: { type: 'string', default: 'sqlite' },
    'database-url': { type: 'string' },
    crashes: { type: 'string', default: '0' },
    processes: { type: 'string', default: '1' },
    quiet: { type: 'boolean', default: false },
  },
  strict: true,
});

function int(name: string, v: string | undefined): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} must be a whole number (got ${v})`);
    process.exit(2);
  }
  return n;
}

const first = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : int('seed', values.seed);
const steps = int('steps', values.steps);
const seeds = Math.max(1, int('seeds', values.seeds));
const crashes = int('crashes', values.crashes);
const processes = int('processes', values.processes);
const store = values.store === 'postgres' ? 'postgres' : values.store === 'sqlite' ? 'sqlite' : undefined;
if (!store) {
  console.error('--store must be sqlite or postgres');
  process.exit(2);
}
if (processes < 1) {
  console.error('--processes must be at least 1');
  process.exit(2);
}
if (processes > 1 && store !== 'postgres') {
  console.error(
    `--processes ${processes} needs --store postgres: the SQLite store is single-process (README, "Scaling out on PostgreSQL")`,
  );
  process.exit(2);
}
const databaseUrl = values['database-url'] ?? process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
if (store === 'postgres' && !databaseUrl) {
  console.error('--store postgres needs --database-url URL (or TEST_DATABASE_URL)');
  process.exit(2);
}
const mode = processes > 1 ? 'cluster' : crashes > 0 ? 'child' : 'in-process';

let failed = 0;
// In-process, the server shares this event loop: watch it (no step may block it over 200 ms).
const watchdog = mode === 'in-process' ? startLoopWatchdog() : undefined;
for (let seed = first; seed < first + seeds; seed++) {
  const target = await startTarget({ store, databaseUrl, mode, processes });
  const w = new Workload({ seed, steps, target, crashes, watchdog, log: values.quiet ? undefined : (l) => console.error(l) });
  try {
    const r = await w.run();
    const ops = Object.entries(r.ops)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
    console.log(
      `seed ${seed} (${store}${processes > 1 ? `, ${processes} processes` : ''}${crashes > 0 ? `, ${crashes} crashes` : ''}): ${steps} steps OK in ${(r.durationMs / 1000).toFixed(1)} s — ` +
        `${r.transactions} transactions, ${r.webhookEvents} webhook events delivered; ${ops}`,
    );
    if (crashes > 0) console.log(`  crash: ${JSON.stringify(r.crash)}`);
    if (r.processLoss) console.log(`  process loss: ${JSON.stringify(r.processLoss)}`);
  } catch (err) {
    failed += 1;
    if (err instanceof WorkloadFailure) {
      console.error(err.message);
      if (err.history.length > 60) console.error(`\nfull history (${err.history.length} lines):\n${err.history.join('\n')}`);
    } else {
      console.error(err);
    }
  } finally {
    await target.close().catch((e: unknown) => console.error(`closing the server: ${String(e)}`));
  }
}
killChildren();
process.exit(failed > 0 ? 1 : 0);
