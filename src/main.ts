/**
 * The `corridor` command line: start, migrate, platform create/show, ledger-check.
 * `main` returns the process exit code: 0 ok, 1 failure, 2 bad configuration or usage.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp, startBackground } from './app.ts';
import { validatorCounts } from './http/validation.ts';
import { BASE_PATH, ConfigError, readConfig, type Config } from './config.ts';
import { defaultDeps, type Deps } from './deps.ts';
import { SeedRefused, seededStart } from './lib/seeded-start.ts';
import { checkLedger } from './ledger/ledger.ts';
import { findCurrency } from './lib/currencies.ts';
import { bootstrapPlatform, createPlatform, platformToWire, type Environment } from './modules/platforms/platforms.service.ts';
import { findBootstrapPlatform, getPlatform } from './modules/platforms/platforms.repo.ts';
import { CREDENTIALS_FILE, lockDataDir, openStore, secureDataDir, writePrivateFile, type Store } from './store/db.ts';
import { walletCommand } from './cli/wallet.ts';
import { USAGE, helpCommand } from './cli/help.ts';
import { webhookPublicKey } from './webhook-delivery/keys.ts';
import { checkPublicKeyPem, startListener } from './webhook-delivery/listen.ts';
import { exclusiveTransaction, migrate } from './store/migrate.ts';
import { SecretKeyError, secretBox } from './store/secret-box.ts';
import { sealStoredSecrets, sweepSummary } from './store/secrets-sweep.ts';

class UsageError extends Error {}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    // `help [command [sub]]` and `command [sub] … --help`: before the configuration is read, so
    // help works whatever the environment and never opens or creates a store.
    const help = await helpCommand(argv);
    if (help !== undefined) return help;
    // The wallet helpers are client-side: they need no configuration or store.
    if (command === 'wallet') return await walletCommand(rest);
    const config = readConfig();
    switch (command) {
      case 'start':
        noArguments('start', rest);
        return await start(config);
      case 'migrate':
        noArguments('migrate', rest);
        return await migrateCommand(config);
      case 'platform':
        return await platformCommand(config, rest);
      case 'ledger-check':
        return await ledgerCheck(config, rest);
      case 'webhooks':
        return await webhooksCommand(config, rest);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    const argError = typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('ERR_PARSE_ARGS');
    if (err instanceof ConfigError || err instanceof UsageError || argError) {
      process.stderr.write(`corridor: ${(err as Error).message}\n`);
      if (!(err instanceof ConfigError)) process.stderr.write(`\n${USAGE}\n`);
      return 2;
    }
    process.stderr.write(`corridor: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/**
 * `migrate`. Migrations run in one transaction and skip what is applied, so a run that SQLite
 * refused with SQLITE_BUSY (another process opening the same file, e.g. switching it to WAL or
 * checkpointing it on close, at that instant) is simply run again on a fresh connection.
 */
async function migrateCommand(config: Config): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await withStore(config, async (store) => {
        const applied = await migrate(store);
        process.stdout.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'store is up to date\n');
        return 0;
      });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= 5 || typeof code !== 'string' || !code.startsWith('SQLITE_BUSY')) throw err;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}

/** `start` and `migrate` take no arguments: a stray one (e.g. `start --port 9000`) is a usage error, not ignored. */
function noArguments(command: string, args: string[]): void {
  if (args.length > 0)
    throw new UsageError(
      `${command} takes no arguments (got "${args.join(' ')}"); its settings come from the environment: see corridor ${command} --help`,
    );
}

async function withStore<T>(config: Config, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = openStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolSize: 2, onModesTightened: reportTightened });
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

interface LocalCredentials {
  platformId: string;
  clientId: string;
  clientSecret: string;
}

function credentialsFile(config: Config): string {
  return path.join(config.dataDir, CREDENTIALS_FILE);
}

/** The bootstrap credentials kept beside the embedded store for the developer (mode 0600). */
function saveCredentials(config: Config, c: LocalCredentials): void {
  secureDataDir(config.dataDir);
  writePrivateFile(credentialsFile(config), `${JSON.stringify(c, null, 2)}\n`);
}

function loadCredentials(config: Config): LocalCredentials | undefined {
  try {
    return JSON.parse(fs.readFileSync(credentialsFile(config), 'utf8')) as LocalCredentials;
  } catch {
    return undefined;
  }
}

async function start(config: Config): Promise<number> {
  // DATA_DIR and its files private to their owner (saying once what had to be tightened); on the
  // embedded store this process then owns DATA_DIR until it exits (a second start fails here).
  reportTightened(secureDataDir(config.dataDir));
  const lock = config.databaseUrl ? undefined : lockDataDir(config.dataDir);
  const store = openStore({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    profileStatements: config.sqlProfile !== undefined,
    profileGroups: config.groupProfile !== undefined,
    pgGroups: config.pgGroupCommit,
  });
  await migrate(store);
  // CORRIDOR_SEED: the seeded clock, ids and randomness (lib/seeded-deps.ts), chosen from what the store holds.
  const seeded =
    config.seed === undefined
      ? undefined
      : await seededStart(store.db, config.seed, Date.now()).catch(async (err: unknown) => {
          await store.close();
          lock?.release();
          throw err instanceof SeedRefused ? new ConfigError(err.message) : err;
        });
  const deps = seeded?.deps ?? defaultDeps();
  // Refuses to start when stored secrets are sealed under a key that is not configured; seals clear
  // ones and re-seals the previous key's (README, "Secrets at rest").
  const secrets = secretBox(config);
  const swept = await sealStoredSecrets(store, secrets).catch(async (err: unknown) => {
    await store.close();
    throw err instanceof SecretKeyError ? new ConfigError(err.message) : err;
  });
  if (secrets.enabled) process.stdout.write(`${sweepSummary(secrets, swept)}\n`);
  const boot = await exclusiveTransaction(store, (trx) =>
    bootstrapPlatform(trx, deps, { clientId: config.bootstrapTokenId, secret: config.bootstrapClientSecret }, secrets),
  );
  let secret = boot.secret;
  if (secret !== undefined) {
    saveCredentials(config, { platformId: boot.platform.id, clientId: boot.clientId, clientSecret: secret });
  } else {
    const saved = loadCredentials(config);
    if (saved && saved.clientId === boot.clientId && saved.platformId === boot.platform.id) secret = saved.clientSecret;
  }

  const app = await buildApp(config, deps, { store, closeStore: true });
  startBackground(app);
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    // The job runner and the webhook deliverer are running: they would keep the process alive,
    // so close them (and the store) before reporting.
    await app.close().catch(() => undefined);
    lock?.release();
    throw new Error(listenFailure(config, err));
  }
  app.log.debug({ requestValidators: validatorCounts() }, 'request validators: from the build, and compiled at start');
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const origin = `http://${host}:${port}`;
  const secretText = secret ?? '(shown at first start only; set CORRIDOR_CLIENT_SECRET or create a token with POST /tokens)';
  // Listen for the stop signals before the banner says we are up: a SIGTERM sent the moment the
  // banner arrives must shut down cleanly, not find the default action (death, exit by signal).
  const stopped = new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  process.stdout.write(
    [
      `Corridor listening on ${origin}${BASE_PATH}`,
      `  store:          ${store.kind} ${store.location}`,
      `  platform:       ${boot.platform.id} (sandbox)`,
      `  API token id:   ${boot.clientId}`,
      `  client secret:  ${secretText}`,
      ...(config.seed === undefined ? [] : [seedBanner(config.seed, deps, seeded?.fresh === true)]),
      `  docs:           ${origin}/docs   OpenAPI: ${origin}${BASE_PATH}/openapi.json`,
      '',
      'Try:',
      `  curl -u '${boot.clientId}:${secret ?? '<client secret>'}' ${origin}${BASE_PATH}/platform/internal-accounts`,
      '',
    ].join('\n'),
  );

  const writeProfile = () => {
    if (config.sqlProfile && store.statementProfile) fs.writeFileSync(config.sqlProfile, `${JSON.stringify(store.statementProfile())}\n`);
    if (config.groupProfile && store.groupProfile) fs.writeFileSync(config.groupProfile, `${JSON.stringify(store.groupProfile())}\n`);
  };
  if (config.sqlProfile || config.groupProfile) process.on('SIGUSR2', writeProfile);

  await stopped;
  writeProfile();
  await app.close();
  lock?.release();
  return 0;
}

/** The banner's line for a seeded run: what is reproducible, and from when. */
function seedBanner(seed: number, deps: Deps, fresh: boolean): string {
  const at = new Date(deps.clock.nowMs()).toISOString();
  return fresh
    ? `  seed:           ${seed} (deterministic: the clock stands at ${at}; POST /sandbox/clock/advance moves it)`
    : `  seed:           ${seed} (the clock stands at ${at}: a store already used, so not the fresh-store run)`;
}

/** Why `listen` failed, naming the port or the host. */
function listenFailure(config: Config, err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const where = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const why =
    code === 'EADDRINUSE'
      ? `port ${config.port} is already in use on ${config.host} (set PORT to another port, or 0 for any free one)`
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME'
        ? `HOST "${config.host}" does not resolve to an address (${code})`
        : code === 'EADDRNOTAVAIL'
          ? `HOST ${config.host} is not an address of this machine (EADDRNOTAVAIL)`
          : code === 'EACCES'
            ? `port ${config.port} needs privileges on this system (EACCES; use a port above 1023)`
            : err instanceof Error
              ? err.message
              : String(err);
  return `cannot listen on ${where}: ${why}`;
}

function reportTightened(message: string | undefined): void {
  if (message !== undefined) process.stderr.write(`corridor: ${message}\n`);
}

async function platformCommand(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, currency: { type: 'string' }, environment: { type: 'string' }, id: { type: 'string' } },
    strict: true,
  });
  if (sub === 'create') {
    if (!values.name) throw new UsageError('platform create needs --name');
    const currency = values.currency ?? 'USD';
    if (!findCurrency(currency)) throw new UsageError(`unknown currency "${currency}"`);
    const environment = (values.environment ?? 'SANDBOX') as Environment;
    if (environment !== 'SANDBOX' && environment !== 'PRODUCTION') throw new UsageError('--environment must be SANDBOX or PRODUCTION');
    const name = values.name;
    return withStore(config, async (store) => {
      await migrate(store);
      const deps = defaultDeps();
      const { platform, token } = await store.db
        .transaction()
        .execute((trx) => createPlatform(trx, deps, { name, fiatCurrency: currency, environment }, secretBox(config)));
      process.stdout.write(`${JSON.stringify({ platform: platformToWire(platform), token }, null, 2)}\n`);
      return 0;
    });
  }
  if (sub === 'show') {
    return withStore(config, async (store) => {
      await migrate(store);
      const platform = values.id ? await getPlatform(store.db, values.id) : await findBootstrapPlatform(store.db);
      if (!platform) {
        process.stderr.write('corridor: no such platform\n');
        return 1;
      }
      const publicKey = await webhookPublicKey(store.db, platform.id, secretBox(config));
      process.stdout.write(`${JSON.stringify({ platform: platformToWire(platform), webhookPublicKey: publicKey }, null, 2)}\n`);
      return 0;
    });
  }
  throw new UsageError('platform takes "create" or "show"');
}

async function ledgerCheck(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { platform: { type: 'string' } }, strict: true });
  return withStore(config, async (store) => {
    await migrate(store);
    // A mistyped id must not pass for a platform whose ledger is clean.
    if (values.platform !== undefined && !(await getPlatform(store.db, values.platform))) {
      process.stderr.write(`corridor: platform ${values.platform} does not exist in this store (${store.kind} ${store.location})\n`);
      return 1;
    }
    const report = await checkLedger(store.db, values.platform);
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(report.ok ? 'ledger check: clean\n' : `ledger check: ${report.problems.length} problem(s)\n`);
    return report.ok ? 0 : 1;
  });
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** `webhooks listen`: the port a developer can keep in `webhookEndpoint` across restarts. */
const LISTEN_DEFAULT_PORT = 8081;

/**
 * `webhooks listen`: a local receiver verifying against a platform's public key, read from the
 * store (default: the sandbox platform) or a PEM file. Event lines go to stdout, the banner to
 * stderr, so `--json` output pipes cleanly. It does not set `webhookEndpoint` itself: on the
 * embedded store the running server caches platform rows, so a config write from this process
 * would go unseen there; it prints the PATCH /config request instead.
 */
async function webhooksCommand(config: Config, args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'listen') throw new UsageError('webhooks takes "listen"');
  const { values } = parseArgs({
    args: rest,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      platform: { type: 'string' },
      'public-key-file': { type: 'string' },
      json: { type: 'boolean' },
      'forward-to': { type: 'string' },
    },
    strict: true,
  });
  const forwardTo = values['forward-to'];
  if (forwardTo !== undefined && !isHttpUrl(forwardTo))
    throw new UsageError(`--forward-to must be an http:// or https:// URL (got "${forwardTo}")`);
  const portText = values.port ?? String(LISTEN_DEFAULT_PORT);
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535)
    throw new UsageError(`--port must be an integer from 0 to 65535 (got "${portText}")`);
  const keyFile = values['public-key-file'];
  if (keyFile !== undefined && values.platform !== undefined) throw new UsageError('give --platform or --public-key-file, not both');

  let publicKeyPem: string;
  let keySource: string;
  if (keyFile !== undefined) {
    try {
      publicKeyPem = fs.readFileSync(keyFile, 'utf8');
      checkPublicKeyPem(publicKeyPem);
    } catch (err) {
      throw new Error(`${keyFile}: ${err instanceof Error ? err.message : String(err)}`);
    }
    keySource = `the public key in ${keyFile}`;
  } else {
    const found = await withStore(config, async (store) => {
      await migrate(store);
      const platform = values.platform ? await getPlatform(store.db, values.platform) : await findBootstrapPlatform(store.db);
      return (
        platform && {
          platform,
          key: await webhookPublicKey(store.db, platform.id, secretBox(config)),
          location: `${store.kind} ${store.location}`,
        }
      );
    });
    if (!found) {
      process.stderr.write(
        values.platform
          ? 'corridor: no such platform\n'
          : 'corridor: no sandbox platform yet (run "corridor start" once, or pass --platform)\n',
      );
      return 1;
    }
    publicKeyPem = found.key;
    keySource = `the signing key of ${found.platform.id} (${found.location})`;
  }

  const listener = await startListener({
    port: Number(portText),
    host: values.host ?? '127.0.0.1',
    publicKeyPem,
    json: values.json ?? false,
    write: (line) => process.stdout.write(`${line}\n`),
    forwardTo,
  });
  const serverHost = config.host === '0.0.0.0' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  const api = config.port === 0 ? `<corridor URL>${BASE_PATH}` : `http://${serverHost}:${config.port}${BASE_PATH}`;
  // As in start: the stop signals are handled before the banner says we are listening.
  const stopped = new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  process.stderr.write(
    [
      `Listening for webhooks on ${listener.url}`,
      `  verifying with ${keySource}`,
      ...(forwardTo ? [`  forwarding each signed event to ${forwardTo} (its answer is Corridor's answer)`] : []),
      '  point the platform at it (a TEST event follows):',
      `    curl -u '<clientId>:<clientSecret>' -X PATCH ${api}/config -H 'content-type: application/json' -d '${JSON.stringify({ webhookEndpoint: listener.url })}'`,
      '  answers 200 to a good signature (this approves INCOMING_PAYMENT.PENDING), 401 to a bad one. Ctrl-C stops.',
      '',
    ].join('\n'),
  );

  await stopped;
  await listener.close();
  process.stderr.write('listener stopped\n');
  return 0;
}
