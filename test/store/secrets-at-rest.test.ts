/**
 * Secrets at rest over real HTTP, on both stores: with CORRIDOR_SECRET_KEY the stored private keys
 * (webhook signing keys, wallet keys, recovery phrases, auth request data holding OTP target keys)
 * are sealed and the features that use them still work; without it they are stored in clear as
 * before; `corridor start` seals a clear store, refuses a store whose secrets no configured key
 * opens, and re-seals everything during a rotation; several sweeps at once seal each secret once.
 *
 * Each scenario gets a store of its own (on PostgreSQL a schema of its own): a server's webhook
 * deliverer serves every platform of its store, and one without the key cannot sign for platforms
 * whose keys another server sealed.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import type { Kysely } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { resetPgSchema, withSearchPath } from '../../bench/dataset/writers.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import type { Database } from '../../src/store/schema.ts';
import { MISSING_KEY_MESSAGE, SECRET_COLUMNS, SecretBox, secretRef, type SecretColumn } from '../../src/store/secret-box.ts';
import { sealStoredSecrets } from '../../src/store/secrets-sweep.ts';
import { openExportBundle } from '../../src/wallet/crypto/bundle.ts';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { cliEnv, killChildren, spawnCli, startCli, type RunningCli } from '../helpers/child.ts';
import { Client } from '../helpers/http.ts';
import { laneStore, startServer, type TestServer } from '../helpers/server.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { addFirstEmailOtp, keyPair, newWallet, otpLogin, passkeyLogin, signedCall, type KeyPair } from '../helpers/wallet-auth.ts';

const K1 = 'secrets-at-rest-test-key-one-0123456789abcdef';
const K2 = 'secrets-at-rest-test-key-two-ZYXWVUTSRQPONMLK';
const KID1 = new SecretBox({ secretKey: K1 }).keyId!;
const KID2 = new SecretBox({ secretKey: K2 }).keyId!;
const PG = laneStore() === 'postgres';

// ---------------------------------------------------------------------------------------------
// Stores of their own

interface OwnStore {
  dataDir: string;
  /** PostgreSQL lane: the URL of a schema of this store's own. */
  databaseUrl: string | undefined;
}

const schemas: string[] = [];
const dirs: string[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterAll(async () => {
  killChildren();
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  const base = process.env.CORRIDOR_TEST_DATABASE_BASE_URL;
  if (base && schemas.length > 0) {
    const client = new pg.Client({ connectionString: base });
    try {
      await client.connect();
      await client.query(`SET lock_timeout = '5s'; ${schemas.map((s) => `DROP SCHEMA IF EXISTS ${s} CASCADE`).join('; ')}`);
    } catch {
      // Best effort, as in pg-schema.setup.ts.
    } finally {
      await client.end().catch(() => undefined);
    }
  }
});

async function ownStore(): Promise<OwnStore> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-secrets-'));
  dirs.push(dataDir);
  if (!PG) return { dataDir, databaseUrl: undefined };
  const base = process.env.CORRIDOR_TEST_DATABASE_BASE_URL!;
  const schema = `secrets_${process.pid}_${randomBytes(4).toString('hex')}`;
  await resetPgSchema(base, schema);
  schemas.push(schema);
  return { dataDir, databaseUrl: withSearchPath(base, schema) };
}

/** A direct connection to the store (to read raw columns, or run the sweep as another process would). */
function openRaw(s: OwnStore): Store {
  const store = openStore({ databaseUrl: s.databaseUrl, dataDir: s.dataDir, poolSize: 2 });
  cleanups.push(() => store.close());
  return store;
}

/** An in-process server (startServer) on a store of its own. */
async function serverOnOwnStore(env: Record<string, string>): Promise<TestServer> {
  let srv: TestServer;
  if (PG) {
    const saved = process.env.TEST_DATABASE_URL;
    process.env.TEST_DATABASE_URL = (await ownStore()).databaseUrl;
    try {
      srv = await startServer({ env });
    } finally {
      process.env.TEST_DATABASE_URL = saved;
    }
  } else {
    srv = await startServer({ env });
  }
  cleanups.push(() => srv.close());
  return srv;
}

// ---------------------------------------------------------------------------------------------
// Raw columns

interface RawSecret {
  column: SecretColumn;
  row: string;
  value: string;
}

/** Every stored secret of the store (or of one platform), as the columns hold it. */
async function rawSecrets(db: Kysely<Database>, platformId?: string): Promise<RawSecret[]> {
  const out: RawSecret[] = [];
  // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
  const any = db as unknown as Kysely<any>;
  for (const c of Object.values(SECRET_COLUMNS)) {
    let q = any
      .selectFrom(c.table)
      .select([`${c.key} as k`, `${c.column} as v`])
      .where(c.column, 'is not', null);
    if (platformId) q = q.where('platform_id', '=', platformId);
    for (const r of (await q.execute()) as { k: string; v: string }[]) out.push({ column: c, row: r.k, value: r.v });
  }
  return out;
}

/** What a clear secret would show: a PEM, a 32-byte hex key, words of a phrase, JSON. */
function looksClear(v: string, mnemonics: string[]): boolean {
  return (
    /PRIVATE KEY|-----BEGIN/.test(v) ||
    /[0-9a-f]{64}/i.test(v) ||
    v.includes(' ') ||
    v.includes('{') ||
    mnemonics.some((m) => m.split(' ').some((w) => v.includes(` ${w}`) || v === w))
  );
}

/** Every value sealed under `kid`, holding nothing readable, and opening (with the row it is in) under `box`. */
function expectSealed(secrets: RawSecret[], kid: string, box: SecretBox, mnemonics: string[] = []): void {
  for (const s of secrets) {
    expect(s.value, `${s.column.table}.${s.column.column} ${s.row}`).toMatch(new RegExp(`^enc:v1:${kid}:[A-Za-z0-9_-]+$`));
    expect(looksClear(s.value, mnemonics), `${s.column.table} ${s.row}`).toBe(false);
    expect(box.open(s.value, secretRef(s.column, s.row))).not.toMatch(/^enc:/);
  }
}

function counts(secrets: RawSecret[]): Record<string, number> {
  const n: Record<string, number> = {};
  for (const s of secrets) n[s.column.table] = (n[s.column.table] ?? 0) + 1;
  return n;
}

// ---------------------------------------------------------------------------------------------
// The features that use the secrets

/** USDB support, so customers get an EMBEDDED_WALLET account. */
async function walletConfig(api: Client): Promise<void> {
  const cfg = await api.patch('/config', {
    supportedCurrencies: [
      {
        currencyCode: 'USD',
        minAmount: 1,
        maxAmount: 100_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
      },
      {
        currencyCode: 'USDB',
        minAmount: 1,
        maxAmount: 100_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
      },
    ],
  });
  expect(cfg.status, cfg.text).toBe(200);
}

async function exportMnemonic(api: Client, accountId: string, signer: KeyPair): Promise<string> {
  const client = keyPair();
  const { result } = await signedCall(
    (o) => api.post(`/internal-accounts/${accountId}/export`, { clientPublicKey: client.publicKeyUncompressed }, o),
    signer,
  );
  expect(result.status, result.text).toBe(200);
  const mnemonic = openExportBundle(result.body.encryptedWalletCredentials, client.privateKey).toString('utf8');
  expect(validateMnemonic(mnemonic, wordlist)).toBe(true);
  return mnemonic;
}

interface WalletState {
  accountId: string;
  credentialId: string;
  mnemonic: string;
}

/**
 * A wallet with an EMAIL_OTP credential (an OTP target key in an auth request), an OTP login (the
 * wallet key signs the bundle and the verification token), an export (the recovery phrase), and
 * a passkey login on another wallet (auth request data on the passkey path).
 */
async function walletFlows(api: Client): Promise<WalletState> {
  const w = await newWallet(api);
  const cred = await addFirstEmailOtp(api, w.accountId);
  const session = await otpLogin(api, cred.id);
  const mnemonic = await exportMnemonic(api, w.accountId, session.key);
  await passkeyLogin(api, (await newWallet(api)).accountId);
  return { accountId: w.accountId, credentialId: cred.id, mnemonic };
}

/** The wallet still works: a fresh OTP login completes and the export hands over the same phrase. */
async function walletStillWorks(api: Client, w: WalletState): Promise<void> {
  const session = await otpLogin(api, w.credentialId);
  expect(await exportMnemonic(api, w.accountId, session.key)).toBe(w.mnemonic);
}

const receivers: Receiver[] = [];
afterAll(async () => {
  for (const r of receivers) await r.close();
});

/** Points the platform at a receiver; the TEST event from that must arrive signed by the platform's published key. */
async function webhookTo(api: Client, explain?: () => Promise<string>): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  expect((await api.patch('/config', { webhookEndpoint: r.url })).status).toBe(200);
  try {
    await waitFor(() => r.received.length > 0, 20_000);
  } catch (err) {
    // What the outbox held, and where it went: this is how a TEST sent to the previous endpoint was found.
    throw explain ? new Error(`no webhook arrived in 20 s\n${await explain()}`) : err;
  }
  await expectVerified(api, r);
  return r;
}

/** The outbox and attempt log as the store holds them now, and the child's output: why no webhook came. */
async function outboxReport(raw: Store, c: RunningCli): Promise<string> {
  const events = await raw.db
    .selectFrom('outbox_events')
    .select(['id', 'type', 'resource_id', 'status', 'attempts', 'next_attempt_ms'])
    .orderBy('id')
    .execute();
  const attempts = await raw.db.selectFrom('webhook_attempts').select(['event_id', 'attempt', 'url', 'response_status', 'error']).execute();
  const out = c.output();
  return [
    `now ${Date.now()}; outbox events:`,
    ...events.map((e) => JSON.stringify(e)),
    'attempts:',
    ...attempts.map((a) => JSON.stringify(a)),
    `child stdout:\n${out.stdout.slice(-4000)}`,
    `child stderr:\n${out.stderr.slice(-4000)}`,
  ].join('\n');
}

/** Every webhook `r` received verifies with the platform's published public key. */
async function expectVerified(api: Client, r: Receiver): Promise<void> {
  const key = await api.get('/webhooks/signing-key');
  expect(key.status).toBe(200);
  expect(r.received.length).toBeGreaterThan(0);
  for (const x of r.received)
    expect(verifyWebhook(x.raw, String(x.headers['x-grid-signature']), key.body.publicKey), x.body?.type).toBe(true);
}

/** A TEST webhook sent now (signed with the stored key) arrives and verifies. */
async function webhookStillSigned(api: Client, r: Receiver): Promise<void> {
  const tests = () => r.received.filter((x) => x.body?.type === 'TEST').length;
  const before = tests();
  const res = await api.post('/sandbox/webhooks/test', {});
  expect(res.status, res.text).toBe(200);
  expect(tests()).toBe(before + 1);
  await expectVerified(api, r);
}

// ---------------------------------------------------------------------------------------------

describe('with CORRIDOR_SECRET_KEY (in-process server)', () => {
  it('the raw columns hold only values sealed under the key, bound to their rows; webhooks verify, OTP login and export work', async () => {
    const srv = await serverOnOwnStore({ CORRIDOR_SECRET_KEY: K1 });
    const p = await srv.newPlatform();
    await walletConfig(p.api);
    const r = await webhookTo(p.api);
    const w = await walletFlows(p.api);
    await walletStillWorks(p.api, w);
    await webhookStillSigned(p.api, r);

    const raw = await rawSecrets(srv.app.ctx.db, p.id);
    const n = counts(raw);
    expect(n.webhook_keys).toBe(1);
    expect(n.wallet_keys).toBe(1);
    expect(n.wallet_secrets).toBe(1);
    // Two OTP issues (the credential's, the login's challenge) and one passkey challenge at least.
    expect(n.auth_requests).toBeGreaterThanOrEqual(3);
    const box = new SecretBox({ secretKey: K1 });
    expectSealed(raw, KID1, box, [w.mnemonic]);

    // What they open to is what the features used: the published key's private half, the exported phrase, an OTP target key.
    const webhook = raw.find((s) => s.column === SECRET_COLUMNS.webhookKey)!;
    expect(box.open(webhook.value, secretRef(webhook.column, webhook.row))).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const phrase = raw.find((s) => s.column === SECRET_COLUMNS.walletMnemonic)!;
    expect(box.open(phrase.value, secretRef(phrase.column, w.accountId))).toBe(w.mnemonic);
    const otpData = raw
      .filter((s) => s.column === SECRET_COLUMNS.authRequestData)
      .map((s) => JSON.parse(box.open(s.value, secretRef(s.column, s.row))) as Record<string, string>);
    expect(otpData.some((d) => /^[0-9a-f]{64}$/.test(d.targetPrivateKey ?? ''))).toBe(true);
    expect(otpData.some((d) => typeof d.clientPublicKey === 'string')).toBe(true);

    // A sealed value moved to another row does not open there: the export of the other wallet fails
    // rather than handing over this wallet's phrase.
    const other = await newWallet(p.api);
    const otherCred = await addFirstEmailOtp(p.api, other.accountId);
    const otherSession = await otpLogin(p.api, otherCred.id);
    await srv.app.ctx.db
      .insertInto('wallet_secrets')
      .values({ account_id: other.accountId, platform_id: p.id, mnemonic: phrase.value })
      .execute();
    const client = keyPair();
    const { result } = await signedCall(
      (o) => p.api.post(`/internal-accounts/${other.accountId}/export`, { clientPublicKey: client.publicKeyUncompressed }, o),
      otherSession.key,
    );
    expect(result.status).toBe(500);
    expect(result.text).not.toContain(w.mnemonic.split(' ')[0]!);
  });
});

describe('without CORRIDOR_SECRET_KEY (in-process server)', () => {
  it('stores the secrets in clear, as before, and everything works', async () => {
    const srv = await serverOnOwnStore({});
    const p = await srv.newPlatform();
    await walletConfig(p.api);
    const r = await webhookTo(p.api);
    const w = await walletFlows(p.api);
    await walletStillWorks(p.api, w);
    await webhookStillSigned(p.api, r);

    const raw = await rawSecrets(srv.app.ctx.db, p.id);
    expect(raw.every((s) => !s.value.startsWith('enc:'))).toBe(true);
    expect(raw.find((s) => s.column === SECRET_COLUMNS.webhookKey)!.value).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(raw.find((s) => s.column === SECRET_COLUMNS.walletKey)!.value).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(raw.find((s) => s.column === SECRET_COLUMNS.walletMnemonic)!.value).toBe(w.mnemonic);
    expect(raw.some((s) => s.column === SECRET_COLUMNS.authRequestData && /"targetPrivateKey":"[0-9a-f]{64}"/.test(s.value))).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// `corridor start` as a child process: sealing a clear store, refusing, rotating

const FIXED = { CORRIDOR_TOKEN_ID: 'secrets_test_token', CORRIDOR_CLIENT_SECRET: 'secrets-test-client-secret-0123' };

function childEnv(s: OwnStore, keys: { current?: string; previous?: string }): NodeJS.ProcessEnv {
  const env = cliEnv(s.dataDir, { ...FIXED, ...(s.databaseUrl ? { DATABASE_URL: s.databaseUrl } : {}) });
  delete env.CORRIDOR_SECRET_KEY;
  delete env.CORRIDOR_SECRET_KEY_PREVIOUS;
  if (keys.current) env.CORRIDOR_SECRET_KEY = keys.current;
  if (keys.previous) env.CORRIDOR_SECRET_KEY_PREVIOUS = keys.previous;
  return env;
}

/** `corridor start` that must not start: its exit code and output. */
function refusedStart(env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(['start'], env);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`corridor start did not exit\n${stdout}\n${stderr}`));
    }, 30_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

function sweepLine(c: RunningCli): string {
  return /^secrets at rest: .*$/m.exec(c.output().stdout)?.[0] ?? '(none)';
}

describe('corridor start', () => {
  it('seals a clear store at start, refuses to start without the key, and a rotation re-seals everything', {
    timeout: 240_000,
  }, async () => {
    const s = await ownStore();
    const raw = openRaw(s);

    // 1. A store made without a key: everything in clear.
    let c = await startCli(childEnv(s, {}));
    expect(sweepLine(c)).toBe('(none)');
    let api = new Client(c.baseUrl, { basic: c.creds });
    await walletConfig(api);
    let r = await webhookTo(api);
    const w = await walletFlows(api);
    expect((await c.stop()).code).toBe(0);
    const clear = await rawSecrets(raw.db);
    expect(clear.length).toBeGreaterThanOrEqual(6);
    expect(clear.every((x) => !x.value.startsWith('enc:'))).toBe(true);

    // 2. Started with a key: the sweep seals every one of them and says how many.
    c = await startCli(childEnv(s, { current: K1 }));
    expect(sweepLine(c)).toBe(
      `secrets at rest: encrypted with key ${KID1}; sealed ${clear.length} clear, re-sealed 0 from the previous key`,
    );
    expect(c.output().stdout + c.output().stderr).not.toContain(K1);
    const sealed = await rawSecrets(raw.db);
    expect(sealed.length).toBe(clear.length);
    expectSealed(sealed, KID1, new SecretBox({ secretKey: K1 }), [w.mnemonic]);
    api = new Client(c.baseUrl, { basic: c.creds });
    await webhookStillSigned(api, r);
    await walletStillWorks(api, w);
    expect((await c.stop()).code).toBe(0);
    const before = (await rawSecrets(raw.db)).map((x) => x.value).sort();

    // 3. The key removed, or replaced by another without PREVIOUS: refused, naming the cause.
    for (const keys of [{}, { current: K2 }]) {
      const refused = await refusedStart(childEnv(s, keys));
      // 2: a configuration that does not fit the store, like any bad configuration.
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(MISSING_KEY_MESSAGE);
      expect(refused.stdout).not.toContain('Corridor listening');
      expect(refused.stderr + refused.stdout).not.toMatch(/PRIVATE KEY|enc:v1:/);
    }
    // The refusals changed nothing.
    expect((await rawSecrets(raw.db)).map((x) => x.value).sort()).toEqual(before);

    // 4. Rotation: the new key with the old one as PREVIOUS re-seals everything under the new key.
    c = await startCli(childEnv(s, { current: K2, previous: K1 }));
    const now = await rawSecrets(raw.db);
    expect(sweepLine(c)).toBe(`secrets at rest: encrypted with key ${KID2}; sealed 0 clear, re-sealed ${now.length} from the previous key`);
    expectSealed(now, KID2, new SecretBox({ secretKey: K2 }), [w.mnemonic]);
    api = new Client(c.baseUrl, { basic: c.creds });
    await webhookStillSigned(api, r);
    await walletStillWorks(api, w);
    expect((await c.stop()).code).toBe(0);

    // 5. The old key alone is now refused; the new key alone starts, re-sealing nothing, and works.
    const old = await refusedStart(childEnv(s, { current: K1 }));
    expect(old.code).toBe(2);
    expect(old.stderr).toContain(MISSING_KEY_MESSAGE);
    c = await startCli(childEnv(s, { current: K2 }));
    expect(sweepLine(c)).toBe(`secrets at rest: encrypted with key ${KID2}; sealed 0 clear, re-sealed 0 from the previous key`);
    api = new Client(c.baseUrl, { basic: c.creds });
    await walletStillWorks(api, w);
    r = await webhookTo(api, () => outboxReport(raw, c));
    expect((await c.stop()).code).toBe(0);
    expectSealed(await rawSecrets(raw.db), KID2, new SecretBox({ secretKey: K2 }), [w.mnemonic]);
  });

  it("a store first started with a key seals the bootstrap platform's keys as they are made", { timeout: 60_000 }, async () => {
    const s = await ownStore();
    const c = await startCli(childEnv(s, { current: K1 }));
    expect(sweepLine(c)).toBe(`secrets at rest: encrypted with key ${KID1}; sealed 0 clear, re-sealed 0 from the previous key`);
    const api = new Client(c.baseUrl, { basic: c.creds });
    await walletConfig(api);
    await webhookTo(api);
    const w = await walletFlows(api);
    expect((await c.stop()).code).toBe(0);
    const raw = await rawSecrets(openRaw(s).db);
    expect(counts(raw).webhook_keys).toBe(1);
    expectSealed(raw, KID1, new SecretBox({ secretKey: K1 }), [w.mnemonic]);
  });
});

describe('the start-up sweep from several processes at once', () => {
  it('seals each secret exactly once (compare-and-set), and every value opens afterwards', { timeout: 60_000 }, async () => {
    // Clear secrets from a server without a key.
    const srv = await serverOnOwnStore({});
    const platforms = await Promise.all([srv.newPlatform(), srv.newPlatform(), srv.newPlatform()]);
    for (const p of platforms) {
      await walletConfig(p.api);
      const w = await newWallet(p.api);
      await addFirstEmailOtp(p.api, w.accountId);
    }
    const clear = await rawSecrets(srv.app.ctx.db);
    expect(clear.every((x) => !x.value.startsWith('enc:'))).toBe(true);
    const total = clear.length;
    expect(total).toBeGreaterThanOrEqual(9);

    // Three sweeps at once. PostgreSQL: three connection pools on the schema, three processes' worth.
    // SQLite (one process per store): three sweeps through the one connection, their reads and
    // compare-and-set writes interleaved. (Two SQLite handles in one process would block each other:
    // better-sqlite3 waits for a lock synchronously, so the holder could never commit.)
    const other = () => openRaw({ dataDir: srv.dataDir, databaseUrl: srv.app.ctx.config.databaseUrl });
    const stores = PG ? [srv.app.ctx.store, other(), other()] : [srv.app.ctx.store, srv.app.ctx.store, srv.app.ctx.store];
    const box = new SecretBox({ secretKey: K1 });
    const results = await Promise.all(stores.map((st) => sealStoredSecrets(st, box)));
    expect(results.reduce((n, x) => n + x.sealed, 0)).toBe(total);
    expect(results.reduce((n, x) => n + x.resealed, 0)).toBe(0);
    expectSealed(await rawSecrets(srv.app.ctx.db), KID1, box);

    // Rotating from three at once: each secret re-sealed once, all under the new key.
    const rotating = new SecretBox({ secretKey: K2, secretKeyPrevious: K1 });
    const rotated = await Promise.all(stores.map((st) => sealStoredSecrets(st, rotating)));
    expect(rotated.reduce((n, x) => n + x.resealed, 0)).toBe(total);
    expectSealed(await rawSecrets(srv.app.ctx.db), KID2, new SecretBox({ secretKey: K2 }));
    // Run again: nothing left to do; without the keys: refused.
    expect(await sealStoredSecrets(stores[0]!, rotating)).toEqual({ sealed: 0, resealed: 0 });
    await expect(sealStoredSecrets(stores[0]!, new SecretBox({}))).rejects.toThrow(MISSING_KEY_MESSAGE);
    await expect(sealStoredSecrets(stores[0]!, new SecretBox({ secretKey: K1 }))).rejects.toThrow(MISSING_KEY_MESSAGE);
  });
});
