/**
 * Starts a real Corridor server for a test file: buildApp on the lane's store (a fresh SQLite
 * file, or the shared TEST_DATABASE_URL), listening on a random loopback port. Tests talk to it
 * over real HTTP and get a fresh, isolated platform from the admin API.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp, startBackground, type App, type BuildOptions } from '../../src/app.ts';
import { BASE_PATH, readConfig, type Config } from '../../src/config.ts';
import { defaultDeps, type Deps } from '../../src/deps.ts';
import type { JobHandler } from '../../src/jobs/jobs.ts';
import { checkLedger, type LedgerReport } from '../../src/ledger/ledger.ts';
import { migrate } from '../../src/store/migrate.ts';
import { Client, type Creds } from './http.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestServer {
  app: App;
  origin: string;
  baseUrl: string;
  dataDir: string;
  /** A client for the admin API. */
  admin: Client;
  /** A client with no credentials. */
  anon: Client;
  /** Creates an isolated platform; returns a client authenticated with its all-permission token. */
  newPlatform(opts?: { name?: string; currency?: string; environment?: 'SANDBOX' | 'PRODUCTION' }): Promise<PlatformHandle>;
  /** The ledger check over the whole store (or one platform). */
  ledger(platformId?: string): Promise<LedgerReport>;
  close(): Promise<void>;
}

export interface PlatformHandle {
  id: string;
  creds: Creds;
  api: Client;
}

export function laneStore(): 'sqlite' | 'postgres' {
  return process.env.CORRIDOR_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
}

/** Migrates the store `config` names, builds the app on it and starts its background loops: what `corridor start` does before it listens. */
export async function bootApp(config: Config, deps: Deps, opts: BuildOptions = {}): Promise<App> {
  const app = await buildApp(config, deps, opts);
  await migrate(app.ctx.store);
  startBackground(app);
  return app;
}

export async function startServer(
  opts: { deps?: Partial<Deps>; env?: Record<string, string>; jobHandlers?: ReadonlyMap<string, JobHandler> } = {},
): Promise<TestServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-test-'));
  const env: Record<string, string | undefined> = {
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    CORRIDOR_ADMIN_TOKEN: ADMIN_TOKEN,
    PORT: '0',
    ...opts.env,
  };
  // The lane's database, unless the test names another connection to it (e.g. with its own search_path).
  if (laneStore() === 'postgres') env.DATABASE_URL ??= process.env.TEST_DATABASE_URL;
  const config = readConfig(env);
  const app = await bootApp(config, defaultDeps(opts.deps), { extraJobHandlers: opts.jobHandlers });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address();
  if (!addr || typeof addr !== 'object') throw new Error('server did not bind');
  const origin = `http://127.0.0.1:${addr.port}`;
  const baseUrl = `${origin}${BASE_PATH}`;
  const admin = new Client(origin, { bearer: ADMIN_TOKEN });
  return {
    app,
    origin,
    baseUrl,
    dataDir,
    admin,
    anon: new Client(baseUrl),
    async newPlatform(p = {}) {
      const res = await admin.post('/_admin/platforms', {
        name: p.name ?? 'Test platform',
        ...(p.currency ? { currency: p.currency } : {}),
        ...(p.environment ? { environment: p.environment } : {}),
      });
      if (res.status !== 201) throw new Error(`platform create failed: ${res.status} ${JSON.stringify(res.body)}`);
      const body = res.body as { platform: { id: string }; token: { clientId: string; clientSecret: string } };
      const creds = { id: body.token.clientId, secret: body.token.clientSecret };
      return { id: body.platform.id, creds, api: new Client(baseUrl, { basic: creds }) };
    },
    ledger: (platformId) => checkLedger(app.ctx.db, platformId),
    async close() {
      await app.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
