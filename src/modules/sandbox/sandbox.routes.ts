/** Sandbox operations (sandbox platforms only; others get 403). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import { runOnce } from '../../http/idempotency.ts';
import { errorResponses, IdString, Obj } from '../../http/schemas.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { InternalAccountSchema } from '../internal-accounts/internal-accounts.schemas.ts';
import { advanceClock, fundInternalAccount, resetPlatform, SandboxClockSchema } from './sandbox.service.ts';
import { platformNowMs, iso } from '../../lib/time.ts';

const TAG = 'Sandbox';

const TestWebhookResponseSchema = Obj(
  {
    url: Type.String({ description: 'The endpoint the TEST webhook went to' }),
    response_status: Type.Integer({ description: 'The HTTP status the endpoint returned' }),
    response_body: Type.String({ description: 'The body it returned (first 4 KiB)' }),
  },
  { title: 'TestWebhookResponse' },
);
/** The live API's SandboxFundRequest.amount maximum. */
export const MAX_SANDBOX_FUND = 100_000_000_000;
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
          body: Obj({ amount: Type.Integer({ minimum: 1, maximum: MAX_SANDBOX_FUND, description: 'Smallest unit of the account currency (at most 100000000000, as the live API)' }) }),
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

    app.get(
      '/sandbox/clock',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'sandboxGetClock', tags: [TAG], summary: "The platform's sandbox clock (Corridor extension)", security,
          response: { 200: SandboxClockSchema, ...errorResponses(401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return { now: iso(platformNowMs(ctx.deps.clock, platform)), offsetMs: Number(platform.clock_offset_ms) };
      },
    );

    app.post(
      '/sandbox/clock/advance',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'sandboxAdvanceClock', tags: [TAG],
          summary: "Move the platform's sandbox clock forward and run everything that becomes due (Corridor extension)",
          security,
          body: Obj({ seconds: Type.Integer({ minimum: 1, maximum: 10 * 365 * 24 * 3600, description: 'How far to move the clock' }) }),
          response: { 200: SandboxClockSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => advanceClock(ctx, platformOf(req).platform.id, req.body.seconds * 1000),
    );

    app.post(
      '/sandbox/webhooks/test',
      {
        config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
        schema: {
          operationId: 'sendTestWebhook', tags: [TAG], summary: 'Send a TEST webhook to the configured endpoint now and report its response', security,
          body: Obj({}),
          response: { 200: TestWebhookResponseSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const r = await ctx.webhooks.sendTest(platform, ctx.deps.ids.next('Webhook'));
        const ok = r.status !== null && r.status >= 200 && r.status < 300;
        if (!ok) {
          const why = r.status === null ? r.error ?? 'no response' : `HTTP ${r.status}${r.error ? ` (${r.error})` : ''}`;
          throw errors.webhookDeliveryError(`Webhook delivery to ${r.url} failed: ${why}`, {
            url: r.url,
            ...(r.status !== null ? { response_status: r.status, response_body: r.body ?? '' } : {}),
            ...(r.error ? { error: r.error } : {}),
          });
        }
        return { url: r.url, response_status: r.status!, response_body: r.body ?? '' };
      },
    );

    app.post(
      '/sandbox/reset',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'sandboxReset', tags: [TAG],
          summary: "Wipe the platform's customers, accounts and history; tokens and configuration stay (Corridor extension)",
          security,
          response: { 204: { type: 'null', description: 'Reset' }, ...errorResponses(401, 403) },
        },
      },
      async (req, reply) => {
        await resetPlatform(ctx, platformOf(req).platform.id);
        return reply.code(204).send();
      },
    );
  };
}
