/** GET /platform/internal-accounts: the platform's own holding accounts (not paginated). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses, Obj } from '../../http/schemas.ts';
import { listPlatformAccounts } from './internal-accounts.repo.ts';
import { InternalAccountSchema, PlatformInternalAccountsQuery } from './internal-accounts.schemas.ts';
import { internalAccountToWire } from './internal-accounts.service.ts';

export function internalAccountRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/platform/internal-accounts',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listPlatformInternalAccounts',
          tags: ['Internal Accounts'],
          summary: 'List the platform internal accounts',
          querystring: PlatformInternalAccountsQuery,
          response: {
            200: Obj({ data: Type.Array(InternalAccountSchema) }, { title: 'PlatformInternalAccountListResponse' }),
            ...errorResponses(400, 401, 403),
          },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const rows = await listPlatformAccounts(ctx.db, platform.id, req.query);
        return { data: rows.map((r) => internalAccountToWire(r, platform.name)) };
      },
    );
  };
}
