/** Unauthenticated operational routes: the front door (`GET /`) and health. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { API_VERSION, BASE_PATH } from '../../config.ts';
import type { AppContext } from '../../context.ts';
import { Obj } from '../../http/schemas.ts';
import { pingStore } from './system.repo.ts';

/** Where `GET /` points: the docs page, the OpenAPI document, the API's base and health. */
export const FRONT_DOOR = {
  name: 'Corridor',
  apiVersion: API_VERSION,
  docs: '/docs',
  openapi: `${BASE_PATH}/openapi.json`,
  api: BASE_PATH,
  health: '/healthz',
} as const;

export function healthRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    // `GET /`: a browser (it asks for HTML) is sent to the docs page; anything else (curl, a
    // script) gets a small JSON index of the same links. Not an API operation, so it stays out of
    // the OpenAPI document, like /docs itself.
    app.get('/', { config: { auth: 'none' }, schema: { hide: true } }, async (req, reply) => {
      const accept = req.headers.accept ?? '';
      if (/\btext\/html\b/i.test(accept)) return reply.code(302).header('location', FRONT_DOOR.docs).send();
      return reply.header('content-type', 'application/json; charset=utf-8').send(FRONT_DOOR);
    });

    app.get(
      '/healthz',
      {
        config: { auth: 'none' },
        schema: {
          operationId: 'health',
          tags: ['System'],
          summary: 'Liveness and store reachability',
          response: { 200: Obj({ status: Type.Literal('ok'), store: Type.String() }) },
        },
      },
      async () => ({ status: 'ok' as const, store: await pingStore(ctx.db) }),
    );
  };
}
