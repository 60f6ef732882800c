/**
 * The agent's own API (AgentAuth: `Authorization: Bearer <accessToken>`), bound to the agent's
 * customer. A missing permission or a paused agent is a 403 before the body is looked at;
 * both are checked again with the agent row locked when money moves.
 */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { agentOf } from '../../http/auth.ts';
import { pageRequest, toWirePage } from '../../http/pagination.ts';
import { CurrencyCode, errorResponses, Obj, PageQueryFields } from '../../http/schemas.ts';
import { walletSignatureOf } from '../../http/wallet-signature.ts';
import { created, noContent, ok, write } from '../../http/write.ts';
import { platformNowMs } from '../../lib/time.ts';
import { CustomerInternalAccountsQuery, InternalAccountListSchema } from '../customers/customers.schemas.ts';
import {
  ExternalAccountCreateSchema,
  ExternalAccountIdParams,
  ExternalAccountListSchema,
  ExternalAccountSchema,
} from '../external-accounts/external-accounts.schemas.ts';
import {
  QuoteCreateSchema,
  QuoteIdParams,
  QuoteSchema,
  TransactionIdParams,
  TransactionListQuery,
  TransactionListSchema,
  TransactionSchema,
  TransferInSchema,
  TransferOutSchema,
} from '../payments/payments.schemas.ts';
import { getOwnAction, listOwnActions, requireActive } from './actions.service.ts';
import {
  createOwnExternalAccount,
  createOwnQuote,
  deleteOwnExternalAccount,
  executeOwnQuote,
  getOwnExternalAccount,
  getOwnQuote,
  getOwnTransaction,
  listOwnExternalAccounts,
  listOwnInternalAccounts,
  listOwnTransactions,
  ownTransferIn,
  ownTransferOut,
} from './agent-ops.service.ts';
import {
  ActionIdParams,
  ActionListQuery,
  AgentActionListSchema,
  AgentActionSchema,
  AgentSchema,
  type AgentPermission,
} from './agents.schemas.ts';
import { agentToWire, policyOf } from './agents.service.ts';
import { requirePermission } from './policy.ts';

const TAG = 'Agent Operations';
const auth = { auth: 'agent' } as const;
const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Replays return the first response' })),
});
const deleted = { 204: { type: 'null', description: 'Deleted' } } as const;

// The customer is fixed by the token: no customer filter is accepted.
const { customerId: _c, platformCustomerId: _p, ...agentTxFields } = TransactionListQuery.properties;
const AgentTransactionListQuery = Obj(agentTxFields);
const { customerId: _ic, ...agentAccountFields } = CustomerInternalAccountsQuery.properties;
const AgentInternalAccountsQuery = Obj(agentAccountFields);
const AgentExternalAccountsQuery = Obj({ currency: Type.Optional(CurrencyCode), ...PageQueryFields });

/** preValidation guard: the agent's policy grants `permission` (and, for writes, it is not paused). */
function needs(permission: AgentPermission | null, write: boolean) {
  return async (req: FastifyRequest) => {
    const { agent } = agentOf(req);
    if (write) requireActive(agent);
    if (permission) requirePermission(policyOf(agent), permission);
  };
}

export function agentMeRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/agents/me',
      {
        config: auth,
        schema: {
          operationId: 'getAgentMe',
          tags: [TAG],
          summary: 'The calling agent: profile, policy and usage',
          response: { 200: AgentSchema, ...errorResponses(401) },
        },
      },
      async (req) => {
        const { agent, platform } = agentOf(req);
        return agentToWire(agent, platformNowMs(ctx.deps.clock, platform));
      },
    );

    // ---- transactions
    app.get(
      '/agents/me/transactions',
      {
        config: auth,
        preValidation: needs('VIEW_TRANSACTIONS', false),
        schema: {
          operationId: 'agentListTransactions',
          tags: [TAG],
          summary: "List the customer's transactions",
          querystring: AgentTransactionListQuery,
          response: { 200: TransactionListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(await listOwnTransactions(ctx, agentOf(req), req.query, pageRequest(req.query))),
    );

    app.get(
      '/agents/me/transactions/:transactionId',
      {
        config: auth,
        preValidation: needs('VIEW_TRANSACTIONS', false),
        schema: {
          operationId: 'agentGetTransaction',
          tags: [TAG],
          summary: "Get one of the customer's transactions",
          params: TransactionIdParams,
          response: { 200: TransactionSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getOwnTransaction(ctx, agentOf(req), req.params.transactionId),
    );

    // ---- quotes
    app.post(
      '/agents/me/quotes',
      {
        config: auth,
        preValidation: needs('CREATE_QUOTES', true),
        schema: {
          operationId: 'agentCreateQuote',
          tags: [TAG],
          summary: "Create a quote from the customer's accounts",
          headers: IdempotencyHeaders,
          body: QuoteCreateSchema,
          response: { 201: QuoteSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createOwnQuote(u, agentOf(req).agent, req.body))),
    );

    app.get(
      '/agents/me/quotes/:quoteId',
      {
        config: auth,
        schema: {
          operationId: 'agentGetQuote',
          tags: [TAG],
          summary: 'Get a quote this agent created',
          params: QuoteIdParams,
          response: { 200: QuoteSchema, ...errorResponses(401, 404) },
        },
      },
      async (req) => getOwnQuote(ctx, agentOf(req), req.params.quoteId),
    );

    app.post(
      '/agents/me/quotes/:quoteId/execute',
      {
        config: { ...auth, optionalBody: true },
        preValidation: needs('EXECUTE_QUOTES', true),
        schema: {
          operationId: 'agentExecuteQuote',
          tags: [TAG],
          summary: 'Execute a quote this agent created (an action: APPROVED at once or PENDING_APPROVAL)',
          params: QuoteIdParams,
          headers: Type.Object({
            'idempotency-key': Type.Optional(Type.String()),
            'grid-wallet-signature': Type.Optional(Type.String({ description: 'Required when the source is an embedded wallet' })),
            'service-wallet-signature': Type.Optional(Type.String({ description: 'Same as Grid-Wallet-Signature' })),
          }),
          body: Obj({}, { title: 'EmptyRequest' }),
          response: { 200: AgentActionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        const { stamp } = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) => ok(await executeOwnQuote(u, agentOf(req).agent, req.params.quoteId, stamp)));
      },
    );

    // ---- actions
    app.get(
      '/agents/me/actions',
      {
        config: auth,
        schema: {
          operationId: 'agentListActions',
          tags: [TAG],
          summary: "The agent's actions, newest first",
          querystring: ActionListQuery,
          response: { 200: AgentActionListSchema, ...errorResponses(400, 401) },
        },
      },
      async (req) => toWirePage(await listOwnActions(ctx, agentOf(req), req.query, pageRequest(req.query))),
    );

    app.get(
      '/agents/me/actions/:actionId',
      {
        config: auth,
        schema: {
          operationId: 'agentGetAction',
          tags: [TAG],
          summary: "One of the agent's actions (poll it for the approval decision)",
          params: ActionIdParams,
          response: { 200: AgentActionSchema, ...errorResponses(401, 404) },
        },
      },
      async (req) => getOwnAction(ctx, agentOf(req), req.params.actionId),
    );

    // ---- transfers
    app.post(
      '/agents/me/transfer-in',
      {
        config: auth,
        preValidation: needs('CREATE_TRANSFERS', true),
        schema: {
          operationId: 'agentCreateTransferIn',
          tags: [TAG],
          summary: "Pull from the customer's external account into its internal account (an action)",
          headers: IdempotencyHeaders,
          body: TransferInSchema,
          response: { 201: AgentActionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await ownTransferIn(u, agentOf(req).agent, req.body))),
    );

    app.post(
      '/agents/me/transfer-out',
      {
        config: auth,
        preValidation: needs('CREATE_TRANSFERS', true),
        schema: {
          operationId: 'agentCreateTransferOut',
          tags: [TAG],
          summary: "Push from the customer's internal account to its external account (an action)",
          headers: IdempotencyHeaders,
          body: TransferOutSchema,
          response: { 201: AgentActionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await ownTransferOut(u, agentOf(req).agent, req.body))),
    );

    // ---- accounts
    app.get(
      '/agents/me/internal-accounts',
      {
        config: auth,
        preValidation: needs('VIEW_TRANSACTIONS', false),
        schema: {
          operationId: 'agentListInternalAccounts',
          tags: [TAG],
          summary: "The customer's internal accounts the policy lets the agent use",
          querystring: AgentInternalAccountsQuery,
          response: { 200: InternalAccountListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(await listOwnInternalAccounts(ctx, agentOf(req), req.query, pageRequest(req.query))),
    );

    app.get(
      '/agents/me/external-accounts',
      {
        config: auth,
        preValidation: needs('MANAGE_EXTERNAL_ACCOUNTS', false),
        schema: {
          operationId: 'agentListExternalAccounts',
          tags: [TAG],
          summary: "The customer's external accounts",
          querystring: AgentExternalAccountsQuery,
          response: { 200: ExternalAccountListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(await listOwnExternalAccounts(ctx, agentOf(req), req.query, pageRequest(req.query))),
    );

    app.post(
      '/agents/me/external-accounts',
      {
        config: auth,
        preValidation: needs('MANAGE_EXTERNAL_ACCOUNTS', true),
        schema: {
          operationId: 'agentCreateExternalAccount',
          tags: [TAG],
          summary: 'Register an external account for the customer (customerId optional)',
          body: ExternalAccountCreateSchema,
          response: { 201: ExternalAccountSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await createOwnExternalAccount(u, agentOf(req).agent, req.body))),
    );

    app.get(
      '/agents/me/external-accounts/:externalAccountId',
      {
        config: auth,
        preValidation: needs('MANAGE_EXTERNAL_ACCOUNTS', false),
        schema: {
          operationId: 'agentGetExternalAccount',
          tags: [TAG],
          summary: "Get one of the customer's external accounts",
          params: ExternalAccountIdParams,
          response: { 200: ExternalAccountSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getOwnExternalAccount(ctx, agentOf(req), req.params.externalAccountId),
    );

    app.delete(
      '/agents/me/external-accounts/:externalAccountId',
      {
        config: auth,
        preValidation: needs('MANAGE_EXTERNAL_ACCOUNTS', true),
        schema: {
          operationId: 'agentDeleteExternalAccount',
          tags: [TAG],
          summary: "Delete one of the customer's external accounts",
          params: ExternalAccountIdParams,
          response: { ...deleted, ...errorResponses(401, 403, 404) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          await deleteOwnExternalAccount(u, agentOf(req).agent, req.params.externalAccountId);
          return noContent;
        }),
    );
  };
}
