/**
 * The README's embedded-wallet walkthrough, run as written: bash, curl and the `corridor wallet`
 * commands against a real server — EMAIL_OTP login, then a signed logout.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
});
afterAll(async () => srv?.close());

function walkthrough(): string {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = readme.split('<!-- wallet-walkthrough-start -->')[1]?.split('<!-- wallet-walkthrough-end -->')[0];
  if (!block) throw new Error('README has no wallet walkthrough block');
  return block.replace(/^\s*```sh\n/, '').replace(/```\s*$/, '');
}

it('logs in with EMAIL_OTP and signs a logout, exactly as the README shows', async () => {
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', walkthrough()], {
    cwd: ROOT,
    env: { ...process.env, B: srv.baseUrl, AUTH: `${p.creds.id}:${p.creds.secret}` },
    timeout: 120_000,
  });
  const session = /logged in: (Session:\S+)/.exec(stdout)?.[1];
  expect(session, stdout).toBeDefined();
  expect(stdout).toContain('logout: 204');
  // The session really ended.
  const wallets = await p.api.get('/customers/internal-accounts', { query: { type: 'EMBEDDED_WALLET' } });
  const sessions = await p.api.get('/auth/sessions', { query: { accountId: wallets.body.data[0].id } });
  expect(sessions.body.data).toEqual([]);
  expect((await p.api.delete(`/auth/sessions/${session}`)).status).toBe(404);
}, 150_000);
