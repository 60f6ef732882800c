/** Sandbox operations (sandbox platforms only; others get 403). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import { runOnce } from '../../http/idempotency.ts';
import { errorResponses, IdString, Obj } from '../../http/schemas.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { InternalAccountSchema } from '../internal-accounts/internal-accounts.schemas.ts';
import { fundInternalAccount } from './sandbox.service.ts';

const TAG = 'Sandbox';
const security = [{ BasicAuth: [] }];

export function sandboxRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('preHandler', async (req) => {
      if (!isSandbox(platformOf(req).platform)) throw errors.sandboxOnly();
    });

    app.post(
      '/sandbox/internal-accounts/:accountId/fund',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'sandboxFundInternalAccount', tags: [TAG], summary: 'Instantly add funds to an internal account (sandbox)', security,
          params: Obj({ accountId: IdString('InternalAccount:019542f5-b3e7-7d02-8000-000000000001') }),
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
          body: Obj({ amount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Smallest unit of the account currency' }) }),
          response: { 200: InternalAccountSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        return runOnce(ctx, req, reply, platform.id, async (trx) => ({
          status: 200,
          body: await fundInternalAccount(trx, ctx, platform, req.params.accountId, req.body.amount),
        }));
      },
    );
  };
}
