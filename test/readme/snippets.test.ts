/**
 * Every ```sh block of README.md runs as pasted. The blocks run with bash (`set -euo pipefail`), in
 * README order, in ONE shell session (so variables and functions flow from block to block), at the
 * repository root, against a fresh server started with the README's own start command (`npm start`)
 * on a temporary DATA_DIR and a free port. The only changes made to a block: the documented port
 * 8080 becomes the server's port, and DATA_DIR (exported in the session) points at the temporary
 * directory. A failing block fails the test naming the block, its text and its output; so does a
 * block that printed an API error body (curl exits 0 on a 4xx, so "ran" is not enough).
 *
 * Blocks that cannot run in that session are listed in NOT_IN_SESSION with the reason, and run
 * elsewhere where possible (the admin block against the same server, with its token in the shell;
 * the PostgreSQL blocks on the PostgreSQL lane with the lane's database URL substituted).
 *
 * Lanes: the session runs on the SQLite lane — it is the Quick start's store, and its webhook
 * receiver listens on the documented fixed port 8081, which two concurrent sessions (one per lane)
 * would fight over. The PostgreSQL lane runs the PostgreSQL blocks, and the wallet walkthrough (the
 * block whose behaviour depends most on the store) against an `npm start` server on PostgreSQL.
 * (This replaces test/auth/readme.test.ts, which ran the walkthrough on its own.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, killChildren, signalChild, spawnCommand, startCli, type RunningCli } from '../helpers/child.ts';
import { Client } from '../helpers/http.ts';
import { laneStore } from '../helpers/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PG = laneStore() === 'postgres';
const ADMIN_TOKEN = 'readme-admin-token-0123456789abcdef';

interface Block {
  /** 1-based position among the README's sh blocks. */
  n: number;
  /** Line of its opening fence. */
  line: number;
  /** The heading it sits under. */
  heading: string;
  text: string;
}

/** The ```sh blocks of README.md, in order. */
function shellBlocks(): Block[] {
  const lines = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8').split('\n');
  const blocks: Block[] = [];
  let heading = '(top)';
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i]!;
    if (/^#{1,6} /.test(l)) heading = l.replace(/^#+ /, '');
    if (!/^```sh\s*$/.test(l)) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    if (i >= lines.length) throw new Error(`README.md:${start + 1}: unterminated sh block`);
    blocks.push({ n: blocks.length + 1, line: start + 1, heading, text: `${body.join('\n')}\n` });
  }
  return blocks;
}

const describeBlock = (b: Block) => `README block #${b.n} (README.md:${b.line}, under "${b.heading}")`;

/** Blocks that do not run in the session: a line that identifies each, and why. */
const NOT_IN_SESSION: { match: string; why: string; runs?: 'admin' | 'postgres' }[] = [
  {
    match: 'npm ci && npm start',
    why: 'the Quick start itself: it installs the dependencies and starts the server (this test starts that server with `npm start`), and `npm test` is this very suite',
  },
  {
    match: '/_admin/platforms',
    why: 'needs CORRIDOR_ADMIN_TOKEN in the shell and on the server: run after the session against the same server, which is started with it',
    runs: 'admin',
  },
  {
    match: 'DATABASE_URL=postgres://user:pass@host:5432/corridor npm start',
    why: 'starts a second server, on PostgreSQL, in the foreground: run on the PostgreSQL lane with its database URL',
    runs: 'postgres',
  },
  {
    match: "DATABASE_URL='postgres://user@localhost/corridor?host=/var/run/postgresql' npm start",
    why: 'starts a second server, on PostgreSQL over its unix socket, in the foreground: run on the PostgreSQL lane with its database URL',
    runs: 'postgres',
  },
  { match: 'sysctl -w vm.dirty_background_bytes', why: 'a kernel setting of the host: needs root and changes the machine' },
  {
    match: 'PORT=8081 DATA_DIR=./.corridor-1 npx corridor start &',
    why: 'three servers on fixed ports 8081-8083 on 0.0.0.0 with placeholder credentials, left running; test/multiprocess/scale-out.test.ts runs that setup',
  },
  {
    match: 'npm run bench',
    why: 'the development commands: `npm test` is this suite (it would run itself), the benchmarks and workload runs take many minutes',
  },
];

/** Which NOT_IN_SESSION entry a block is, if any. */
function exclusionOf(b: Block) {
  return NOT_IN_SESSION.find((x) => b.text.includes(x.match));
}

/** The only changes made to a block: the documented port 8080 becomes `port`. */
const withPort = (text: string, port: number) => text.replace(/\b8080\b/g, String(port));

/** The shell's environment: nothing that configures Corridor, except DATA_DIR. */
function shellEnv(dataDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (/^(PORT|HOST|DATABASE_URL|LOG_LEVEL|CORRIDOR_.*)$/.test(k)) delete env[k];
  return { ...env, DATA_DIR: dataDir, ...extra };
}

interface Session {
  code: number | null;
  /** Output (stdout and stderr, interleaved) of each block that started, by block number. */
  outputs: Map<number, string>;
  /** The block running when the session ended. */
  last: number | undefined;
  timedOut: boolean;
}

const MARK = '@@README-BLOCK';

/**
 * Runs `blocks` in one bash session (`set -euo pipefail`), each announced by a marker line so the
 * output can be split per block. The session is a process group of its own: whatever a block left
 * running in the background is killed with it.
 */
function runSession(blocks: Block[], env: NodeJS.ProcessEnv, rewrite: (b: Block) => string, timeoutMs: number): Promise<Session> {
  // Output goes to a file, not a pipe: a block's background `node` (the webhook listener) shares
  // the session's stdout, and Node makes a stdout pipe non-blocking — for every process that
  // shares it — so a curl writing while the pipe was full failed with exit 23 ("write error").
  const outFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-readme-out-')), 'session.log');
  const script = [
    'set -euo pipefail',
    `exec >'${outFile}' 2>&1`,
    ...blocks.flatMap((b) => [`printf '\\n${MARK} %s@@\\n' ${b.n}`, rewrite(b)]),
    `printf '\\n${MARK} end@@\\n'`,
  ].join('\n');
  return new Promise((resolve) => {
    const child = spawnCommand('bash', ['-c', script], env);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      signalChild(child, 'SIGKILL');
    }, timeoutMs);
    // `exit`, not `close`: a receiver left in the background would hold the pipes open.
    child.once('exit', (code) => {
      clearTimeout(timer);
      // Let the last output arrive, then take down anything the session left behind.
      setTimeout(() => {
        signalChild(child, 'SIGKILL');
        const out = fs.readFileSync(outFile, 'utf8');
        fs.rmSync(path.dirname(outFile), { recursive: true, force: true });
        const outputs = new Map<number, string>();
        let last: number | undefined;
        const parts = out.split(new RegExp(`\\n?${MARK} (\\d+|end)@@\\n`));
        for (let i = 1; i < parts.length; i += 2) {
          if (parts[i] === 'end') {
            last = undefined;
            continue;
          }
          last = Number(parts[i]);
          outputs.set(last, parts[i + 1] ?? '');
        }
        resolve({ code, outputs, last, timedOut });
      }, 300);
    });
  });
}

/** An API error body (`{status, code, message}` with a 4xx/5xx), which curl prints and exits 0 on. */
const API_ERROR = /\{"status":[45]\d\d,"code":"[A-Z_]+"/;

/** Fails naming the block, its text and its output, when the session stopped in it or it printed an API error. */
function expectSessionRan(s: Session, blocks: Block[]): void {
  const failed = s.timedOut || s.code !== 0 ? blocks.find((b) => b.n === s.last) : undefined;
  if (failed || s.timedOut || s.code !== 0) {
    const why = s.timedOut ? 'did not finish in time' : `failed (exit ${s.code})`;
    const b = failed;
    throw new Error(
      b
        ? `${describeBlock(b)} ${why}:\n--- block ---\n${b.text}--- output ---\n${s.outputs.get(b.n) ?? ''}`
        : `the session ${why} before its first block:\n${[...s.outputs.values()].join('\n')}`,
    );
  }
  for (const b of blocks) {
    const output = s.outputs.get(b.n);
    if (output === undefined) throw new Error(`${describeBlock(b)} never ran`);
    const m = API_ERROR.exec(output);
    if (m) throw new Error(`${describeBlock(b)} printed an API error:\n--- block ---\n${b.text}--- output ---\n${output}`);
  }
}

const dirs: string[] = [];
function tmpDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-readme-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  killChildren();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** `npm start`, the README's start command, on a fresh DATA_DIR and a free port (PORT=0). */
function npmStart(dataDir: string, extra: Record<string, string> = {}): Promise<RunningCli> {
  return startCli(cliEnv(dataDir, extra), 60_000, { file: 'npm', args: ['start'] });
}

/** The README's wallet walkthrough ended the session it logged in (its output names both). */
async function expectWalletWalkthroughDone(server: RunningCli, output: string, creds = server.creds): Promise<void> {
  const session = /logged in: (Session:\S+)/.exec(output)?.[1];
  expect(session, output).toBeDefined();
  expect(output).toContain('logout: 204');
  const api = new Client(server.baseUrl, { basic: creds });
  const wallets = await api.get('/customers/internal-accounts', { query: { type: 'EMBEDDED_WALLET', limit: 100 } });
  expect(wallets.status).toBe(200);
  for (const w of wallets.body.data as { id: string }[]) {
    const sessions = await api.get('/auth/sessions', { query: { accountId: w.id } });
    expect((sessions.body.data as { id: string }[]).map((x) => x.id)).not.toContain(session);
  }
  expect((await api.delete(`/auth/sessions/${session}`)).status).toBe(404);
}

const blocks = shellBlocks();

describe('README.md sh blocks', () => {
  it('the list of blocks that do not run in the session is exact: each entry names exactly one block', () => {
    expect(blocks.length).toBeGreaterThan(5);
    for (const x of NOT_IN_SESSION) {
      const hits = blocks.filter((b) => b.text.includes(x.match));
      expect(hits.map(describeBlock), `NOT_IN_SESSION entry "${x.match}"`).toHaveLength(1);
    }
  });

  it('no block holds a placeholder that cannot be pasted (…, <angle brackets>, [optional] arguments)', () => {
    for (const b of blocks.filter((x) => !exclusionOf(x))) {
      expect(b.text, describeBlock(b)).not.toMatch(/…|<[a-zA-Z][\w -]*>|\s\[--/);
    }
  });

  if (!PG) {
    let server: RunningCli;
    let dataDir: string;
    let session: Session;
    const inSession = blocks.filter((b) => !exclusionOf(b));

    beforeAll(async () => {
      dataDir = tmpDir();
      // The Quick start's server. CORRIDOR_ADMIN_TOKEN is set on it for the admin block, run after
      // the session; the session's shell does not have it (so no block can depend on it unseen).
      server = await npmStart(dataDir, { CORRIDOR_ADMIN_TOKEN: ADMIN_TOKEN });
      const port = new URL(server.origin).port;
      session = await runSession(inSession, shellEnv(dataDir), (b) => withPort(b.text, Number(port)), 300_000);
    }, 400_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('every block runs as pasted, in order, in one shell session against `npm start`', () => {
      expect(inSession.length).toBeGreaterThan(3);
      expectSessionRan(session, inSession);
    });

    it('the webhook examples use a local receiver, which got signed events', () => {
      for (const b of blocks)
        expect(b.text, describeBlock(b)).not.toMatch(/https?:\/\/(?!127\.0\.0\.1|localhost)[a-z0-9.-]+\.[a-z]{2,}\/hooks/i);
      const all = [...session.outputs.values()].join('\n');
      expect(all).toMatch(/TEST\s+Webhook:\S+\s+-\s+signature ok/);
      expect(all).toMatch(/"type":"TEST"/);
      expect(all).not.toMatch(/signature INVALID/);
    });

    it('the wallet walkthrough logged in and out', async () => {
      const walkthrough = inSession.find((b) => b.text.includes('corridor wallet stamp'))!;
      expect(walkthrough).toBeDefined();
      const saved = JSON.parse(fs.readFileSync(path.join(dataDir, 'credentials.json'), 'utf8'));
      await expectWalletWalkthroughDone(server, session.outputs.get(walkthrough.n) ?? '', {
        id: saved.clientId,
        secret: saved.clientSecret,
      });
    });

    it('the admin block runs against a server started with CORRIDOR_ADMIN_TOKEN', async () => {
      const admin = blocks.filter((b) => exclusionOf(b)?.runs === 'admin');
      expect(admin).toHaveLength(1);
      const port = Number(new URL(server.origin).port);
      const s = await runSession(admin, shellEnv(dataDir, { CORRIDOR_ADMIN_TOKEN: ADMIN_TOKEN }), (b) => withPort(b.text, port), 60_000);
      expectSessionRan(s, admin);
      expect(s.outputs.get(admin[0]!.n)).toContain('"name":"Acme"');
    }, 90_000);
  }

  if (PG) {
    it('the PostgreSQL blocks start a server on the lane database (its URL substituted)', async () => {
      const pgBlocks = blocks.filter((b) => exclusionOf(b)?.runs === 'postgres');
      expect(pgBlocks).toHaveLength(2);
      const url = process.env.TEST_DATABASE_URL!;
      for (const b of pgBlocks) {
        // The one substitution: the block's database URL (quoted or not) becomes the lane's.
        const text = b.text.replace(/'?postgres(ql)?:\/\/[^\s']+'?/, `'${url}'`);
        expect(text, describeBlock(b)).toContain(url);
        const dataDir = tmpDir();
        const started = await startCli(shellEnv(dataDir, { PORT: '0', LOG_LEVEL: 'warn' }), 60_000, {
          file: 'bash',
          args: ['-euo', 'pipefail', '-c', text],
        }).catch((err: Error) => {
          throw new Error(`${describeBlock(b)} did not start a server:\n--- block ---\n${b.text}--- error ---\n${err.message}`);
        });
        try {
          expect(started.output().stdout, describeBlock(b)).toMatch(/store:\s+postgres /);
          const health = await new Client(started.origin).get('/healthz');
          expect(health.body, describeBlock(b)).toEqual({ status: 'ok', store: 'postgres' });
        } finally {
          await started.stop();
        }
      }
    }, 180_000);

    it('the wallet walkthrough runs as pasted against `npm start` on PostgreSQL', async () => {
      const walkthrough = blocks.find((b) => b.text.includes('corridor wallet stamp'))!;
      expect(walkthrough).toBeDefined();
      // Fixed credentials: the lane's schema already has the sandbox platform (the blocks above
      // created it), whose secret a start on another DATA_DIR does not know.
      const server = await npmStart(tmpDir(), {
        CORRIDOR_TOKEN_ID: 'readme-wallet-test',
        CORRIDOR_CLIENT_SECRET: 'sk_readme_wallet_test_0123456789',
      });
      try {
        // B and AUTH as "Using the API" sets them (that block also starts a receiver on the fixed port 8081: see the header).
        const env = shellEnv(tmpDir(), { B: server.baseUrl, AUTH: `${server.creds.id}:${server.creds.secret}` });
        const s = await runSession([walkthrough], env, (b) => b.text, 150_000);
        expectSessionRan(s, [walkthrough]);
        await expectWalletWalkthroughDone(server, s.outputs.get(walkthrough.n) ?? '');
      } finally {
        await server.stop();
      }
    }, 240_000);
  }
});
