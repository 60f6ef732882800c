/**
 * The webhook delivery log (Corridor extension): list and inspect deliveries with every attempt,
 * replay one event now, and requeue everything that failed since a time.
 *
 * Both write through units of work. Recover requeues in one (`write`). A replay claims the event
 * in its unit and sends it over HTTP only after the unit commits (`writeThen`): a unit may be
 * retried and must not act outside the database; the deliverer records the attempt's outcome in a
 * transaction of its own.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { pageRequest, toWirePage } from '../../http/pagination.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses, Obj } from '../../http/schemas.ts';
import { ok, write, writeThen } from '../../http/write.ts';
import { normalizeDateTime } from '../../lib/time.ts';
import {
  DeliveryIdParams,
  DeliveryListQuery,
  DeliveryListSchema,
  RECOVER_IDS_LISTED,
  RecoverResultSchema,
  RecoverSchema,
  WebhookDeliveryDetailSchema,
} from './deliveries.schemas.ts';
import { getDelivery, listDeliveries } from './deliveries.service.ts';

const TAG = 'Webhooks';

export function deliveryRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/webhooks/deliveries',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listWebhookDeliveries',
          tags: [TAG],
          summary: 'List webhook deliveries, newest first (Corridor extension)',
          querystring: DeliveryListQuery,
          response: { 200: DeliveryListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(await listDeliveries(ctx.db, platformOf(req).platform, ctx.deps.clock, req.query, pageRequest(req.query))),
    );

    app.get(
      '/webhooks/deliveries/:webhookId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getWebhookDelivery',
          tags: [TAG],
          summary: "A webhook delivery with its event's data and every attempt (Corridor extension)",
          params: DeliveryIdParams,
          response: { 200: WebhookDeliveryDetailSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getDelivery(ctx.db, platformOf(req).platform, ctx.deps.clock, req.params.webhookId),
    );

    app.post(
      '/webhooks/deliveries/:webhookId/replay',
      {
        config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
        schema: {
          operationId: 'replayWebhookDelivery',
          tags: [TAG],
          summary: 'Send a webhook again now, under the same id, and return the delivery with this attempt (Corridor extension)',
          description:
            'Synchronous: the response is the delivery after the attempt, its result last in `attempts`. A failed replay retries ' +
            'on a fresh schedule (from 30 s). 409 while another attempt is in flight.',
          params: DeliveryIdParams,
          body: Obj({}),
          response: { 200: WebhookDeliveryDetailSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) =>
        writeThen(
          ctx,
          req,
          reply,
          (u) => ctx.webhooks.claimReplay(u.trx, u.platform, req.params.webhookId),
          async (claimed) => {
            await ctx.webhooks.deliver(claimed);
            return ok(await getDelivery(ctx.db, platformOf(req).platform, ctx.deps.clock, req.params.webhookId));
          },
        ),
    );

    app.post(
      '/webhooks/recover',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'recoverWebhookDeliveries',
          tags: [TAG],
          summary: 'Requeue every FAILED webhook created since a time; they are delivered in order (Corridor extension)',
          body: RecoverSchema,
          response: { 200: RecoverResultSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          const ids = await ctx.webhooks.recover(u.trx, u.platform, normalizeDateTime(req.body.since)!);
          return ok({ count: ids.length, ids: ids.slice(0, RECOVER_IDS_LISTED) });
        }),
    );
  };
}
