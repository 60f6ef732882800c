/**
 * Operator routes under /_admin (Bearer CORRIDOR_ADMIN_TOKEN; disabled when it is unset):
 * creating isolated platforms (tests make one per file) and running the ledger check.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import { CurrencyCode, DateTime, errorResponses, Obj } from '../../http/schemas.ts';
import { created, writeFor } from '../../http/write.ts';
import { checkLedger } from '../../ledger/ledger.ts';
import { findCurrency } from '../../lib/currencies.ts';
import { ApiTokenSchema } from '../tokens/tokens.schemas.ts';
import { newPlatformRow, platformToWire, setUpPlatform } from '../platforms/platforms.service.ts';

const TAG = 'Admin';

export const PlatformSchema = Obj(
  {
    id: Type.String(),
    name: Type.String(),
    environment: Type.Union([Type.Literal('SANDBOX'), Type.Literal('PRODUCTION')]),
    fiatCurrency: Type.String(),
    createdAt: DateTime,
  },
  { title: 'Platform' },
);

const LedgerReportSchema = Obj(
  {
    ok: Type.Boolean(),
    entries: Type.Integer(),
    postings: Type.Integer(),
    accounts: Type.Integer(),
    problems: Type.Array(Obj({ kind: Type.String(), id: Type.String(), detail: Type.String() })),
  },
  { title: 'LedgerReport' },
);

export function adminRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      '/_admin/platforms',
      {
        config: { auth: 'admin' },
        schema: {
          operationId: 'adminCreatePlatform',
          tags: [TAG],
          summary: 'Create an isolated platform with an all-permission token',
          body: Obj({
            name: Type.String({ minLength: 1, maxLength: 255 }),
            currency: Type.Optional(CurrencyCode),
            environment: Type.Optional(Type.Union([Type.Literal('SANDBOX'), Type.Literal('PRODUCTION')], { default: 'SANDBOX' })),
          }),
          response: { 201: Obj({ platform: PlatformSchema, token: ApiTokenSchema }), ...errorResponses(400, 401, 404) },
        },
      },
      async (req, reply) => {
        const fiatCurrency = req.body.currency ?? 'USD';
        if (!findCurrency(fiatCurrency)) throw errors.invalidCurrency(fiatCurrency, 'currency');
        const p = { name: req.body.name, fiatCurrency, environment: req.body.environment ?? 'SANDBOX' };
        // A seeded process's time stands still and its ids are predictable (lib/seeded-deps.ts): sandbox only.
        if (ctx.config.seed !== undefined && p.environment === 'PRODUCTION')
          throw errors.invalidField('environment', 'must be SANDBOX while CORRIDOR_SEED is set (a seeded process is for sandbox runs)');
        // A new tenant has no platform to open a unit on yet: the unit opens on the row it creates
        // (its write lock is uncontended, as no one else knows the id), so the creation is still one
        // transaction retried as a whole. No caller's idempotency keys apply: the route declares none.
        return writeFor(ctx, newPlatformRow(ctx.deps, p), req, reply, undefined, async (u) =>
          created({ platform: platformToWire(u.platform), token: await setUpPlatform(u, p) }),
        );
      },
    );

    app.get(
      '/_admin/ledger/check',
      {
        config: { auth: 'admin' },
        schema: {
          operationId: 'adminCheckLedger',
          tags: [TAG],
          summary: 'Recompute balances from postings and report differences',
          querystring: Obj({ platformId: Type.Optional(Type.String({ maxLength: 200 })) }),
          response: { 200: LedgerReportSchema, ...errorResponses(400, 401, 404) },
        },
      },
      async (req) => checkLedger(ctx.db, req.query.platformId),
    );
  };
}
