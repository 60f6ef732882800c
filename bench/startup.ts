/**
 * The `startup` scenario of `npm run bench`: what a user waits for before the first request, and what
 * an idle server holds. Each figure over several runs (median, min–max):
 * - cold start: `node bin/corridor.js start` on an empty DATA_DIR (migrations, bootstrap platform,
 *   credentials) until GET /healthz answers 200, timed from the spawn;
 * - idle RSS: the server's resident memory 2 s after it answered;
 * - the same two for the bare Fastify baseline (bench/baseline.ts, compiled to plain JS first so that
 *   no compiler is loaded in it either);
 * - CLI latency: `corridor --help` and `corridor wallet keygen`, spawn to exit.
 * Targets (issue #20): cold start < 1 s, idle RSS < 150 MB, each CLI call < 300 ms.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RUNS = 5;

export interface StartupOptions {
  store: 'sqlite' | 'postgres';
  databaseUrl: string | undefined;
}

export interface StartupResult {
  lines: string[];
  targets: string[];
  met: boolean;
}

interface Started {
  readyMs: number;
  idleRssMb: number;
}

/** Spawns a server, times it to a 200 from /healthz (port read from its first line), reads its RSS when idle. */
async function startOnce(args: string[], env: NodeJS.ProcessEnv, portFrom: RegExp): Promise<Started> {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  try {
    let port: string | undefined;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}:\n${out}`);
      if (performance.now() - t0 > 30_000) throw new Error(`${args.join(' ')} did not answer /healthz within 30 s:\n${out}`);
      port ??= portFrom.exec(out)?.[1];
      if (port) {
        const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const readyMs = performance.now() - t0;
    await new Promise((r) => setTimeout(r, 2000));
    const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const idleRssMb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
    return { readyMs, idleRssMb };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(undefined) : child.once('exit', r)));
  }
}

function cliOnce(args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['bin/corridor.js', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`corridor ${args.join(' ')} exited with ${r.status}: ${r.stderr.toString()}`);
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const spread = (xs: number[], unit: string, digits = 0) =>
  `${median(xs).toFixed(digits)} ${unit} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

export async function runStartup(o: StartupOptions, log: (msg: string) => void): Promise<StartupResult> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-bench-startup-'));
  try {
    // The bare baseline as plain JavaScript, with one route file it needs.
    const baselineJs = path.join(tmp, 'baseline.mjs');
    await build({
      entryPoints: [path.join(ROOT, 'bench/baseline.ts')],
      outfile: baselineJs,
      bundle: true,
      platform: 'node',
      format: 'esm',
      packages: 'external',
      logLevel: 'warning',
    });
    // `packages: 'external'` resolves from the output's folder: run it from the repository's.
    const baselineFile = path.join(ROOT, 'bench', `.baseline-${process.pid}.mjs`);
    fs.copyFileSync(baselineJs, baselineFile);
    const routes = path.join(tmp, 'routes.json');
    fs.writeFileSync(routes, '[]');

    const corridor: Started[] = [];
    const bare: Started[] = [];
    try {
      for (let i = 0; i < RUNS; i++) {
        log(`startup: cold start ${i + 1}/${RUNS}`);
        const dataDir = path.join(tmp, `data-${i}`);
        const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' };
        delete env.DATABASE_URL;
        if (o.store === 'postgres') env.DATABASE_URL = o.databaseUrl;
        corridor.push(await startOnce(['bin/corridor.js', 'start'], env, /Corridor listening on http:\/\/[^:]+:(\d+)/));
        bare.push(
          await startOnce(
            [baselineFile],
            { ...process.env, BENCH_BASELINE_ROUTES: routes, PORT: '0' },
            /baseline listening on http:\/\/[^:]+:(\d+)/,
          ),
        );
      }
    } finally {
      fs.rmSync(baselineFile, { force: true });
    }
    const help: number[] = [];
    const keygen: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      help.push(cliOnce(['--help']));
      keygen.push(cliOnce(['wallet', 'keygen']));
    }

    const ready = corridor.map((s) => s.readyMs);
    const rss = corridor.map((s) => s.idleRssMb);
    const lines = [
      `startup (${RUNS} runs each; median, min–max; store ${o.store}):`,
      `  cold start to /healthz, empty DATA_DIR   Corridor ${spread(ready, 'ms')}   bare Fastify ${spread(
        bare.map((s) => s.readyMs),
        'ms',
      )}`,
      `  idle RSS 2 s after start                 Corridor ${spread(rss, 'MB')}   bare Fastify ${spread(
        bare.map((s) => s.idleRssMb),
        'MB',
      )}`,
      `  corridor --help                          ${spread(help, 'ms')}`,
      `  corridor wallet keygen                   ${spread(keygen, 'ms')}`,
    ];
    const checks: [string, boolean][] = [
      [`startup cold start median ${median(ready).toFixed(0)} ms < 1000 ms`, median(ready) < 1000],
      [`startup idle RSS median ${median(rss).toFixed(0)} MB < 150 MB`, median(rss) < 150],
      [`startup corridor --help median ${median(help).toFixed(0)} ms < 300 ms`, median(help) < 300],
      [`startup corridor wallet keygen median ${median(keygen).toFixed(0)} ms < 300 ms`, median(keygen) < 300],
    ];
    return {
      lines,
      targets: checks.map(([what, ok]) => `${what}: ${ok ? 'met' : 'NOT met'}`),
      met: checks.every(([, ok]) => ok),
    };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
