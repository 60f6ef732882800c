/**
 * Authentication and authorisation, run in `onRequest` so that a caller without access learns
 * nothing about the body it sent. Each route declares `config.auth` (who may call it) and, for
 * platform routes, `config.permission` (which API-token permission it needs).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiTokenRow, PlatformRow } from '../store/schema.ts';
import type { AuthCache } from './auth-cache.ts';
import { ApiError, errors } from './errors.ts';

export type Permission = 'VIEW' | 'TRANSACT' | 'MANAGE';
export const PERMISSIONS: readonly Permission[] = ['VIEW', 'TRANSACT', 'MANAGE'];

/** none: public; platform: Basic auth with an API token; admin: Bearer CORRIDOR_ADMIN_TOKEN. */
export type AuthKind = 'none' | 'platform' | 'admin';

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
  }
  interface FastifyRequest {
    platformAuth: PlatformAuth | null;
  }
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

export function installAuth(app: FastifyInstance, tokens: TokenLookup, adminToken: string | undefined, cache?: AuthCache): void {
  app.decorateRequest('platformAuth', null);
  // Callback style with a synchronous path: public routes and cached credentials cost no promise.
  app.addHook('onRequest', (req, _reply, done) => {
    const cfg = req.routeOptions.config;
    const kind = cfg?.auth ?? 'none';
    try {
      if (kind === 'admin') authenticateAdmin(req, adminToken);
      if (kind !== 'platform') return done();
      const hit = cachedPlatformAuth(req, cache);
      if (hit) return done(authorize(req, hit));
      authenticatePlatform(req, tokens, cache).then((auth) => done(authorize(req, auth)), done);
    } catch (err) {
      done(err as Error);
    }
  });
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
  const auth: PlatformAuth = { platform: found.platform, token: found.token, permissions: JSON.parse(found.token.permissions) as Permission[] };
  cache?.set(header!, seenEpoch, auth);
  return auth;
}

function authenticateAdmin(req: FastifyRequest, adminToken: string | undefined): void {
  if (adminToken === undefined) {
    throw new ApiError(404, 'NOT_FOUND', 'The admin API is disabled; set CORRIDOR_ADMIN_TOKEN to enable it');
  }
  const m = /^Bearer (\S{1,512})$/.exec(req.headers.authorization ?? '');
  if (!m || !safeEqual(m[1]!, adminToken)) {
    throw new ApiError(401, 'UNAUTHORIZED', 'Missing or invalid admin token', undefined, { 'WWW-Authenticate': 'Bearer' });
  }
}

/** The authenticated platform of a platform route (the hook guarantees it is set). */
export function platformOf(req: FastifyRequest): PlatformAuth {
  if (!req.platformAuth) throw new Error('platform route without platform auth');
  return req.platformAuth;
}
