/**
 * Embedded Wallet Auth routes: /auth/credentials, /auth/sessions, and the signed wallet actions
 * on /internal-accounts/{id} (export, PATCH). Signed operations answer 202 with a challenge when
 * called without `Service-Wallet-Signature` / `Request-Id`, and do their effect on the signed retry.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { ApiError } from '../../http/errors.ts';
import { errorResponses, IdString, Obj } from '../../http/schemas.ts';
import { walletSignatureOf } from '../../http/wallet-signature.ts';
import { accepted, created, noContent, ok, write, type Outcome } from '../../http/write.ts';
import { runUnit } from '../../unit.ts';
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
import {
  challengeCredential,
  createCredential,
  listCredentials,
  recordFailedVerify,
  revokeCredential,
  verifyCredential,
} from './credentials.service.ts';
import { listSessions, refreshSession, revokeSession } from './sessions.service.ts';
import type { CredentialSigned, Signed } from './signed-retry.ts';
import { exportWallet, updateWallet } from './wallet-actions.service.ts';

const TAG = 'Embedded Wallet Auth';
const REVOKED = { type: 'null', description: 'Revoked' } as const;
const CredentialIdParams = Obj({ id: IdString('AuthMethod:019542f5-b3e7-7d02-8000-000000000001') });
const SessionIdParams = Obj({ id: IdString('Session:019542f5-b3e7-7d02-8000-000000000001') });
const AccountIdParams = Obj({ id: IdString('InternalAccount:019542f5-b3e7-7d02-8000-000000000001') });

/** A signed step's outcome on the wire: its challenge is a 202 (naming the credential type when it has one), its effect `done`. */
function signedOutcome<T>(out: Signed<T> | CredentialSigned<T>, done: (value: T) => Outcome): Outcome {
  if (out.kind === 'done') return done(out.value);
  return 'type' in out ? accepted({ ...out.challenge, type: out.type }) : accepted(out.challenge);
}

export function authRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/auth/credentials',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createAuthCredential',
          tags: [TAG],
          summary: 'Register a credential on an embedded wallet (the first directly; another through a signed retry)',
          headers: SignatureHeaders,
          body: CredentialCreateSchema,
          response: { 201: AuthMethodResponseSchema, 202: AuthSignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404, 501) },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) => signedOutcome(await createCredential(u, { signature, body: req.body }), created));
      },
    );

    app.get(
      '/auth/credentials',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listAuthCredentials',
          tags: [TAG],
          summary: "List an embedded wallet's credentials",
          querystring: AccountIdQuery,
          response: { 200: CredentialListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => ({ data: await listCredentials(ctx, platformOf(req).platform, req.query.accountId) }),
    );

    app.delete(
      '/auth/credentials/:id',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'revokeAuthCredential',
          tags: [TAG],
          summary: 'Revoke a credential (signed retry by a session of another credential on the wallet)',
          headers: SignatureHeaders,
          params: CredentialIdParams,
          response: { 202: AuthSignedRequestChallengeSchema, 204: REVOKED, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) =>
          signedOutcome(await revokeCredential(u, { signature, credentialId: req.params.id }), () => noContent),
        );
      },
    );

    app.post(
      '/auth/credentials/:id/challenge',
      {
        config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
        schema: {
          operationId: 'challengeAuthCredential',
          tags: [TAG],
          summary: 'Start a login: a fresh OTP target bundle, or a WebAuthn challenge bound to clientPublicKey',
          params: CredentialIdParams,
          body: ChallengeRequestSchema,
          response: { 200: ChallengeResponseSchema, ...errorResponses(400, 401, 403, 404, 429, 501) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) =>
          ok(await challengeCredential(u, { credentialId: req.params.id, clientPublicKey: req.body.clientPublicKey })),
        ),
    );

    app.post(
      '/auth/credentials/:id/verify',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'verifyAuthCredential',
          tags: [TAG],
          summary: 'Finish a login: OTP (202 then a signed retry by the TEK), OAUTH or PASSKEY → AuthSession',
          headers: SignatureHeaders,
          params: CredentialIdParams,
          body: CredentialVerifySchema,
          response: { 200: AuthSessionSchema, 202: AuthSignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404, 429, 501) },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        const credentialId = req.params.id;
        try {
          return await write(ctx, req, reply, async (u) =>
            signedOutcome(await verifyCredential(u, { signature, credentialId, body: req.body }), ok),
          );
        } catch (err) {
          // A failed verification counts toward the credential's limit. The verify's unit rolled
          // back with everything it wrote, so the attempt is written in a unit of its own.
          if (err instanceof ApiError && err.status === 401)
            await runUnit(ctx, platformOf(req).platform, (u) => recordFailedVerify(u, credentialId));
          throw err;
        }
      },
    );

    app.get(
      '/auth/sessions',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listAuthSessions',
          tags: [TAG],
          summary: "List an embedded wallet's active sessions",
          querystring: AccountIdQuery,
          response: { 200: SessionListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => ({ data: await listSessions(ctx, platformOf(req).platform, req.query.accountId) }),
    );

    app.delete(
      '/auth/sessions/:id',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'revokeAuthSession',
          tags: [TAG],
          summary: 'Revoke a session (signed retry by any active session of the wallet)',
          headers: SignatureHeaders,
          params: SessionIdParams,
          response: { 202: AuthSignedRequestChallengeSchema, 204: REVOKED, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) =>
          signedOutcome(await revokeSession(u, { signature, sessionId: req.params.id }), () => noContent),
        );
      },
    );

    app.post(
      '/auth/sessions/:id/refresh',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'refreshAuthSession',
          tags: [TAG],
          summary: 'Replace a session with a new one (signed retry by the session itself)',
          headers: SignatureHeaders,
          params: SessionIdParams,
          body: RefreshRequestSchema,
          response: { 201: AuthSessionSchema, 202: SignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) =>
          signedOutcome(
            await refreshSession(u, { signature, sessionId: req.params.id, clientPublicKey: req.body.clientPublicKey }),
            created,
          ),
        );
      },
    );

    app.post(
      '/internal-accounts/:id/export',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'exportInternalAccount',
          tags: ['Internal Accounts'],
          summary: "Export an embedded wallet's credentials, sealed to clientPublicKey (signed retry)",
          headers: SignatureHeaders,
          params: AccountIdParams,
          body: ExportRequestSchema,
          response: { 200: ExportResponseSchema, 202: SignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) =>
          signedOutcome(await exportWallet(u, { signature, accountId: req.params.id, clientPublicKey: req.body.clientPublicKey }), ok),
        );
      },
    );

    app.patch(
      '/internal-accounts/:id',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'updateInternalAccount',
          tags: ['Internal Accounts'],
          summary: "Update an embedded wallet's privacy setting (signed retry)",
          headers: SignatureHeaders,
          params: AccountIdParams,
          body: AccountUpdateSchema,
          response: { 200: InternalAccountSchema, 202: SignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) =>
          signedOutcome(await updateWallet(u, { signature, accountId: req.params.id, body: req.body }), ok),
        );
      },
    );
  };
}
