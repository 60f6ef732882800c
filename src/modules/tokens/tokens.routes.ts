/** API tokens: POST/GET /tokens, GET/DELETE /tokens/{tokenId}. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { errorResponses } from '../../http/schemas.ts';
import { created, noContent, write } from '../../http/write.ts';
import { normalizeDateTime } from '../../lib/time.ts';
import { listTokens } from './tokens.repo.ts';
import { ApiTokenCreateSchema, ApiTokenSchema, TokenIdParams, TokenListQuery, TokenListSchema } from './tokens.schemas.ts';
import { createToken, getToken, revokeToken, tokenToWire } from './tokens.service.ts';

const TAG = 'API Tokens';

export function tokenRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/tokens',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createToken',
          tags: [TAG],
          summary: 'Create an API token (its secret is shown once)',
          body: ApiTokenCreateSchema,
          response: { 201: ApiTokenSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const { permissions } = platformOf(req);
        return write(ctx, req, reply, async (u) => created(await createToken(u, req.body, permissions)));
      },
    );

    app.get(
      '/tokens',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listTokens',
          tags: [TAG],
          summary: 'List API tokens',
          querystring: TokenListQuery,
          response: { 200: TokenListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const q = req.query;
        const limit = q.limit ?? 20;
        const { rows, totalCount } = await listTokens(
          ctx.db,
          platform.id,
          {
            name: q.name,
            createdAfter: normalizeDateTime(q.createdAfter),
            createdBefore: normalizeDateTime(q.createdBefore),
            updatedAfter: normalizeDateTime(q.updatedAfter),
            updatedBefore: normalizeDateTime(q.updatedBefore),
          },
          limit,
          decodeCursor(q.cursor),
        );
        return toPage(rows, limit, totalCount, (r) => tokenToWire(r));
      },
    );

    app.get(
      '/tokens/:tokenId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getTokenById',
          tags: [TAG],
          summary: 'Get an API token',
          params: TokenIdParams,
          response: { 200: ApiTokenSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getToken(ctx.db, platformOf(req).platform.id, req.params.tokenId),
    );

    app.delete(
      '/tokens/:tokenId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'deleteTokenById',
          tags: [TAG],
          summary: 'Delete (revoke) an API token',
          params: TokenIdParams,
          response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { token } = platformOf(req);
        return write(ctx, req, reply, async (u) => {
          await revokeToken(u, req.params.tokenId, token.id);
          return noContent;
        });
      },
    );
  };
}
