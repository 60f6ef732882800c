/** Unauthenticated operational routes: health and the OpenAPI document. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { Obj } from '../../http/schemas.ts';

export function healthRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/healthz',
      {
        config: { auth: 'none' },
        schema: {
          operationId: 'health', tags: ['System'], summary: 'Liveness and store reachability', security: [],
          response: { 200: Obj({ status: Type.Literal('ok'), store: Type.String() }) },
        },
      },
      async () => {
        await ctx.db.selectFrom('platforms').select('id').limit(1).execute();
        return { status: 'ok' as const, store: ctx.store.kind };
      },
    );
  };
}
