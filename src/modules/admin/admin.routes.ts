/**
 * Operator routes under /_admin (Bearer CORRIDOR_ADMIN_TOKEN; disabled when it is unset):
 * creating isolated platforms (tests make one per file) and running the ledger check.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import { CurrencyCode, DateTime, errorResponses, Obj } from '../../http/schemas.ts';
import { checkLedger } from '../../ledger/ledger.ts';
import { findCurrency } from '../../lib/currencies.ts';
import { ApiTokenSchema } from '../tokens/tokens.schemas.ts';
import { createPlatform, platformToWire } from '../platforms/platforms.service.ts';

const TAG = 'Admin';
const security = [{ AdminAuth: [] }];

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
          operationId: 'adminCreatePlatform', tags: [TAG], summary: 'Create an isolated platform with an all-permission token', security,
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
        const { platform, token } = await ctx.db
          .transaction()
          .execute((trx) => createPlatform(trx, ctx.deps, { name: req.body.name, fiatCurrency, environment: req.body.environment ?? 'SANDBOX' }));
        return reply.code(201).send({ platform: platformToWire(platform), token });
      },
    );

    app.get(
      '/_admin/ledger/check',
      {
        config: { auth: 'admin' },
        schema: {
          operationId: 'adminCheckLedger', tags: [TAG], summary: 'Recompute balances from postings and report differences', security,
          querystring: Obj({ platformId: Type.Optional(Type.String({ maxLength: 200 })) }),
          response: { 200: LedgerReportSchema, ...errorResponses(400, 401, 404) },
        },
      },
      async (req) => checkLedger(ctx.db, req.query.platformId),
    );
  };
}
