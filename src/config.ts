/**
 * Configuration: read once from the environment, validated, then passed down as a plain object.
 * A bad value is a {@link ConfigError}; the CLI prints it and exits with code 2.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  /** Where the embedded SQLite store and local credentials live. */
  dataDir: string;
  /** postgres://… when set; otherwise the embedded SQLite store in dataDir. */
  databaseUrl: string | undefined;
  logLevel: LogLevel;
  /** Fixed Basic-auth username (clientId) for the bootstrap sandbox token. */
  bootstrapTokenId: string | undefined;
  /** Fixed client secret for the bootstrap sandbox token. */
  bootstrapClientSecret: string | undefined;
  /** Bearer token for /_admin routes; the admin API is disabled when unset. */
  adminToken: string | undefined;
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  /** Domain of the sandbox UMA receivers (`$success.usd@<domain>` …). */
  sandboxUmaDomain: string;
  /** Embedded-wallet auth: session lifetime, signed-retry challenge lifetime, WebAuthn relying party. */
  wallet: { sessionSeconds: number; challengeSeconds: number; rpIds: string[] | undefined; origins: string[] | undefined };
  /**
   * HTTP server timeouts (ms): the whole request including its body, the request's headers, and
   * how long an idle keep-alive connection stays open. A slow client is cut off after these.
   */
  http: { requestTimeoutMs: number; headersTimeoutMs: number; idleTimeoutMs: number };
  /** PRODUCTION platforms may send webhooks to loopback, private and link-local addresses. */
  webhookAllowPrivate: boolean;
  /**
   * Key material that encrypts the stored private keys at rest (CORRIDOR_SECRET_KEY), and the one
   * it replaces while stored secrets are re-encrypted (CORRIDOR_SECRET_KEY_PREVIOUS).
   */
  secretKey: string | undefined;
  secretKeyPrevious: string | undefined;
  /**
   * A development tool: the file `corridor start` writes the embedded store's per-statement timings
   * to, on SIGUSR2 and at exit (CORRIDOR_SQL_PROFILE; `npm run bench -- --sql-profile` sets it).
   */
  sqlProfile: string | undefined;
  /**
   * A development tool: the file `corridor start` writes its PostgreSQL commit groups' phase timings
   * to, on SIGUSR2 and at exit (CORRIDOR_GROUP_PROFILE; `npm run bench -- --group-profile` sets it).
   */
  groupProfile: string | undefined;
  /**
   * The account-type names responses and webhooks use (CORRIDOR_WIRE_NAMES): the spec's (default:
   * US_ACCOUNT, LAYER2_WALLET, CHAIN2_WALLET) or the live API's (USD_ACCOUNT, SPARK_WALLET,
   * SOLANA_WALLET). Both are accepted on input either way.
   */
  wireNames: 'spec' | 'live';
  /** The largest CSV `POST /customers/bulk/csv` accepts (CORRIDOR_BULK_CSV_MAX_BYTES; default 100 MiB, the live docs' limit). */
  bulkCsvMaxBytes: number;
  /**
   * PostgreSQL group commit: how many groups of units of work may run at once, each one transaction
   * and one COMMIT for the units that run together (CORRIDOR_PG_GROUP_COMMIT; default 2; 0: off, one
   * transaction per unit). See store/pg-group-commit.ts and docs/performance.md.
   */
  pgGroupCommit: number;
  /**
   * CORRIDOR_SEED: a deterministic run. Ids, generated account details and sandbox prices come from
   * this seed and the clock stands still (lib/seeded-deps.ts), so the same requests get the same
   * responses; secrets stay random. Unset: real time and real randomness.
   */
  seed: number | undefined;
}

/** Group commit's concurrent groups on PostgreSQL by default (docs/performance.md, issue #26). */
const DEFAULT_PG_GROUPS = 2;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** The versioned base path every API route lives under. */
export const API_VERSION = '2025-10-13';
export const BASE_PATH = `/${API_VERSION}`;

type Env = Record<string, string | undefined>;

/** Reads and validates the configuration; throws ConfigError naming every bad variable. */
export function readConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const problems: string[] = [];
  const get = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v === '' ? undefined : v;
  };

  // Set but empty is a mistake (an unset shell variable), not a request for the default.
  for (const name of ['PORT', 'HOST', 'DATA_DIR']) {
    if (env[name] !== undefined && env[name]!.trim() === '') problems.push(`${name} is set but empty (unset it to use the default)`);
  }
  const port = parsePort(get('PORT'), problems);
  const host = get('HOST') ?? '127.0.0.1';
  const dataDir = path.resolve(cwd, get('DATA_DIR') ?? '.corridor');
  const dataDirKind = statKind(dataDir);
  if (dataDirKind !== 'missing' && dataDirKind !== 'directory') problems.push(`DATA_DIR ${dataDir} is a ${dataDirKind}, not a directory`);

  const databaseUrl = get('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\/\S+$/.test(databaseUrl)) {
    problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }

  const logLevel = (get('LOG_LEVEL') ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  }

  const bootstrapTokenId = get('CORRIDOR_TOKEN_ID');
  const bootstrapClientSecret = get('CORRIDOR_CLIENT_SECRET');
  if ((bootstrapTokenId === undefined) !== (bootstrapClientSecret === undefined)) {
    problems.push('CORRIDOR_TOKEN_ID and CORRIDOR_CLIENT_SECRET must be set together');
  }
  if (bootstrapTokenId !== undefined && !/^[A-Za-z0-9_-]{8,128}$/.test(bootstrapTokenId)) {
    problems.push('CORRIDOR_TOKEN_ID must be 8-128 characters of A-Z, a-z, 0-9, "_" or "-"');
  }
  if (bootstrapClientSecret !== undefined && !/^[\x21-\x7e]{16,256}$/.test(bootstrapClientSecret)) {
    problems.push('CORRIDOR_CLIENT_SECRET must be 16-256 printable characters without spaces');
  }

  const adminToken = get('CORRIDOR_ADMIN_TOKEN');
  if (adminToken !== undefined && !/^[\x21-\x7e]{16,256}$/.test(adminToken)) {
    problems.push('CORRIDOR_ADMIN_TOKEN must be 16-256 printable characters without spaces');
  }

  const sandboxUmaDomain = (get('CORRIDOR_SANDBOX_UMA_DOMAIN') ?? 'sandbox.uma.money').toLowerCase();
  if (!/^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(sandboxUmaDomain)) {
    problems.push(`CORRIDOR_SANDBOX_UMA_DOMAIN must be a domain name (got "${sandboxUmaDomain}")`);
  }

  const seconds = (name: string, dflt: number): number => {
    const raw = get(name);
    if (raw === undefined) return dflt;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 86_400)
      problems.push(`${name} must be a whole number of seconds from 1 to 86400 (got "${raw}")`);
    return n;
  };
  const wallet = {
    sessionSeconds: seconds('CORRIDOR_WALLET_SESSION_SECONDS', 900),
    challengeSeconds: seconds('CORRIDOR_WALLET_CHALLENGE_SECONDS', 300),
    // Unset: a passkey is bound to the origin it registered from (https, or http on localhost) and
    // that origin's host as RP ID; set: only these.
    rpIds: get('CORRIDOR_WEBAUTHN_RP_IDS')
      ?.split(',')
      .map((o) => o.trim())
      .filter(Boolean),
    origins: get('CORRIDOR_WEBAUTHN_ORIGINS')
      ?.split(',')
      .map((o) => o.trim())
      .filter(Boolean),
  };
  for (const o of wallet.origins ?? []) {
    if (!/^https?:\/\/[^/\s]+$/.test(o))
      problems.push(`CORRIDOR_WEBAUTHN_ORIGINS must be comma-separated origins like https://app.example.com (got "${o}")`);
  }

  const millis = (name: string, dflt: number): number => {
    const raw = get(name);
    if (raw === undefined) return dflt;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < 100 || n > 3_600_000)
      problems.push(`${name} must be a whole number of milliseconds from 100 to 3600000 (got "${raw}")`);
    return n;
  };
  const http = {
    requestTimeoutMs: millis('CORRIDOR_REQUEST_TIMEOUT_MS', 30_000),
    headersTimeoutMs: millis('CORRIDOR_HEADERS_TIMEOUT_MS', 10_000),
    // Above the 60 s idle timeout of common load balancers, so the balancer closes first.
    idleTimeoutMs: millis('CORRIDOR_IDLE_TIMEOUT_MS', 72_000),
  };
  if (http.headersTimeoutMs > http.requestTimeoutMs)
    problems.push('CORRIDOR_HEADERS_TIMEOUT_MS must not exceed CORRIDOR_REQUEST_TIMEOUT_MS');

  const allowPrivate = get('CORRIDOR_WEBHOOK_ALLOW_PRIVATE') ?? 'false';
  if (allowPrivate !== 'true' && allowPrivate !== 'false')
    problems.push(`CORRIDOR_WEBHOOK_ALLOW_PRIVATE must be true or false (got "${allowPrivate}")`);

  const secretKey = get('CORRIDOR_SECRET_KEY');
  const secretKeyPrevious = get('CORRIDOR_SECRET_KEY_PREVIOUS');
  for (const [name, v] of [
    ['CORRIDOR_SECRET_KEY', secretKey],
    ['CORRIDOR_SECRET_KEY_PREVIOUS', secretKeyPrevious],
  ] as const) {
    if (v !== undefined && !/^[\x21-\x7e]{32,512}$/.test(v))
      problems.push(`${name} must be 32-512 printable characters without spaces (e.g. the output of: openssl rand -base64 32)`);
  }
  if (secretKeyPrevious !== undefined && secretKey === undefined)
    problems.push('CORRIDOR_SECRET_KEY_PREVIOUS needs CORRIDOR_SECRET_KEY (the key that replaces it)');
  if (secretKeyPrevious !== undefined && secretKeyPrevious === secretKey)
    problems.push('CORRIDOR_SECRET_KEY_PREVIOUS must differ from CORRIDOR_SECRET_KEY');

  const sqlProfileRaw = get('CORRIDOR_SQL_PROFILE');
  const sqlProfile = sqlProfileRaw === undefined ? undefined : path.resolve(cwd, sqlProfileRaw);
  if (sqlProfile !== undefined && databaseUrl !== undefined)
    problems.push('CORRIDOR_SQL_PROFILE times the embedded SQLite store: unset DATABASE_URL');

  const groupProfileRaw = get('CORRIDOR_GROUP_PROFILE');
  const groupProfile = groupProfileRaw === undefined ? undefined : path.resolve(cwd, groupProfileRaw);

  const bulkRaw = get('CORRIDOR_BULK_CSV_MAX_BYTES');
  const bulkCsvMaxBytes = bulkRaw === undefined ? 100 * 1024 * 1024 : Number(bulkRaw);
  if (bulkRaw !== undefined && (!/^\d+$/.test(bulkRaw) || bulkCsvMaxBytes < 1024 || bulkCsvMaxBytes > 1024 * 1024 * 1024))
    problems.push(`CORRIDOR_BULK_CSV_MAX_BYTES must be a whole number of bytes from 1024 to 1073741824 (got "${bulkRaw}")`);

  const groupsRaw = get('CORRIDOR_PG_GROUP_COMMIT');
  const pgGroupCommit = groupsRaw === undefined ? DEFAULT_PG_GROUPS : Number(groupsRaw);
  if (groupsRaw !== undefined && (!/^\d+$/.test(groupsRaw) || pgGroupCommit > 16))
    problems.push(`CORRIDOR_PG_GROUP_COMMIT must be a whole number of concurrent groups from 0 (off) to 16 (got "${groupsRaw}")`);
  if (groupProfile !== undefined && (databaseUrl === undefined || pgGroupCommit === 0))
    problems.push('CORRIDOR_GROUP_PROFILE times PostgreSQL commit groups: it needs DATABASE_URL and CORRIDOR_PG_GROUP_COMMIT above 0');

  const seedRaw = get('CORRIDOR_SEED');
  const seed = seedRaw === undefined ? undefined : Number(seedRaw);
  if (seedRaw !== undefined && (!/^\d{1,16}$/.test(seedRaw) || !Number.isSafeInteger(seed)))
    problems.push(`CORRIDOR_SEED must be a non-negative integer up to ${Number.MAX_SAFE_INTEGER} (got "${seedRaw}")`);

  const wireNames = get('CORRIDOR_WIRE_NAMES') ?? 'spec';
  if (wireNames !== 'spec' && wireNames !== 'live') problems.push(`CORRIDOR_WIRE_NAMES must be spec or live (got "${wireNames}")`);

  if (problems.length > 0) {
    throw new ConfigError(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
  return {
    port,
    host,
    dataDir,
    databaseUrl,
    logLevel,
    bootstrapTokenId,
    bootstrapClientSecret,
    adminToken,
    bodyLimitBytes: 1024 * 1024,
    sandboxUmaDomain,
    wallet,
    http,
    webhookAllowPrivate: allowPrivate === 'true',
    secretKey,
    secretKeyPrevious,
    sqlProfile,
    groupProfile,
    wireNames: wireNames === 'live' ? 'live' : 'spec',
    bulkCsvMaxBytes,
    pgGroupCommit,
    seed,
  };
}

/** What is at `p`: missing, a directory, or (for the message) some other kind of entry. */
function statKind(p: string): 'missing' | 'directory' | 'file' | 'special file' {
  try {
    const st = fs.statSync(p);
    return st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'special file';
  } catch {
    return 'missing';
  }
}

function parsePort(raw: string | undefined, problems: string[]): number {
  if (raw === undefined) return 8080;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    problems.push(`PORT must be an integer from 0 to 65535 (got "${raw}")`);
    return 0;
  }
  return Number(raw);
}
