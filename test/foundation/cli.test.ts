/**
 * The real `corridor` command as a child process: start prints working credentials, a restart on
 * the same store keeps them, fixed credentials from the environment win, bad configuration exits 2,
 * `platform create` and `ledger-check` work, and (PostgreSQL) concurrent migrations are safe.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../src/config.ts';
import { Client, type Creds } from '../helpers/http.ts';
import { laneStore } from '../helpers/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PG = laneStore() === 'postgres';
const children = new Set<ChildProcess>();
const dirs: string[] = [];

afterAll(async () => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tmpDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-cli-'));
  dirs.push(d);
  return d;
}

/** The environment of a spawned CLI: nothing inherited that configures Corridor, plus the lane's store. */
function cliEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['PORT', 'HOST', 'DATABASE_URL', 'LOG_LEVEL', 'CORRIDOR_TOKEN_ID', 'CORRIDOR_CLIENT_SECRET', 'CORRIDOR_ADMIN_TOKEN']) delete env[k];
  env.DATA_DIR = dataDir;
  env.PORT = '0';
  env.LOG_LEVEL = 'warn';
  if (PG) env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  return { ...env, ...extra };
}

function spawnCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(process.execPath, ['bin/corridor.js', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a CLI command to completion. */
function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Done> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`corridor ${args.join(' ')} timed out\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

interface Running {
  child: ChildProcess;
  baseUrl: string;
  platformId: string;
  creds: Creds;
  stdout: string;
  stop(): Promise<number | null>;
}

/** Starts `corridor start` and waits for its banner. */
function startCli(env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Running> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(['start'], env);
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`corridor start did not print its banner\n${stdout}\n${stderr}`));
    }, timeoutMs);
    const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`corridor start exited with ${code}\n${stdout}\n${stderr}`));
    });
    child.stdout!.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (!/curl -u .*\n/.test(stdout)) return;
      clearTimeout(timer);
      const base = /Corridor listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      const platformId = /platform:\s+(Platform:\S+)/.exec(stdout)?.[1];
      const id = /API token id:\s+(\S+)/.exec(stdout)?.[1];
      const secret = /client secret:\s+(\S+)/.exec(stdout)?.[1];
      if (!base || !platformId || !id || !secret) {
        reject(new Error(`unparseable banner:\n${stdout}`));
        return;
      }
      resolve({
        child,
        baseUrl: base,
        platformId,
        creds: { id, secret },
        stdout,
        async stop() {
          child.kill('SIGTERM');
          return exited;
        },
      });
    });
  });
}

/** Runs `fn` with a started server and always stops it. */
async function withServer<T>(env: NodeJS.ProcessEnv, fn: (s: Running) => Promise<T>): Promise<T> {
  const s = await startCli(env);
  try {
    return await fn(s);
  } finally {
    const code = await s.stop();
    expect(code, 'exit code after SIGTERM').toBe(0);
  }
}

function fixedCreds(): Creds {
  return { id: `cli-test-${randomBytes(6).toString('hex')}`, secret: `sk_fixed_${randomBytes(16).toString('base64url')}` };
}
const credEnv = (c: Creds) => ({ CORRIDOR_TOKEN_ID: c.id, CORRIDOR_CLIENT_SECRET: c.secret });

async function accounts(s: Running, creds: Creds = s.creds) {
  return new Client(s.baseUrl, { basic: creds }).get('/platform/internal-accounts');
}

describe('corridor start', () => {
  it(
    'prints a base URL and credentials that work; a restart on the same store keeps them',
    async () => {
      const dataDir = tmpDir();
      // PostgreSQL: the bootstrap platform is shared by the whole database, so only fixed
      // credentials are predictable there.
      const given = PG ? fixedCreds() : undefined;
      const env = cliEnv(dataDir, given ? credEnv(given) : {});

      const first = await withServer(env, async (s) => {
        expect(s.baseUrl).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+${BASE_PATH}$`));
        if (given) expect(s.creds).toEqual(given);
        else {
          expect(s.creds.id).toMatch(/^[0-9a-f]{32}$/);
          expect(s.creds.secret.length).toBeGreaterThanOrEqual(32);
        }
        const res = await accounts(s);
        expect(res.status, res.text).toBe(200);
        expect(res.body.data.length).toBeGreaterThanOrEqual(1);
        const health = await new Client(new URL(s.baseUrl).origin).get('/healthz');
        expect(health.body).toEqual({ status: 'ok', store: laneStore() });
        // Wrong secret is refused by the real process too.
        expect((await accounts(s, { id: s.creds.id, secret: `${s.creds.secret}x` })).status).toBe(401);
        return { creds: s.creds, platformId: s.platformId };
      });

      // The credentials are kept beside the store, readable by the owner only.
      const file = path.join(dataDir, 'credentials.json');
      expect(fs.existsSync(file)).toBe(true);
      expect(fs.statSync(file).mode & 0o077).toBe(0);
      expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({ platformId: first.platformId, clientId: first.creds.id, clientSecret: first.creds.secret });

      await withServer(env, async (s) => {
        expect(s.creds).toEqual(first.creds);
        expect(s.platformId).toBe(first.platformId);
        const res = await accounts(s);
        expect(res.status, res.text).toBe(200);
      });
    },
    90_000,
  );

  it(
    'CORRIDOR_TOKEN_ID / CORRIDOR_CLIENT_SECRET are the exact credentials, on a new or an existing store',
    async () => {
      const dataDir = tmpDir();
      const a = fixedCreds();
      const platformId = await withServer(cliEnv(dataDir, credEnv(a)), async (s) => {
        expect(s.creds).toEqual(a);
        expect(s.stdout).toContain(`curl -u '${a.id}:${a.secret}'`);
        expect((await accounts(s, a)).status).toBe(200);
        return s.platformId;
      });

      // Changing them on an existing store re-keys the bootstrap token: new ones work, old ones stop.
      const b = fixedCreds();
      await withServer(cliEnv(dataDir, credEnv(b)), async (s) => {
        expect(s.creds).toEqual(b);
        expect(s.platformId).toBe(platformId);
        expect((await accounts(s, b)).status).toBe(200);
        expect((await accounts(s, a)).status).toBe(401);
      });

      if (!PG) {
        // Without the variables, the last credentials (kept in DATA_DIR) are printed and work.
        await withServer(cliEnv(dataDir), async (s) => {
          expect(s.creds).toEqual(b);
          expect(s.platformId).toBe(platformId);
          expect((await accounts(s)).status).toBe(200);
        });
      }
    },
    90_000,
  );
});

describe('configuration errors exit 2 with a clear message', () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['PORT=abc', { PORT: 'abc' }, /PORT must be an integer/],
    ['PORT=70000', { PORT: '70000' }, /PORT must be an integer/],
    ['LOG_LEVEL=loud', { LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of .*"loud"/],
    ['DATABASE_URL=mysql://x', { DATABASE_URL: 'mysql://x' }, /DATABASE_URL must be a postgres/],
    ['token id without secret', { CORRIDOR_TOKEN_ID: 'abcdefgh1234' }, /must be set together/],
    ['short secret', { CORRIDOR_TOKEN_ID: 'abcdefgh1234', CORRIDOR_CLIENT_SECRET: 'short' }, /CORRIDOR_CLIENT_SECRET must be/],
  ];
  it.each(cases)(
    '%s',
    async (_name, extra, message) => {
      const dataDir = tmpDir();
      const r = await runCli(['start'], cliEnv(dataDir, extra));
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/^corridor: invalid configuration/);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
      // Nothing was created for a configuration that was refused.
      expect(fs.readdirSync(dataDir)).toEqual([]);
    },
    30_000,
  );

  it('several bad variables are all named at once', async () => {
    const r = await runCli(['start'], cliEnv(tmpDir(), { PORT: 'abc', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' }));
    expect(r.code).toBe(2);
    for (const v of ['PORT', 'LOG_LEVEL', 'DATABASE_URL']) expect(r.stderr).toContain(v);
  });

  it('usage errors exit 2 too', async () => {
    const unknown = await runCli(['frobnicate'], cliEnv(tmpDir()));
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(unknown.stderr).toContain('Usage: corridor');
    const noName = await runCli(['platform', 'create'], cliEnv(tmpDir()));
    expect(noName.code).toBe(2);
    expect(noName.stderr).toContain('--name');
    const badCurrency = await runCli(['platform', 'create', '--name', 'X', '--currency', 'XYZ'], cliEnv(tmpDir()));
    expect(badCurrency.code).toBe(2);
    expect(badCurrency.stderr).toContain('XYZ');
    const help = await runCli(['--help'], cliEnv(tmpDir()));
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: corridor');
  }, 60_000);
});

describe('platform create and ledger-check', () => {
  it(
    'platform create prints the platform and a one-time secret that works; ledger-check is clean',
    async () => {
      const dataDir = tmpDir();
      const created = await runCli(['platform', 'create', '--name', 'CLI Platform X', '--currency', 'EUR'], cliEnv(dataDir));
      expect(created.code, created.stderr).toBe(0);
      const out = JSON.parse(created.stdout);
      expect(out.platform).toMatchObject({ name: 'CLI Platform X', environment: 'SANDBOX', fiatCurrency: 'EUR' });
      expect(out.platform.id).toMatch(/^Platform:[0-9a-f-]{36}$/);
      expect(out.token.id).toMatch(/^Token:/);
      expect(out.token.clientId).toMatch(/^[0-9a-f]{32}$/);
      expect(typeof out.token.clientSecret).toBe('string');
      expect([...out.token.permissions].sort()).toEqual(['MANAGE', 'TRANSACT', 'VIEW']);
      const creds = { id: out.token.clientId as string, secret: out.token.clientSecret as string };

      // PostgreSQL: fixed bootstrap credentials, so this test does not depend on the shared platform's secret.
      await withServer(cliEnv(dataDir, PG ? credEnv(fixedCreds()) : {}), async (s) => {
        expect(s.platformId).not.toBe(out.platform.id);
        const api = new Client(s.baseUrl, { basic: creds });
        const list = await api.get('/platform/internal-accounts');
        expect(list.status, list.text).toBe(200);
        expect(list.body.data).toHaveLength(1);
        expect(list.body.data[0].balance.currency.code).toBe('EUR');
        const fund = await api.post(`/sandbox/internal-accounts/${list.body.data[0].id}/fund`, { amount: 4200 });
        expect(fund.status, fund.text).toBe(200);
        // The secret is never shown again.
        const tokens = await api.get('/tokens');
        expect(tokens.text).not.toContain(creds.secret);
      });

      const show = await runCli(['platform', 'show', '--id', out.platform.id], cliEnv(dataDir));
      expect(show.code, show.stderr).toBe(0);
      expect(JSON.parse(show.stdout).platform).toEqual(out.platform);
      // The webhook verification key (public only).
      expect(JSON.parse(show.stdout).webhookPublicKey).toMatch(/^-----BEGIN PUBLIC KEY-----/);
      expect(show.stdout).not.toMatch(/PRIVATE/);

      // PostgreSQL: the database is shared with concurrently running tests, so check this platform only.
      const args = PG ? ['ledger-check', '--platform', out.platform.id] : ['ledger-check'];
      const check = await runCli(args, cliEnv(dataDir));
      expect(check.code, check.stdout + check.stderr).toBe(0);
      expect(check.stdout).toContain('ledger check: clean');
      const report = JSON.parse(check.stdout.slice(0, check.stdout.lastIndexOf('}') + 1));
      expect(report.ok).toBe(true);
      expect(report.entries).toBeGreaterThanOrEqual(1);
      expect(report.problems).toEqual([]);
    },
    90_000,
  );

  it('ledger-check on an empty store exits 0', async () => {
    if (PG) {
      const created = await runCli(['platform', 'create', '--name', 'Empty'], cliEnv(tmpDir()));
      expect(created.code).toBe(0);
      const id = JSON.parse(created.stdout).platform.id as string;
      const r = await runCli(['ledger-check', '--platform', id], cliEnv(tmpDir()));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('ledger check: clean');
    } else {
      const r = await runCli(['ledger-check'], cliEnv(tmpDir()));
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('ledger check: clean');
    }
  }, 60_000);
});

describe('corridor migrate', () => {
  it('two migrate processes at once both succeed', async () => {
    const dataDir = tmpDir();
    const env = cliEnv(dataDir);
    const [a, b] = await Promise.all([runCli(['migrate'], env), runCli(['migrate'], env)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    for (const r of [a, b]) expect(r.stdout).toMatch(/^(applied: .+|store is up to date)\n$/);
    if (!PG) {
      // A fresh SQLite store: exactly one of them applied the migrations.
      expect([a, b].filter((r) => r.stdout.startsWith('applied:'))).toHaveLength(1);
    }
    const again = await runCli(['migrate'], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toBe('store is up to date\n');
  }, 60_000);
});
