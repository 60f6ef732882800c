/**
 * The server a workload drives, over real HTTP:
 * - `in-process`: buildApp on a fresh store with a frozen system clock, so the platform's time moves
 *   only with the sandbox clock advances the workload issues (delayed outcomes are deterministic);
 * - `child`: the real `corridor start` process on the real clock, which the crash run SIGKILLs and
 *   restarts on the same store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp, type App } from '../../../src/app.ts';
import { BASE_PATH, readConfig } from '../../../src/config.ts';
import { defaultDeps } from '../../../src/deps.ts';
import { openStore, type Store } from '../../../src/store/db.ts';
import { startCli, type RunningCli } from '../../helpers/child.ts';

export const WORKLOAD_ADMIN_TOKEN = 'workload-admin-token-0123456789';

/** The frozen system time of in-process runs: a fixed instant, so a seed prices its quotes the same every run. */
export const FROZEN_START_MS = Date.parse('2031-06-02T09:00:00.000Z');

export interface TargetOptions {
  store: 'sqlite' | 'postgres';
  /** Required for postgres. */
  databaseUrl?: string | undefined;
  mode: 'in-process' | 'child';
}

export interface Target {
  readonly mode: 'in-process' | 'child';
  readonly store: 'sqlite' | 'postgres';
  /** True when the system clock is frozen (in-process): time moves only by sandbox clock advances. */
  readonly frozenClock: boolean;
  /** The versioned API base URL (changes when a child restarts). */
  baseUrl(): string;
  origin(): string;
  /** A second connection to the same store, for reading what was committed (outbox rows). */
  openStore(): Store;
  /** SIGKILL (child only). */
  kill(): Promise<void>;
  /** Starts the process again on the same store (child only, after kill). */
  restart(): Promise<void>;
  /** The child's recent output, for failure reports. */
  diagnostics(): string;
  close(): Promise<void>;
}

export async function startTarget(o: TargetOptions): Promise<Target> {
  if (o.store === 'postgres' && !o.databaseUrl) throw new Error('a postgres workload needs a database URL (--database-url or TEST_DATABASE_URL)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-workload-'));
  const databaseUrl = o.store === 'postgres' ? o.databaseUrl : undefined;
  const storeOf = () => openStore({ databaseUrl, dataDir, poolSize: 2 });
  return o.mode === 'in-process' ? inProcess(o, dataDir, databaseUrl, storeOf) : child(o, dataDir, databaseUrl, storeOf);
}

async function inProcess(o: TargetOptions, dataDir: string, databaseUrl: string | undefined, storeOf: () => Store): Promise<Target> {
  const env: Record<string, string | undefined> = { DATA_DIR: dataDir, LOG_LEVEL: process.env.WORKLOAD_LOG_LEVEL ?? 'silent', CORRIDOR_ADMIN_TOKEN: WORKLOAD_ADMIN_TOKEN, PORT: '0', DATABASE_URL: databaseUrl };
  const app: App = await buildApp(readConfig(env), defaultDeps({ clock: { nowMs: () => FROZEN_START_MS } }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') throw new Error('server did not bind');
  const origin = `http://127.0.0.1:${addr.port}`;
  return {
    mode: 'in-process',
    store: o.store,
    frozenClock: true,
    baseUrl: () => origin + BASE_PATH,
    origin: () => origin,
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
  for (const k of ['PORT', 'HOST', 'DATABASE_URL', 'LOG_LEVEL', 'CORRIDOR_TOKEN_ID', 'CORRIDOR_CLIENT_SECRET', 'CORRIDOR_ADMIN_TOKEN']) delete env[k];
  return { ...env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', CORRIDOR_ADMIN_TOKEN: WORKLOAD_ADMIN_TOKEN, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
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
    baseUrl: () => last.baseUrl,
    origin: () => last.origin,
    openStore: storeOf,
    async kill() {
      if (!running) throw new Error('no running child to kill');
      const exit = await running.kill();
      if (exit.signal !== 'SIGKILL') throw new Error(`the child exited with ${exit.code ?? exit.signal} instead of being killed\n${tail(running.output().stderr)}`);
      running = undefined;
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
        if (exit.code !== 0) throw new Error(`the child did not shut down cleanly (${exit.code ?? exit.signal})\n${tail(last.output().stderr)}`);
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
