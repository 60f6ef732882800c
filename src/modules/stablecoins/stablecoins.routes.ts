/**
 * Stablecoins (issue #24): provider account links, registered stablecoins, and their mint and burn
 * operations — 10 operations. The four POSTs require `Idempotency-Key` (a replay answers the first
 * response; another body under the key is a 409). No webhooks: statuses are polled. Rules:
 * the services; docs/stablecoins.md.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { pageRequest, toWirePage } from '../../http/pagination.ts';
import { errorResponses } from '../../http/schemas.ts';
import { created, write } from '../../http/write.ts';
import {
  StablecoinBurnRequestSchema,
  StablecoinMintRequestSchema,
  StablecoinOperationIdParams,
  StablecoinOperationListQuery,
  StablecoinOperationListSchema,
  StablecoinOperationSchema,
} from './operations.schemas.ts';
import { createBurn, createMint, getOperation, listOperationPage } from './operations.service.ts';
import { getProviderAccount, linkProviderAccount, listProviderAccounts } from './provider-accounts.service.ts';
import {
  RequiredIdempotencyHeaders,
  StablecoinIdParams,
  StablecoinListQuery,
  StablecoinListSchema,
  StablecoinProviderAccountIdParams,
  StablecoinProviderAccountLinkSchema,
  StablecoinProviderAccountListQuery,
  StablecoinProviderAccountListSchema,
  StablecoinProviderAccountSchema,
  StablecoinRegisterSchema,
  StablecoinSchema,
} from './stablecoins.schemas.ts';
import { getStablecoin, listStablecoinPage, registerStablecoin } from './stablecoins.service.ts';

const TAG = 'Stablecoins';

export function stablecoinRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    // ---- provider account links

    app.post(
      '/stablecoin-provider-accounts',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'linkStablecoinProviderAccount',
          tags: [TAG],
          summary: 'Link a stablecoin provider account',
          description:
            'Verifies the provider API credentials and links the account (ACTIVE); the secret is stored encrypted and never returned. ' +
            'providerEnvironment is the platform’s environment. Linking an account whose link is ACTIVE is a 409; a REVOKED or INVALID ' +
            'link is made ACTIVE again with the new credentials. Sandbox apiClientId endings: 002 refused (400 ' +
            'STABLECOIN_PROVIDER_ACCOUNT_INVALID), 003 REVOKED and 004 INVALID 60 s later, 007 several provider accounts.',
          headers: RequiredIdempotencyHeaders,
          body: StablecoinProviderAccountLinkSchema,
          response: { 201: StablecoinProviderAccountSchema, ...errorResponses(400, 401, 403, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await linkProviderAccount(u, req.body))),
    );

    app.get(
      '/stablecoin-provider-accounts',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listStablecoinProviderAccounts',
          tags: [TAG],
          summary: 'List stablecoin provider account links (newest first)',
          querystring: StablecoinProviderAccountListQuery,
          response: { 200: StablecoinProviderAccountListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(await listProviderAccounts(ctx, platformOf(req).platform, req.query, pageRequest(req.query))),
    );

    app.get(
      '/stablecoin-provider-accounts/:stablecoinProviderAccountId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getStablecoinProviderAccount',
          tags: [TAG],
          summary: 'Get a stablecoin provider account link',
          params: StablecoinProviderAccountIdParams,
          response: { 200: StablecoinProviderAccountSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getProviderAccount(ctx, platformOf(req).platform, req.params.stablecoinProviderAccountId),
    );

    // ---- stablecoins

    app.post(
      '/stablecoins',
      {
        config: { auth: 'platform', permission: 'MANAGE' },
        schema: {
          operationId: 'registerStablecoin',
          tags: [TAG],
          summary: 'Register an existing provider-created stablecoin',
          description:
            'Name, symbol (= providerTokenIdentifier), decimals (6) and baseCurrency (USD) come from the provider. Without ' +
            'stablecoinProviderAccountId the one ACTIVE link is used (400 SELECTION_REQUIRED with several). issuanceStatus starts ' +
            'PROVISIONING and is PROVISIONED 5 s later; gridOperationsStatus stays NOT_ENABLED. The same token twice is a 409.',
          headers: RequiredIdempotencyHeaders,
          body: StablecoinRegisterSchema,
          response: { 201: StablecoinSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await registerStablecoin(u, req.body))),
    );

    app.get(
      '/stablecoins',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listStablecoins',
          tags: [TAG],
          summary: 'List registered stablecoins (newest first)',
          querystring: StablecoinListQuery,
          response: { 200: StablecoinListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(await listStablecoinPage(ctx, platformOf(req).platform, req.query, pageRequest(req.query))),
    );

    app.get(
      '/stablecoins/:stablecoinId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getStablecoin',
          tags: [TAG],
          summary: 'Get a stablecoin',
          params: StablecoinIdParams,
          response: { 200: StablecoinSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getStablecoin(ctx, platformOf(req).platform, req.params.stablecoinId),
    );

    // ---- operations

    app.post(
      '/stablecoins/:stablecoinId/mints',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'createStablecoinMint',
          tags: [TAG],
          summary: 'Create a stablecoin mint operation',
          description:
            'WIRE: PENDING_FUNDING with fundingInstructions until the wire arrives (sandbox: 10 s), then PENDING_PROVIDER, ' +
            'PROCESSING, COMPLETED 5 s apart. ACH_DEBIT / SAME_DAY_ACH_DEBIT: CREATED, then the same. Tokens go to an ACTIVE ' +
            'LAYER2_WALLET external account. The stablecoin must be PROVISIONED (409) and its link ACTIVE (400).',
          params: StablecoinIdParams,
          headers: RequiredIdempotencyHeaders,
          body: StablecoinMintRequestSchema,
          response: { 201: StablecoinOperationSchema, ...errorResponses(400, 401, 403, 404, 409, 503) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createMint(u, req.params.stablecoinId, req.body))),
    );

    app.post(
      '/stablecoins/:stablecoinId/burns',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'createStablecoinBurn',
          tags: [TAG],
          summary: 'Create a stablecoin burn (redemption) operation',
          description:
            'EXTERNAL_ACCOUNT: PENDING_FUNDING with a Spark deposit address until the tokens arrive (sandbox: 10 s); ' +
            'PROVIDER_INTERNAL_BALANCE: PENDING_PROVIDER at once; then PROCESSING and COMPLETED 5 s apart, the fiat paid to the ' +
            'bank account. A burn beyond the outstanding supply less the burns in flight is a 409.',
          params: StablecoinIdParams,
          headers: RequiredIdempotencyHeaders,
          body: StablecoinBurnRequestSchema,
          response: { 201: StablecoinOperationSchema, ...errorResponses(400, 401, 403, 404, 409, 503) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createBurn(u, req.params.stablecoinId, req.body))),
    );

    app.get(
      '/stablecoins/:stablecoinId/operations',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listStablecoinOperations',
          tags: [TAG],
          summary: 'List a stablecoin’s mint and burn operations, most recent first',
          params: StablecoinIdParams,
          querystring: StablecoinOperationListQuery,
          response: { 200: StablecoinOperationListSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req) =>
        toWirePage(await listOperationPage(ctx, platformOf(req).platform, req.params.stablecoinId, req.query, pageRequest(req.query))),
    );

    app.get(
      '/stablecoin-operations/:stablecoinOperationId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getStablecoinOperation',
          tags: [TAG],
          summary: 'Get a stablecoin mint or burn operation',
          params: StablecoinOperationIdParams,
          response: { 200: StablecoinOperationSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getOperation(ctx, platformOf(req).platform, req.params.stablecoinOperationId),
    );
  };
}
