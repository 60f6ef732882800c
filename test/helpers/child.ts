/**
 * The real `corridor start` as a child process, for tests that need a separate process (a crash, a
 * restart on the same store): the environment it gets, waiting for its start-up banner, and
 * stopping it politely (SIGTERM) or not (SIGKILL).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Creds } from './http.ts';
import { laneStore } from './server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Children still running; `killChildren` (in afterAll) makes sure none outlives the test file. */
const running = new Set<ChildProcess>();
/** Children spawned as the leader of a process group of their own (see spawnCommand). */
const leaders = new WeakSet<ChildProcess>();

export function killChildren(): void {
  for (const c of running) signalChild(c, 'SIGKILL');
}

/** Sends `signal` to a child, or to its whole process group when it leads one. */
export function signalChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  if (leaders.has(child) && child.pid !== undefined) {
    try {
      process.kill(-child.pid, signal);
    } catch {
      // The group is gone already.
    }
  } else child.kill(signal);
}

/**
 * The environment of a spawned CLI: nothing inherited that configures Corridor, a random port, the
 * lane's store (DATA_DIR, plus DATABASE_URL on the PostgreSQL lane), then `extra`.
 */
export function cliEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['PORT', 'HOST', 'DATABASE_URL', 'LOG_LEVEL', 'CORRIDOR_TOKEN_ID', 'CORRIDOR_CLIENT_SECRET', 'CORRIDOR_ADMIN_TOKEN'])
    delete env[k];
  env.DATA_DIR = dataDir;
  env.PORT = '0';
  env.LOG_LEVEL = 'warn';
  if (laneStore() === 'postgres') env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  return { ...env, ...extra };
}

export function spawnCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, ['bin/corridor.js', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/**
 * Spawns any command at the repository root (e.g. `npm start`, or `bash -c …`) as the leader of a
 * process group of its own: wrappers such as npm do not pass every signal on to the process they
 * start, so stopping or killing it signals the whole group (signalChild).
 */
export function spawnCommand(file: string, args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(file, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  leaders.add(child);
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningCli {
  child: ChildProcess;
  /** The API base URL from the banner (origin + version prefix). */
  baseUrl: string;
  origin: string;
  /** The bootstrap sandbox platform and its token, from the banner. */
  platformId: string;
  creds: Creds;
  /** Everything the process wrote so far (read for diagnostics). */
  output(): { stdout: string; stderr: string };
  /** Resolves when the process has exited. */
  exited: Promise<Exit>;
  /** SIGTERM (a clean shutdown); resolves with the exit. */
  stop(): Promise<Exit>;
  /** SIGKILL (a crash: no shutdown code runs); resolves with the exit. */
  kill(): Promise<Exit>;
}

/**
 * Starts `corridor start` and resolves once its banner (base URL and credentials) is printed.
 * `command` starts it another way (e.g. `npm start`, as the README says), in a process group of its own.
 */
export function startCli(env: NodeJS.ProcessEnv, timeoutMs = 30_000, command?: { file: string; args: string[] }): Promise<RunningCli> {
  return new Promise((resolve, reject) => {
    const child = command ? spawnCommand(command.file, command.args, env) : spawnCli(['start'], env);
    let stdout = '';
    let stderr = '';
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(err);
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`corridor start did not print its banner\n${stdout}\n${stderr}`));
    }, timeoutMs);
    const exited = new Promise<Exit>((r) => child.once('exit', (code, signal) => r({ code, signal })));
    // Keep reading both pipes for the whole life of the process: a full pipe would block it.
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('exit', (code, signal) =>
      fail(new Error(`corridor start exited (${code ?? signal}) before its banner\n${stdout}\n${stderr}`)),
    );
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (settled || !/curl -u .*\n/.test(stdout)) return;
      const base = /Corridor listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      const platformId = /platform:\s+(Platform:\S+)/.exec(stdout)?.[1];
      const id = /API token id:\s+(\S+)/.exec(stdout)?.[1];
      const secret = /client secret:\s+(\S+)/.exec(stdout)?.[1];
      if (!base || !platformId || !id || !secret) {
        fail(new Error(`unparseable banner:\n${stdout}`));
        return;
      }
      settled = true;
      clearTimeout(timer);
      const signal = (s: NodeJS.Signals) => {
        signalChild(child, s);
        return exited;
      };
      resolve({
        child,
        baseUrl: base,
        origin: new URL(base).origin,
        platformId,
        creds: { id, secret },
        output: () => ({ stdout, stderr }),
        exited,
        stop: () => signal('SIGTERM'),
        kill: () => signal('SIGKILL'),
      });
    });
  });
}
