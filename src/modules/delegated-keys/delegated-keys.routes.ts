/**
 * Delegated keys (issue #22): GET/POST /auth/delegated-keys, GET/DELETE /auth/delegated-keys/{id}.
 * Create is a three-leg signed retry (202, 202, then 201); revoke takes no wallet signature.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses } from '../../http/schemas.ts';
import { walletSignatureOf } from '../../http/wallet-signature.ts';
import { accepted, created, noContent, write } from '../../http/write.ts';
import { SignatureHeaders } from '../auth/auth.schemas.ts';
import {
  DelegatedKeyCreateSchema,
  DelegatedKeyIdParams,
  DelegatedKeyListQuery,
  DelegatedKeyListSchema,
  DelegatedKeySchema,
  DelegatedKeySignedRequestChallengeSchema,
} from './delegated-keys.schemas.ts';
import { createDelegatedKey, getDelegatedKey, listDelegatedKeys, revokeDelegatedKey } from './delegated-keys.service.ts';

const TAG = 'Embedded Wallet Auth';
const REVOKED = { type: 'null', description: 'Revoked: the key can no longer sign' } as const;

export function delegatedKeyRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/auth/delegated-keys',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createDelegatedKey',
          tags: [TAG],
          summary: 'Create a delegated signing key for a card funded by an embedded wallet (three legs: 202, 202, then 201)',
          description:
            'Send the same body three times: without signature headers (202), then with a stamp over each payloadToSign by an ' +
            'active session of the wallet and its requestId as Request-Id (202, then 201 with the ACTIVE key). A funding source ' +
            'has at most one ACTIVE key (409 otherwise).',
          headers: SignatureHeaders,
          body: DelegatedKeyCreateSchema,
          response: {
            201: DelegatedKeySchema,
            202: DelegatedKeySignedRequestChallengeSchema,
            ...errorResponses(400, 401, 403, 404, 409),
          },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) => {
          const out = await createDelegatedKey(u, { signature, body: req.body });
          return out.kind === 'done' ? created(out.value) : accepted(out.challenge);
        });
      },
    );

    app.get(
      '/auth/delegated-keys',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listDelegatedKeys',
          tags: [TAG],
          summary: "List a wallet's or a card funding source's delegated keys, PENDING and REVOKED ones included",
          description: 'Give accountId, fundingSourceId or both; newest first.',
          querystring: DelegatedKeyListQuery,
          response: { 200: DelegatedKeyListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => ({ data: await listDelegatedKeys(ctx, platformOf(req).platform, req.query) }),
    );

    app.get(
      '/auth/delegated-keys/:id',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getDelegatedKeyById',
          tags: [TAG],
          summary: 'Get a delegated signing key',
          params: DelegatedKeyIdParams,
          response: { 200: DelegatedKeySchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getDelegatedKey(ctx, platformOf(req).platform, req.params.id),
    );

    app.delete(
      '/auth/delegated-keys/:id',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'revokeDelegatedKey',
          tags: [TAG],
          summary: 'Revoke an ACTIVE delegated signing key (no wallet signature)',
          params: DelegatedKeyIdParams,
          response: { 204: REVOKED, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          await revokeDelegatedKey(u, req.params.id);
          return noContent;
        }),
    );
  };
}
