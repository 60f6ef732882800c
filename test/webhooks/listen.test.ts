/**
 * `corridor webhooks listen` as a real child process on the lane's store, fed by a real server
 * (startServer, same DATA_DIR / DATABASE_URL): events from a flow (the TEST event of an endpoint
 * change, a funding, a new customer, POST /sandbox/webhooks/test) print one line each with
 * `signature ok` and are answered 200; forged, tampered or unsigned requests get 401 and
 * `signature INVALID`; a signed non-envelope gets 400; --json and --public-key-file; the default
 * (sandbox) platform; usage and startup errors, the key check; SIGINT/SIGTERM stop it with exit code 0.
 * Forwarding (`--forward-to`) is tested in process: listen-forward.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultDeps } from '../../src/deps.ts';
import { bootstrapPlatform } from '../../src/modules/platforms/platforms.service.ts';
import { findBootstrapPlatform } from '../../src/modules/platforms/platforms.repo.ts';
import { exclusiveTransaction } from '../../src/store/migrate.ts';
import { signatureHeader, webhookSigningKey } from '../../src/webhook-delivery/keys.ts';
import { checkPublicKeyPem } from '../../src/webhook-delivery/listen.ts';
import { individual } from '../helpers/customers.ts';
import { laneStore, startServer, type TestServer } from '../helpers/server.ts';
import { fund, platformUsdAccount } from '../helpers/payments.ts';
import { waitFor } from '../helpers/receiver.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const PG = laneStore() === 'postgres';
const children = new Set<ChildProcess>();
const dirs: string[] = [];
let srv: TestServer;

beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await srv.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function tmpDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-listen-'));
  dirs.push(d);
  return d;
}

/** The CLI's environment: the test server's store, and its port (so the printed curl line is exact). */
function cliEnv(dataDir = srv.dataDir): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['PORT', 'HOST', 'DATABASE_URL', 'LOG_LEVEL', 'CORRIDOR_TOKEN_ID', 'CORRIDOR_CLIENT_SECRET', 'CORRIDOR_ADMIN_TOKEN'])
    delete env[k];
  env.DATA_DIR = dataDir;
  env.PORT = new URL(srv.origin).port;
  env.LOG_LEVEL = 'warn';
  if (PG) env.DATABASE_URL = process.env.TEST_DATABASE_URL;
  return env;
}

interface Run {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exited: Promise<number | null>;
}

function spawnCli(args: string[], env = cliEnv()): Run {
  const child = spawn(process.execPath, ['bin/corridor.js', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const run: Run = { child, stdout: '', stderr: '', exited: new Promise((r) => child.once('close', (code) => r(code))) };
  child.stdout!.on('data', (d: Buffer) => (run.stdout += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (run.stderr += d.toString()));
  child.once('exit', () => children.delete(child));
  return run;
}

/** Runs a command that is expected to exit on its own. */
async function runCli(args: string[], env = cliEnv()): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = spawnCli(args, env);
  const timer = setTimeout(() => r.child.kill('SIGKILL'), 30_000);
  const code = await r.exited;
  clearTimeout(timer);
  return { code, stdout: r.stdout, stderr: r.stderr };
}

interface Listening extends Run {
  url: string;
  /** Event lines printed so far. */
  lines(): string[];
  /** Waits for a printed line matching `re`. */
  line(re: RegExp): Promise<string>;
  stop(signal: NodeJS.Signals): Promise<number | null>;
}

/** Starts `corridor webhooks listen …` and waits for its banner. */
async function listen(args: string[], env = cliEnv()): Promise<Listening> {
  const r = spawnCli(['webhooks', 'listen', ...args], env);
  let exitCode: number | null | undefined;
  void r.exited.then((c) => (exitCode = c));
  const url = await waitFor(() => {
    if (exitCode !== undefined) throw new Error(`listener exited with ${exitCode}\n${r.stdout}\n${r.stderr}`);
    return /Listening for webhooks on (http:\/\/\S+)/.exec(r.stderr)?.[1];
  }, 30_000);
  const lines = () => r.stdout.split('\n').filter((l) => l !== '');
  return Object.assign(r, {
    url,
    lines,
    line: (re: RegExp) =>
      waitFor(() => lines().find((l) => re.test(l)), 15_000).catch(() => {
        throw new Error(`no line matching ${re} in:\n${r.stdout}`);
      }),
    async stop(signal: NodeJS.Signals) {
      r.child.kill(signal);
      return r.exited;
    },
  });
}

async function post(url: string, body: Buffer | string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    body: typeof body === 'string' ? body : new Uint8Array(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: res.status, text: await res.text() };
}

function otherKey(): KeyObject {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z';

describe('corridor webhooks listen', () => {
  it('prints each event of a real flow with `signature ok`, and refuses forged ones with 401', async () => {
    const p = await srv.newPlatform();
    const l = await listen(['--port', '0', '--platform', p.id]);
    expect(l.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/);
    expect(l.stderr).toContain(`verifying with the signing key of ${p.id}`);
    // The exact request that points the platform at the listener (no secret in it).
    expect(l.stderr).toContain(`-X PATCH ${srv.baseUrl}/config -H 'content-type: application/json' -d '{"webhookEndpoint":"${l.url}"}'`);
    expect(l.stderr).toContain("-u '<clientId>:<clientSecret>'");
    expect(l.stdout).toBe('');

    // Setting the endpoint sends a TEST event (it has no data.id: its resource prints as "-").
    expect((await p.api.patch('/config', { webhookEndpoint: l.url })).status).toBe(200);
    const test = await l.line(/ TEST /);
    expect(test).toMatch(new RegExp(`^${ISO}  TEST  Webhook:[0-9a-f-]{36}  -  signature ok$`));

    // A funding: INTERNAL_ACCOUNT.BALANCE_UPDATED about the account.
    const account = await platformUsdAccount(p);
    await fund(p, account, 12_345);
    expect(await l.line(/INTERNAL_ACCOUNT\.BALANCE_UPDATED/)).toMatch(
      new RegExp(`^${ISO}  INTERNAL_ACCOUNT\\.BALANCE_UPDATED  Webhook:[0-9a-f-]{36}  ${esc(account)}  signature ok$`),
    );

    // A new customer (sandbox KYC approves it): CUSTOMER.KYC_APPROVED about the customer.
    const customer = await p.api.post('/customers', individual({ platformCustomerId: 'listen-1' }));
    expect(customer.status, customer.text).toBe(201);
    expect(await l.line(/CUSTOMER\.KYC_APPROVED/)).toMatch(
      new RegExp(`^${ISO}  CUSTOMER\\.KYC_APPROVED  Webhook:[0-9a-f-]{36}  ${esc(customer.body.id)}  signature ok$`),
    );

    // The synchronous test webhook reports the listener's answer.
    const sent = await p.api.post('/sandbox/webhooks/test');
    expect(sent.status, sent.text).toBe(200);
    expect(sent.body).toEqual({ url: l.url, response_status: 200, response_body: 'ok' });
    await waitFor(() => l.lines().filter((x) => / TEST /.test(x)).length === 2);

    // Every event the platform queued was delivered, answered 200, and printed once with its id.
    const events = await srv.app.ctx.db
      .selectFrom('outbox_events')
      .select(['id', 'type', 'status'])
      .where('platform_id', '=', p.id)
      .execute();
    expect(events.length).toBeGreaterThanOrEqual(3);
    for (const e of events) expect(e.status, e.type).toBe('DELIVERED');
    const printed = l.lines().map((x) => x.split('  ')[2]);
    for (const e of events)
      expect(
        printed.filter((id) => id === e.id),
        e.type,
      ).toHaveLength(1);
    const statuses = await srv.app.ctx.db
      .selectFrom('webhook_attempts')
      .select('response_status')
      .where(
        'event_id',
        'in',
        events.map((e) => e.id),
      )
      .execute();
    expect(statuses.map((s) => s.response_status)).toEqual(events.map(() => 200));
    const good = l.lines().length;

    // Forged: the right shape, signed with some other key.
    const envelope = Buffer.from(
      JSON.stringify({
        id: 'Webhook:forged-1',
        type: 'OUTGOING_PAYMENT.COMPLETED',
        timestamp: new Date().toISOString(),
        data: { id: 'Transaction:forged' },
      }),
    );
    const forged = await post(l.url, envelope, { 'X-Grid-Signature': signatureHeader(envelope, otherKey()) });
    expect(forged.status).toBe(401);
    expect(await l.line(/Webhook:forged-1/)).toMatch(
      new RegExp(`^${ISO}  OUTGOING_PAYMENT\\.COMPLETED  Webhook:forged-1  Transaction:forged  signature INVALID  -> 401$`),
    );

    // Tampered: signed with the platform's own key, then one byte changed.
    const key = await webhookSigningKey(srv.app.ctx.db, p.id, srv.app.ctx.secrets);
    const original = Buffer.from(
      JSON.stringify({ id: 'Webhook:tampered-1', type: 'TEST', timestamp: new Date().toISOString(), data: { amount: 100 } }),
    );
    const header = signatureHeader(original, key);
    const tampered = Buffer.from(original.toString().replace('100', '900'));
    expect((await post(l.url, tampered, { 'X-Service-Signature': header })).status).toBe(401);
    expect(await l.line(/Webhook:tampered-1/)).toMatch(/signature INVALID {2}-> 401$/);
    // … and the untouched body with the same header is accepted (the check is not just "always 401").
    expect((await post(l.url, original, { 'X-Service-Signature': header })).status).toBe(200);
    await waitFor(() => l.lines().some((x) => /Webhook:tampered-1 .*signature ok$/.test(x)));

    // No signature header at all; a header that is not the {"v","s"} JSON.
    const unsigned = Buffer.from(JSON.stringify({ id: 'Webhook:unsigned-1', type: 'TEST', timestamp: 'x', data: {} }));
    expect((await post(l.url, unsigned)).status).toBe(401);
    expect(await l.line(/Webhook:unsigned-1/)).toMatch(/signature INVALID \(no signature header\) {2}-> 401$/);
    const junk = Buffer.from(JSON.stringify({ id: 'Webhook:junk-1', type: 'TEST', timestamp: 'x', data: {} }));
    expect((await post(l.url, junk, { 'X-Grid-Signature': 'not-json' })).status).toBe(401);
    expect(await l.line(/Webhook:junk-1/)).toMatch(/signature INVALID {2}-> 401$/);

    // Correctly signed but not an envelope: 400; unsigned and not JSON: 401 (signature first).
    const text = Buffer.from('hello');
    expect((await post(l.url, text, { 'X-Grid-Signature': signatureHeader(text, key) })).status).toBe(400);
    expect(await l.line(/not a JSON envelope/)).toMatch(new RegExp(`^${ISO}  \\(not a JSON envelope, 5 bytes\\)  signature ok  -> 400$`));
    expect((await post(l.url, text)).status).toBe(401);

    // Not a POST: 405, nothing printed.
    const get = await fetch(l.url);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    await get.text();

    expect(l.lines()).toHaveLength(good + 7);
    expect(l.stdout + l.stderr).not.toMatch(/PRIVATE|clientSecret"|sk_/);
    expect(await l.stop('SIGTERM')).toBe(0);
    expect(l.stderr).toContain('listener stopped');
  }, 90_000);

  it('--json with --public-key-file prints one JSON object per request; SIGINT stops it', async () => {
    const p = await srv.newPlatform();
    const keyRes = await p.api.get('/webhooks/signing-key');
    expect(keyRes.status).toBe(200);
    const file = path.join(tmpDir(), 'key.pem');
    fs.writeFileSync(file, keyRes.body.publicKey);

    // No store is needed for a key file: an empty DATA_DIR stays empty.
    const emptyDir = tmpDir();
    const env = { ...cliEnv(emptyDir) };
    delete env.DATABASE_URL;
    const l = await listen(['--port', '0', '--public-key-file', file, '--json'], env);
    expect(l.stderr).toContain(`verifying with the public key in ${file}`);
    expect(fs.readdirSync(emptyDir)).toEqual([]);

    expect((await p.api.patch('/config', { webhookEndpoint: l.url })).status).toBe(200);
    const first = JSON.parse(await l.line(/"TEST"/));
    expect(first).toEqual({
      receivedAt: expect.stringMatching(new RegExp(`^${ISO}$`)),
      status: 200,
      signature: 'ok',
      resourceId: null,
      event: { id: expect.stringMatching(/^Webhook:/), type: 'TEST', timestamp: expect.any(String), data: {} },
    });

    const account = await platformUsdAccount(p);
    await fund(p, account, 500);
    const funded = JSON.parse(await l.line(/BALANCE_UPDATED/));
    expect(funded).toMatchObject({
      status: 200,
      signature: 'ok',
      resourceId: account,
      event: { type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED', data: { id: account } },
    });

    // Another platform's events do not verify against this key.
    const q = await srv.newPlatform();
    expect((await q.api.patch('/config', { webhookEndpoint: l.url })).status).toBe(200);
    const foreign = JSON.parse(await l.line(/"signature":"invalid"/));
    expect(foreign).toMatchObject({ status: 401, signature: 'invalid', event: { type: 'TEST' } });
    await waitFor(async () => {
      const e = await srv.app.ctx.db
        .selectFrom('outbox_events')
        .select('status')
        .where('platform_id', '=', q.id)
        .where('type', '=', 'TEST')
        .executeTakeFirst();
      return e?.status === 'FAILED';
    });

    const unsigned = await post(l.url, '{"id":"Webhook:u","type":"TEST"}');
    expect(unsigned.status).toBe(401);
    expect(JSON.parse(await l.line(/Webhook:u"/))).toMatchObject({ status: 401, signature: 'missing' });

    for (const line of l.lines()) expect(() => JSON.parse(line)).not.toThrow();
    expect(await l.stop('SIGINT')).toBe(0);
  }, 90_000);

  it("uses the sandbox platform's key by default", async () => {
    if (!PG) {
      // A store without a sandbox platform yet says so.
      const none = await runCli(['webhooks', 'listen', '--port', '0']);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('no sandbox platform yet');
      await exclusiveTransaction(srv.app.ctx.store, (trx) => bootstrapPlatform(trx, defaultDeps(), {}, srv.app.ctx.secrets));
    }
    // PostgreSQL: the database is shared, so its sandbox platform is whichever the first start made.
    const boot = await findBootstrapPlatform(srv.app.ctx.db);
    if (!boot) {
      const none = await runCli(['webhooks', 'listen', '--port', '0']);
      expect(none.code).toBe(1);
      expect(none.stderr).toContain('no sandbox platform yet');
      return;
    }
    const l = await listen(['--port', '0']);
    expect(l.stderr).toContain(`verifying with the signing key of ${boot.id}`);
    const key = await webhookSigningKey(srv.app.ctx.db, boot.id, srv.app.ctx.secrets);
    const body = Buffer.from(JSON.stringify({ id: 'Webhook:boot-1', type: 'TEST', timestamp: 'x', data: {} }));
    expect((await post(l.url, body, { 'X-Grid-Signature': signatureHeader(body, key) })).status).toBe(200);
    expect(await l.line(/Webhook:boot-1/)).toMatch(/signature ok$/);
    expect(await l.stop('SIGTERM')).toBe(0);
  }, 90_000);

  it('usage errors exit 2 with the usage text', async () => {
    const usage = async (args: string[], message: string) => {
      const r = await runCli(args);
      expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain('webhooks listen [--port 8081]');
    };
    await usage(['webhooks'], 'webhooks takes "listen"');
    await usage(['webhooks', 'listen', '--port', '70000'], '--port must be an integer from 0 to 65535 (got "70000")');
    await usage(['webhooks', 'listen', '--platform', 'Platform:x', '--public-key-file', 'k.pem'], 'not both');
    await usage(
      ['webhooks', 'listen', '--forward-to', 'ftp://localhost/x'],
      '--forward-to must be an http:// or https:// URL (got "ftp://localhost/x")',
    );
  }, 120_000);

  it('startup errors exit 1 with a clear message', async () => {
    const unknown = await runCli(['webhooks', 'listen', '--port', '0', '--platform', 'Platform:00000000-0000-7000-8000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('corridor: no such platform\n');

    // A private key is refused, without echoing it (the listener needs only the public half).
    const dir = tmpDir();
    const priv = path.join(dir, 'priv.pem');
    fs.writeFileSync(priv, otherKey().export({ type: 'pkcs8', format: 'pem' }));
    const privRun = await runCli(['webhooks', 'listen', '--port', '0', '--public-key-file', priv]);
    expect(privRun.code).toBe(1);
    expect(privRun.stderr).toBe(`corridor: ${priv}: expected a public key (SPKI PEM), got a private key\n`);

    // A port that is taken.
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    const pub = path.join(dir, 'pub.pem');
    fs.writeFileSync(pub, generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }));
    const busy = await runCli(['webhooks', 'listen', '--port', String(port), '--public-key-file', pub]);
    await new Promise<void>((r) => blocker.close(() => r()));
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain('EADDRINUSE');
  }, 120_000);

  it('accepts only a P-256 public key (checked before listening)', () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => checkPublicKeyPem(ec.publicKey.export({ type: 'spki', format: 'pem' }).toString())).not.toThrow();
    expect(() => checkPublicKeyPem(ec.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString())).toThrow(/got a private key/);
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(() => checkPublicKeyPem(p384)).toThrow(/P-256/);
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(() => checkPublicKeyPem(rsa)).toThrow(/P-256/);
    expect(() => checkPublicKeyPem('not a key')).toThrow();
  });
});
