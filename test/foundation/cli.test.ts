/**
 * The real `corridor` command as a child process: start prints working credentials, a restart on
 * the same store keeps them, fixed credentials from the environment win, bad configuration exits 2,
 * `platform create` and `ledger-check` work, and (PostgreSQL) concurrent migrations are safe.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BASE_PATH } from '../../src/config.ts';
import { Client, type Creds } from '../helpers/http.ts';
import { laneStore, startServer } from '../helpers/server.ts';
import { openStore } from '../../src/store/db.ts';
import { expectError } from '../helpers/http.ts';
import { usAccountInfo } from '../helpers/payments.ts';
import { uniqueAccountNumber } from '../helpers/random.ts';

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
  for (const k of ['PORT', 'HOST', 'DATABASE_URL', 'LOG_LEVEL', 'CORRIDOR_TOKEN_ID', 'CORRIDOR_CLIENT_SECRET', 'CORRIDOR_ADMIN_TOKEN'])
    delete env[k];
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
  /** Everything written to stderr so far. */
  stderr(): string;
  stop(): Promise<number | null>;
  /** SIGKILL (no shutdown code runs); resolves once the process is gone. */
  kill(): Promise<number | null>;
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
        stderr: () => stderr,
        async stop() {
          child.kill('SIGTERM');
          return exited;
        },
        async kill() {
          child.kill('SIGKILL');
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
  it('prints a base URL and credentials that work; a restart on the same store keeps them', async () => {
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
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual({
      platformId: first.platformId,
      clientId: first.creds.id,
      clientSecret: first.creds.secret,
    });

    await withServer(env, async (s) => {
      expect(s.creds).toEqual(first.creds);
      expect(s.platformId).toBe(first.platformId);
      const res = await accounts(s);
      expect(res.status, res.text).toBe(200);
    });
  }, 90_000);

  it('CORRIDOR_TOKEN_ID / CORRIDOR_CLIENT_SECRET are the exact credentials, on a new or an existing store', async () => {
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
  }, 90_000);
});

describe('configuration errors exit 2 with a clear message', () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ['PORT=abc', { PORT: 'abc' }, /PORT must be an integer/],
    ['PORT=70000', { PORT: '70000' }, /PORT must be an integer/],
    // Set but empty (an unset shell variable) is a mistake, not a request for 8080.
    ['PORT= (empty)', { PORT: '' }, /PORT is set but empty/],
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

  it('a DATA_DIR that is a file is named, and left alone', async () => {
    const file = path.join(tmpDir(), 'not-a-dir');
    fs.writeFileSync(file, 'x');
    const r = await runCli(['start'], cliEnv(file));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^corridor: invalid configuration/);
    expect(r.stderr).toContain(`DATA_DIR ${file} is a file, not a directory`);
    expect(r.stdout).toBe('');
    expect(fs.readFileSync(file, 'utf8')).toBe('x');
  }, 30_000);

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
  it('platform create prints the platform and a one-time secret that works; ledger-check is clean', async () => {
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
  }, 90_000);

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

/** Spawns with the process umask set to `mask` (a child inherits its parent's umask). */
function withUmask<T>(mask: number, fn: () => T): T {
  const old = process.umask(mask);
  try {
    return fn();
  } finally {
    process.umask(old);
  }
}

const modeOf = (p: string) => fs.statSync(p).mode & 0o777;

/** The store's files `corridor start` leaves in DATA_DIR while it runs, on this lane. */
const STORE_FILES = PG
  ? ['credentials.json']
  : ['corridor.sqlite', 'corridor.sqlite-wal', 'corridor.sqlite-shm', 'credentials.json', 'corridor.lock'];

/** The start-up line that says which modes were tightened. */
const tightenedLines = (stderr: string) => stderr.split('\n').filter((l) => l.includes('made the store private'));

describe('the store is private to its owner', () => {
  it('DATA_DIR is created 0700 and every store file 0600 whatever the umask; an existing store is tightened at start, saying so once', async () => {
    const dataDir = path.join(tmpDir(), 'store');
    const env = cliEnv(dataDir, PG ? credEnv(fixedCreds()) : {});

    // umask 000: left to the defaults, the directory would be 0777 and the files 0666.
    const first = await withUmask(0, () => startCli(env));
    try {
      expect(modeOf(dataDir).toString(8)).toBe('700');
      for (const f of STORE_FILES) expect(fs.existsSync(path.join(dataDir, f)), f).toBe(true);
      for (const f of fs.readdirSync(dataDir)) expect(`${f} ${modeOf(path.join(dataDir, f)).toString(8)}`).toBe(`${f} 600`);
      expect(tightenedLines(first.stderr())).toEqual([]);
    } finally {
      expect(await first.stop()).toBe(0);
    }

    // A store made by an older Corridor (0755 / 0644): the next start tightens it and says so in one line.
    fs.chmodSync(dataDir, 0o755);
    const loosened = fs.readdirSync(dataDir);
    for (const f of loosened) fs.chmodSync(path.join(dataDir, f), 0o644);
    const second = await startCli(env);
    try {
      const lines = tightenedLines(second.stderr());
      expect(lines, second.stderr()).toHaveLength(1);
      expect(lines[0]).toContain(`${dataDir} 0755 -> 0700`);
      for (const f of loosened) expect(lines[0]).toContain(`${f} 0644 -> 0600`);
      expect(modeOf(dataDir).toString(8)).toBe('700');
      for (const f of fs.readdirSync(dataDir)) expect(`${f} ${modeOf(path.join(dataDir, f)).toString(8)}`).toBe(`${f} 600`);
    } finally {
      expect(await second.stop()).toBe(0);
    }

    // Once tightened, nothing more is said.
    const third = await startCli(env);
    try {
      expect(tightenedLines(third.stderr())).toEqual([]);
    } finally {
      expect(await third.stop()).toBe(0);
    }
  }, 120_000);
});

describe('one server per DATA_DIR on the embedded store', () => {
  it(PG
    ? 'with DATABASE_URL several servers may share a DATA_DIR (no lock)'
    : 'a second start exits at once naming the directory and the pid; short commands work beside the server; SIGKILL frees the directory', async () => {
    const dataDir = tmpDir();
    if (PG) {
      const env = cliEnv(dataDir, credEnv(fixedCreds()));
      const [a, b] = await Promise.all([startCli(env), startCli(env)]);
      try {
        expect((await accounts(a)).status).toBe(200);
        expect((await accounts(b)).status).toBe(200);
      } finally {
        expect(await a.stop()).toBe(0);
        expect(await b.stop()).toBe(0);
      }
      return;
    }

    const env = cliEnv(dataDir);
    const first = await startCli(env);
    const credentials = fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8');
    let firstGone = false;
    try {
      const second = await runCli(['start'], env);
      expect(second.code, second.stderr).toBe(1);
      expect(second.stderr).toContain(`DATA_DIR ${dataDir} is in use by another corridor server (pid ${first.child.pid})`);
      expect(second.stdout).toBe('');
      // It stopped before touching the store.
      expect(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8')).toBe(credentials);

      // The short commands share the store with the running server.
      const created = await runCli(['platform', 'create', '--name', 'Beside the server'], env);
      expect(created.code, created.stderr).toBe(0);
      const check = await runCli(['ledger-check'], env);
      expect(check.code, check.stderr).toBe(0);
      const migrated = await runCli(['migrate'], env);
      expect(migrated.code, migrated.stderr).toBe(0);
      expect(migrated.stdout).toBe('store is up to date\n');
      const listener = spawnCli(['webhooks', 'listen', '--port', '0'], env);
      let listenErr = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`webhooks listen did not start\n${listenErr}`)), 30_000);
        listener.stderr!.on('data', (d: Buffer) => {
          listenErr += d.toString();
          if (listenErr.includes('Listening for webhooks on')) {
            clearTimeout(timer);
            resolve();
          }
        });
        listener.once('exit', (code) => reject(new Error(`webhooks listen exited ${code}\n${listenErr}`)));
      });
      listener.kill('SIGTERM');
      expect(await new Promise((r) => listener.once('exit', r))).toBe(0);
      expect((await accounts(first)).status).toBe(200);

      // The lock is the kernel's: it goes with the process, however it dies.
      await first.kill();
      firstGone = true;
      const third = await startCli(env);
      try {
        expect(third.platformId).toBe(first.platformId);
        expect((await accounts(third)).status).toBe(200);
      } finally {
        expect(await third.stop()).toBe(0);
      }
    } finally {
      if (!firstGone) await first.stop();
    }
  }, 150_000);
});

/** Runs `corridor start` expecting it to fail; also when its first stderr output came and when it exited. */
function runFailingStart(env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Done & { msAfterError: number }> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(['start'], env);
    let stdout = '';
    let stderr = '';
    let errorAt = 0;
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => {
      if (!errorAt) errorAt = Date.now();
      stderr += d.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `corridor start did not exit (${errorAt ? `${Date.now() - errorAt} ms after its error` : 'no error printed'})\n${stdout}\n${stderr}`,
        ),
      );
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, msAfterError: errorAt ? Date.now() - errorAt : -1 });
    });
  });
}

describe('corridor start that cannot listen', () => {
  it('a busy port or an unresolvable HOST: prints why, naming it, and exits 1 within a second', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const extra = PG ? credEnv(fixedCreds()) : {};
      const [busy, unresolvable] = await Promise.all([
        runFailingStart(cliEnv(tmpDir(), { ...extra, PORT: String(port) })),
        runFailingStart(cliEnv(tmpDir(), { ...extra, HOST: 'no-such-host.invalid' })),
      ]);
      expect(busy.code, busy.stderr).toBe(1);
      expect(busy.stderr).toContain(`cannot listen on 127.0.0.1:${port}: port ${port} is already in use`);
      expect(busy.msAfterError, busy.stderr).toBeLessThan(1000);
      expect(unresolvable.code, unresolvable.stderr).toBe(1);
      expect(unresolvable.stderr).toContain('HOST "no-such-host.invalid" does not resolve');
      expect(unresolvable.msAfterError, unresolvable.stderr).toBeLessThan(1000);
    } finally {
      blocker.close();
    }
  }, 60_000);
});

describe('--help', () => {
  // Every command and subcommand; none may read the configuration or touch the store.
  const topics: [string[], string][] = [
    [['start', '--help'], 'Usage: corridor start'],
    [['migrate', '--help'], 'Usage: corridor migrate'],
    [['platform', '--help'], 'Usage: corridor platform create'],
    [['platform', 'create', '--help'], 'Usage: corridor platform create'],
    [['platform', 'show', '-h'], 'Usage: corridor platform show'],
    [['ledger-check', '--help'], 'Usage: corridor ledger-check'],
    [['webhooks', '--help'], 'Usage: corridor webhooks listen'],
    [['webhooks', 'listen', '--help'], 'Usage: corridor webhooks listen'],
    [['wallet', '--help'], 'Usage: corridor wallet <subcommand>'],
    [['wallet', 'keygen', '--help'], 'Usage: corridor wallet keygen'],
    [['wallet', 'encrypt-otp', '--help'], 'Usage: corridor wallet encrypt-otp'],
    [['wallet', 'stamp', '--help'], 'Usage: corridor wallet stamp'],
    [['wallet', 'decrypt-bundle', '--help'], 'Usage: corridor wallet decrypt-bundle'],
    [['help', 'ledger-check'], 'Usage: corridor ledger-check'],
  ];
  const cases = topics;

  it('every subcommand prints its own help and exits 0, without reading the configuration or touching the store', async () => {
    const parent = tmpDir();
    // A bad PORT: the configuration is not read for help. DATABASE_URL (PostgreSQL lane): nothing listens there.
    const env = cliEnv(path.join(parent, 'store'), {
      PORT: 'not-a-port',
      ...(PG ? { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/nothing' } : {}),
    });
    // Help loads no server code (src/cli/entry.ts), so each answers in well under a second.
    const results = await Promise.all(cases.map(([args]) => runCli(args, env)));
    cases.forEach(([args, usage], i) => {
      const r = results[i]!;
      expect(`${args.join(' ')} -> ${r.code}`, r.stderr).toBe(`${args.join(' ')} -> 0`);
      expect(r.stdout.startsWith(usage), `${args.join(' ')}:\n${r.stdout}`).toBe(true);
      expect(r.stderr).toBe('');
    });
    expect(fs.readdirSync(parent)).toEqual([]);
  }, 120_000);
});

describe('ledger-check --platform', () => {
  it('an unknown platform is an error, not a clean ledger', async () => {
    const r = await runCli(['ledger-check', '--platform', 'Platform:nope'], cliEnv(tmpDir()));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('platform Platform:nope does not exist');
    expect(r.stdout).not.toContain('clean');
  }, 30_000);
});

describe('the bootstrap token', () => {
  it('cannot be deleted over HTTP; were it gone all the same, a restart re-attaches one to the same platform instead of creating a second', async () => {
    const dataDir = tmpDir();
    // PostgreSQL: the file's schema already has a bootstrap platform (earlier tests), so fixed credentials.
    const env = cliEnv(dataDir, PG ? credEnv(fixedCreds()) : {});
    const store = () => openStore({ databaseUrl: PG ? process.env.TEST_DATABASE_URL : undefined, dataDir, poolSize: 1 });
    const platformCount = async () => {
      const s = store();
      try {
        return Number(
          (
            await s.db
              .selectFrom('platforms')
              .select((eb) => eb.fn.countAll().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      } finally {
        await s.close();
      }
    };

    const first = await withServer(env, async (s) => {
      const boot = new Client(s.baseUrl, { basic: s.creds });
      const tokens = await boot.get('/tokens');
      const bootToken = (tokens.body.data as { id: string; clientId: string }[]).find((t) => t.clientId === s.creds.id)!;
      expect(bootToken).toBeDefined();
      const other = await boot.post('/tokens', { name: 'admin helper', permissions: ['VIEW', 'TRANSACT', 'MANAGE'] });
      expect(other.status, other.text).toBe(201);
      const helper = new Client(s.baseUrl, { basic: { id: other.body.clientId, secret: other.body.clientSecret } });

      // Refused, with the reason and what to do instead, by another MANAGE token and by itself.
      const refused = expectError(await helper.delete(`/tokens/${bootToken.id}`), 400, 'INVALID_INPUT');
      expect(refused.body.message).toContain('bootstrap token cannot be deleted');
      expect(refused.body.message).toContain('CORRIDOR_CLIENT_SECRET');
      expect(refused.body.details.errors).toEqual([{ field: 'tokenId', message: expect.stringContaining('bootstrap') }]);
      expectError(await boot.delete(`/tokens/${bootToken.id}`), 400, 'INVALID_INPUT');
      expect((await accounts(s)).status).toBe(200);
      // Other tokens are deleted as before.
      expect((await boot.delete(`/tokens/${other.body.id}`)).status).toBe(204);
      return { platformId: s.platformId, creds: s.creds };
    });

    // The token is gone anyway (a store edited by hand, or an older Corridor that let it be deleted).
    const s = store();
    try {
      await s.db.deleteFrom('api_tokens').where('platform_id', '=', first.platformId).where('is_bootstrap', '=', 1).execute();
    } finally {
      await s.close();
    }
    const before = await platformCount();

    const second = await withServer(env, async (srv) => {
      expect(srv.platformId).toBe(first.platformId);
      if (PG) expect(srv.creds).toEqual(first.creds);
      else expect(srv.creds.id).not.toBe(first.creds.id);
      expect((await accounts(srv)).status).toBe(200);
      expect((await accounts(srv, first.creds)).status).toBe(PG ? 200 : 401);
      return srv.creds;
    });
    expect(await platformCount()).toBe(before);
    expect(JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'))).toEqual({
      platformId: first.platformId,
      clientId: second.id,
      clientSecret: second.secret,
    });

    // And the restart after that keeps both.
    await withServer(env, async (srv) => {
      expect(srv.platformId).toBe(first.platformId);
      expect(srv.creds).toEqual(second);
    });
    expect(await platformCount()).toBe(before);
  }, 150_000);
});

describe('CORRIDOR_SQL_PROFILE (a development tool: npm run bench -- --sql-profile)', () => {
  it(PG ? 'is refused with DATABASE_URL, naming why' : "writes the store's per-statement timings on SIGUSR2 and at exit", async () => {
    const file = path.join(tmpDir(), 'statements.json');
    if (PG) {
      const r = await runCli(['start'], cliEnv(tmpDir(), { CORRIDOR_SQL_PROFILE: file }));
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('CORRIDOR_SQL_PROFILE times the embedded SQLite store');
      return;
    }
    const s = await startCli(cliEnv(tmpDir(), { CORRIDOR_SQL_PROFILE: file }));
    const api = new Client(s.baseUrl, { basic: s.creds });
    expect((await api.request('POST', '/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'sql-profile-1' })).status).toBe(201);
    s.child.kill('SIGUSR2');
    let rows: { sql: string; calls: number; us: number; rows: number }[] = [];
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      if (fs.existsSync(file)) rows = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof rows;
    }
    const insert = rows.find((r) => /^insert into "customers"/.test(r.sql));
    expect(insert, JSON.stringify(rows.map((r) => r.sql))).toMatchObject({ calls: 1, rows: 1 });
    expect(insert!.us).toBeGreaterThan(0);
    expect(rows.some((r) => r.sql === 'commit' && r.calls > 0)).toBe(true);
    // Statements only, never their parameters.
    expect(fs.readFileSync(file, 'utf8')).not.toContain('sql-profile-1');
    fs.rmSync(file);
    expect(await s.stop()).toBe(0);
    expect(fs.existsSync(file), 'written again at exit').toBe(true);
  });
});

describe('CORRIDOR_GROUP_PROFILE (a development tool: npm run bench -- --group-profile)', () => {
  it(PG ? "writes the commit groups' phase timings on SIGUSR2 and at exit" : 'is refused without DATABASE_URL, naming why', async () => {
    const file = path.join(tmpDir(), 'groups.json');
    const refused = async (env: Record<string, string>) => {
      const r = await runCli(['start'], cliEnv(tmpDir(), { CORRIDOR_GROUP_PROFILE: file, ...env }));
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('CORRIDOR_GROUP_PROFILE times PostgreSQL commit groups');
    };
    if (!PG) return refused({});
    await refused({ CORRIDOR_PG_GROUP_COMMIT: '0' });
    // The bootstrap platform is shared by the whole database: only fixed credentials are known.
    const s = await startCli(cliEnv(tmpDir(), { CORRIDOR_GROUP_PROFILE: file, ...credEnv(fixedCreds()) }));
    const api = new Client(s.baseUrl, { basic: s.creds });
    // Payments from an account: units that share their transactions (three, sent together).
    const usd = await api.get('/platform/internal-accounts', { query: { currency: 'USD' } });
    expect(usd.status, usd.text).toBe(200);
    const account = usd.body.data[0].id as string;
    expect((await api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: 10_000 })).status).toBe(200);
    const ext = await api.post('/platform/external-accounts', {
      currency: 'USD',
      accountInfo: { ...usAccountInfo('001'), accountNumber: uniqueAccountNumber('001') },
    });
    expect(ext.status, ext.text).toBe(201);
    const quote = {
      source: { sourceType: 'ACCOUNT', accountId: account },
      destination: { destinationType: 'ACCOUNT', accountId: ext.body.id },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 100,
      immediatelyExecute: true,
    };
    const paid = await Promise.all([1, 2, 3].map(() => api.post('/quotes', quote)));
    expect(paid.map((r) => r.status)).toEqual([201, 201, 201]);
    s.child.kill('SIGUSR2');
    let profile: { groups: number; units: number; phases: Record<string, { count: number; sum: number }> } | undefined;
    for (let i = 0; i < 100 && !profile; i++) {
      await new Promise((r) => setTimeout(r, 50));
      if (fs.existsSync(file)) profile = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof profile;
    }
    expect(profile?.units).toBe(3);
    expect(profile!.groups).toBeGreaterThanOrEqual(1);
    expect(profile!.phases.unit!.count).toBe(3);
    expect(profile!.phases.commit!.sum).toBeGreaterThan(0);
    fs.rmSync(file);
    expect(await s.stop()).toBe(0);
    expect(fs.existsSync(file), 'written again at exit').toBe(true);
  });
});

describe('the compiled server (dist/)', () => {
  it('is rebuilt when the sources change, not when only their mtimes do', async () => {
    // CI once rebuilt dist/ under running tests because a checkout's mtimes were newer than the last
    // build: `npm start`'s prestart (and the tests' global setup) compare contents, not times.
    const { buildDist } = await import('../../scripts/build.mjs');
    await buildDist({ ifStale: true, quiet: true });
    const stamp = fs.readFileSync(path.join(ROOT, 'dist/.built'), 'utf8');
    const file = path.join(ROOT, 'src/app.ts');
    const { atime, mtime } = fs.statSync(file);
    const future = new Date(Date.now() + 3_600_000);
    fs.utimesSync(file, future, future);
    try {
      expect(await buildDist({ ifStale: true, quiet: true })).toBe(false);
    } finally {
      fs.utimesSync(file, atime, mtime);
    }
    expect(fs.readFileSync(path.join(ROOT, 'dist/.built'), 'utf8')).toBe(stamp);
    expect(stamp.trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('validates requests with the validators the build compiled, answering as the source does, and serves the document the build wrote', async () => {
    // The same requests to `corridor start` (dist/, precompiled validators) and to a server built
    // from src/ in this process (validators compiled by Ajv at start): the same answers.
    const requests: [string, string, unknown?][] = [
      ['POST', '/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'pc-1', bogus: 1 }],
      ['POST', '/customers', { customerType: 'NOPE' }],
      ['POST', '/customers', { customerType: 'INDIVIDUAL', platformCustomerId: 'pc-2', birthDate: 19900115 }],
      ['GET', '/customers?limit=abc'],
      ['GET', '/customers?limit=2&sortOrder=sideways'],
      ['GET', '/customers?limit=2'],
      ['PATCH', '/config', { feeConfigs: 'x' }],
      ['POST', '/platform/external-accounts', { currency: 'USD', accountInfo: { accountType: 'US_ACCOUNT' } }],
      ['POST', '/quotes', { lockedCurrencySide: 'SIDEWAYS' }],
      ['GET', '/transactions?startDate=yesterday'],
    ];
    const answer = (r: { status: number; body?: { code?: unknown; details?: unknown } }) =>
      r.status >= 400 ? { status: r.status, code: r.body?.code, details: r.body?.details } : { status: r.status };
    const local = await startServer();
    try {
      const p = await local.newPlatform();
      // A platform of its own (on PostgreSQL the bootstrap platform is shared by every file of the lane).
      const adminToken = randomBytes(24).toString('hex');
      await withServer(cliEnv(tmpDir(), { LOG_LEVEL: 'debug', CORRIDOR_ADMIN_TOKEN: adminToken }), async (s) => {
        // The log line may follow the banner (pino writes asynchronously).
        let out = s.stdout;
        s.child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
        const countsIn = (text: string) =>
          text
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l) as { requestValidators?: { precompiled: number; compiled: number } })
            .find((l) => l.requestValidators)?.requestValidators;
        for (let i = 0; i < 100 && !countsIn(out); i++) await new Promise((r) => setTimeout(r, 50));
        const counts = countsIn(out);
        expect(counts, 'the start logs its validator counts at debug').toBeDefined();
        expect(counts!.compiled, 'every request schema was compiled by the build').toBe(0);
        expect(counts!.precompiled).toBeGreaterThan(50);
        const created = await new Client(s.baseUrl.slice(0, -BASE_PATH.length), { bearer: adminToken }).post('/_admin/platforms', {
          name: 'Compiled server',
        });
        expect(created.status, created.text).toBe(201);
        const dist = new Client(s.baseUrl, { basic: { id: created.body.token.clientId, secret: created.body.token.clientSecret } });
        for (const [method, url, body] of requests) {
          const [a, b] = [await dist.request(method, url, body), await p.api.request(method, url, body)];
          expect(answer(a), `${method} ${url}: ${a.text}`).toEqual(answer(b));
        }
        // The OpenAPI document the build wrote (dist/openapi.json) is the one the source builds.
        const [docDist, docSrc] = [await dist.get('/openapi.json'), await p.api.get('/openapi.json')];
        expect(docDist.status).toBe(200);
        expect(docDist.body).toEqual(docSrc.body);
      });
    } finally {
      await local.close();
    }
  });
});
