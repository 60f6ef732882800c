/**
 * `npm run bench` — load-tests Corridor against a bare Fastify route, scenario by scenario.
 *
 * For each scenario: start Corridor in a child process (fresh data directory), let the scenario set
 * up its data, warm up, load it with autocannon (in this process, pipelining 1), read the child's
 * peak RSS, stop it; then start the bare baseline in another child process with the same JSON and
 * load it the same way. Prints one table (req/s, p50, p99, failures, ratio, RSS, CPU) and the targets.
 * Exits 1 when any measured request failed (non-2xx or connection error) or a scenario's own check
 * failed (`extraReport`), 2 on bad usage.
 * With `--processes n` (PostgreSQL only) Corridor runs as n processes on the one database; the
 * scenario sets up and checks through the first, and the load is spread round-robin over all.
 * See docs/performance.md.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runLoad, splitConnections, stopLoad, type LoadOptions, type LoadResult } from './load.ts';
import { runPaced, stopPaced } from './paced.ts';
import { extraLines, machineInfo, table, targetLines, type Row } from './report.ts';
import { findScenario, SCENARIOS } from './scenarios/index.ts';
import { groupReport, groupSnapshot, groupWindow, type GroupProfileSnapshot } from './group-profile.ts';
import { sqlDiff, sqlReport, sqlSnapshot, type StatementTiming } from './sql-profile.ts';
import { runStartup } from './startup.ts';
import { type PgCounters, pgCounters, pgSettingsLine, pgWindowFigures } from './pg-window.ts';
import { pgbenchBaseline, sqliteBaseline } from './store-baseline.ts';
import type { PreparedScenario, Scenario } from './scenarios/types.ts';
import {
  groupProfileFile,
  killAllChildrenSync,
  localPostgresCpuSeconds,
  ROOT,
  type SchedSeconds,
  startBaseline,
  startCorridor,
} from './servers.ts';

const HELP = `Usage: npm run bench -- [options]

Options:
  --duration <s>        measured seconds per server (default 10)
  --warmup <s>          warm-up seconds before each measurement (default 5); with --rate the warm-up is the
                        same run's first seconds, the window following it without a pause
  --series              with --rate: log each measured second's responses, mean and max latency
  --connections <n>     concurrent connections (default 50, or the scenario's own: list 10); pipelining is always 1
  --rate <n>            offer n requests/s on a fixed schedule (open loop) instead of the closed loop; latency
                        counts from each request's due time; --connections caps the open connections
  --scenario <name>     run only this scenario (repeatable or comma-separated; default all but list);
                        "startup": cold start, idle memory and CLI latency (bench/startup.ts)
  --store <kind>        sqlite (default; fresh file per scenario) or postgres; with postgres the report adds
                        PostgreSQL's CPU in the measured window (every local process named postgres, from /proc),
                        the WAL it wrote and flushed, its checkpoints and backend buffer writes, and a header line with the
                        server settings and the host's write-back threshold behind those figures
  --database-url <url>  PostgreSQL URL for --store postgres (default: $DATABASE_URL)
  --processes <n>       --store postgres: run n Corridor processes (1-8, default 1) on the one database, each on
                        its own port (the first starts alone and migrates, the others join once it is healthy).
                        Setup and checks go to the first; the load goes round-robin over all of them (closed
                        loop: one autocannon per process, --connections split evenly; --rate: request i to
                        process i mod n). Server CPU is the sum over the processes, peak RSS the largest one's
  --log-level <level>   Corridor LOG_LEVEL (default warn)
  --skip-baseline       do not run the bare Fastify comparison
  --cpu-prof            write a V8 CPU profile of each Corridor child (also BENCH_CPU_PROF=1)
  --cpu-prof-dir <dir>  where the profiles go (default: a new directory under the OS temp dir)
  --sql-profile         SQLite: time every statement the store runs in the measured window and report
                        the costliest per response (CORRIDOR_SQL_PROFILE on the child; skews CPU figures a little)
  --group-profile       PostgreSQL: time the phases of every commit group in the measured window (waiting for
                        a group, reads, writes with their row-lock waits, COMMIT) and report their mean and
                        quantiles, every process together (CORRIDOR_GROUP_PROFILE on each child)
  --json <file>         also write the results as JSON
  --dataset-customers <n>     list: customers in the generated data set (default 100000; BENCH_DATASET_CUSTOMERS)
  --dataset-transactions <n>  list: transactions in it (default 1000000; BENCH_DATASET_TRANSACTIONS)
  -h, --help

On Linux every Corridor row also reports its main thread (the event loop) over the window: the share of it
on a CPU, and the share it was ready to run but waited for a CPU held by another process or thread
(/proc/<pid>/schedstat; averaged over --processes).

Scenarios:
${SCENARIOS.map((s) => `  ${s.name.padEnd(12)} ${s.summary}`).join('\n')}`;

class UsageError extends Error {}

/** The store baseline runs as long as the measurement, up to this (a 60 s paced run needs no 60 s pgbench). */
const STORE_BASELINE_MAX_S = 20;
const DEFAULT_CONNECTIONS = 50;
const MAX_PROCESSES = 8;

interface Options {
  duration: number;
  warmup: number;
  /** Set by --connections; otherwise each scenario's own, else 50. */
  connections: number | undefined;
  /** --rate: offered requests per second (bench/paced.ts); unset: closed loop (bench/load.ts). */
  rate: number | undefined;
  /** --series: log the measured window second by second (open loop only). */
  series: boolean;
  scenarios: Scenario[];
  /** Run the startup measurements (bench/startup.ts): asked for by name, or by default. */
  startup: boolean;
  store: 'sqlite' | 'postgres';
  databaseUrl: string | undefined;
  /** --processes: Corridor processes on the one PostgreSQL database (1 on SQLite). */
  processes: number;
  logLevel: string;
  baseline: boolean;
  cpuProfDir: string | undefined;
  sqlProfile: boolean;
  groupProfile: boolean;
  json: string | undefined;
}

function parseOptions(argv: string[]): Options | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '5' },
      series: { type: 'boolean', default: false },
      connections: { type: 'string' },
      rate: { type: 'string' },
      scenario: { type: 'string', multiple: true },
      store: { type: 'string', default: 'sqlite' },
      'database-url': { type: 'string' },
      processes: { type: 'string', default: '1' },
      'log-level': { type: 'string', default: 'warn' },
      'skip-baseline': { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      'cpu-prof-dir': { type: 'string' },
      'sql-profile': { type: 'boolean', default: false },
      'group-profile': { type: 'boolean', default: false },
      json: { type: 'string' },
      'dataset-customers': { type: 'string' },
      'dataset-transactions': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const num = (name: string, raw: string, min: number, integer: boolean) => {
    const v = Number(raw);
    if (!Number.isFinite(v) || v < min || (integer && !Number.isInteger(v)))
      throw new UsageError(`--${name} must be ${integer ? 'an integer' : 'a number'} ≥ ${min} (got "${raw}")`);
    return v;
  };
  // The list scenario's data-set size travels as the environment overrides it also reads.
  if (values['dataset-customers'])
    process.env.BENCH_DATASET_CUSTOMERS = String(num('dataset-customers', values['dataset-customers'], 1, true));
  if (values['dataset-transactions'])
    process.env.BENCH_DATASET_TRANSACTIONS = String(num('dataset-transactions', values['dataset-transactions'], 0, true));
  const names = (values.scenario ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
  const startup = names.length === 0 || names.includes('startup');
  const loadNames = names.filter((n) => n !== 'startup');
  const scenarios =
    names.length === 0
      ? SCENARIOS.filter((s) => !s.optIn)
      : loadNames.map(
          (n) => findScenario(n) ?? fail(`unknown scenario "${n}" (have: startup, ${SCENARIOS.map((s) => s.name).join(', ')})`),
        );
  const store = values.store;
  if (store !== 'sqlite' && store !== 'postgres') throw new UsageError(`--store must be sqlite or postgres (got "${store}")`);
  const databaseUrl = values['database-url'] ?? (store === 'postgres' ? process.env.DATABASE_URL : undefined);
  if (store === 'postgres' && !databaseUrl) throw new UsageError('--store postgres needs --database-url (or DATABASE_URL)');
  if (store === 'sqlite' && values['database-url']) throw new UsageError('--database-url needs --store postgres');
  if (values['sql-profile'] && store !== 'sqlite') throw new UsageError('--sql-profile times the SQLite store: use --store sqlite');
  if (values['group-profile'] && store !== 'postgres')
    throw new UsageError('--group-profile times PostgreSQL commit groups: use --store postgres');
  const processes = num('processes', values.processes, 1, true);
  if (processes > MAX_PROCESSES) throw new UsageError(`--processes must be at most ${MAX_PROCESSES} (got "${values.processes}")`);
  if (processes > 1 && store !== 'postgres')
    throw new UsageError(
      "--processes needs --store postgres: SQLite's data directory belongs to one server process (a second corridor start on it exits)",
    );
  const connections = values.connections === undefined ? undefined : num('connections', values.connections, 1, true);
  for (const s of scenarios) {
    const c = connections ?? s.connections ?? DEFAULT_CONNECTIONS;
    if (c < processes)
      throw new UsageError(
        `--processes ${processes} needs at least as many connections (scenario "${s.name}" would have ${c}): give --connections`,
      );
  }
  if (values.series && values.rate === undefined) throw new UsageError('--series needs --rate (a closed loop has no due times)');
  for (const s of scenarios) {
    if (s.stores && !s.stores.includes(store)) throw new UsageError(`scenario "${s.name}" does not run on ${store}`);
  }
  const profiling = values['cpu-prof'] || process.env.BENCH_CPU_PROF === '1' || values['cpu-prof-dir'] !== undefined;
  const cpuProfDir = profiling
    ? path.resolve(values['cpu-prof-dir'] ?? fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-bench-prof-')))
    : undefined;
  if (cpuProfDir) fs.mkdirSync(cpuProfDir, { recursive: true });
  return {
    duration: num('duration', values.duration, 1, false),
    warmup: num('warmup', values.warmup, 0, false),
    connections,
    rate: values.rate === undefined ? undefined : num('rate', values.rate, 1, false),
    series: values.series,
    scenarios,
    startup,
    store,
    databaseUrl,
    processes,
    logLevel: values['log-level'],
    baseline: !values['skip-baseline'],
    cpuProfDir,
    sqlProfile: values['sql-profile'],
    groupProfile: values['group-profile'],
    json: values.json,
  };
}

function fail(msg: string): never {
  throw new UsageError(msg);
}

const log = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

function commandLine(argv: string[]): string {
  // Never print a database password.
  const args = argv
    .map((a) => a.replace(/(postgres(?:ql)?:\/\/[^:/@\s]+:)[^@\s]*@/, '$1***@'))
    .map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(' ');
  const direct = `node ${[...process.execArgv, path.relative(process.cwd(), process.argv[1]!) || process.argv[1]!].join(' ')}${args ? ` ${args}` : ''}`;
  return process.env.npm_lifecycle_event === 'bench' ? `npm run bench${args ? ` -- ${args}` : ''}   (${direct})` : direct;
}

interface ScenarioOutcome {
  scenario: Scenario;
  corridor: Row;
  baseline?: Row;
  /** --sql-profile, --group-profile: their reports of the measured window. */
  profile?: string[];
}

async function runScenario(s: Scenario, given: Options): Promise<ScenarioOutcome> {
  const o: Options & { connections: number } = { ...given, connections: given.connections ?? s.connections ?? DEFAULT_CONNECTIONS };
  log(`${s.name}: starting Corridor (${storeLabel(o)}, LOG_LEVEL=${o.logLevel})`);
  const prepareStore = s.prepareStore?.bind(s);
  const sqlFile = o.sqlProfile ? path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-bench-sql-')), 'statements.json') : undefined;
  const groupDir = o.groupProfile ? fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-bench-groups-')) : undefined;
  const corridor = await startCorridor({
    store: o.store,
    databaseUrl: o.databaseUrl,
    logLevel: o.logLevel,
    cpuProfDir: o.cpuProfDir,
    sqlProfileFile: sqlFile,
    groupProfileDir: groupDir,
    echo: true,
    prepareStore,
    processes: o.processes,
  });
  let corridorRow: Row;
  let prepared: PreparedScenario;
  let profile: string[] | undefined;
  try {
    prepared = await s.setup(corridor.handle);
    let sqlBefore: StatementTiming[] = [];
    let sqlWindow: StatementTiming[] = [];
    const groupSnapshots = () => corridor.servers.map((server, i) => groupSnapshot(server.pid, groupProfileFile(groupDir!, i)));
    let groupsBefore: GroupProfileSnapshot[] = [];
    let groupsAfter: GroupProfileSnapshot[] = [];
    // PostgreSQL's WAL, flushes, full-page images, checkpoints and backend writes over the window (pg-window.ts).
    const pgUrl = o.store === 'postgres' ? o.databaseUrl : undefined;
    let pgBefore: PgCounters | undefined;
    let pgAfter: PgCounters | undefined;
    const window =
      sqlFile || pgUrl || groupDir
        ? {
            start: async () => {
              if (sqlFile) sqlBefore = await sqlSnapshot(corridor.server.pid, sqlFile);
              if (groupDir) groupsBefore = await Promise.all(groupSnapshots());
              if (pgUrl) pgBefore = await pgCounters(pgUrl);
            },
            end: async () => {
              if (sqlFile) sqlWindow = sqlDiff(sqlBefore, await sqlSnapshot(corridor.server.pid, sqlFile));
              if (groupDir) groupsAfter = await Promise.all(groupSnapshots());
              if (pgUrl) pgAfter = await pgCounters(pgUrl);
            },
          }
        : undefined;
    const storeCpu = o.store === 'postgres' ? localPostgresCpuSeconds : undefined;
    const load = await measureWithCpu(
      `${s.name} corridor`,
      corridor.servers,
      o,
      prepared.request,
      prepared.settle?.bind(prepared),
      window,
      storeCpu,
    );
    if (sqlFile) profile = sqlReport(s.name, sqlWindow, load.result.requests);
    if (groupDir)
      profile = [...(profile ? [...profile, ''] : []), ...groupReport(s.name, groupWindow(groupsBefore, groupsAfter), load.result.seconds)];
    if (o.cpuProfDir) {
      for (const server of corridor.servers)
        recordProfileWindow(o.cpuProfDir, { pid: server.pid, scenario: s.name, startUs: load.windowUs[0], endUs: load.windowUs[1] });
    }
    let extra = await prepared.extraReport?.({ startUs: load.windowUs[0], endUs: load.windowUs[1] });
    if (load.result.requests > 0 && (load.storeCpu !== undefined || (pgBefore && pgAfter) || load.mainThreads)) {
      const figures = {
        ...(load.mainThreads === undefined ? {} : mainThreadFigures(load.mainThreads, load.result.seconds, corridor.servers.length)),
        ...(load.storeCpu === undefined
          ? {}
          : {
              'PostgreSQL CPU (local postgres processes), % of a core': Math.round((load.storeCpu / load.result.seconds) * 100),
              'PostgreSQL CPU µs per response': Math.round((load.storeCpu * 1e6) / load.result.requests),
            }),
        ...(pgBefore && pgAfter ? pgWindowFigures(pgBefore, pgAfter, load.result.requests) : {}),
      };
      extra = extra ? { ...extra, figures: { ...extra.figures, ...figures } } : { figures, failures: [] };
    }
    await prepared.verify?.();
    corridorRow = {
      scenario: s.name,
      server: `corridor (${storeLabel(o)})`,
      ...(o.processes > 1 ? { processes: o.processes } : {}),
      load: load.result,
      serverCpuSeconds: load.cpu,
      peakRssKb: largest(corridor.servers.map((server) => server.peakRssKb())),
      extra,
    };
  } finally {
    await corridor.close();
    // The children write their figures once more at exit; nothing reads them after the window.
    for (const dir of [sqlFile && path.dirname(sqlFile), groupDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }
  if (o.cpuProfDir) {
    log(
      corridor.servers.length === 1
        ? `${s.name}: CPU profile of Corridor (pid ${corridor.server.pid}) in ${o.cpuProfDir}`
        : `${s.name}: CPU profiles of the ${corridor.servers.length} Corridor processes (pids ${corridor.servers.map((x) => x.pid).join(', ')}), one file each, in ${o.cpuProfDir}`,
    );
  }

  if (!o.baseline || !prepared.baseline) return { scenario: s, corridor: corridorRow, ...(profile ? { profile } : {}) };
  log(`${s.name}: starting the bare Fastify baseline`);
  const bare = await startBaseline([prepared.baseline], true);
  try {
    const load = await measureWithCpu(`${s.name} bare`, [bare.server], o, prepared.request);
    const baselineRow: Row = {
      scenario: s.name,
      server: 'bare fastify',
      load: load.result,
      serverCpuSeconds: load.cpu,
      peakRssKb: bare.server.peakRssKb(),
    };
    // At an offered rate both answer that rate: the ratio compares capacities, so closed loop only.
    if (o.rate === undefined) corridorRow.ratio = corridorRow.load.reqPerSec / baselineRow.load.reqPerSec;
    return { scenario: s, corridor: corridorRow, baseline: baselineRow, ...(profile ? { profile } : {}) };
  } finally {
    await bare.close();
  }
}

/**
 * Notes the measured window of a profiled child in <dir>/windows.json, so that
 * bench/profile-summary.ts can leave out start-up and warm-up samples.
 */
function recordProfileWindow(dir: string, w: { pid: number; scenario: string; startUs: number; endUs: number }): void {
  const file = path.join(dir, 'windows.json');
  let all: unknown[] = [];
  try {
    all = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown[];
  } catch {
    // first entry
  }
  all.push(w);
  fs.writeFileSync(file, `${JSON.stringify(all, null, 2)}\n`);
}

/**
 * Corridor's event loop in the window: the share of it the main thread ran, and the share it was
 * ready to run but waited for a CPU that PostgreSQL, the load generator or another thread held —
 * time in which every answer the loop owes (a COMMIT that releases a row lock, a response) waits.
 * Per process, averaged over them.
 */
function mainThreadFigures(m: SchedSeconds, seconds: number, processes: number): Record<string, number> {
  const share = (s: number) => Math.round((s / seconds / processes) * 100);
  return {
    'Corridor main thread on a CPU, % of the window': share(m.running),
    'Corridor main thread waiting for a CPU, % of the window': share(m.waiting),
  };
}

/** `postgres`, or `postgres ×3` for several processes. */
function storeLabel(o: Options): string {
  return o.processes > 1 ? `${o.store} ×${o.processes}` : o.store;
}

/** The largest of the figures; undefined when any is unknown. */
function largest(values: Array<number | undefined>): number | undefined {
  return values.some((v) => v === undefined) ? undefined : Math.max(...(values as number[]));
}

/** The servers' main threads' scheduler times together; undefined when any is unknown. */
function totalMainThreadSched(servers: ReadonlyArray<{ mainThreadSched?(): SchedSeconds | undefined }>): SchedSeconds | undefined {
  const total: SchedSeconds = { running: 0, waiting: 0 };
  for (const server of servers) {
    const s = server.mainThreadSched?.();
    if (s === undefined) return undefined;
    total.running += s.running;
    total.waiting += s.waiting;
  }
  return total;
}

/** CPU seconds of every server together; undefined when any is unknown. */
function totalCpuSeconds(servers: ReadonlyArray<{ cpuSeconds(): number | undefined }>): number | undefined {
  let total = 0;
  for (const server of servers) {
    const cpu = server.cpuSeconds();
    if (cpu === undefined) return undefined;
    total += cpu;
  }
  return total;
}

/**
 * Warms up and measures the servers (one, or several processes sharing one database: the load is
 * spread over their origins); CPU is the sum over all of them in the measured window.
 */
async function measureWithCpu(
  label: string,
  servers: ReadonlyArray<{ origin: string; cpuSeconds(): number | undefined; mainThreadSched?(): SchedSeconds | undefined }>,
  o: Options & { connections: number },
  request: LoadOptions['request'],
  settle?: () => Promise<string>,
  window?: { start(): Promise<void>; end(): Promise<void> },
  storeCpuSeconds?: () => number | undefined,
): Promise<{
  result: LoadResult;
  cpu: number | undefined;
  storeCpu?: number | undefined;
  mainThreads?: SchedSeconds | undefined;
  windowUs: [number, number];
}> {
  const origin = servers.length === 1 ? servers[0]!.origin : servers.map((server) => server.origin);
  const spread =
    servers.length === 1
      ? ''
      : ` over ${servers.length} processes (${o.rate === undefined ? `${splitConnections(o.connections, servers.length).join('/')} connections` : 'round-robin'})`;
  const measuring = () =>
    log(
      `${label}: measuring ${o.duration} s ${o.rate === undefined ? `at ${o.connections} connections` : `at ${o.rate} req/s offered, up to ${o.connections} connections`}${spread}`,
    );
  // The counters at the window's start.
  let before: number | undefined;
  let storeBefore: number | undefined;
  let schedBefore: SchedSeconds | undefined;
  let startUs = 0;
  const readCounters = () => {
    before = totalCpuSeconds(servers);
    schedBefore = totalMainThreadSched(servers);
    storeBefore = storeCpuSeconds?.();
    // CLOCK_MONOTONIC in µs, the clock V8 CPU profiles are stamped with (see recordProfileWindow).
    startUs = Number(process.hrtime.bigint() / 1000n);
  };
  // The store's counters are queried: in the open loop without holding up the requests (awaited
  // after the window; a failure is reported then, not as an unhandled rejection meanwhile).
  let windowStarted: Promise<void> | undefined;
  let result: LoadResult;
  if (o.rate === undefined) {
    if (o.warmup > 0) {
      log(`${label}: warm-up ${o.warmup} s`);
      await runLoad({ origin, request, connections: o.connections, duration: o.warmup, title: `${label} warm-up` });
      if (settle) log(`${label}: ${await settle()}`);
    }
    measuring();
    await window?.start();
    readCounters();
    result = await runLoad({ origin, request, connections: o.connections, duration: o.duration, title: label });
  } else {
    // Open loop: the warm-up runs straight into the window, at the same rate over the same
    // connections, so the window measures the steady state at that rate — the warm-up's
    // settlements still running in it, as the window's own run after it (docs/decisions.md).
    if (o.warmup > 0) log(`${label}: warm-up ${o.warmup} s, then the window without a pause`);
    else measuring();
    result = await runPaced({
      origin,
      request,
      connections: o.connections,
      duration: o.duration,
      rate: o.rate,
      warmup: o.warmup,
      onWindowStart: () => {
        if (o.warmup > 0) measuring();
        windowStarted = window?.start();
        windowStarted?.catch(() => undefined);
        readCounters();
      },
    });
  }
  const endUs = Number(process.hrtime.bigint() / 1000n);
  if (o.series) {
    for (const b of result.series ?? [])
      log(`${label}: second ${b.second}: ${b.responses} responses, mean ${b.meanMs.toFixed(1)} ms, max ${b.maxMs.toFixed(1)} ms`);
  }
  const after = totalCpuSeconds(servers);
  const schedAfter = totalMainThreadSched(servers);
  const storeAfter = storeCpuSeconds?.();
  await windowStarted;
  await window?.end();
  return {
    result,
    cpu: before === undefined || after === undefined ? undefined : after - before,
    storeCpu: storeBefore === undefined || storeAfter === undefined ? undefined : storeAfter - storeBefore,
    mainThreads:
      schedBefore === undefined || schedAfter === undefined
        ? undefined
        : { running: schedAfter.running - schedBefore.running, waiting: schedAfter.waiting - schedBefore.waiting },
    windowUs: [startUs, endUs],
  };
}

async function main(argv: string[]): Promise<number> {
  let o: Options;
  try {
    const parsed = parseOptions(argv);
    if (parsed === 'help') {
      process.stdout.write(`${HELP}\n`);
      return 0;
    }
    o = parsed;
  } catch (err) {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`bench: ${(err as Error).message}\n\n${HELP}\n`);
      return 2;
    }
    throw err;
  }

  const m = machineInfo();
  const started = new Date();
  const header = [
    `Corridor bench — ${started.toISOString()}`,
    `machine:  ${m.cpus} × ${m.model}, ${m.memoryGb} GB, ${m.platform}, node ${m.node}`,
    `load avg: ${m.loadAvg.join(' ')} (1/5/15 min, at start)`,
    `command:  ${commandLine(argv)}`,
    `settings: ${o.duration} s measured after ${o.warmup} s warm-up, ${o.rate === undefined ? 'closed loop' : `open loop at ${o.rate} req/s offered (latency from each request's due time), at most`} ${o.connections ?? `${DEFAULT_CONNECTIONS} (or the scenario's own)`} connections, pipelining 1, store ${o.store}${o.processes > 1 ? ` (${o.processes} Corridor processes on the one database, load round-robin over them)` : ''}, LOG_LEVEL=${o.logLevel}` +
      (o.cpuProfDir ? `, CPU profiles in ${o.cpuProfDir}` : ''),
    ...(o.store === 'postgres' && o.databaseUrl ? [await pgSettingsLine(o.databaseUrl)] : []),
    '',
  ].join('\n');
  process.stdout.write(`${header}\n`);

  const startup = o.startup ? await runStartup({ store: o.store, databaseUrl: o.databaseUrl }, log) : undefined;
  if (startup) process.stdout.write(`${startup.lines.join('\n')}\n`);

  const outcomes: ScenarioOutcome[] = [];
  for (const s of o.scenarios) outcomes.push(await runScenario(s, o));

  const rows = outcomes.flatMap((x) => (x.baseline ? [x.corridor, x.baseline] : [x.corridor]));
  if (rows.length > 0) {
    process.stdout.write(`\n${table(rows)}\n\n`);
    process.stdout.write(
      o.rate === undefined
        ? 'req/s: mean of per-second samples; p50/p99/max: per-response latency; vs bare: Corridor req/s ÷ bare req/s;\n'
        : `req/s: responses within the ${o.duration} s window per second (${o.rate} offered); p50/p99/max: from each request's due time to its response; vs bare: Corridor req/s ÷ bare req/s;\n`,
    );
    process.stdout.write('server/loader CPU: CPU time during the measured window as % of one core (both share the machine);\n');
    process.stdout.write('CPU µs/req: server CPU time per response — the figure least disturbed by other load on the machine.\n');
    if (o.processes > 1)
      process.stdout.write(
        `corridor (${storeLabel(o)}): server CPU is the sum over its ${o.processes} processes (so above 100% is possible); peak RSS is the largest one's.\n`,
      );
    process.stdout.write('\n');
  }

  for (const x of outcomes) {
    if (x.corridor.extra) process.stdout.write(`${extraLines(x.scenario.name, x.corridor.extra).join('\n')}\n\n`);
    if (x.profile) process.stdout.write(`${x.profile.join('\n')}\n\n`);
  }

  // The store's raw transaction rate in the same run (issue #26): payments as a share of it.
  const payment = outcomes.find((x) => x.scenario.name === 'payment');
  // At an offered rate (--rate) too: the goal is a rate that is a share of it, with its latency.
  if (payment && o.baseline) {
    const seconds = Math.min(o.duration, STORE_BASELINE_MAX_S);
    log(`store baseline: ${o.store === 'postgres' ? 'pgbench TPC-B' : 'SQLite TPC-B-like transactions'}, ${seconds} s`);
    const raw = o.store === 'postgres' ? await pgbenchBaseline(o.databaseUrl!, seconds) : sqliteBaseline(seconds);
    const share = payment.corridor.load.reqPerSec / raw.tps;
    process.stdout.write(
      `store baseline: ${raw.label} ${raw.tps.toFixed(0)} tps (${raw.detail}); payment ${payment.corridor.load.reqPerSec.toFixed(0)}/s = ${(share * 100).toFixed(1)} % of it\n\n`,
    );
  }

  let allMet = startup?.met ?? true;
  for (const line of startup?.targets ?? []) process.stdout.write(`target  ${line}\n`);
  for (const x of outcomes) {
    if (!x.scenario.targets) continue;
    const t = targetLines(x.scenario.name, x.scenario.targets, x.corridor);
    allMet &&= t.met;
    for (const line of t.lines) process.stdout.write(`target  ${line}\n`);
  }
  process.stdout.write(`load avg at end: ${machineInfo().loadAvg.join(' ')}\n`);

  const failures = rows.filter((r) => r.load.non2xx > 0 || r.load.errors > 0);
  const extraFailures = outcomes.flatMap((x) => x.corridor.extra?.failures ?? []);
  for (const r of failures) {
    process.stdout.write(
      `FAILED  ${r.scenario} ${r.server}: ${r.load.non2xx} non-2xx, ${r.load.errors} errors (${r.load.timeouts} timeouts); status codes ${JSON.stringify(r.load.statusCodes)}\n`,
    );
  }
  for (const f of extraFailures) process.stdout.write(`FAILED  ${f}\n`);

  if (o.json) {
    const out = {
      date: started.toISOString(),
      machine: m,
      command: commandLine(argv),
      options: { ...o, scenarios: o.scenarios.map((s) => s.name), databaseUrl: o.databaseUrl ? '(set)' : undefined },
      rows,
      startup,
      targetsMet: allMet,
    };
    fs.writeFileSync(path.resolve(o.json), `${JSON.stringify(out, null, 2)}\n`);
    log(`results written to ${o.json}`);
  }
  return failures.length > 0 || extraFailures.length > 0 ? 1 : 0;
}

process.on('exit', killAllChildrenSync);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    log(`${sig}: stopping`);
    stopLoad();
    stopPaced();
    killAllChildrenSync();
    process.exit(130);
  });
}

process.chdir(ROOT);
main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    killAllChildrenSync();
    process.exitCode = 1;
  },
);
