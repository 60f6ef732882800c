/**
 * Hostile review of `corridor fixtures export --out FILE` (issue #25): the file holds customers'
 * names, birth dates, addresses and bank account numbers, so it is written owner-only (0600), as
 * `corridor start` writes credentials.json — not world-readable under the usual umask 022.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { fixturesCommand } from '../../src/cli/fixtures.ts';
import { usAccountInfo } from '../helpers/payments.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let p: PlatformHandle;
let dir: string;
const saved = { ...process.env };
let savedUmask: number;

beforeAll(async () => {
  // The usual umask, under which a plain writeFileSync makes a world-readable file (0644).
  savedUmask = process.umask(0o022);
  srv = await startServer();
  p = await srv.newPlatform();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-export-'));
  process.env.CORRIDOR_CLIENT_ID = p.creds.id;
  process.env.CORRIDOR_CLIENT_SECRET = p.creds.secret;
});
afterAll(async () => {
  for (const k of ['CORRIDOR_CLIENT_ID', 'CORRIDOR_CLIENT_SECRET']) {
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
  }
  process.umask(savedUmask);
  fs.rmSync(dir, { recursive: true, force: true });
  await srv.close();
});

it('export --out writes the platform state to a file only its owner can read', async () => {
  const load = await p.api.post('/sandbox/fixtures', {
    version: 1,
    customers: [
      {
        ref: 'pii',
        customer: {
          customerType: 'INDIVIDUAL',
          platformCustomerId: 'pii',
          fullName: 'Private Person',
          birthDate: '1980-05-06',
          nationality: 'US',
        },
      },
    ],
    externalAccounts: [{ customerRef: 'pii', currency: 'USD', accountInfo: usAccountInfo('001') }],
  });
  expect(load.status, load.text).toBe(201);
  const out = path.join(dir, 'state.json');
  expect(await fixturesCommand(['export', '--out', out, '--url', srv.origin])).toBe(0);
  const text = fs.readFileSync(out, 'utf8');
  expect(text).toContain('Private Person');
  expect(fs.statSync(out).mode & 0o777).toBe(0o600);
});
