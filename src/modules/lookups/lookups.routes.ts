/**
 * Lookups and catalogues: GET /receiver/uma/{receiverUmaAddress} and GET
 * /receiver/external-account/{accountId} (each answers a `lookupId` that POST /quotes honours),
 * GET /uma-providers, GET /vasps and POST /crypto/estimate-withdrawal-fee. All are reads (VIEW).
 *
 * The two receiver lookups run in a unit of work although they are GETs: each records its answer
 * (the lookup a quote checks its `lookupId` against). The fee estimate runs in one too, as every
 * POST does, though it writes nothing.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.ts';
import { pageRequest, toWirePage } from '../../http/pagination.ts';
import { errorResponses } from '../../http/schemas.ts';
import { ok, write } from '../../http/write.ts';
import { listUmaProviders, listVasps } from './directories.ts';
import {
  EstimateWithdrawalFeeResponseSchema,
  EstimateWithdrawalFeeSchema,
  ExternalAccountLookupParams,
  LookupQuery,
  ReceiverExternalAccountLookupSchema,
  ReceiverUmaLookupSchema,
  UmaLookupParams,
  UmaProviderListSchema,
  UmaProviderQuery,
  VaspListSchema,
  VaspQuery,
} from './lookups.schemas.ts';
import { lookupExternalAccount, lookupUma } from './lookups.service.ts';
import { estimateWithdrawalFee } from './withdrawal-fees.ts';

const TRANSFERS = 'Cross-Currency Transfers';

export function lookupRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/receiver/uma/:receiverUmaAddress',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'lookupUma',
          tags: [TRANSFERS],
          summary: 'Look up a UMA address before paying it',
          description:
            'The currencies the receiver accepts, with an estimated rate from the sender’s currency and the bounds of the ' +
            'received amount, and the payer data the receiver needs. Name the sender with customerId or senderUmaAddress. ' +
            'The lookupId answered is accepted by POST /quotes for this receiver and sender for 15 minutes. ' +
            'Sandbox receivers: $success.usd, $success.eur, $success.mxn, $pending.long.usd and $fail.compliance.usd ' +
            'at the sandbox UMA domain; any other address is 404 UMA_NOT_FOUND.',
          params: UmaLookupParams,
          querystring: LookupQuery,
          response: { 200: ReceiverUmaLookupSchema, ...errorResponses(400, 401, 403, 404, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await lookupUma(u, req.params.receiverUmaAddress, req.query))),
    );

    app.get(
      '/receiver/external-account/:accountId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'lookupExternalAccount',
          tags: [TRANSFERS],
          summary: 'Look up an external account before paying it',
          description:
            'The currency the account receives, with an estimated rate from the sender’s currency and the bounds of the ' +
            'received amount. Name the sender with customerId or senderUmaAddress. The lookupId answered is accepted by ' +
            'POST /quotes for this account and sender for 15 minutes.',
          params: ExternalAccountLookupParams,
          querystring: LookupQuery,
          response: { 200: ReceiverExternalAccountLookupSchema, ...errorResponses(400, 401, 403, 404, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await lookupExternalAccount(u, req.params.accountId, req.query))),
    );

    app.get(
      '/uma-providers',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getAvailableUmaProviders',
          tags: ['Available UMA Providers'],
          summary: 'List UMA providers',
          description:
            'The directory of UMA providers, ordered by domain. Only the sandbox provider (whose addresses the sandbox ' +
            'receivers are) is on the allow list; hasBlockedProviders=false leaves the others out.',
          querystring: UmaProviderQuery,
          response: { 200: UmaProviderListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(listUmaProviders(ctx.config.sandboxUmaDomain, req.query, pageRequest(req.query))),
    );

    app.get(
      '/vasps',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listVasps',
          tags: ['VASPs'],
          summary: 'List VASPs',
          description:
            'Exchanges and other custodians recognised as counterparties, ordered by name. Send a vaspName as ' +
            'accountInfo.vaspName when registering a wallet held at that VASP.',
          querystring: VaspQuery,
          response: { 200: VaspListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => {
        // The live VaspListResponse has no totalCount.
        const { totalCount: _all, ...page } = toWirePage(listVasps(pageRequest(req.query)));
        return page;
      },
    );

    app.post(
      '/crypto/estimate-withdrawal-fee',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'estimateCryptoWithdrawalFee',
          tags: [TRANSFERS],
          summary: 'Estimate the fee of a crypto withdrawal',
          description:
            'The network and application fees of withdrawing amount from a crypto internal account to an address on ' +
            'cryptoNetwork: totalFee (in the withdrawal currency) is taken from amount and netAmount arrives. ' +
            'An estimate: nothing is held.',
          body: EstimateWithdrawalFeeSchema,
          response: { 200: EstimateWithdrawalFeeResponseSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await estimateWithdrawalFee(u, req.body))),
    );
  };
}
