/** GET /webhooks/signing-key: the public key that verifies this platform's webhooks; and the delivery log routes. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errorResponses, Obj } from '../../http/schemas.ts';
import { WEBHOOK_SIGNATURE_ALGORITHM, webhookPublicKey } from '../../webhook-delivery/keys.ts';
import { deliveryRoutes } from './deliveries.routes.ts';

const TAG = 'Webhooks';

export const WebhookSigningKeySchema = Obj(
  {
    publicKey: Type.String({ description: 'SPKI PEM of the P-256 key; verify X-Grid-Signature over the raw body with it' }),
    algorithm: Type.Literal(WEBHOOK_SIGNATURE_ALGORITHM),
  },
  { title: 'WebhookSigningKey' },
);

export function webhookRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/webhooks/signing-key',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getWebhookSigningKey',
          tags: [TAG],
          summary: "The public key that verifies this platform's webhook signatures (Corridor extension)",
          response: { 200: WebhookSigningKeySchema, ...errorResponses(401, 403) },
        },
      },
      async (req) => ({
        publicKey: await webhookPublicKey(ctx.db, platformOf(req).platform.id, ctx.secrets),
        algorithm: WEBHOOK_SIGNATURE_ALGORITHM,
      }),
    );

    await app.register(deliveryRoutes(ctx));
  };
}
