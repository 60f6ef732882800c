/**
 * API tokens: creation with a secret shown once, revocation, and the wire shape.
 *
 * Rules:
 * - A token grants only permissions its creator holds (403 FORBIDDEN naming the missing ones):
 *   MANAGE alone must not mint TRANSACT.
 * - The sandbox platform's bootstrap token cannot be deleted (400): it is what `corridor start`
 *   prints and keeps in credentials.json, and without it the next start could not hand out
 *   working credentials. A token cannot delete itself (400).
 */
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.ts';
import { hashSecret, type Permission } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import type { ApiTokenRow, Database } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { deleteToken, findToken, insertToken } from './tokens.repo.ts';

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
  return `sk_${deps.secretRng.bytes(32).toString('base64url')}`;
}

/**
 * Writes a new token in the caller's transaction and returns it with its secret. For platform
 * creation and the bootstrap, which run before the platform exists (see platforms.service.ts);
 * the API's create is `createToken`.
 */
export async function mintToken(
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

/** POST /tokens: a token of the unit's platform with `permissions`, which the caller (`held`) must all hold. */
export async function createToken(
  u: Unit,
  input: { name: string; permissions: Permission[] },
  held: readonly Permission[],
): Promise<ApiTokenWire> {
  const beyond = input.permissions.filter((x) => !held.includes(x));
  if (beyond.length > 0) throw errors.permissionBeyondCaller(beyond);
  const { row, secret } = await mintToken(u.trx, u.deps, {
    platformId: u.platform.id,
    name: input.name,
    permissions: input.permissions,
    at: u.at,
  });
  return tokenToWire(row, secret);
}

/** DELETE /tokens/{id}: revokes a token of the unit's platform; `callerTokenId` is the token asking. */
export async function revokeToken(u: Unit, id: string, callerTokenId: string): Promise<void> {
  const target = await findToken(u.trx, u.platform.id, id);
  if (!target) throw errors.tokenNotFound(id);
  if (target.is_bootstrap === 1) {
    throw errors.invalidInput(
      'The bootstrap token cannot be deleted: it is the token `corridor start` prints and keeps in DATA_DIR/credentials.json. ' +
        'To change its credentials, restart with CORRIDOR_TOKEN_ID and CORRIDOR_CLIENT_SECRET set (the old ones stop working); ' +
        'to give narrower access, create another token with POST /tokens.',
      [{ field: 'tokenId', message: 'is the bootstrap token, which cannot be deleted' }],
    );
  }
  if (id === callerTokenId) throw errors.invalidInput('A token cannot delete itself; use another token with MANAGE');
  if (!(await deleteToken(u.trx, u.platform.id, id))) throw errors.tokenNotFound(id);
}

/** A token of this platform, or 404 TOKEN_NOT_FOUND. */
export async function getToken(db: Kysely<Database>, platformId: string, id: string): Promise<ApiTokenWire> {
  const row = await findToken(db, platformId, id);
  if (!row) throw errors.tokenNotFound(id);
  return tokenToWire(row);
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
