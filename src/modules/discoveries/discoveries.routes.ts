/** GET /discoveries: receiving institutions per country and currency. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../http/schemas.ts';
import { DiscoveryListSchema, DiscoveryQuery } from './discoveries.schemas.ts';
import { listDiscoveries } from './discoveries.service.ts';

const TAG = 'Discoveries';

export function discoveryRoutes(): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/discoveries',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getDiscoveries',
          tags: [TAG],
          summary: 'List receiving institutions',
          description: 'Banks and wallets that can receive payouts, filtered by country and currency; no filter lists all of them.',
          querystring: DiscoveryQuery,
          response: { 200: DiscoveryListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => ({ data: listDiscoveries(req.query) }),
    );
  };
}
