/** API tokens: POST/GET /tokens, GET/DELETE /tokens/{tokenId}. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { errorResponses } from '../../http/schemas.ts';
import { iso, normalizeDateTime, platformNowMs } from '../../lib/time.ts';
import { deleteToken, findToken, listTokens } from './tokens.repo.ts';
import { ApiTokenCreateSchema, ApiTokenSchema, TokenIdParams, TokenListQuery, TokenListSchema } from './tokens.schemas.ts';
import { createToken, tokenToWire } from './tokens.service.ts';

const TAG = 'API Tokens';
const security = [{ BasicAuth: [] }];

export function tokenRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/tokens',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'createToken', tags: [TAG], summary: 'Create an API token (its secret is shown once)', security,
          body: ApiTokenCreateSchema,
          response: { 201: ApiTokenSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        const at = iso(platformNowMs(ctx.deps.clock, platform));
        const { row, secret } = await createToken(ctx.db, ctx.deps, { platformId: platform.id, name: req.body.name, permissions: req.body.permissions, at });
        return reply.code(201).send(tokenToWire(row, secret));
      },
    );

    app.get(
      '/tokens',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listTokens', tags: [TAG], summary: 'List API tokens', security,
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
          operationId: 'getTokenById', tags: [TAG], summary: 'Get an API token', security,
          params: TokenIdParams,
          response: { 200: ApiTokenSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const row = await findToken(ctx.db, platform.id, req.params.tokenId);
        if (!row) throw errors.tokenNotFound(req.params.tokenId);
        return tokenToWire(row);
      },
    );

    app.delete(
      '/tokens/:tokenId',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'deleteTokenById', tags: [TAG], summary: 'Delete (revoke) an API token', security,
          params: TokenIdParams,
          response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => {
        const { platform, token } = platformOf(req);
        if (req.params.tokenId === token.id) {
          throw errors.invalidInput('A token cannot delete itself; use another token with MANAGE');
        }
        if (!(await deleteToken(ctx.db, platform.id, req.params.tokenId))) throw errors.tokenNotFound(req.params.tokenId);
        return reply.code(204).send();
      },
    );
  };
}
