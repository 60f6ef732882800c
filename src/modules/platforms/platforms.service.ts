/**
 * Platforms: creation (with their fiat internal account and an all-permission token) and the
 * first-boot bootstrap of the sandbox platform.
 */
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.ts';
import { PERMISSIONS } from '../../http/auth.ts';
import { iso } from '../../lib/time.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { createInternalAccount, holdingTypeFor } from '../internal-accounts/internal-accounts.service.ts';
import { mintToken, tokenToWire, type ApiTokenWire } from '../tokens/tokens.service.ts';
import { findBootstrapToken, updateTokenCredentials } from '../tokens/tokens.repo.ts';
import { hashSecret } from '../../http/auth.ts';
import { findBootstrapPlatform, insertPlatform, recordBootstrapPlatform } from './platforms.repo.ts';
import { defaultSettings } from './platform-settings.ts';
import { createWebhookKey } from '../../webhook-delivery/keys.ts';
import type { SecretBox } from '../../store/secret-box.ts';

export type Environment = 'SANDBOX' | 'PRODUCTION';

export interface PlatformWire {
  id: string;
  name: string;
  environment: Environment;
  fiatCurrency: string;
  createdAt: string;
}

export function platformToWire(p: PlatformRow): PlatformWire {
  return { id: p.id, name: p.name, environment: p.environment as Environment, fiatCurrency: p.fiat_currency, createdAt: p.created_at };
}

export interface NewPlatform {
  name: string;
  fiatCurrency: string;
  environment: Environment;
  /** Fixed credentials for the platform's first token (bootstrap from the environment). */
  clientId?: string | undefined;
  secret?: string | undefined;
  isBootstrap?: boolean;
}

/** The row of a new platform: its id, default settings and creation time (nothing is written yet). */
export function newPlatformRow(deps: Deps, p: Pick<NewPlatform, 'name' | 'fiatCurrency' | 'environment'>): PlatformRow {
  const at = iso(deps.clock.nowMs());
  const uuid = deps.ids.uuid();
  return {
    id: `Platform:${uuid}`,
    name: p.name,
    environment: p.environment,
    fiat_currency: p.fiatCurrency,
    config: JSON.stringify(defaultSettings(uuid, p.fiatCurrency)),
    clock_offset_ms: 0,
    created_at: at,
    updated_at: at,
  };
}

/**
 * Creates a platform, its internal account in its fiat currency, its webhook signing key and a
 * token with every permission, in the caller's transaction (the CLI's `platform create`, the
 * bootstrap). `secrets` seals the signing key.
 */
export async function createPlatform(
  db: Kysely<Database>,
  deps: Deps,
  p: NewPlatform,
  secrets: SecretBox,
): Promise<{ platform: PlatformRow; token: ApiTokenWire }> {
  const platform = newPlatformRow(deps, p);
  return { platform, token: await writeNewPlatform(db, deps, platform, p, secrets) };
}

/**
 * `createPlatform` as a unit of work: the admin API opens the unit on the row `newPlatformRow`
 * built (a new tenant has no platform to lock yet: the unit's lock is on an id nobody else knows),
 * so the creation is one transaction retried as a whole like every other write.
 */
export async function setUpPlatform(u: Unit, p: NewPlatform): Promise<ApiTokenWire> {
  return writeNewPlatform(u.trx, u.deps, u.platform, p, u.app.secrets);
}

async function writeNewPlatform(
  db: Kysely<Database>,
  deps: Deps,
  platform: PlatformRow,
  p: NewPlatform,
  secrets: SecretBox,
): Promise<ApiTokenWire> {
  const at = platform.created_at;
  await insertPlatform(db, platform);
  await createWebhookKey(db, platform.id, at, secrets);
  await createInternalAccount(db, deps, {
    platformId: platform.id,
    customerId: null,
    type: holdingTypeFor(p.fiatCurrency),
    currency: p.fiatCurrency,
    at,
  });
  const { row, secret } = await mintToken(db, deps, {
    platformId: platform.id,
    name: p.isBootstrap ? 'Bootstrap sandbox token' : `${p.name} token`,
    permissions: [...PERMISSIONS],
    at,
    clientId: p.clientId,
    secret: p.secret,
    isBootstrap: p.isBootstrap ?? false,
  });
  return tokenToWire(row, secret);
}

export interface BootstrapResult {
  platform: PlatformRow;
  /** Set when this call created the platform. */
  created: boolean;
  /** Set when this call gave the platform a new bootstrap token (its old one was gone). */
  tokenCreated: boolean;
  clientId: string;
  /** Known only when just created or fixed by the environment. */
  secret?: string;
}

/**
 * Ensures the bootstrap sandbox platform exists, and exactly one: it is found by the store's
 * record of it (`bootstrap_platform`), never through its token, so a store never gets a second
 * one. Its token cannot be deleted over the API (DELETE /tokens answers 400); should it be gone all
 * the same, a new bootstrap token is attached to the same platform. With fixed credentials from
 * the environment, the bootstrap token is (re)set to them on every start, so scripts can rely on
 * them. Run it in `exclusiveTransaction` (two processes starting at once must not both create).
 */
export async function bootstrapPlatform(
  db: Kysely<Database>,
  deps: Deps,
  fixed: { clientId?: string | undefined; secret?: string | undefined },
  secrets: SecretBox,
): Promise<BootstrapResult> {
  const existing = await findBootstrapPlatform(db);
  if (!existing) {
    const { platform, token } = await createPlatform(
      db,
      deps,
      {
        name: 'Sandbox platform',
        fiatCurrency: 'USD',
        environment: 'SANDBOX',
        clientId: fixed.clientId,
        secret: fixed.secret,
        isBootstrap: true,
      },
      secrets,
    );
    await recordBootstrapPlatform(db, platform.id, platform.created_at);
    return { platform, created: true, tokenCreated: true, clientId: token.clientId, secret: token.clientSecret! };
  }
  const token = await findBootstrapToken(db, existing.id);
  if (!token) {
    const { row, secret } = await mintToken(db, deps, {
      platformId: existing.id,
      name: 'Bootstrap sandbox token',
      permissions: [...PERMISSIONS],
      at: iso(deps.clock.nowMs()),
      clientId: fixed.clientId,
      secret: fixed.secret,
      isBootstrap: true,
    });
    return { platform: existing, created: false, tokenCreated: true, clientId: row.client_id, secret };
  }
  if (fixed.clientId && fixed.secret) {
    if (token.client_id !== fixed.clientId || token.secret_hash !== hashSecret(fixed.secret)) {
      await updateTokenCredentials(db, token.id, fixed.clientId, hashSecret(fixed.secret), iso(deps.clock.nowMs()));
    }
    return { platform: existing, created: false, tokenCreated: false, clientId: fixed.clientId, secret: fixed.secret };
  }
  return { platform: existing, created: false, tokenCreated: false, clientId: token.client_id };
}
