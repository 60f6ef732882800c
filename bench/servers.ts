/**
 * Child processes under test: Corridor (`node bin/corridor.js start`) and the bare Fastify baseline.
 * Each runs in its own process so the server, not the load generator, is what gets measured, and so
 * its peak RSS and CPU time can be read from /proc. Every child is killed when the bench exits.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BaselineRoute, CorridorHandle, Credentials, JsonResponse, Scenario, StoreLocation } from './scenarios/types.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BASE_PATH = '/2025-10-13';

/** Fixed credentials for the SQLite runs (fresh data directory each time, so nothing shared is touched). */
export const BENCH_TOKEN_ID = 'bench_token_0001';
export const BENCH_CLIENT_SECRET = 'bench-client-secret-0123456789abcdef';
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();

/** Last-resort cleanup (process 'exit', signals): SIGKILL every child still running, remove temp dirs. */
export function killAllChildrenSync(): void {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

export function makeTempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

let clockTicks: number | undefined;
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** CPU seconds of one process from /proc/<pid>/stat (utime + stime); undefined when unreadable. */
function procCpuSeconds(pid: number | string): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
  } catch {
    return undefined;
  }
}

/** Seconds a thread has run on a CPU and waited runnable for one (`/proc/<pid>/schedstat`). */
export interface SchedSeconds {
  running: number;
  waiting: number;
}

/**
 * `/proc/<pid>/schedstat` (or `/proc/<pid>/task/<tid>/schedstat`): nanoseconds on a CPU, nanoseconds
 * runnable but waiting on a run queue, time slices. Undefined for anything else.
 */
export function parseSchedstat(text: string): SchedSeconds | undefined {
  const m = /^(\d+) (\d+) (\d+)\s*$/.exec(text);
  return m ? { running: Number(m[1]) / 1e9, waiting: Number(m[2]) / 1e9 } : undefined;
}

/**
 * The main thread of a process (its event loop, for Node): how long it has run, and how long it was
 * ready to run while the machine's CPUs were busy with others. Undefined off Linux (or without
 * schedstats).
 */
function readMainThreadSched(pid: number): SchedSeconds | undefined {
  try {
    return parseSchedstat(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds used so far by every process on this machine named `postgres` (the postmaster, its
 * backends, WAL writer, checkpointer…): a local PostgreSQL's share of the machine, to set beside
 * Corridor's. Backends that exit take their time with them, so read it over a window in which the
 * pool keeps its connections. Undefined off Linux or when no such process is visible.
 */
export function localPostgresCpuSeconds(): number | undefined {
  let dirs: string[];
  try {
    dirs = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return undefined;
  }
  let total = 0;
  let seen = false;
  for (const pid of dirs) {
    let comm: string;
    try {
      comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      continue;
    }
    if (comm !== 'postgres') continue;
    const cpu = procCpuSeconds(pid);
    if (cpu === undefined) continue;
    total += cpu;
    seen = true;
  }
  return seen ? total : undefined;
}

export interface ChildServer {
  name: string;
  pid: number;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** VmHWM (peak resident set) in kB from /proc/<pid>/status; undefined off Linux. */
  peakRssKb(): number | undefined;
  /** User + system CPU seconds consumed so far, from /proc/<pid>/stat; undefined off Linux. */
  cpuSeconds(): number | undefined;
  /** Its main thread's time on a CPU and waiting for one, so far; undefined off Linux. */
  mainThreadSched(): SchedSeconds | undefined;
  /** SIGTERM, wait for a clean exit (so --cpu-prof profiles get written), SIGKILL after a timeout. */
  stop(): Promise<void>;
}

interface SpawnOptions {
  name: string;
  args: string[];
  env: Record<string, string>;
  /** Matches the child's "listening" line; group 1 is the origin. */
  ready: RegExp;
  healthPath: string;
  /** Echo the child's output after start-up (prefixed with its name). */
  echo: boolean;
  timeoutMs?: number;
}

async function spawnServer(o: SpawnOptions): Promise<ChildServer> {
  const child = spawn(process.execPath, o.args, { cwd: ROOT, env: o.env, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      live.delete(child);
      resolve(code);
    }),
  );

  let output = '';
  let origin: string | undefined;
  const onData = (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    if (origin === undefined) {
      output += text;
      return;
    }
    if (o.echo) process.stderr.write(text.replace(/^(?=.)/gm, `[${o.name}] `));
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);

  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  const fail = (why: string) => {
    child.kill('SIGKILL');
    return new Error(`${o.name}: ${why}\n--- output ---\n${output.trim()}`);
  };
  let exitCode: number | null | undefined;
  void exited.then((c) => {
    exitCode = c;
  });
  while (origin === undefined) {
    const m = o.ready.exec(output);
    if (m) {
      origin = m[1]!;
      break;
    }
    if (exitCode !== undefined) throw fail(`exited with code ${exitCode} before listening`);
    if (Date.now() > deadline) throw fail('did not start in time');
    await sleep(50);
  }
  for (;;) {
    try {
      const res = await fetch(`${origin}${o.healthPath}`);
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // not accepting yet
    }
    if (exitCode !== undefined) throw fail(`exited with code ${exitCode} before becoming healthy`);
    if (Date.now() > deadline) throw fail(`${o.healthPath} did not answer 200 in time`);
    await sleep(100);
  }

  const pid = child.pid!;
  return {
    name: o.name,
    pid,
    origin,
    peakRssKb() {
      try {
        const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
        return m ? Number(m[1]) : undefined;
      } catch {
        return undefined;
      }
    },
    cpuSeconds() {
      return procCpuSeconds(pid);
    },
    mainThreadSched() {
      return readMainThreadSched(pid);
    },
    async stop() {
      if (exitCode !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A clean child environment: PATH/HOME and the like, without any Corridor or Node settings of the caller. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ']) {
    const v = process.env[k];
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/** The file the `index`-th Corridor process (0: the first) writes its commit groups' timings to. */
export function groupProfileFile(dir: string, index: number): string {
  return path.join(dir, `groups-${index}.json`);
}

export interface CorridorOptions {
  store: 'sqlite' | 'postgres';
  databaseUrl?: string | undefined;
  logLevel: string;
  /** Write a V8 CPU profile of the server into this directory (node --cpu-prof). */
  cpuProfDir?: string | undefined;
  /** Where the child writes its per-statement SQLite timings on SIGUSR2 (CORRIDOR_SQL_PROFILE; bench/sql-profile.ts). */
  sqlProfileFile?: string | undefined;
  /** Where each child writes its commit groups' timings on SIGUSR2 (CORRIDOR_GROUP_PROFILE; bench/group-profile.ts): `groupProfileFile(dir, i)`. */
  groupProfileDir?: string | undefined;
  echo: boolean;
  /** The scenario's store preparation, run after the data directory exists and before the child starts. */
  prepareStore?: Scenario['prepareStore'];
  /**
   * Corridor processes to start on the one PostgreSQL database (default 1; more need postgres): the
   * first starts alone (it migrates and bootstraps), the others once it is healthy, each on a port
   * of its own with the same environment (admin token and all), so what is made through one works on all.
   */
  processes?: number | undefined;
}

export interface CorridorChild {
  /** The first process: the one `handle` talks to. */
  server: ChildServer;
  /** Every process, `server` first (one unless `processes` asked for more). */
  servers: ChildServer[];
  handle: CorridorHandle;
  /** Stops the servers and removes the data directory. */
  close(): Promise<void>;
}

export async function startCorridor(o: CorridorOptions): Promise<CorridorChild> {
  const processes = o.processes ?? 1;
  if (!Number.isInteger(processes) || processes < 1) throw new Error(`processes must be a whole number ≥ 1 (got ${processes})`);
  if (processes > 1 && o.store !== 'postgres')
    throw new Error("several Corridor processes need --store postgres: SQLite's data directory belongs to one server process");
  const dataDir = makeTempDir('corridor-bench-');
  const env: Record<string, string> = {
    ...baseEnv(),
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: o.logLevel,
    CORRIDOR_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
  };
  if (o.sqlProfileFile) env.CORRIDOR_SQL_PROFILE = o.sqlProfileFile;
  // Store tuning under comparison is passed through to the child (docs/performance.md).
  if (process.env.CORRIDOR_PG_GROUP_COMMIT !== undefined) env.CORRIDOR_PG_GROUP_COMMIT = process.env.CORRIDOR_PG_GROUP_COMMIT;
  if (o.store === 'postgres') {
    if (!o.databaseUrl) throw new Error('--store postgres needs --database-url');
    env.DATABASE_URL = o.databaseUrl;
  } else {
    env.CORRIDOR_TOKEN_ID = BENCH_TOKEN_ID;
    env.CORRIDOR_CLIENT_SECRET = BENCH_CLIENT_SECRET;
  }
  if (o.prepareStore) {
    try {
      const location: StoreLocation =
        o.store === 'postgres' ? { kind: 'postgres', databaseUrl: env.DATABASE_URL! } : { kind: 'sqlite', dataDir };
      const prepared = await o.prepareStore(location);
      if (o.store === 'postgres' && prepared?.databaseUrl) env.DATABASE_URL = prepared.databaseUrl;
    } catch (err) {
      removeTempDir(dataDir);
      throw err;
    }
  }
  const nodeArgs = [
    ...(o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`] : []),
    // Node flags for the Corridor child only, e.g. BENCH_NODE_ARGS=--trace-gc (say so when reporting).
    ...(process.env.BENCH_NODE_ARGS?.split(/\s+/).filter(Boolean) ?? []),
  ];
  const spawnCorridor = (name: string, index: number) =>
    spawnServer({
      name,
      args: [...nodeArgs, path.join(ROOT, 'bin/corridor.js'), 'start'],
      env: o.groupProfileDir ? { ...env, CORRIDOR_GROUP_PROFILE: groupProfileFile(o.groupProfileDir, index) } : env,
      ready: /Corridor listening on (http:\/\/[^\s/]+)/,
      healthPath: '/healthz',
      echo: o.echo,
      timeoutMs: 60_000,
    });
  let server: ChildServer;
  try {
    server = await spawnCorridor('corridor', 0);
  } catch (err) {
    removeTempDir(dataDir);
    throw err;
  }
  const servers = [server];
  if (processes > 1) {
    // The store is migrated and bootstrapped by now: the others only join it (on PostgreSQL the
    // data directory holds nothing they would contend for).
    const others = await Promise.allSettled(Array.from({ length: processes - 1 }, (_, i) => spawnCorridor(`corridor ${i + 2}`, i + 1)));
    for (const r of others) if (r.status === 'fulfilled') servers.push(r.value);
    const failed = others.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await Promise.all(servers.map((s) => s.stop()));
      removeTempDir(dataDir);
      throw failed.reason;
    }
  }
  const origin = server.origin;

  const request: CorridorHandle['request'] = async (method, p, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    let body: string | undefined;
    if (opts.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(opts.json);
    }
    const res = await fetch(`${origin}${p}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, headers: res.headers, body: parsed } satisfies JsonResponse;
  };

  const newPlatform = async (name = 'Bench platform'): Promise<Credentials> => {
    const res = await request('POST', '/_admin/platforms', { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` }, json: { name } });
    if (res.status !== 201) throw new Error(`POST /_admin/platforms answered ${res.status}: ${JSON.stringify(res.body)}`);
    const b = res.body as { platform: { id: string }; token: { clientId: string; clientSecret: string } };
    return credentials(b.platform.id, b.token.clientId, b.token.clientSecret);
  };

  let mainPlatform: Promise<Credentials> | undefined;
  const platform = (): Promise<Credentials> => {
    mainPlatform ??= o.store === 'sqlite' ? bootstrapCredentials(dataDir) : newPlatform();
    return mainPlatform;
  };

  const handle: CorridorHandle = {
    origin,
    basePath: BASE_PATH,
    store: o.store,
    adminToken: BENCH_ADMIN_TOKEN,
    platform,
    newPlatform,
    request,
  };
  return {
    server,
    servers,
    handle,
    async close() {
      await Promise.all(servers.map((s) => s.stop()));
      removeTempDir(dataDir);
    },
  };
}

/** The bootstrap platform's id from the credentials file `corridor start` writes beside the store. */
async function bootstrapCredentials(dataDir: string): Promise<Credentials> {
  const saved = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8')) as { platformId: string };
  return credentials(saved.platformId, BENCH_TOKEN_ID, BENCH_CLIENT_SECRET);
}

function credentials(platformId: string, clientId: string, clientSecret: string): Credentials {
  const authorization = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
  return { platformId, clientId, clientSecret, authorization };
}

export interface BaselineChild {
  server: ChildServer;
  close(): Promise<void>;
}

export async function startBaseline(routes: BaselineRoute[], echo: boolean): Promise<BaselineChild> {
  const dir = makeTempDir('corridor-bench-baseline-');
  const routesFile = path.join(dir, 'routes.json');
  fs.writeFileSync(routesFile, JSON.stringify(routes));
  let server: ChildServer;
  try {
    server = await spawnServer({
      name: 'baseline',
      args: ['--import', 'tsx', path.join(ROOT, 'bench/baseline.ts')],
      env: { ...baseEnv(), PORT: '0', HOST: '127.0.0.1', BENCH_BASELINE_ROUTES: routesFile },
      ready: /baseline listening on (http:\/\/[^\s/]+)/,
      healthPath: '/healthz',
      echo,
    });
  } catch (err) {
    removeTempDir(dir);
    throw err;
  }
  return {
    server,
    async close() {
      await server.stop();
      removeTempDir(dir);
    },
  };
}
