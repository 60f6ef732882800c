/** `POST /sandbox/trigger` (Corridor extension; sandbox platforms only, as every /sandbox route). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import { errorResponses, Obj } from '../../http/schemas.ts';
import { isWebhookType, WEBHOOK_TYPES } from '../../webhook-delivery/catalogue.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { needsTransact } from './devtools.errors.ts';
import { RECIPES, recipeFor, triggerMovesMoney } from './trigger.recipes.ts';
import { triggerEvent } from './trigger.service.ts';

const Id = Type.String({ minLength: 1 });

export const TriggerRequestSchema = Obj(
  {
    eventType: Type.String({
      minLength: 1,
      maxLength: 100,
      description: `A webhook event type. Triggerable: ${Object.keys(RECIPES).join(', ')}`,
      examples: ['OUTGOING_PAYMENT.FAILED'],
    }),
  },
  { title: 'SandboxTriggerRequest' },
);

export const TriggerResponseSchema = Obj(
  {
    eventType: Type.String(),
    event: Obj({
      id: Type.String({ description: 'The webhook id (Webhook:…), as the receiver sees it' }),
      type: Type.String(),
      resourceId: Type.String({ description: 'The resource the event is about' }),
    }),
    created: Obj(
      {
        customerId: Type.Optional(Id),
        internalAccountId: Type.Optional(Id),
        externalAccountId: Type.Optional(Id),
        quoteId: Type.Optional(Id),
        transactionId: Type.Optional(Id),
        verificationId: Type.Optional(Id),
        cardId: Type.Optional(Id),
        cardTransactionId: Type.Optional(Id),
        agentId: Type.Optional(Id),
        agentActionId: Type.Optional(Id),
        invitationCode: Type.Optional(Id),
        bulkUploadJobId: Type.Optional(Id),
      },
      { description: 'What the trigger created to make the event happen' },
    ),
    clockAdvancedSeconds: Type.Integer({
      description: "How far the platform's sandbox clock was moved (an expiry needs time to pass); 0 for most events",
    }),
  },
  { title: 'SandboxTriggerResponse' },
);

export function triggerRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/sandbox/trigger',
      {
        // Every recipe creates a customer or an account (MANAGE's); most also fund or pay (TRANSACT as well, checked below).
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'sandboxTriggerEvent',
          tags: ['Sandbox'],
          summary: 'Make a webhook event happen for real: create what it needs and run it (Corridor extension)',
          description:
            'Creates the objects the event needs (a customer, accounts, funding, a quote with the sandbox magic value that steers ' +
            'its outcome, a business submitted for KYB, a card and its issuer messages, an agent action …) through the same code ' +
            'as the API, then runs what became due, so the event has been emitted and sent to the webhook endpoint when this ' +
            'answers. OUTGOING_PAYMENT.EXPIRED moves the sandbox clock 5 minutes. ' +
            'An event type outside the catalogue, or one with no recipe, is a 400 naming the triggerable ones. ' +
            'An event whose recipe funds an account or moves money (payments, cards, balances, agent actions) needs TRANSACT as well ' +
            '(403 FORBIDDEN, details.missing); the customer, KYC/KYB, verification, invitation, bulk upload and external account events do not.',
          body: TriggerRequestSchema,
          response: { 200: TriggerResponseSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        if (!isSandbox(platform)) throw errors.sandboxOnly();
        const { eventType } = req.body;
        if (!isWebhookType(eventType)) {
          throw errors.coded(400, 'INVALID_INPUT', `Unknown event type ${eventType}`, {
            errors: [
              {
                field: 'eventType',
                message: `unknown event type; the catalogue has ${WEBHOOK_TYPES.length} types (GET /openapi.json, webhooks)`,
              },
            ],
          });
        }
        // The recipe is looked up first, so an untriggerable type is a 400 whatever the token holds.
        recipeFor(eventType);
        if (triggerMovesMoney(eventType) && !platformOf(req).permissions.includes('TRANSACT')) throw needsTransact(eventType);
        return triggerEvent(ctx, platform, eventType);
      },
    );
  };
}
