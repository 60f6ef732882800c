/** API tokens: creation with a secret shown once, and the wire shape. */
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.ts';
import { hashSecret, type Permission } from '../../http/auth.ts';
import type { ApiTokenRow, Database } from '../../store/schema.ts';
import { insertToken } from './tokens.repo.ts';

export interface ApiTokenWire {
  id: string;
  name: string;
  permissions: Permission[];
  clientId: string;
  clientSecret?: string;
  createdAt: string;
  updatedAt: string;
}

/** A new client id: 32 hex characters, like the live API's. */
export function newClientId(deps: Deps): string {
  return deps.rng.bytes(16).toString('hex');
}

/** A new client secret: 32 random bytes, base64url. */
export function newClientSecret(deps: Deps): string {
  return `sk_${deps.rng.bytes(32).toString('base64url')}`;
}

export async function createToken(
  db: Kysely<Database>,
  deps: Deps,
  t: { platformId: string; name: string; permissions: Permission[]; at: string; clientId?: string; secret?: string; isBootstrap?: boolean },
): Promise<{ row: ApiTokenRow; secret: string }> {
  const secret = t.secret ?? newClientSecret(deps);
  const row: ApiTokenRow = {
    id: deps.ids.next('Token'),
    platform_id: t.platformId,
    name: t.name,
    client_id: t.clientId ?? newClientId(deps),
    secret_hash: hashSecret(secret),
    permissions: JSON.stringify([...new Set(t.permissions)]),
    is_bootstrap: t.isBootstrap ? 1 : 0,
    created_at: t.at,
    updated_at: t.at,
  };
  await insertToken(db, row);
  return { row, secret };
}

export function tokenToWire(row: ApiTokenRow, secret?: string): ApiTokenWire {
  const w: ApiTokenWire = {
    id: row.id,
    name: row.name,
    permissions: JSON.parse(row.permissions) as Permission[],
    clientId: row.client_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (secret !== undefined) w.clientSecret = secret;
  return w;
}
