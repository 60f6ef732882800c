/**
 * The server a workload drives, over real HTTP:
 * - `in-process`: buildApp on a fresh store with a frozen system clock, so the platform's time moves
 *   only with the sandbox clock advances the workload issues (delayed outcomes are deterministic);
 * - `child`: the real `corridor start` process on the real clock, which the crash run SIGKILLs and
 *   restarts on the same store;
 * - `cluster` (PostgreSQL only): N real `corridor start` processes on one database (README, "Scaling
 *   out on PostgreSQL"), each with its own DATA_DIR and port, behind a round-robin balancer: every
 *   `baseUrl()`/`origin()` call names the next live process, so each request may go to another one.
 *   The process-loss run SIGKILLs one of them while the others keep serving and restarts it (on a
 *   new port, same database) some steps later.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { App } from '../../../src/app.ts';
import { bootApp } from '../../helpers/server.ts';
import { BASE_PATH, readConfig } from '../../../src/config.ts';
import { defaultDeps } from '../../../src/deps.ts';
import { openStore, type Store } from '../../../src/store/db.ts';
import { startCli, type RunningCli } from '../../helpers/child.ts';

export const WORKLOAD_ADMIN_TOKEN = 'workload-admin-token-0123456789';

/** The frozen system time of in-process runs: a fixed instant, so a seed prices its quotes the same every run. */
export const FROZEN_START_MS = Date.parse('2031-06-02T09:00:00.000Z');

export type TargetMode = 'in-process' | 'child' | 'cluster';

export interface TargetOptions {
  store: 'sqlite' | 'postgres';
  /** Required for postgres. */
  databaseUrl?: string | undefined;
  mode: TargetMode;
  /** Cluster only: how many processes (default 3). */
  processes?: number;
}

/** One serving process: its slot in the cluster (0 for the others) and where it listens now. */
export interface ProcessRef {
  slot: number;
  origin: string;
  baseUrl: string;
}

export interface Target {
  readonly mode: TargetMode;
  readonly store: 'sqlite' | 'postgres';
  /** True when the system clock is frozen (in-process): time moves only by sandbox clock advances. */
  readonly frozenClock: boolean;
  /** How many processes serve when none is down (1 unless a cluster). */
  readonly processes: number;
  /** The versioned API base URL (changes when a child restarts; a cluster's next live process in turn). */
  baseUrl(): string;
  origin(): string;
  /** The processes serving now (none while a killed child is down). */
  live(): ProcessRef[];
  /**
   * Cluster: which live process holds each given TCP connection to a local server (the webhook
   * receiver), named by the connection's two ports; read from /proc (Linux), so empty elsewhere.
   */
  connectionOwners(conns: readonly Conn[]): Map<Conn, ProcessRef>;
  /** Requests sent to each slot so far (the balancer's spread). */
  served(): number[];
  /** A second connection to the same store, for reading what was committed (outbox rows). */
  openStore(): Store;
  /**
   * SIGKILL. Child: the process. Cluster: the live process in `slot` (default: the next in turn),
   * which leaves the balancer first; the last live process is never killed. Resolves with the
   * process killed, once it has exited.
   */
  kill(slot?: number): Promise<ProcessRef>;
  /** Starts the killed process(es) again on the same store (child and cluster, after kill). */
  restart(): Promise<void>;
  /** The processes' recent output, for failure reports. */
  diagnostics(): string;
  close(): Promise<void>;
}

/** A TCP connection from a child process to a local server: the child's port and the server's. */
export interface Conn {
  clientPort: number;
  serverPort: number;
}

export async function startTarget(o: TargetOptions): Promise<Target> {
  if (o.store === 'postgres' && !o.databaseUrl)
    throw new Error('a postgres workload needs a database URL (--database-url or TEST_DATABASE_URL)');
  if (o.mode === 'cluster' && o.store !== 'postgres')
    throw new Error('several processes need PostgreSQL: SQLite is single-process (README, "Scaling out on PostgreSQL")');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-workload-'));
  const databaseUrl = o.store === 'postgres' ? o.databaseUrl : undefined;
  const storeOf = () => openStore({ databaseUrl, dataDir, poolSize: 2 });
  if (o.mode === 'cluster') return cluster(o, dataDir, databaseUrl!, storeOf);
  return o.mode === 'in-process' ? inProcess(o, dataDir, databaseUrl, storeOf) : child(o, dataDir, databaseUrl, storeOf);
}

async function inProcess(o: TargetOptions, dataDir: string, databaseUrl: string | undefined, storeOf: () => Store): Promise<Target> {
  const env: Record<string, string | undefined> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.WORKLOAD_LOG_LEVEL ?? 'silent',
    CORRIDOR_ADMIN_TOKEN: WORKLOAD_ADMIN_TOKEN,
    PORT: '0',
    DATABASE_URL: databaseUrl,
  };
  const app: App = await bootApp(readConfig(env), defaultDeps({ clock: { nowMs: () => FROZEN_START_MS } }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') throw new Error('server did not bind');
  const origin = `http://127.0.0.1:${addr.port}`;
  return {
    mode: 'in-process',
    store: o.store,
    frozenClock: true,
    processes: 1,
    baseUrl: () => origin + BASE_PATH,
    origin: () => origin,
    live: () => [{ slot: 0, origin, baseUrl: origin + BASE_PATH }],
    connectionOwners: () => new Map(),
    served: () => [],
    openStore: storeOf,
    kill: () => Promise.reject(new Error('an in-process server cannot be killed')),
    restart: () => Promise.reject(new Error('an in-process server cannot be restarted')),
    diagnostics: () => '',
    async close() {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The environment of the child: nothing inherited that configures Corridor, then this store. */
function childEnv(dataDir: string, databaseUrl: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['PORT', 'HOST', 'DATABASE_URL', 'LOG_LEVEL', 'CORRIDOR_TOKEN_ID', 'CORRIDOR_CLIENT_SECRET', 'CORRIDOR_ADMIN_TOKEN'])
    delete env[k];
  return {
    ...env,
    DATA_DIR: dataDir,
    PORT: '0',
    LOG_LEVEL: 'warn',
    CORRIDOR_ADMIN_TOKEN: WORKLOAD_ADMIN_TOKEN,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
}

async function child(o: TargetOptions, dataDir: string, databaseUrl: string | undefined, storeOf: () => Store): Promise<Target> {
  const env = childEnv(dataDir, databaseUrl);
  // Generous: a loaded CI machine can take long to compile and start the server.
  const START_TIMEOUT_MS = 120_000;
  let running: RunningCli | undefined = await startCli(env, START_TIMEOUT_MS);
  let last: RunningCli = running;
  const tail = (s: string) => s.slice(-4000);
  return {
    mode: 'child',
    store: o.store,
    frozenClock: false,
    processes: 1,
    baseUrl: () => last.baseUrl,
    origin: () => last.origin,
    live: () => (running ? [{ slot: 0, origin: running.origin, baseUrl: running.baseUrl }] : []),
    connectionOwners: () => new Map(),
    served: () => [],
    openStore: storeOf,
    async kill() {
      if (!running) throw new Error('no running child to kill');
      const exit = await running.kill();
      if (exit.signal !== 'SIGKILL')
        throw new Error(`the child exited with ${exit.code ?? exit.signal} instead of being killed\n${tail(running.output().stderr)}`);
      const killed = { slot: 0, origin: running.origin, baseUrl: running.baseUrl };
      running = undefined;
      return killed;
    },
    async restart() {
      if (running) throw new Error('the child is still running');
      running = await startCli(env, START_TIMEOUT_MS);
      last = running;
    },
    diagnostics: () => {
      const out = last.output();
      return `child stderr (tail):\n${tail(out.stderr)}`;
    },
    async close() {
      if (running) {
        const exit = await running.stop();
        running = undefined;
        if (exit.code !== 0)
          throw new Error(`the child did not shut down cleanly (${exit.code ?? exit.signal})\n${tail(last.output().stderr)}`);
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * `processes` real `corridor start` children on one PostgreSQL database, as README "Scaling out on
 * PostgreSQL" runs them: the same DATABASE_URL and admin token, each its own DATA_DIR and port.
 * The balancer is round-robin over the live ones (each `baseUrl()`/`origin()` call is one request).
 */
async function cluster(o: TargetOptions, dataDir: string, databaseUrl: string, storeOf: () => Store): Promise<Target> {
  const n = o.processes ?? 3;
  if (!Number.isInteger(n) || n < 2) throw new Error(`a cluster needs at least 2 processes (got ${n})`);
  const envs = Array.from({ length: n }, (_, slot) => {
    const dir = path.join(dataDir, `p${slot}`);
    fs.mkdirSync(dir);
    return childEnv(dir, databaseUrl);
  });
  // Generous: a loaded machine can take long to compile and start three servers at once.
  const START_TIMEOUT_MS = 180_000;
  // Side by side, as test/multiprocess/scale-out.test.ts starts them.
  const started = await Promise.allSettled(envs.map((env) => startCli(env, START_TIMEOUT_MS)));
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    await Promise.all(started.map((r) => (r.status === 'fulfilled' ? r.value.kill() : undefined)));
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw failed.reason;
  }
  const procs: (RunningCli | undefined)[] = started.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
  /** The last process each slot ran (kept after a kill, for its output). */
  const last: RunningCli[] = procs.map((p) => p!);
  const served = Array.from({ length: n }, () => 0);
  let turn = 0;
  const ref = (slot: number): ProcessRef => ({ slot, origin: procs[slot]!.origin, baseUrl: procs[slot]!.baseUrl });
  const live = (): ProcessRef[] => procs.flatMap((p, slot) => (p ? [ref(slot)] : []));
  const next = (): ProcessRef => {
    const l = live();
    if (l.length === 0) throw new Error('no live process in the cluster');
    const p = l[turn++ % l.length]!;
    served[p.slot]! += 1;
    return p;
  };
  const tail = (s: string) => s.slice(-3000);
  return {
    mode: 'cluster',
    store: o.store,
    frozenClock: false,
    processes: n,
    baseUrl: () => next().baseUrl,
    origin: () => next().origin,
    live,
    connectionOwners(conns) {
      const pids = new Map<number, ProcessRef>();
      for (const p of live()) {
        const pid = procs[p.slot]!.child.pid;
        if (pid !== undefined) pids.set(pid, p);
      }
      return socketOwners(pids, conns);
    },
    served: () => [...served],
    openStore: storeOf,
    async kill(slot) {
      const l = live();
      if (l.length < 2) throw new Error('a cluster keeps at least one live process');
      const victim = slot === undefined ? l[turn % l.length]! : l.find((p) => p.slot === slot);
      if (!victim) throw new Error(`process ${slot} is not live`);
      const p = procs[victim.slot]!;
      // Out of the balancer first: no new request goes to it.
      procs[victim.slot] = undefined;
      const exit = await p.kill();
      if (exit.signal !== 'SIGKILL')
        throw new Error(
          `process ${victim.slot} exited with ${exit.code ?? exit.signal} instead of being killed\n${tail(p.output().stderr)}`,
        );
      return victim;
    },
    async restart() {
      const down = procs.flatMap((p, slot) => (p ? [] : [slot]));
      if (down.length === 0) throw new Error('every process of the cluster is running');
      for (const slot of down) {
        const p = await startCli(envs[slot]!, START_TIMEOUT_MS);
        procs[slot] = p;
        last[slot] = p;
      }
    },
    diagnostics: () =>
      last
        .map(
          (p, slot) => `process ${slot} (${procs[slot] ? p.origin : `killed; was ${p.origin}`}) stderr (tail):\n${tail(p.output().stderr)}`,
        )
        .join('\n'),
    async close() {
      const problems: string[] = [];
      await Promise.all(
        procs.map(async (p, slot) => {
          if (!p) return;
          procs[slot] = undefined;
          const exit = await p.stop();
          if (exit.code !== 0)
            problems.push(`process ${slot} did not shut down cleanly (${exit.code ?? exit.signal})\n${tail(p.output().stderr)}`);
        }),
      );
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (problems.length > 0) throw new Error(problems.join('\n'));
    },
  };
}

/**
 * Which of `pids` holds each connection: the socket whose local port is the connection's client
 * port and whose remote port is its server port (/proc/net/tcp{,6}), then the process that has that
 * socket open (/proc/<pid>/fd). Linux only; elsewhere, or for a connection not found, no entry.
 */
function socketOwners(pids: Map<number, ProcessRef>, conns: readonly Conn[]): Map<Conn, ProcessRef> {
  const out = new Map<Conn, ProcessRef>();
  if (conns.length === 0 || process.platform !== 'linux') return out;
  const inodes = new Map<string, Conn>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = parseInt(f[1]!.split(':')[1]!, 16);
      const remote = parseInt(f[2]!.split(':')[1]!, 16);
      const c = conns.find((x) => x.clientPort === local && x.serverPort === remote);
      if (c && f[9] !== '0') inodes.set(`socket:[${f[9]}]`, c);
    }
  }
  if (inodes.size === 0) return out;
  for (const [pid, p] of pids) {
    let fds: string[];
    try {
      fds = fs.readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const c = inodes.get(link);
      if (c) out.set(c, p);
    }
  }
  return out;
}
