import os from 'node:os';
import path from 'node:path';
import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The test lanes (docs/contributing.md, "Test lanes"), as vitest projects:
 *
 * - `unit`: pure functions, no server, no store (`test/**\/*.unit.test.ts`). Store-independent, so it
 *   runs once whatever the stores.
 * - `sqlite`, and `postgres` when TEST_DATABASE_URL is set: the HTTP suites, each file with its own
 *   in-process server (and, on SQLite, its own store) and platforms. Workers are not isolated: a
 *   worker runs file after file in one process, so the server's modules are loaded and its route
 *   schemas compiled once per worker instead of once per file (that was ~5 s of every file).
 * - `sqlite-slow`, `postgres-slow`: the suites listed in SLOW (child processes, crashes and restarts,
 *   the CLI, README snippets, the long workload). CI runs them; `npm run test:fast` skips them. Each
 *   file runs in a fresh worker.
 */

/** Pure-function suites: the `unit` project. */
const UNIT = ['test/**/*.unit.test.ts'];

/**
 * The slow suites, with about how long each takes here on SQLite (seconds, measured with the
 * suite running): the scheduler starts the longest first when vitest has no timing of its own yet
 * (a clean clone), so that none of them is left to run alone at the end.
 */
const SLOW: Record<string, number> = {
  'test/foundation/cli.test.ts': 110, // the CLI as child processes: every command, store modes, restarts
  'test/multiprocess/**': 60, // several `corridor start` processes on one PostgreSQL database, one SIGKILLed
  'test/store/secrets-at-rest.test.ts': 35, // CLI child processes sealing and re-sealing the store
  'test/workload/crash.test.ts': 35, // the seeded workload against a child process SIGKILLed and restarted
  'test/webhooks/crash.test.ts': 25, // the deliverer's process SIGKILLed mid-delivery and restarted
  'test/webhooks/listen.test.ts': 20, // `corridor webhooks listen` as a child process
  'test/workload/workload.test.ts': 20, // the long seeded workload (three seeds × 160 steps) with its auditor
  'test/readme/snippets.test.ts': 15, // every README sh block against `npm start`
  'test/cards/reveal-log.test.ts': 5, // a card's reveal against a child process, its log searched for the card number
  'test/payments/crash-replay.test.ts': 8, // a child process SIGKILLed with keyed payments in flight
  'test/wallet/cli.test.ts': 5, // `corridor wallet …` as child processes
  'test/agents/log-redaction.test.ts': 5, // the log of a real `corridor start` process
  'test/payments/restart.test.ts': 4, // a restart on the same store with payments pending
  'test/bulk-import/crash.test.ts': 10, // a child process SIGKILLed in the middle of a bulk import
  'test/kyc-links/browser.test.ts': 10, // headless Chromium (playwright-core) through the hosted KYC page
  'test/docs/browser.test.ts': 35, // headless Chromium rendering /docs (Swagger UI over the whole document)
  'test/seed/seeded-runs.test.ts': 25, // CORRIDOR_SEED: fresh `corridor start` processes run one script, transcripts compared
  'test/dashboard/browser.test.ts': 20, // headless Chromium (playwright-core) through every dashboard view
  'test/devtools/cli.test.ts': 10, // `corridor trigger` and `corridor fixtures` as child processes against a server
  'test/devtools/trigger.test.ts': 15, // every triggerable event made to happen for real and received
};

/** PostgreSQL-only: several processes on one database (README, scale-out), the PostgreSQL driver. */
const POSTGRES_ONLY = ['test/multiprocess/**', 'test/store/pg-*.test.ts'];
/** SQLite-only: the SQLite store's own machinery, on a SQLite file the test opens whatever the lane. */
const SQLITE_ONLY = ['test/store/checkpointer.test.ts', 'test/store/group-commit.test.ts'];

/** Worker processes: TEST_WORKERS, or 3 (measured best on 2 cores: most of a suite's time is waiting on I/O). */
const WORKERS = Number(process.env.TEST_WORKERS ?? '') || Math.max(3, Math.min(os.availableParallelism() + 1, 8));

type Store = 'sqlite' | 'postgres';
const stores: Store[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

function storeProjects(store: Store): TestProjectInlineConfiguration[] {
  const excluded = [...configDefaults.exclude, ...UNIT, ...(store === 'sqlite' ? POSTGRES_ONLY : SQLITE_ONLY)];
  const common = {
    env: { CORRIDOR_TEST_STORE: store },
    // A schema per test file on PostgreSQL: see the file.
    // Webhooks that violate the live schema fail their test (conformance.ts).
    setupFiles: [...(store === 'postgres' ? ['test/helpers/pg-schema.setup.ts'] : []), 'test/helpers/conformance.setup.ts'],
  };
  return [
    {
      extends: true,
      test: { ...common, name: store, include: ['test/**/*.test.ts'], exclude: [...excluded, ...Object.keys(SLOW)], isolate: false },
    },
    {
      extends: true,
      test: {
        ...common,
        name: `${store}-slow`,
        include: Object.keys(SLOW),
        exclude: excluded,
        isolate: true,
        // Child processes start slower while the other workers run: the default 30 s is a hang detector, not a budget.
        testTimeout: 120_000,
        hookTimeout: 120_000,
      },
    },
  ];
}

/**
 * The order files are handed to the workers in: the slow suites first, longest first, across the
 * stores (a long file started late would finish alone); then each HTTP project's files together,
 * longest first (a non-isolated worker goes on to the next file in the queue only when it belongs to
 * the same project; otherwise it is replaced by a fresh one); the unit suites last.
 */
class LaneSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const tier = (s: TestSpecification) => (s.project.name.endsWith('-slow') ? 0 : s.project.name === 'unit' ? 2 : 1);
    const seconds = (s: TestSpecification): number => {
      const file = path.relative(root, s.moduleId);
      const seen = this.ctx.cache.getFileTestResults(`${s.project.name}:${file}`)?.duration;
      if (seen !== undefined) return seen / 1000;
      const hint = Object.entries(SLOW).find(([glob]) => (glob.endsWith('/**') ? file.startsWith(glob.slice(0, -2)) : file === glob))?.[1];
      return hint ?? 0;
    };
    const sorted = await super.sort(files);
    const rank = new Map(sorted.map((s, i) => [s, i]));
    return sorted.sort((a, b) => {
      const t = tier(a) - tier(b);
      if (t !== 0) return t;
      if (tier(a) === 0) return seconds(b) - seconds(a);
      if (a.project.name !== b.project.name) return a.project.name < b.project.name ? -1 : 1;
      return rank.get(a)! - rank.get(b)!;
    });
  }
}

export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: WORKERS,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    sequence: { sequencer: LaneSequencer },
    globalSetup: ['test/helpers/build.global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, isolate: false, setupFiles: ['test/helpers/fast-check.setup.ts'] } },
      ...stores.flatMap(storeProjects),
    ],
  },
});
