/**
 * Fault injection for sandbox platforms (Corridor extension, issue #25): GET, POST (replace) and
 * DELETE (clear) `/sandbox/faults`. PRODUCTION platforms are refused as on every sandbox route. The
 * rules are applied by faults.inject.ts; these routes are never faulted themselves.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import { DateTime, errorResponses, Obj } from '../../http/schemas.ts';
import { runUnit } from '../../unit.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { faultCache } from './faults.cache.ts';
import { FAULTS_PATH, type FaultInjection } from './faults.inject.ts';
import { MAX_FAULT_LATENCY_MS, MAX_FAULT_RULES, type FaultRule } from './faults.rules.ts';
import { clearFaultRules, getFaultRules, setFaultRules } from './faults.service.ts';

const TAG = 'Sandbox';

const Rate = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });

export const FaultRuleSchema = Obj(
  {
    route: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 300,
        description:
          'The operation to fault, as `METHOD /path` of the OpenAPI document without the version prefix (`{param}` or `:param`), ' +
          'or `*` for every operation but these /sandbox/faults ones. Exactly one of route and eventType.',
        examples: ['POST /quotes'],
      }),
    ),
    eventType: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        description: 'The webhook event type whose deliveries to drop, or `*` for every type',
        examples: ['OUTGOING_PAYMENT.COMPLETED'],
      }),
    ),
    latencyMs: Type.Optional(
      Type.Integer({ minimum: 0, maximum: MAX_FAULT_LATENCY_MS, description: 'Added before the request is handled (route rules)' }),
    ),
    errorRate: Type.Optional(Rate('Share of requests answered with errorStatus instead of being handled (route rules)')),
    errorStatus: Type.Optional(
      Type.Unsafe<500 | 503>({ type: 'integer', enum: [500, 503], description: 'The injected answer (default 503 SERVICE_UNAVAILABLE)' }),
    ),
    dropRate: Type.Optional(
      Rate('Share of delivery attempts dropped: logged as failed and retried on the usual schedule (eventType rules)'),
    ),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'The rule stops applying then (platform clock)' })),
  },
  { title: 'SandboxFaultRule' },
);

const FaultsRequestSchema = Obj(
  { rules: Type.Array(FaultRuleSchema, { maxItems: MAX_FAULT_RULES, description: `At most ${MAX_FAULT_RULES}; an empty list clears` }) },
  { title: 'SandboxFaultsRequest' },
);

const FaultsSchema = Obj(
  {
    rules: Type.Array(FaultRuleSchema),
    updatedAt: Type.Optional(DateTime),
  },
  { title: 'SandboxFaults' },
);

export function faultRoutes(ctx: AppContext, injection: FaultInjection): FastifyPluginAsyncTypebox {
  const cache = faultCache(ctx.db);
  return async (app) => {
    // Before validation: a PRODUCTION platform learns nothing but that fault injection is not for it.
    app.addHook('preValidation', async (req) => {
      if (!isSandbox(platformOf(req).platform)) throw errors.sandboxOnly();
    });

    app.get(
      FAULTS_PATH,
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'sandboxGetFaults',
          tags: [TAG],
          summary: "The platform's fault-injection rules (Corridor extension)",
          response: { 200: FaultsSchema, ...errorResponses(401, 403) },
        },
      },
      async (req) => getFaultRules(ctx.db, platformOf(req).platform.id),
    );

    app.post(
      FAULTS_PATH,
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'sandboxSetFaults',
          tags: [TAG],
          summary: "Replace the platform's fault-injection rules: added latency, 500/503 answers, dropped webhooks (Corridor extension)",
          description:
            'Route rules delay the named operation by latencyMs and then answer errorStatus (with the error body, without ' +
            'running the operation) for a share errorRate of requests. Event rules drop a share dropRate of delivery attempts ' +
            'of the event type: each is logged as failed ("dropped by fault injection") and retried on the usual schedule. ' +
            'An exact rule wins over `*`. Rules apply to this platform only, in every process within about a second; ' +
            'a sandbox reset clears them.',
          body: FaultsRequestSchema,
          response: { 200: FaultsSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        // A unit (the platform's write lock, retried on a conflict); the rules are checked inside it,
        // against the platform's clock as the unit reads it. No Idempotency-Key: replacing is idempotent.
        const body = req.body as { rules: FaultRule[] };
        const view = await runUnit(ctx, platformOf(req).platform, (u) => setFaultRules(u, body.rules, injection.faultableRoutes));
        // After the commit, so that no reload can read the old rules and call them fresh.
        cache.invalidate();
        return view;
      },
    );

    app.delete(
      FAULTS_PATH,
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'sandboxClearFaults',
          tags: [TAG],
          summary: 'Remove every fault-injection rule of the platform (Corridor extension)',
          response: { 204: { type: 'null', description: 'Cleared' }, ...errorResponses(401, 403) },
        },
      },
      async (req, reply) => {
        await runUnit(ctx, platformOf(req).platform, clearFaultRules);
        cache.invalidate();
        return reply.code(204).send();
      },
    );
  };
}
