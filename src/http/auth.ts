/**
 * Authentication and authorisation, run in `onRequest` so that a caller without access learns
 * nothing about the body it sent. Each route declares `config.auth` (who may call it) and, for
 * platform routes, `config.permission` (which API-token permission it needs).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyContextConfig, FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import type { ApiTokenRow, PlatformRow } from '../store/schema.ts';
import type { AgentRow } from '../store/schema-agents.ts';
import type { AuthCache } from './auth-cache.ts';
import { errors } from './errors.ts';

export type Permission = 'VIEW' | 'TRANSACT' | 'MANAGE';
export const PERMISSIONS: readonly Permission[] = ['VIEW', 'TRANSACT', 'MANAGE'];

/**
 * none: public; platform: Basic auth with an API token; admin: Bearer CORRIDOR_ADMIN_TOKEN;
 * agent: Bearer access token of an agent (from redeeming its device code).
 */
export type AuthKind = 'none' | 'platform' | 'admin' | 'agent';

export interface PlatformAuth {
  platform: PlatformRow;
  token: ApiTokenRow;
  permissions: Permission[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthKind;
    permission?: Permission;
    /** The body may be omitted entirely (no Content-Type): it is then validated as `{}`. */
    optionalBody?: boolean;
    /** The path carries a secret (an agent device code): the request log shows the route pattern instead. */
    secretInPath?: boolean;
  }
  interface FastifyRequest {
    platformAuth: PlatformAuth | null;
    agentAuth: AgentAuth | null;
  }
}

/** The caller of an agent route: the agent (not deleted) and its platform, read fresh per request. */
export interface AgentAuth {
  agent: AgentRow;
  platform: PlatformRow;
}

export interface AgentLookup {
  /** The live agent whose access token hashes to `tokenHash`, with its platform, or undefined. */
  findByTokenHash(tokenHash: string): Promise<AgentAuth | undefined>;
}

export interface TokenLookup {
  /** The token with this clientId and its platform, or undefined. */
  findByClientId(clientId: string): Promise<{ token: ApiTokenRow; platform: PlatformRow } | undefined>;
}

/** SHA-256 hex of a secret; secrets are high-entropy random strings, so a fast hash suffices. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests (or any two strings of possibly different length). */
export function safeEqual(a: string, b: string): boolean {
  const ab = createHash('sha256').update(a).digest();
  const bb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ab, bb);
}

// Compared against when the clientId is unknown, so both paths do the same work.
const DUMMY_HASH = hashSecret('corridor-dummy-secret');

/** Parses `Authorization: Basic base64(id:secret)`; undefined when absent or malformed. */
export function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  if (!header) return undefined;
  const m = /^Basic ([A-Za-z0-9+/=]{1,1024})$/i.exec(header.trim());
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i <= 0 || i === decoded.length - 1) return undefined;
  return { id: decoded.slice(0, i), secret: decoded.slice(i + 1) };
}

/** The OpenAPI security requirement of each kind of route, derived from its declaration. */
const SECURITY: Record<AuthKind, { [scheme: string]: string[] }[]> = {
  none: [],
  platform: [{ BasicAuth: [] }],
  admin: [{ AdminAuth: [] }],
  agent: [{ AgentAuth: [] }],
};

/** Swagger UI's own pages and assets (registered by the plugin, which declares no auth): public. */
const DOCS_PREFIX = '/docs';

/**
 * The OpenAPI operation extension naming the API-token permission a platform operation needs, from
 * its `config.permission`: a token without it is answered 403 FORBIDDEN before the request is
 * validated. Published so that clients (and the permission tests) read it from the document.
 */
export const REQUIRED_PERMISSION = 'x-required-permission';

/** What the operation's description says about its permission (once, however often the app is built). */
function permissionNote(permission: Permission): string {
  return `Needs an API token holding the ${permission} permission (\`${REQUIRED_PERMISSION}\`); another token is answered 403 FORBIDDEN.`;
}

/**
 * Fails closed: a route that does not declare `config.auth` is refused when it is registered (the
 * server does not start), instead of being public by default. Swagger UI's pages are the one
 * exception (public). A documented operation's OpenAPI `security` is derived from the declaration,
 * and so is the permission it publishes (`x-required-permission`, and a sentence of its description).
 */
function declaredAuth(route: RouteOptions): void {
  const config = (route.config ?? {}) as FastifyContextConfig;
  if (config.auth === undefined) {
    if (route.url === DOCS_PREFIX || route.url.startsWith(`${DOCS_PREFIX}/`)) {
      route.config = { ...config, auth: 'none' };
      return;
    }
    throw new Error(`route ${String(route.method)} ${route.url} declares no auth (config.auth): every route must say who may call it`);
  }
  const schema = route.schema as
    | { operationId?: string; security?: unknown; description?: string; [REQUIRED_PERMISSION]?: Permission }
    | undefined;
  if (schema?.operationId === undefined) return;
  schema.security = SECURITY[config.auth];
  if (config.auth === 'platform' && config.permission !== undefined) {
    schema[REQUIRED_PERMISSION] = config.permission;
    const note = permissionNote(config.permission);
    if (!schema.description?.includes(note)) schema.description = schema.description ? `${schema.description}\n\n${note}` : note;
  }
}

export function installAuth(
  app: FastifyInstance,
  tokens: TokenLookup,
  adminToken: string | undefined,
  cache?: AuthCache,
  agents?: AgentLookup,
  operator?: OperatorLookup,
): void {
  app.addHook('onRoute', declaredAuth);
  app.decorateRequest('platformAuth', null);
  app.decorateRequest('agentAuth', null);
  // Callback style with a synchronous path: public routes and cached credentials cost no promise.
  app.addHook('onRequest', (req, _reply, done) => {
    // Every route declares its auth (checked at registration: declaredAuth).
    const kind = req.routeOptions.config.auth;
    try {
      if (kind === 'admin') authenticateAdmin(req, adminToken);
      if (kind === 'agent') return void authenticateAgent(req, agents).then(() => done(), done);
      if (kind !== 'platform') return done();
      // Operator mode (the dashboard): checked before the cache, which is keyed by the Authorization header alone.
      if (req.headers[OPERATOR_PLATFORM_HEADER] !== undefined)
        return void authenticateOperator(req, adminToken, operator).then((auth) => done(authorize(req, auth)), done);
      const hit = cachedPlatformAuth(req, cache);
      if (hit) return done(authorize(req, hit));
      authenticatePlatform(req, tokens, cache).then((auth) => done(authorize(req, auth)), done);
    } catch (err) {
      done(err as Error);
    }
  });
}

export interface OperatorLookup {
  /** The platform with this id, or undefined. */
  findPlatform(id: string): Promise<PlatformRow | undefined>;
}

/** The header naming the platform an operator (admin bearer) acts on, on platform routes. */
export const OPERATOR_PLATFORM_HEADER = 'x-corridor-platform';

/**
 * Operator mode: `Authorization: Bearer <CORRIDOR_ADMIN_TOKEN>` plus `X-Corridor-Platform: <id>` on a
 * platform route acts as that platform — every permission on a SANDBOX platform, VIEW only on a
 * PRODUCTION one (the operator reads production data, but moves no money there). The header with
 * any other credential is refused (403), so no API token reaches beyond its own platform. The
 * result is never cached: the cache is keyed by the Authorization header, which names no platform.
 */
async function authenticateOperator(
  req: FastifyRequest,
  adminToken: string | undefined,
  operator: OperatorLookup | undefined,
): Promise<PlatformAuth> {
  const header = req.headers.authorization ?? '';
  if (header === '') throw errors.unauthorized();
  if (!/^Bearer /i.test(header)) throw errors.forbidden('X-Corridor-Platform is accepted only with the operator (admin) token');
  authenticateAdmin(req, adminToken);
  const id = req.headers[OPERATOR_PLATFORM_HEADER];
  const found = typeof id === 'string' && id.length <= 200 && operator ? await operator.findPlatform(id) : undefined;
  if (!found) throw errors.notFound('Platform', typeof id === 'string' ? id.slice(0, 200) : '');
  const permissions: Permission[] = found.environment === 'SANDBOX' ? [...PERMISSIONS] : ['VIEW'];
  const token: ApiTokenRow = {
    id: 'Operator',
    platform_id: found.id,
    name: 'operator (CORRIDOR_ADMIN_TOKEN)',
    client_id: '',
    secret_hash: '',
    permissions: JSON.stringify(permissions),
    is_bootstrap: 0,
    created_at: found.created_at,
    updated_at: found.updated_at,
  };
  return { platform: found, token, permissions };
}

/** Records the caller and checks the route's permission; returns the error to fail with, if any. */
function authorize(req: FastifyRequest, auth: PlatformAuth): Error | undefined {
  req.platformAuth = auth;
  const need = req.routeOptions.config?.permission;
  if (need && !auth.permissions.includes(need)) return errors.forbidden(`This API token lacks the ${need} permission`);
  return undefined;
}

function cachedPlatformAuth(req: FastifyRequest, cache: AuthCache | undefined): PlatformAuth | undefined {
  const header = req.headers.authorization;
  const hit = header !== undefined ? cache?.get(header) : undefined;
  return hit ? { platform: hit.platform, token: hit.token, permissions: hit.permissions as Permission[] } : undefined;
}

async function authenticatePlatform(req: FastifyRequest, tokens: TokenLookup, cache: AuthCache | undefined): Promise<PlatformAuth> {
  const header = req.headers.authorization;
  const seenEpoch = cache?.epoch() ?? 0;
  const creds = parseBasic(header);
  if (!creds) throw errors.unauthorized();
  const found = creds.id.length <= 128 ? await tokens.findByClientId(creds.id) : undefined;
  // Both sides are 32-byte SHA-256 digests, so a direct constant-time comparison is exact.
  const ok = timingSafeEqual(Buffer.from(hashSecret(creds.secret), 'hex'), Buffer.from(found?.token.secret_hash ?? DUMMY_HASH, 'hex'));
  if (!found || !ok) throw errors.unauthorized('Invalid API token id or client secret');
  const auth: PlatformAuth = {
    platform: found.platform,
    token: found.token,
    permissions: JSON.parse(found.token.permissions) as Permission[],
  };
  cache?.set(header!, seenEpoch, auth);
  return auth;
}

function authenticateAdmin(req: FastifyRequest, adminToken: string | undefined): void {
  if (adminToken === undefined) {
    throw errors.adminDisabled();
  }
  const m = /^Bearer (\S{1,512})$/.exec(req.headers.authorization ?? '');
  if (!m || !safeEqual(m[1]!, adminToken)) {
    throw errors.adminUnauthorized();
  }
}

/**
 * `Authorization: Bearer <accessToken>`. Only the token's SHA-256 is stored and looked up (an
 * index probe on a digest of a 160-bit random secret leaks nothing usable about the token), and
 * the agent is read on every request, so deleting it revokes the token at once. Basic platform
 * credentials are not accepted here.
 */
async function authenticateAgent(req: FastifyRequest, agents: AgentLookup | undefined): Promise<void> {
  const m = /^Bearer (\S{1,512})$/.exec(req.headers.authorization ?? '');
  const found = m && agents ? await agents.findByTokenHash(hashSecret(m[1]!)) : undefined;
  if (!found) throw errors.agentUnauthorized();
  req.agentAuth = found;
}

/** The authenticated agent of an agent route (the hook guarantees it is set). */
export function agentOf(req: FastifyRequest): AgentAuth {
  if (!req.agentAuth) throw new Error('agent route without agent auth');
  return req.agentAuth;
}

/** The authenticated platform of a platform route (the hook guarantees it is set). */
export function platformOf(req: FastifyRequest): PlatformAuth {
  if (!req.platformAuth) throw new Error('platform route without platform auth');
  return req.platformAuth;
}
