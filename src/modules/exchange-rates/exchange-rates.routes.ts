/** GET /exchange-rates: sandbox FX rates per corridor, with the platform's fees (cached ~5 minutes). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses } from '../../http/schemas.ts';
import { platformNowMs } from '../../lib/time.ts';
import { ExchangeRateListSchema, ExchangeRateQuery } from './exchange-rates.schemas.ts';
import { listExchangeRates } from './exchange-rates.service.ts';

const TAG = 'Exchange Rates';

export function exchangeRateRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/exchange-rates',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getExchangeRates',
          tags: [TAG],
          summary: 'Get exchange rates',
          description:
            'Rates from the source currency to each destination currency, priced for sendingAmount and including the ' +
            "platform's cross-currency fees. Rates change at most once per 5-minute window; updatedAt is the window start.",
          querystring: ExchangeRateQuery,
          response: { 200: ExchangeRateListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return { data: listExchangeRates(platform, req.query, platformNowMs(ctx.deps.clock, platform)) };
      },
    );
  };
}
