/** Sandbox operations (sandbox platforms only; others get 403). */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import { errorResponses, IdString, Obj } from '../../http/schemas.ts';
import { ok, write, writeThen } from '../../http/write.ts';
import type { AttemptResult } from '../../webhook-delivery/deliverer.ts';
import { runExclusiveUnit, runUnit } from '../../unit.ts';
import { InternalAccountSchema } from '../internal-accounts/internal-accounts.schemas.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { faultCache } from './faults.cache.ts';
import { advanceClock, fundInternalAccount, resetPlatform, SandboxClockSchema, sandboxClock } from './sandbox.service.ts';

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
          operationId: 'sandboxFundInternalAccount',
          tags: [TAG],
          summary: 'Instantly add funds to an internal account (sandbox)',
          params: Obj({ accountId: IdString('InternalAccount:019542f5-b3e7-7d02-8000-000000000001') }),
          headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String()) }),
          body: Obj({
            amount: Type.Integer({
              minimum: 1,
              maximum: MAX_SANDBOX_FUND,
              description: 'Smallest unit of the account currency (at most 100000000000, as the live API)',
            }),
          }),
          response: { 200: InternalAccountSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await fundInternalAccount(u, req.params.accountId, req.body.amount))),
    );

    app.get(
      '/sandbox/clock',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'sandboxGetClock',
          tags: [TAG],
          summary: "The platform's sandbox clock (Corridor extension)",
          response: { 200: SandboxClockSchema, ...errorResponses(401, 403) },
        },
      },
      async (req) => sandboxClock(ctx.deps, platformOf(req).platform),
    );

    app.post(
      '/sandbox/clock/advance',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'sandboxAdvanceClock',
          tags: [TAG],
          summary: "Move the platform's sandbox clock forward and run everything that becomes due (Corridor extension)",
          body: Obj({ seconds: Type.Integer({ minimum: 1, maximum: 10 * 365 * 24 * 3600, description: 'How far to move the clock' }) }),
          response: { 200: SandboxClockSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        // The move commits in its unit; then everything that became due runs (outside it, as the job
        // runner and the deliverer do), so the caller sees the outcome. No Idempotency-Key: not `write`.
        const { platform } = platformOf(req);
        const moved = await runUnit(ctx, platform, (u) => advanceClock(u, req.body.seconds * 1000));
        await ctx.jobs.drain(platform.id);
        await ctx.webhooks.drain(platform.id);
        return sandboxClock(ctx.deps, moved);
      },
    );

    app.post(
      '/sandbox/webhooks/test',
      {
        config: { auth: 'platform', permission: 'MANAGE', optionalBody: true },
        schema: {
          operationId: 'sendTestWebhook',
          tags: [TAG],
          summary: 'Send a TEST webhook to the configured endpoint now and report its response',
          body: Obj({}),
          response: { 200: TestWebhookResponseSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req, reply) =>
        writeThen(
          ctx,
          req,
          reply,
          (u) => ctx.webhooks.claimTest(u.trx, u.platform, u.deps.ids.next('Webhook')),
          async (claimed) => ok(testAnswer(await ctx.webhooks.deliver(claimed))),
        ),
    );

    app.post(
      '/sandbox/reset',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'sandboxReset',
          tags: [TAG],
          summary: "Wipe the platform's customers, accounts and history; tokens and configuration stay (Corridor extension)",
          description:
            "Deletes the platform's customers (with their accounts), external accounts, quotes, transactions, ledger entries, webhook events, " +
            "jobs, agents, wallet credentials and fault-injection rules. The platform's own internal accounts are emptied but keep their ids, and the sandbox clock " +
            'returns to real time. Requests of the platform in flight finish first; those arriving meanwhile wait for the reset.',
          response: { 204: { type: 'null', description: 'Reset' }, ...errorResponses(401, 403) },
        },
      },
      async (req, reply) => {
        // The one exclusive unit: it waits for the platform's writes in flight and holds off new ones.
        // The platform row is read inside it, after the lock (its settings as they now are).
        await runExclusiveUnit(ctx, platformOf(req).platform.id, resetPlatform);
        // The reset deleted the platform's fault rules: this process stops applying them now.
        faultCache(ctx.db).invalidate();
        return reply.code(204).send();
      },
    );
  };
}

/** The answer to POST /sandbox/webhooks/test: the endpoint's answer, or a 400 saying why it failed. */
function testAnswer(r: AttemptResult): { url: string; response_status: number; response_body: string } {
  const delivered = r.status !== null && r.status >= 200 && r.status < 300;
  if (!delivered) {
    const why = r.status === null ? (r.error ?? 'no response') : `HTTP ${r.status}${r.error ? ` (${r.error})` : ''}`;
    throw errors.webhookDeliveryError(`Webhook delivery to ${r.url} failed: ${why}`, {
      url: r.url,
      ...(r.status !== null ? { response_status: r.status, response_body: r.body ?? '' } : {}),
      ...(r.error ? { error: r.error } : {}),
    });
  }
  return { url: r.url, response_status: r.status!, response_body: r.body ?? '' };
}
