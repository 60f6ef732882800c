/**
 * Platforms: creation (with their fiat internal account and an all-permission token) and the
 * first-boot bootstrap of the sandbox platform.
 */
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.ts';
import { PERMISSIONS } from '../../http/auth.ts';
import { iso } from '../../lib/time.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import { createInternalAccount, holdingTypeFor } from '../internal-accounts/internal-accounts.service.ts';
import { createToken, tokenToWire, type ApiTokenWire } from '../tokens/tokens.service.ts';
import { findBootstrapToken, updateTokenCredentials } from '../tokens/tokens.repo.ts';
import { hashSecret } from '../../http/auth.ts';
import { findBootstrapPlatform, insertPlatform } from './platforms.repo.ts';
import { defaultSettings } from './platform-settings.ts';
import { createWebhookKey } from '../../webhooks/keys.ts';

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

/**
 * Creates a platform, its internal account in its fiat currency, its webhook signing key and a
 * token with every permission. Run it inside a transaction.
 */
export async function createPlatform(db: Kysely<Database>, deps: Deps, p: NewPlatform): Promise<{ platform: PlatformRow; token: ApiTokenWire }> {
  const at = iso(deps.clock.nowMs());
  const uuid = deps.ids.uuid();
  const platform: PlatformRow = {
    id: `Platform:${uuid}`,
    name: p.name,
    environment: p.environment,
    fiat_currency: p.fiatCurrency,
    config: JSON.stringify(defaultSettings(uuid, p.fiatCurrency)),
    clock_offset_ms: 0,
    created_at: at,
    updated_at: at,
  };
  await insertPlatform(db, platform);
  await createWebhookKey(db, platform.id, at);
  await createInternalAccount(db, deps, { platformId: platform.id, customerId: null, type: holdingTypeFor(p.fiatCurrency), currency: p.fiatCurrency, at });
  const { row, secret } = await createToken(db, deps, {
    platformId: platform.id,
    name: p.isBootstrap ? 'Bootstrap sandbox token' : `${p.name} token`,
    permissions: [...PERMISSIONS],
    at,
    clientId: p.clientId,
    secret: p.secret,
    isBootstrap: p.isBootstrap ?? false,
  });
  return { platform, token: tokenToWire(row, secret) };
}

export interface BootstrapResult {
  platform: PlatformRow;
  /** Set when this call created the platform or (re)set its credentials from the environment. */
  created: boolean;
  clientId: string;
  /** Known only when just created or fixed by the environment. */
  secret?: string;
}

/**
 * Ensures the bootstrap sandbox platform exists. With fixed credentials from the environment,
 * the bootstrap token is (re)set to them on every start, so scripts can rely on them.
 */
export async function bootstrapPlatform(
  db: Kysely<Database>,
  deps: Deps,
  fixed: { clientId?: string | undefined; secret?: string | undefined },
): Promise<BootstrapResult> {
  const existing = await findBootstrapPlatform(db);
  if (!existing) {
    const { platform, token } = await createPlatform(db, deps, {
      name: 'Sandbox platform',
      fiatCurrency: 'USD',
      environment: 'SANDBOX',
      clientId: fixed.clientId,
      secret: fixed.secret,
      isBootstrap: true,
    });
    return { platform, created: true, clientId: token.clientId, secret: token.clientSecret! };
  }
  const token = await findBootstrapToken(db, existing.id);
  if (!token) throw new Error('bootstrap platform without its token');
  if (fixed.clientId && fixed.secret) {
    if (token.client_id !== fixed.clientId || token.secret_hash !== hashSecret(fixed.secret)) {
      await updateTokenCredentials(db, token.id, fixed.clientId, hashSecret(fixed.secret), iso(deps.clock.nowMs()));
    }
    return { platform: existing, created: false, clientId: fixed.clientId, secret: fixed.secret };
  }
  return { platform: existing, created: false, clientId: token.client_id };
}
