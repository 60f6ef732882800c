/** Quotes, same-currency transfers, transactions, and the sandbox payment simulations. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { pageRequest, toWirePage } from '../../http/pagination.ts';
import { platformOf } from '../../http/auth.ts';
import { ApiError, errors } from '../../http/errors.ts';
import { CurrencyCode, errorResponses, IdString, Obj } from '../../http/schemas.ts';
import { walletSignatureOf } from '../../http/wallet-signature.ts';
import { accepted, created, noContent, ok, write, writeThen } from '../../http/write.ts';
import { platformNowMs } from '../../lib/time.ts';
import { SignatureHeaders, SignedRequestChallengeSchema } from '../auth/auth.schemas.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import {
  ApproveSchema,
  CancelSchema,
  ConfirmSchema,
  QuoteCreateSchema,
  QuoteIdParams,
  QuoteSchema,
  RejectSchema,
  ScaFactorSchema,
  TransactionIdParams,
  TransactionListQuery,
  TransactionListSchema,
  TransactionOneOfSchema,
  TransactionSchema,
  TransferInSchema,
  TransferOutSchema,
} from './payments.schemas.ts';
import { createQuote, executeQuoteSigned, getQuote } from './quotes.service.ts';
import { authorizeQuote, resendQuoteCode } from './quote-authorize.service.ts';
import { ScaAuthorizationSchema } from '../sca/sca.schemas.ts';
import { sandboxSend, sandboxUmaReceive } from './sandbox-payments.service.ts';
import {
  approveIncoming,
  cancelTransaction,
  confirmReceipt,
  getTransactionWire,
  listTransactionPage,
  rejectIncoming,
} from './transactions.service.ts';
import { transferIn, transferOut } from './transfers.service.ts';

const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Replays return the first response' })),
});

export function paymentRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    // ---- quotes
    app.post(
      '/quotes',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'createQuote',
          tags: ['Cross-Currency Transfers'],
          summary: 'Create a quote (optionally executing it at once)',
          headers: IdempotencyHeaders,
          body: QuoteCreateSchema,
          response: {
            201: QuoteSchema,
            202: {
              ...QuoteSchema,
              description: 'The customer must authorise the payment (SCA): PENDING_AUTHORIZATION with its scaChallenge',
            },
            ...errorResponses(400, 401, 403, 404, 409, 410),
          },
        },
      },
      async (req, reply) =>
        write(
          ctx,
          req,
          reply,
          async (u) => {
            const quote = await createQuote(u, req.body);
            return quote.status === 'PENDING_AUTHORIZATION' ? accepted(quote) : created(quote);
          },
          // From an account, creating (and executing) a quote writes fresh rows and a guarded
          // balance UPDATE, and locks no row: it may share its transaction (unit.ts).
          { shareTransaction: req.body.source.sourceType === 'ACCOUNT' },
        ),
    );

    app.get(
      '/quotes/:quoteId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getQuoteById',
          tags: ['Cross-Currency Transfers'],
          summary: 'Get a quote',
          params: QuoteIdParams,
          response: { 200: QuoteSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return getQuote(ctx.db, platform, platformNowMs(ctx.deps.clock, platform), req.params.quoteId);
      },
    );

    app.post(
      '/quotes/:quoteId/execute',
      {
        config: { auth: 'platform', permission: 'TRANSACT', optionalBody: true },
        schema: {
          operationId: 'executeQuote',
          tags: ['Cross-Currency Transfers'],
          summary: 'Execute a locked quote funded from an account',
          description:
            'An EMBEDDED_WALLET source needs a wallet session’s signature (spec §4.2, §4.9): without Service-Wallet-Signature ' +
            'and Request-Id the answer is 202 with a challenge, and the same request retried with both executes the quote; ' +
            'a stamp over the quote’s own paymentInstructions payloadToSign, without Request-Id, executes it too. ' +
            'Other sources ignore these headers.',
          params: QuoteIdParams,
          headers: Type.Object({
            'idempotency-key': Type.Optional(Type.String({ description: 'Replays return the first response (a 202 challenge too)' })),
            ...SignatureHeaders.properties,
          }),
          body: Obj({ scaFactor: Type.Optional(ScaFactorSchema) }, { title: 'ExecuteQuoteRequest' }),
          response: { 200: QuoteSchema, 202: SignedRequestChallengeSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        const signature = walletSignatureOf(req);
        return write(ctx, req, reply, async (u) => {
          const out = await executeQuoteSigned(u, { quoteId: req.params.quoteId, signature, content: req.body });
          return out.kind === 'challenge' ? accepted(out.challenge) : ok(out.value);
        });
      },
    );

    app.post(
      '/quotes/:quoteId/authorize',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'authorizeQuote',
          tags: ['Strong Customer Authentication'],
          summary: 'Authorize a quote’s SCA challenge',
          description:
            'Satisfies the challenge of a quote in PENDING_AUTHORIZATION. If the quote is still PENDING_AUTHORIZATION afterwards it ' +
            'carries the next challenge. Needs the customer’s SCA login session (409 SCA_SESSION_REQUIRED). Sandbox SMS code: 123456.',
          params: QuoteIdParams,
          body: ScaAuthorizationSchema,
          response: { 200: QuoteSchema, ...errorResponses(400, 401, 403, 404, 409, 423, 429) },
        },
      },
      // A wrong proof is counted in the unit and refused after it commits (writeThen).
      async (req, reply) =>
        writeThen(
          ctx,
          req,
          reply,
          (u) => authorizeQuote(u, req.params.quoteId, req.body),
          async (out) => {
            if (out instanceof ApiError) throw out;
            return ok(out);
          },
        ),
    );

    app.post(
      '/quotes/:quoteId/authorize/resend',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'resendQuoteScaCode',
          tags: ['Strong Customer Authentication'],
          summary: 'Resend a quote’s SCA challenge code',
          description: 'Re-sends the SMS code of the current challenge; its expiresAt is not extended. Sandbox code: 123456.',
          params: QuoteIdParams,
          response: { 204: { type: 'null', description: 'Code re-sent' }, ...errorResponses(401, 403, 404, 409, 429) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => {
          await resendQuoteCode(u, req.params.quoteId);
          return noContent;
        }),
    );

    // ---- same-currency transfers
    app.post(
      '/transfer-in',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'createTransferIn',
          tags: ['Same-Currency Transfers'],
          summary: 'Pull funds from an external account into an internal account',
          headers: IdempotencyHeaders,
          body: TransferInSchema,
          response: { 201: TransactionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await transferIn(u, req.body)), { shareTransaction: true }),
    );

    app.post(
      '/transfer-out',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'createTransferOut',
          tags: ['Same-Currency Transfers'],
          summary: 'Push funds from an internal account to an external account',
          headers: IdempotencyHeaders,
          body: TransferOutSchema,
          response: { 201: TransactionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => created(await transferOut(u, req.body)), { shareTransaction: true }),
    );

    // ---- transactions
    app.get(
      '/transactions',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listTransactions',
          tags: ['Transactions'],
          summary: 'List transactions',
          querystring: TransactionListQuery,
          response: { 200: TransactionListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => toWirePage(await listTransactionPage(ctx.db, platformOf(req).platform.id, req.query, pageRequest(req.query))),
    );

    app.get(
      '/transactions/:transactionId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getTransactionById',
          tags: ['Transactions'],
          summary: 'Get a transaction',
          params: TransactionIdParams,
          response: { 200: TransactionOneOfSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => getTransactionWire(ctx.db, platformOf(req).platform.id, req.params.transactionId),
    );

    app.post(
      '/transactions/:transactionId/cancel',
      {
        config: { auth: 'platform', permission: 'TRANSACT', optionalBody: true },
        schema: {
          operationId: 'cancelTransaction',
          tags: ['Transactions'],
          summary: 'Cancel a pending bank-rail transfer',
          params: TransactionIdParams,
          body: CancelSchema,
          response: { 200: TransactionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await cancelTransaction(u, req.params.transactionId))),
    );

    app.post(
      '/transactions/:transactionId/confirm',
      {
        config: { auth: 'platform', permission: 'TRANSACT', optionalBody: true },
        schema: {
          operationId: 'confirmReceiptDelivery',
          tags: ['Transactions'],
          summary: 'Record that a receipt was delivered',
          params: TransactionIdParams,
          body: ConfirmSchema,
          response: { 200: TransactionSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => ok(await confirmReceipt(u, req.params.transactionId, req.body?.receiptDeliveryConfirmedAt))),
    );

    app.post(
      '/transactions/:transactionId/approve',
      {
        config: { auth: 'platform', permission: 'TRANSACT', optionalBody: true },
        schema: {
          operationId: 'approvePendingPayment',
          tags: ['Transactions'],
          summary: 'Approve an incoming payment waiting for the platform',
          params: TransactionIdParams,
          body: ApproveSchema,
          response: { 200: TransactionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) =>
        write(ctx, req, reply, async (u) => ok(await approveIncoming(u, req.params.transactionId, req.body?.receiverCustomerInfo))),
    );

    app.post(
      '/transactions/:transactionId/reject',
      {
        config: { auth: 'platform', permission: 'TRANSACT', optionalBody: true },
        schema: {
          operationId: 'rejectPendingPayment',
          tags: ['Transactions'],
          summary: 'Reject an incoming payment waiting for the platform',
          params: TransactionIdParams,
          body: RejectSchema,
          response: { 200: TransactionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await rejectIncoming(u, req.params.transactionId, req.body?.reason))),
    );

    // ---- sandbox simulations (sandbox platforms only)
    const sandboxOnly = async (req: FastifyRequest) => {
      if (!isSandbox(platformOf(req).platform)) throw errors.sandboxOnly();
    };
    app.post(
      '/sandbox/send',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        preHandler: sandboxOnly,
        schema: {
          operationId: 'sandboxSend',
          tags: ['Sandbox'],
          summary: "Pay a real-time funded quote's payment instructions (sandbox)",
          body: Obj(
            {
              quoteId: IdString('Quote:019542f5-b3e7-7d02-8000-000000000001'),
              currencyCode: CurrencyCode,
              currencyAmount: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
            },
            { title: 'SandboxSendRequest' },
          ),
          response: { 200: TransactionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await sandboxSend(u, req.body))),
    );

    app.post(
      '/sandbox/uma/receive',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        preHandler: sandboxOnly,
        schema: {
          operationId: 'sandboxReceive',
          tags: ['Sandbox'],
          summary: 'Simulate an incoming UMA payment to a customer (sandbox)',
          body: Obj(
            {
              senderUmaAddress: Type.String({ minLength: 3, maxLength: 255, examples: ['$success.usd@sandbox.uma.money'] }),
              receiverUmaAddress: Type.Optional(Type.String({ minLength: 3, maxLength: 320 })),
              customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
              receivingCurrencyCode: CurrencyCode,
              receivingCurrencyAmount: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }),
            },
            { title: 'SandboxUmaReceiveRequest' },
          ),
          response: { 200: TransactionSchema, ...errorResponses(400, 401, 403, 404) },
        },
      },
      async (req, reply) => write(ctx, req, reply, async (u) => ok(await sandboxUmaReceive(u, req.body))),
    );
  };
}
