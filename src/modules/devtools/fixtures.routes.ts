/** `POST /sandbox/fixtures` (load) and `GET /sandbox/fixtures` (export): Corridor extensions, sandbox platforms only. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import { errorResponses } from '../../http/schemas.ts';
import { created, write } from '../../http/write.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { needsTransact } from './devtools.errors.ts';
import { FixtureLoadResultSchema, FixtureSchema, MAX_FIXTURE_ENTRIES } from './fixtures.schemas.ts';
import { exportFixture, fixtureFunds, loadFixture } from './fixtures.service.ts';

export function fixtureRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook('preHandler', async (req) => {
      if (!isSandbox(platformOf(req).platform)) throw errors.sandboxOnly();
    });

    app.post(
      '/sandbox/fixtures',
      {
        // Customers and external accounts are MANAGE's to create; balances are fundings, TRANSACT's (checked below).
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'sandboxLoadFixtures',
          tags: ['Sandbox'],
          summary: 'Create a declared set of customers, balances and external accounts in one transaction (Corridor extension)',
          description:
            'The body is a fixture file (docs/fixtures.schema.json; `corridor fixtures load`). Everything is created in one transaction: ' +
            'an error in any entry (a 400 naming it, e.g. customers.2.customer.fullName) writes nothing. Balances are funded from the ' +
            "sandbox issuer through the ledger, as POST /sandbox/internal-accounts/{id}/fund does, and add to what an account holds. A UMA address moves to this platform's umaDomain. " +
            `At most ${MAX_FIXTURE_ENTRIES} entries (customers, external accounts and balances) per load. A file with balances needs TRANSACT as well (403 FORBIDDEN, details.missing).`,
          body: FixtureSchema,
          response: { 201: FixtureLoadResultSchema, ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (req, reply) => {
        if (fixtureFunds(req.body) && !platformOf(req).permissions.includes('TRANSACT')) throw needsTransact('A fixture with balances');
        return write(ctx, req, reply, async (u) => created(await loadFixture(u, req.body)));
      },
    );

    app.get(
      '/sandbox/fixtures',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'sandboxExportFixtures',
          tags: ['Sandbox'],
          summary: "The platform's customers, balances and external accounts as a fixture file (Corridor extension)",
          description:
            "Live customers (ref = platformCustomerId), the available balances of their internal accounts and of the platform's own, " +
            'and live external accounts. Loading it into a fresh sandbox platform reproduces that state; in-flight payments, history, ' +
            'KYC documents and beneficial owners are not part of it.',
          response: { 200: FixtureSchema, ...errorResponses(401, 403) },
        },
      },
      async (req) => exportFixture(ctx.db, platformOf(req).platform),
    );
  };
}
