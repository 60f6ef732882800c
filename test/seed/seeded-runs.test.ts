/**
 * CORRIDOR_SEED end to end: real `corridor start` processes, each on a fresh store (a fresh DATA_DIR,
 * and on the PostgreSQL lane a fresh schema), run one script of API calls; the transcripts (status
 * and response body, byte for byte) of two runs with the same seed are identical, and differ with
 * another seed or without one. Also: secrets stay random, a restart over a used store neither
 * repeats ids nor fails, delayed outcomes happen when the sandbox clock is advanced, and the
 * refusals (bad seed: exit 2; a PRODUCTION platform in the store or created through the admin API).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dropPgSchemas, resetPgSchema, withSearchPath } from '../../bench/dataset/writers.ts';
import { CREDENTIALS_FILE } from '../../src/store/db.ts';
import { cliEnv, killChildren, type RunningCli, spawnCli, startCli } from '../helpers/child.ts';
import { basicHeader } from '../helpers/http.ts';
import { laneStore } from '../helpers/server.ts';

const dirs: string[] = [];
const schemas: string[] = [];
const running: RunningCli[] = [];
const base = process.env.CORRIDOR_TEST_DATABASE_BASE_URL ?? process.env.TEST_DATABASE_URL;

afterAll(async () => {
  for (const r of running) await r.stop().catch(() => undefined);
  killChildren();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  if (base) await dropPgSchemas(base, schemas);
});

/** A fresh store: a new DATA_DIR, and on the PostgreSQL lane a new, empty schema of the lane's database. */
async function freshStore(extra: Record<string, string> = {}): Promise<NodeJS.ProcessEnv> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-seed-'));
  dirs.push(dataDir);
  const env = cliEnv(dataDir, extra);
  if (laneStore() === 'postgres') {
    if (!base) throw new Error('the postgres lane needs TEST_DATABASE_URL');
    const schema = `seed_${process.pid}_${schemas.length}_${Date.now().toString(36)}`;
    await resetPgSchema(base, schema);
    schemas.push(schema);
    env.DATABASE_URL = withSearchPath(base, schema);
  }
  return env;
}

async function start(env: NodeJS.ProcessEnv): Promise<RunningCli> {
  const r = await startCli(env);
  running.push(r);
  return r;
}

async function stop(r: RunningCli): Promise<void> {
  const exit = await r.stop();
  running.splice(running.indexOf(r), 1);
  expect(exit.code).toBe(0);
}

interface Transcript {
  /** One line per call: method, path, status, and the response body exactly as sent. */
  lines: string[];
  firstCustomerId: string;
  clientId: string;
  clientSecret: string;
}

const ADDRESS = { line1: '1 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' };
const usAccount = (accountNumber: string) => ({
  accountType: 'US_ACCOUNT',
  accountNumber,
  routingNumber: '021000021',
  bankName: 'Chase Bank',
  bankAccountType: 'CHECKING',
  beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'John Doe', birthDate: '1990-01-15', nationality: 'US', address: ADDRESS },
});

/**
 * The script: what an integrator's test would do. Polls (waiting for a settlement the job runner
 * makes) are not in the transcript: how many it takes depends on timing, the answer it waits for does not.
 */
async function script(r: RunningCli, dataDir: string): Promise<Transcript> {
  const auth = basicHeader(r.creds);
  const lines: string[] = [];
  const send = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(r.baseUrl + p, {
      method,
      headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await send(method, p, body);
    lines.push(`${method} ${p} ${res.status} ${res.text}`);
    expect(res.status, `${method} ${p}: ${res.text}`).toBeLessThan(300);
    return JSON.parse(res.text);
  };
  const settled = async (transactionId: string, status: string) => {
    for (let i = 0; i < 200; i++) {
      const t = JSON.parse((await send('GET', `/transactions/${encodeURIComponent(transactionId)}`)).text);
      if (t.status === status) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`${transactionId} never reached ${status}`);
  };

  const usd = (await call('GET', '/platform/internal-accounts?currency=USD')).data[0].id as string;
  await call('POST', `/sandbox/internal-accounts/${usd}/fund`, { amount: 1_000_000 });
  const customer = await call('POST', '/customers', {
    customerType: 'INDIVIDUAL',
    platformCustomerId: 'seed-customer-1',
    fullName: 'Ada Lovelace',
    birthDate: '1990-12-10',
    nationality: 'GB',
    address: ADDRESS,
  });
  await call('POST', '/customers', {
    customerType: 'INDIVIDUAL',
    fullName: 'Grace Hopper',
    birthDate: '1986-12-09',
    nationality: 'US',
    address: ADDRESS,
  });
  const customerAccounts = await call('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(customer.id)}`);
  await call('POST', `/sandbox/internal-accounts/${customerAccounts.data[0].id}/fund`, { amount: 50_000 });
  const payee = await call('POST', '/platform/external-accounts', { currency: 'USD', accountInfo: usAccount('123456700') });
  const slowPayee = await call('POST', '/platform/external-accounts', { currency: 'USD', accountInfo: usAccount('123456003') });
  const eurPayee = await call('POST', `/customers/external-accounts`, {
    customerId: customer.id,
    currency: 'EUR',
    accountInfo: {
      accountType: 'EUR_ACCOUNT',
      iban: 'DE89370400440532013000',
      swiftCode: 'DEUTDEFF',
      beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Ada Lovelace', countryOfResidence: 'DE' },
    },
  });
  // A cross-currency quote (sandbox prices), then its execution.
  const eurQuote = await call('POST', '/quotes', {
    source: { sourceType: 'ACCOUNT', accountId: usd },
    destination: { destinationType: 'ACCOUNT', accountId: eurPayee.id },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 12_345,
  });
  const executed = await call('POST', `/quotes/${eurQuote.id}/execute`);
  await settled(executed.transactionId, 'COMPLETED');
  const quick = await call('POST', '/quotes', {
    source: { sourceType: 'ACCOUNT', accountId: usd },
    destination: { destinationType: 'ACCOUNT', accountId: payee.id },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 2_000,
    immediatelyExecute: true,
  });
  await settled(quick.transactionId, 'COMPLETED');
  // 003: settles six minutes later, on the platform's clock, which stands still until advanced.
  const slow = await call('POST', '/quotes', {
    source: { sourceType: 'ACCOUNT', accountId: usd },
    destination: { destinationType: 'ACCOUNT', accountId: slowPayee.id },
    lockedCurrencySide: 'SENDING',
    lockedCurrencyAmount: 3_000,
    immediatelyExecute: true,
  });
  const transfer = await call('POST', '/transfer-out', { source: { accountId: usd }, destination: { accountId: payee.id }, amount: 500 });
  await settled(transfer.id, 'COMPLETED');
  expect((await call('GET', `/transactions/${slow.transactionId}`)).status).toBe('PROCESSING');
  await call('POST', '/sandbox/clock/advance', { seconds: 400 });
  expect((await call('GET', `/transactions/${slow.transactionId}`)).status).toBe('COMPLETED');
  await call('GET', '/transactions?limit=3');
  const page = await call('GET', '/transactions?limit=3');
  await call('GET', `/transactions?limit=3&cursor=${encodeURIComponent(page.nextCursor)}`);
  await call('GET', '/exchange-rates');
  await call('GET', '/customers');
  await call('GET', '/platform/internal-accounts');
  await call('GET', '/sandbox/clock');
  // The bootstrap credentials as `corridor start` kept them in DATA_DIR.
  const credentials = JSON.parse(fs.readFileSync(path.join(dataDir, CREDENTIALS_FILE), 'utf8'));
  return { lines, firstCustomerId: customer.id, clientId: credentials.clientId, clientSecret: credentials.clientSecret };
}

async function runOnce(extra: Record<string, string>): Promise<Transcript> {
  const env = await freshStore(extra);
  const r = await start(env);
  try {
    return await script(r, String(env.DATA_DIR));
  } finally {
    await stop(r);
  }
}

describe('CORRIDOR_SEED: deterministic runs', () => {
  let first: Transcript;

  it('two fresh servers with the same seed answer the same script byte for byte', async () => {
    first = await runOnce({ CORRIDOR_SEED: '42' });
    const second = await runOnce({ CORRIDOR_SEED: '42' });
    expect(second.lines.length).toBe(first.lines.length);
    for (let i = 0; i < first.lines.length; i++) expect(second.lines[i]).toBe(first.lines[i]);
    // Timestamps are the seeded clock's: the fixed start, then the advance.
    expect(first.lines.join('\n')).toContain('"createdAt":"2025-01-01T00:00:00.000Z"');
    expect(first.lines.at(-1)).toContain('"now":"2025-01-01T00:06:40.000Z"');
    // Secrets are not derived from the seed: the bootstrap token's id is, its secret is not.
    expect(second.clientId).toBe(first.clientId);
    expect(second.clientSecret).not.toBe(first.clientSecret);
  });

  it('another seed gives other ids; no seed gives other ids on every run', async () => {
    const other = await runOnce({ CORRIDOR_SEED: '43' });
    expect(other.lines.length).toBe(first.lines.length);
    expect(other.firstCustomerId).not.toBe(first.firstCustomerId);
    expect(other.clientId).not.toBe(first.clientId);
    const a = await runOnce({});
    const b = await runOnce({});
    expect(a.firstCustomerId).not.toBe(b.firstCustomerId);
    expect(a.lines.join('\n')).not.toContain('2025-01-01T00:00:00.000Z');
  });

  it('a seeded restart over a used store starts its clock at real time and repeats no id', async () => {
    const env = await freshStore({ CORRIDOR_SEED: '42' });
    const one = await start(env);
    expect(one.output().stdout).toMatch(/seed: +42 \(deterministic: the clock stands at 2025-01-01T00:00:00\.000Z/);
    const body = { customerType: 'INDIVIDUAL', fullName: 'Ada Lovelace', birthDate: '1990-12-10', nationality: 'GB', address: ADDRESS };
    const post = (r: RunningCli) =>
      fetch(`${r.baseUrl}/customers`, {
        method: 'POST',
        headers: { authorization: basicHeader(r.creds), 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (res) => ({ status: res.status, body: await res.json() }));
    const before = await post(one);
    expect(before.status).toBe(201);
    await stop(one);
    const two = await start(env);
    expect(two.output().stdout).toMatch(/seed: +42 \(the clock stands at \d{4}-.*a store already used/);
    const after = await post(two);
    expect(after.status).toBe(201);
    expect(after.body.id).not.toBe(before.body.id);
    expect(Date.parse(after.body.createdAt)).toBeGreaterThan(Date.parse(before.body.createdAt));
    await stop(two);
  });
});

describe('CORRIDOR_SEED refusals', () => {
  const exitOf = (args: string[], env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawnCli(args, env);
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdout!.resume();
      child.once('exit', (code) => resolve({ code, stderr }));
    });

  it('a seed that is not a non-negative integer: exit 2 naming CORRIDOR_SEED', async () => {
    // The configuration is refused before any store is opened: one empty DATA_DIR serves every case.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-seed-'));
    dirs.push(dataDir);
    for (const bad of ['-1', '1.5', 'abc', '1e3', '99999999999999999']) {
      const out = await exitOf(['start'], cliEnv(dataDir, { CORRIDOR_SEED: bad }));
      expect(out.code, bad).toBe(2);
      expect(out.stderr).toContain(`CORRIDOR_SEED must be a non-negative integer up to 9007199254740991 (got "${bad}")`);
    }
  });

  it('a store holding a PRODUCTION platform does not start seeded (exit 2); the admin API creates none while seeded', async () => {
    const env = await freshStore({ CORRIDOR_SEED: '1' });
    const created = await exitOf(['platform', 'create', '--name', 'Live', '--environment', 'PRODUCTION'], env);
    expect(created.code).toBe(0);
    const refused = await exitOf(['start'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/CORRIDOR_SEED is for sandbox runs, but this store holds the PRODUCTION platform Platform:/);

    const adminToken = 'seed-admin-token-0123456789';
    const r = await start(await freshStore({ CORRIDOR_SEED: '1', CORRIDOR_ADMIN_TOKEN: adminToken }));
    const create = (environment: string) =>
      fetch(`${r.origin}/_admin/platforms`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Other', environment }),
      }).then(async (res) => ({ status: res.status, body: await res.json() }));
    const prod = await create('PRODUCTION');
    expect(prod.status).toBe(400);
    expect(prod.body).toMatchObject({ status: 400, code: 'INVALID_INPUT', details: { errors: [{ field: 'environment' }] } });
    expect((await create('SANDBOX')).status).toBe(201);
    await stop(r);
  });
});
