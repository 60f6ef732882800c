/** Wire schemas of the webhook delivery log (a Corridor extension beyond the live API). */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';

const EXAMPLE_ID = 'Webhook:019542f5-b3e7-7d02-8000-000000000001';

export const DeliveryStatusSchema = Type.Union(
  [Type.Literal('PENDING'), Type.Literal('DELIVERING'), Type.Literal('DELIVERED'), Type.Literal('FAILED')],
  {
    description: 'PENDING: due or waiting to retry; DELIVERING: an attempt is in flight; DELIVERED: a 2xx answer; FAILED: no more retries',
  },
);

const deliveryFields = {
  id: Type.String({ description: 'The envelope id receivers de-duplicate on', examples: [EXAMPLE_ID] }),
  type: Type.String({ description: 'The event type', examples: ['INCOMING_PAYMENT.PENDING'] }),
  resourceId: Type.String({ description: 'The resource the event is about; its events are delivered in order' }),
  status: DeliveryStatusSchema,
  createdAt: DateTime,
  attemptCount: Type.Integer({ minimum: 0, description: 'Attempts made so far, replays included' }),
  lastAttemptAt: Type.Optional(DateTime),
  lastResponseStatus: Type.Optional(Type.Integer({ description: "The last attempt's HTTP status; absent when it got no response" })),
  lastError: Type.Optional(Type.String({ description: 'Why the last attempt got no usable response (network error, timeout, redirect)' })),
  nextAttemptAt: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'PENDING events of a platform with an endpoint: when the next attempt is due (platform clock)',
    }),
  ),
};

export const WebhookDeliverySchema = Obj(deliveryFields, { title: 'WebhookDelivery' });

export const WebhookAttemptSchema = Obj(
  {
    attempt: Type.Integer({ minimum: 1, description: 'Numbered from 1 across all attempts, replays included' }),
    at: DateTime,
    url: Type.String(),
    responseStatus: Type.Optional(Type.Integer({ description: 'Absent when no response arrived' })),
    latencyMs: Type.Integer({ minimum: 0 }),
    responseBody: Type.Optional(
      Type.String({
        description: 'The first 4 KiB of the response body (SANDBOX platforms only: never kept or shown for PRODUCTION ones)',
      }),
    ),
    error: Type.Optional(Type.String({ description: 'Network error, timeout or redirect, when the attempt had no usable response' })),
  },
  { title: 'WebhookAttempt' },
);

export const WebhookDeliveryDetailSchema = Obj(
  {
    ...deliveryFields,
    data: Type.Object(
      {},
      { additionalProperties: true, description: "The envelope's data: the resource as it was when the event was written" },
    ),
    attempts: Type.Array(WebhookAttemptSchema, { description: 'Every attempt, oldest first' }),
  },
  { title: 'WebhookDeliveryDetail' },
);

export const DeliveryListQuery = Obj({
  type: Type.Optional(
    Type.String({
      pattern: '^[A-Z_]+(\\.[A-Z_]+)?$',
      maxLength: 100,
      description: 'Only events of this type',
      examples: ['OUTGOING_PAYMENT.COMPLETED'],
    }),
  ),
  status: Type.Optional(DeliveryStatusSchema),
  resourceId: Type.Optional(IdString('Transaction:019542f5-b3e7-7d02-8000-000000000001')),
  ...PageQueryFields,
});

export const DeliveryIdParams = Obj({ webhookId: IdString(EXAMPLE_ID) });

export const DeliveryListSchema = Page(WebhookDeliverySchema, 'WebhookDeliveryListResponse');

export const RecoverSchema = Obj(
  { since: Type.String({ format: 'date-time', description: 'Requeue FAILED events created at or after this time (platform clock)' }) },
  { title: 'WebhookRecoverRequest' },
);

/** How many ids a recover response lists at most (the count covers all). */
export const RECOVER_IDS_LISTED = 100;

export const RecoverResultSchema = Obj(
  {
    count: Type.Integer({ minimum: 0, description: 'FAILED events requeued' }),
    ids: Type.Array(Type.String(), { description: `The requeued event ids, oldest first (at most ${RECOVER_IDS_LISTED})` }),
  },
  { title: 'WebhookRecoverResult' },
);

export type WebhookDeliveryWire = Static<typeof WebhookDeliverySchema>;
export type WebhookDeliveryDetailWire = Static<typeof WebhookDeliveryDetailSchema>;
export type WebhookAttemptWire = Static<typeof WebhookAttemptSchema>;
export type DeliveryListQueryT = Static<typeof DeliveryListQuery>;
