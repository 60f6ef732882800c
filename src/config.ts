/**
 * Configuration: read once from the environment, validated, then passed down as a plain object.
 * A bad value is a {@link ConfigError}; the CLI prints it and exits with code 2.
 */
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
}

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

  const port = parsePort(get('PORT'), problems);
  const host = get('HOST') ?? '127.0.0.1';
  const dataDir = path.resolve(cwd, get('DATA_DIR') ?? '.corridor');

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
    if (!Number.isInteger(n) || n < 1 || n > 86_400) problems.push(`${name} must be a whole number of seconds from 1 to 86400 (got "${raw}")`);
    return n;
  };
  const wallet = {
    sessionSeconds: seconds('CORRIDOR_WALLET_SESSION_SECONDS', 900),
    challengeSeconds: seconds('CORRIDOR_WALLET_CHALLENGE_SECONDS', 300),
    // Unset: a passkey is bound to the origin it registered from (https, or http on localhost) and
    // that origin's host as RP ID; set: only these.
    rpIds: get('CORRIDOR_WEBAUTHN_RP_IDS')?.split(',').map((o) => o.trim()).filter(Boolean),
    origins: get('CORRIDOR_WEBAUTHN_ORIGINS')?.split(',').map((o) => o.trim()).filter(Boolean),
  };
  for (const o of wallet.origins ?? []) {
    if (!/^https?:\/\/[^/\s]+$/.test(o)) problems.push(`CORRIDOR_WEBAUTHN_ORIGINS must be comma-separated origins like https://app.example.com (got "${o}")`);
  }

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
  };
}

function parsePort(raw: string | undefined, problems: string[]): number {
  if (raw === undefined) return 8080;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    problems.push(`PORT must be an integer from 0 to 65535 (got "${raw}")`);
    return 0;
  }
  return Number(raw);
}
