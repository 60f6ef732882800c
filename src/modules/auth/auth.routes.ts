/**
 * Embedded Wallet Auth routes: /auth/credentials, /auth/sessions, and the signed wallet actions
 * on /internal-accounts/{id} (export, PATCH). Signed operations answer 202 with a challenge when
 * called without `Service-Wallet-Signature` / `Request-Id`, and do their effect on the signed retry.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { ApiError } from '../../http/errors.ts';
import { errorResponses, IdString, Obj } from '../../http/schemas.ts';
import { retryOnConflict } from '../../store/retry.ts';
import type { Database } from '../../store/schema.ts';
import { InternalAccountSchema } from '../internal-accounts/internal-accounts.schemas.ts';
import {
  AccountIdQuery,
  AccountUpdateSchema,
  AuthMethodResponseSchema,
  AuthSessionSchema,
  AuthSignedRequestChallengeSchema,
  ChallengeRequestSchema,
  ChallengeResponseSchema,
  CredentialCreateSchema,
  CredentialListSchema,
  CredentialVerifySchema,
  ExportRequestSchema,
  ExportResponseSchema,
  RefreshRequestSchema,
  SessionListSchema,
  SignatureHeaders,
  SignedRequestChallengeSchema,
} from './auth.schemas.ts';
import { challengeCredential, createCredential, listCredentials, revokeCredential, verifyCredential } from './credentials.service.ts';
import { RATE_LIMITS, recordAttempt } from './rate-limit.ts';
import { listSessions, refreshSession, revokeSession } from './sessions.service.ts';
import { exportWallet, updateWallet } from './wallet-actions.service.ts';

const TAG = 'Embedded Wallet Auth';
const REVOKED = { type: 'null', description: 'Revoked' } as const;
const security = [{ BasicAuth: [] }];
const CredentialIdParams = Obj({ id: IdString('AuthMethod:019542f5-b3e7-7d02-8000-000000000001') });
const SessionIdParams = Obj({ id: IdString('Session:019542f5-b3e7-7d02-8000-000000000001') });
const AccountIdParams = Obj({ id: IdString('InternalAccount:019542f5-b3e7-7d02-8000-000000000001') });

export function authRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const tx = <T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> => retryOnConflict(() => ctx.db.transaction().execute(fn));

  return async (app) => {
    app.post(
      '/auth/credentials',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createAuthCredential', tags: [TAG], security,
          summary: 'Register a credential on an embedded wallet (the first directly; another through a signed retry)',
          headers: SignatureHeaders,
          body: CredentialCreateSchema,
          response: { 201: AuthMethodResponseSchema, 202: AuthSignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404, 501) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        const out = await tx((trx) => createCredential(trx, ctx, platform, req, req.body));
        return reply.code(out.status).send(out.body);
      },
    );

    app.get(
      '/auth/credentials',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listAuthCredentials', tags: [TAG], security, summary: "List an embedded wallet's credentials",
          querystring: AccountIdQuery,
          response: { 200: CredentialListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => ({ data: await listCredentials(ctx.db, platformOf(req).platform.id, req.query.accountId) }),
    );

    app.delete(
      '/auth/credentials/:id',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'revokeAuthCredential', tags: [TAG], security,
          summary: 'Revoke a credential (signed retry by a session of another credential on the wallet)',
          headers: SignatureHeaders,
          params: CredentialIdParams,
          response: { 202: AuthSignedRequestChallengeSchema, 204: REVOKED, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        const out = await tx((trx) => revokeCredential(trx, ctx, platform, req, req.params.id));
        return out.status === 204 ? reply.code(204).send() : reply.code(202).send(out.body);
      },
    );

    app.post(
      '/auth/credentials/:id/challenge',
      {
        config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
        schema: {
          operationId: 'challengeAuthCredential', tags: [TAG], security,
          summary: 'Start a login: a fresh OTP target bundle, or a WebAuthn challenge bound to clientPublicKey',
          params: CredentialIdParams,
          body: ChallengeRequestSchema,
          response: { 200: ChallengeResponseSchema, ...errorResponses(400, 401, 403, 404, 429, 501) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return tx((trx) => challengeCredential(trx, ctx, platform, req.params.id, req.body.clientPublicKey));
      },
    );

    app.post(
      '/auth/credentials/:id/verify',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'verifyAuthCredential', tags: [TAG], security,
          summary: 'Finish a login: OTP (202 then a signed retry by the TEK), OAUTH or PASSKEY → AuthSession',
          headers: SignatureHeaders,
          params: CredentialIdParams,
          body: CredentialVerifySchema,
          response: { 200: AuthSessionSchema, 202: AuthSignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404, 429, 501) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        try {
          const out = await tx((trx) => verifyCredential(trx, ctx, platform, req, req.params.id, req.body));
          return reply.code(out.status).send(out.body);
        } catch (err) {
          // A failed verification counts toward the credential's limit; its transaction rolled back,
          // so the attempt is written on its own.
          if (err instanceof ApiError && err.status === 401) {
            const cred = await ctx.db.selectFrom('auth_credentials').select('id').where('platform_id', '=', platform.id).where('id', '=', req.params.id).executeTakeFirst();
            if (cred) await recordAttempt(ctx.db, ctx, platform.id, cred.id, RATE_LIMITS.failedVerify.kind);
          }
          throw err;
        }
      },
    );

    app.get(
      '/auth/sessions',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listAuthSessions', tags: [TAG], security, summary: "List an embedded wallet's active sessions",
          querystring: AccountIdQuery,
          response: { 200: SessionListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return { data: await listSessions(ctx.db, ctx, platform, req.query.accountId) };
      },
    );

    app.delete(
      '/auth/sessions/:id',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'revokeAuthSession', tags: [TAG], security, summary: 'Revoke a session (signed retry by any active session of the wallet)',
          headers: SignatureHeaders,
          params: SessionIdParams,
          response: { 202: AuthSignedRequestChallengeSchema, 204: REVOKED, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        const out = await tx((trx) => revokeSession(trx, ctx, platform, req, req.params.id));
        return out.status === 204 ? reply.code(204).send() : reply.code(202).send(out.body);
      },
    );

    app.post(
      '/auth/sessions/:id/refresh',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'refreshAuthSession', tags: [TAG], security, summary: 'Replace a session with a new one (signed retry by the session itself)',
          headers: SignatureHeaders,
          params: SessionIdParams,
          body: RefreshRequestSchema,
          response: { 201: AuthSessionSchema, 202: SignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        const out = await tx((trx) => refreshSession(trx, ctx, platform, req, req.params.id, req.body.clientPublicKey));
        return reply.code(out.status).send(out.body);
      },
    );

    app.post(
      '/internal-accounts/:id/export',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'exportInternalAccount', tags: ['Internal Accounts'], security,
          summary: "Export an embedded wallet's credentials, sealed to clientPublicKey (signed retry)",
          headers: SignatureHeaders,
          params: AccountIdParams,
          body: ExportRequestSchema,
          response: { 200: ExportResponseSchema, 202: SignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        const out = await tx((trx) => exportWallet(trx, ctx, platform, req, req.params.id, req.body.clientPublicKey));
        return reply.code(out.status).send(out.body);
      },
    );

    app.patch(
      '/internal-accounts/:id',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'updateInternalAccount', tags: ['Internal Accounts'], security,
          summary: "Update an embedded wallet's privacy setting (signed retry)",
          headers: SignatureHeaders,
          params: AccountIdParams,
          body: AccountUpdateSchema,
          response: { 200: InternalAccountSchema, 202: SignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        const out = await tx((trx) => updateWallet(trx, ctx, platform, req, req.params.id, req.body));
        return reply.code(out.status).send(out.body);
      },
    );
  };
}
