/**
 * `corridor trigger` and `corridor fixtures` as child processes (bin/corridor.js) against a real
 * server: credentials from the environment or the DATA_DIR file, the event really delivered, a
 * fixture loaded and exported, and the exit codes of refusals and usage errors.
 */
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, killChildren, spawnCli } from '../helpers/child.ts';
import { usAccountInfo } from '../helpers/payments.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let rec: Receiver;
let p: PlatformHandle;
let dir: string;
beforeAll(async () => {
  srv = await startServer();
  rec = await startReceiver();
  p = await srv.newPlatform();
  expect((await p.api.patch('/config', { webhookEndpoint: rec.url })).status).toBe(200);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-devtools-cli-'));
});
afterAll(async () => {
  killChildren();
  await rec.close();
  await srv.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function corridor(
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = cliEnv(path.join(dir, 'no-data-dir'), { CORRIDOR_CLIENT_ID: p.creds.id, CORRIDOR_CLIENT_SECRET: p.creds.secret, ...extra });
  const child = spawnCli(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, stdout, stderr };
}

describe('corridor trigger', () => {
  it('makes the event happen and prints it; the webhook arrives', async () => {
    const r = await corridor(['trigger', 'outgoing_payment.failed', '--url', srv.origin]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.event.type).toBe('OUTGOING_PAYMENT.FAILED');
    expect(out.created.quoteId).toMatch(/^Quote:/);
    const got = await waitFor(() => rec.received.find((x) => x.body?.id === out.event.id));
    expect(got.body.data).toMatchObject({ id: out.created.transactionId, status: 'FAILED' });
    expect((await p.api.get(`/transactions/${out.created.transactionId}`)).body.status).toBe('FAILED');
  });

  it('reads the credentials corridor start saved in DATA_DIR', async () => {
    const dataDir = path.join(dir, 'data');
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(
      path.join(dataDir, 'credentials.json'),
      JSON.stringify({ platformId: p.id, clientId: p.creds.id, clientSecret: p.creds.secret }),
    );
    const env = { CORRIDOR_CLIENT_ID: '', CORRIDOR_CLIENT_SECRET: '', DATA_DIR: dataDir };
    const r = await corridor(['trigger', 'CUSTOMER.KYC_APPROVED', '--url', `${srv.origin}/`], env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).event.type).toBe('CUSTOMER.KYC_APPROVED');
  });

  it('exit 1 with the error body when the server refuses; 2 for usage errors', async () => {
    const refused = await corridor(['trigger', 'NOPE.NOPE', '--url', srv.origin]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('HTTP 400');
    expect(refused.stderr).toContain('INVALID_INPUT');
    const wrong = await corridor(['trigger', 'TEST', '--url', srv.origin], { CORRIDOR_CLIENT_SECRET: 'wrong' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('HTTP 401');
    expect((await corridor(['trigger', '--url', srv.origin])).code).toBe(2);
    expect((await corridor(['trigger', 'A', 'B', '--url', srv.origin])).code).toBe(2);
    const noCreds = await corridor(['trigger', 'TEST', '--url', srv.origin], { CORRIDOR_CLIENT_ID: '', CORRIDOR_CLIENT_SECRET: '' });
    expect(noCreds.code).toBe(2);
    expect(noCreds.stderr).toContain('no credentials');
    const down = await corridor(['trigger', 'TEST', '--url', 'http://127.0.0.1:9']);
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('cannot reach Corridor');
    const help = await corridor(['trigger', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('corridor trigger EVENT_TYPE');
  });
});

describe('corridor fixtures', () => {
  it('loads a file and exports the state (stdout and --out)', async () => {
    const q = await srv.newPlatform();
    const file = path.join(dir, 'fixture.json');
    const fixture = {
      version: 1,
      customers: [
        {
          ref: 'ann',
          customer: {
            customerType: 'INDIVIDUAL',
            platformCustomerId: 'ann',
            fullName: 'Ann Lee',
            birthDate: '1990-01-01',
            nationality: 'US',
            currencies: ['USD'],
          },
          balances: [{ currency: 'USD', amount: 4_200 }],
        },
      ],
      externalAccounts: [{ customerRef: 'ann', currency: 'USD', accountInfo: usAccountInfo('001') }],
    };
    fs.writeFileSync(file, JSON.stringify(fixture));
    const env = { CORRIDOR_CLIENT_ID: q.creds.id, CORRIDOR_CLIENT_SECRET: q.creds.secret };
    const loaded = await corridor(['fixtures', 'load', file, '--url', srv.origin], env);
    expect(loaded.code, loaded.stderr).toBe(0);
    const ids = JSON.parse(loaded.stdout);
    expect(ids.customers[0]).toMatchObject({ ref: 'ann', id: expect.stringMatching(/^Customer:/) });
    const exported = await corridor(['fixtures', 'export', '--url', srv.origin], env);
    expect(exported.code, exported.stderr).toBe(0);
    expect(JSON.parse(exported.stdout)).toEqual((await q.api.get('/sandbox/fixtures')).body);
    expect(JSON.parse(exported.stdout).customers[0].balances).toEqual([{ currency: 'USD', amount: 4_200 }]);
    const out = path.join(dir, 'export.json');
    expect((await corridor(['fixtures', 'export', '--out', out, '--url', srv.origin], env)).code).toBe(0);
    expect(JSON.parse(fs.readFileSync(out, 'utf8'))).toEqual(JSON.parse(exported.stdout));
  });

  it('loads a file over one load’s limit in parts, each all or nothing, and says which parts a refusal left loaded', async () => {
    const q = await srv.newPlatform();
    const env = { CORRIDOR_CLIENT_ID: q.creds.id, CORRIDOR_CLIENT_SECRET: q.creds.secret };
    const person = (ref: string, fullName = 'Bo Park') => ({
      ref,
      customer: {
        customerType: 'INDIVIDUAL',
        platformCustomerId: ref,
        fullName,
        birthDate: '1990-01-01',
        nationality: 'US',
        currencies: ['USD'],
      },
      balances: [{ currency: 'USD', amount: 100 }],
    });
    // 70 customers with a balance each: 140 entries, over the 100 one load takes.
    const big = path.join(dir, 'big.json');
    fs.writeFileSync(big, JSON.stringify({ version: 1, customers: Array.from({ length: 70 }, (_, i) => person(`p-${i}`)) }));
    const loaded = await corridor(['fixtures', 'load', big, '--url', srv.origin], env);
    expect(loaded.code, loaded.stderr).toBe(0);
    expect(loaded.stderr).toContain('loading in 2 parts');
    expect(JSON.parse(loaded.stdout).customers).toHaveLength(70);
    expect((await q.api.get('/customers', { query: { limit: 1 } })).body.totalCount).toBe(70);
    expect((await q.api.get('/sandbox/fixtures')).body.customers).toHaveLength(70);
    // The second part refused (a bad birth date in it): the first part stays, the second writes nothing.
    const r = await srv.newPlatform();
    const broken = Array.from({ length: 70 }, (_, i) => person(`q-${i}`));
    broken[60]!.customer.birthDate = 'not-a-date';
    fs.writeFileSync(big, JSON.stringify({ version: 1, customers: broken }));
    const refused = await corridor(['fixtures', 'load', big, '--url', srv.origin], {
      CORRIDOR_CLIENT_ID: r.creds.id,
      CORRIDOR_CLIENT_SECRET: r.creds.secret,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('part 2 of 2 was refused; part 1 is loaded (50 customers');
    expect(refused.stderr).toContain('HTTP 400');
    expect((await r.api.get('/customers', { query: { limit: 1 } })).body.totalCount).toBe(50);
  });

  it('an invalid file is refused (exit 1, the 400 on stderr); a missing or non-JSON file and bad usage too', async () => {
    const bad = path.join(dir, 'bad.json');
    fs.writeFileSync(bad, JSON.stringify({ version: 1, customers: [{ ref: 'x', customer: { customerType: 'INDIVIDUAL' }, extra: 1 }] }));
    const r = await corridor(['fixtures', 'load', bad, '--url', srv.origin]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('HTTP 400');
    const notJson = path.join(dir, 'not.json');
    fs.writeFileSync(notJson, '{ nope');
    expect((await corridor(['fixtures', 'load', notJson, '--url', srv.origin])).code).toBe(1);
    expect((await corridor(['fixtures', 'load', path.join(dir, 'missing.json'), '--url', srv.origin])).code).toBe(1);
    expect((await corridor(['fixtures', 'load', '--url', srv.origin])).code).toBe(2);
    expect((await corridor(['fixtures', 'frobnicate'])).code).toBe(2);
  });
});
