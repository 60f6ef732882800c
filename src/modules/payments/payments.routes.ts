/** Quotes, same-currency transfers, transactions, and the sandbox payment simulations. */
import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { platformOf } from '../../http/auth.ts';
import { errors } from '../../http/errors.ts';
import { runOnce } from '../../http/idempotency.ts';
import { CurrencyCode, errorResponses, IdString, Obj } from '../../http/schemas.ts';
import { platformNowMs } from '../../lib/time.ts';
import { retryOnConflict } from '../../store/retry.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { registerPaymentJobs, transactionToWire } from './payment-engine.ts';
import {
  ApproveSchema,
  CancelSchema,
  ConfirmSchema,
  QuoteCreateSchema,
  QuoteIdParams,
  QuoteSchema,
  RejectSchema,
  TransactionIdParams,
  TransactionListQuery,
  TransactionListSchema,
  TransactionSchema,
  TransferInSchema,
  TransferOutSchema,
} from './payments.schemas.ts';
import { createQuote, executeQuote, quoteToWire, registerQuoteJobs } from './quotes.service.ts';
import { findQuote } from './transactions.repo.ts';
import {
  cancelTransaction,
  confirmReceipt,
  decideIncoming,
  getTransaction,
  listTransactionPage,
  registerIncomingJobs,
  sandboxSend,
  sandboxUmaReceive,
} from './transactions.service.ts';
import { transferIn, transferOut } from './transfers.service.ts';

const security = [{ BasicAuth: [] }];
const IdempotencyHeaders = Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: 'Replays return the first response' })) });

function walletSignatureOf(req: FastifyRequest): string | undefined {
  const h = req.headers['service-wallet-signature'] ?? req.headers['grid-wallet-signature'];
  return Array.isArray(h) ? h[0] : h;
}

export function paymentRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  registerPaymentJobs(ctx);
  registerQuoteJobs(ctx);
  registerIncomingJobs(ctx);

  return async (app) => {
    // ---- quotes
    app.post(
      '/quotes',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'createQuote', tags: ['Cross-Currency Transfers'], summary: 'Create a quote (optionally executing it at once)', security,
          headers: IdempotencyHeaders,
          body: QuoteCreateSchema,
          response: { 201: QuoteSchema, ...errorResponses(400, 401, 403, 404, 409, 410) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        return runOnce(ctx, req, reply, platform.id, async (trx) => ({ status: 201, body: await createQuote(trx, ctx, platform, req.body) }));
      },
    );

    app.get(
      '/quotes/:quoteId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getQuoteById', tags: ['Cross-Currency Transfers'], summary: 'Get a quote', security,
          params: QuoteIdParams,
          response: { 200: QuoteSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        const q = await findQuote(ctx.db, platform.id, req.params.quoteId);
        if (!q) throw errors.quoteNotFound(req.params.quoteId);
        return quoteToWire(q, platformNowMs(ctx.deps.clock, platform));
      },
    );

    app.post(
      '/quotes/:quoteId/execute',
      {
        config: { auth: 'platform', permission: 'TRANSACT', optionalBody: true },
        schema: {
          operationId: 'executeQuote', tags: ['Cross-Currency Transfers'], summary: 'Execute a locked quote funded from an account', security,
          params: QuoteIdParams,
          headers: Type.Object({
            'idempotency-key': Type.Optional(Type.String()),
            'service-wallet-signature': Type.Optional(Type.String({ description: 'Required when the source is an embedded wallet' })),
          }),
          body: Obj({ scaFactor: Type.Optional(Type.Union([Type.Literal('SMS_OTP'), Type.Literal('PASSKEY')])) }, { title: 'ExecuteQuoteRequest' }),
          response: { 200: QuoteSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        return runOnce(ctx, req, reply, platform.id, async (trx) => ({
          status: 200,
          body: await executeQuote(trx, ctx, platform, req.params.quoteId, walletSignatureOf(req)),
        }));
      },
    );

    // ---- same-currency transfers
    app.post(
      '/transfer-in',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'createTransferIn', tags: ['Same-Currency Transfers'], summary: 'Pull funds from an external account into an internal account', security,
          headers: IdempotencyHeaders,
          body: TransferInSchema,
          response: { 201: TransactionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        return runOnce(ctx, req, reply, platform.id, async (trx) => ({ status: 201, body: await transferIn(trx, ctx, platform, req.body) }));
      },
    );

    app.post(
      '/transfer-out',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        schema: {
          operationId: 'createTransferOut', tags: ['Same-Currency Transfers'], summary: 'Push funds from an internal account to an external account', security,
          headers: IdempotencyHeaders,
          body: TransferOutSchema,
          response: { 201: TransactionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req, reply) => {
        const { platform } = platformOf(req);
        return runOnce(ctx, req, reply, platform.id, async (trx) => ({ status: 201, body: await transferOut(trx, ctx, platform, req.body) }));
      },
    );

    // ---- transactions
    app.get(
      '/transactions',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'listTransactions', tags: ['Transactions'], summary: 'List transactions', security,
          querystring: TransactionListQuery,
          response: { 200: TransactionListSchema, ...errorResponses(400, 401, 403) },
        },
      },
      async (req) => listTransactionPage(ctx.db, platformOf(req).platform.id, req.query),
    );

    app.get(
      '/transactions/:transactionId',
      {
        config: { auth: 'platform', permission: 'VIEW' },
        schema: {
          operationId: 'getTransactionById', tags: ['Transactions'], summary: 'Get a transaction', security,
          params: TransactionIdParams,
          response: { 200: TransactionSchema, ...errorResponses(401, 403, 404) },
        },
      },
      async (req) => transactionToWire(await getTransaction(ctx.db, platformOf(req).platform.id, req.params.transactionId)),
    );

    const txAction = (
      path: string,
      operationId: string,
      summary: string,
      body: typeof CancelSchema | typeof ConfirmSchema | typeof ApproveSchema | typeof RejectSchema,
      statuses: number[],
    ) => ({ path, operationId, summary, body, statuses });
    const actions = [
      txAction('/transactions/:transactionId/cancel', 'cancelTransaction', 'Cancel a pending bank-rail transfer', CancelSchema, [400, 401, 403, 404, 409]),
      txAction('/transactions/:transactionId/confirm', 'confirmReceiptDelivery', 'Record that a receipt was delivered', ConfirmSchema, [400, 401, 403, 404]),
      txAction('/transactions/:transactionId/approve', 'approvePendingPayment', 'Approve an incoming payment waiting for the platform', ApproveSchema, [400, 401, 403, 404, 409]),
      txAction('/transactions/:transactionId/reject', 'rejectPendingPayment', 'Reject an incoming payment waiting for the platform', RejectSchema, [400, 401, 403, 404, 409]),
    ];
    for (const a of actions) {
      app.post(
        a.path,
        {
          config: { auth: 'platform', permission: 'TRANSACT', optionalBody: true },
          schema: {
            operationId: a.operationId, tags: ['Transactions'], summary: a.summary, security,
            params: TransactionIdParams,
            body: a.body,
            response: { 200: TransactionSchema, ...errorResponses(...a.statuses) },
          },
        },
        async (req) => {
          const { platform } = platformOf(req);
          const id = req.params.transactionId;
          const b = req.body as { reason?: string; receiptDeliveryConfirmedAt?: string; receiverCustomerInfo?: Record<string, string> };
          return retryOnConflict(() => ctx.db.transaction().execute((trx) => {
            switch (a.operationId) {
              case 'cancelTransaction':
                return cancelTransaction(trx, ctx, platform, id);
              case 'confirmReceiptDelivery':
                return confirmReceipt(trx, ctx, platform, id, b.receiptDeliveryConfirmedAt);
              case 'approvePendingPayment':
                return decideIncoming(trx, ctx, platform, id, { approve: true, receiverCustomerInfo: b.receiverCustomerInfo });
              default:
                return decideIncoming(trx, ctx, platform, id, { approve: false, reason: b.reason });
            }
          }));
        },
      );
    }

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
          operationId: 'sandboxSend', tags: ['Sandbox'], summary: "Pay a real-time funded quote's payment instructions (sandbox)", security,
          body: Obj({ quoteId: IdString('Quote:019542f5-b3e7-7d02-8000-000000000001'), currencyCode: CurrencyCode, currencyAmount: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })) }, { title: 'SandboxSendRequest' }),
          response: { 200: TransactionSchema, ...errorResponses(400, 401, 403, 404, 409) },
        },
      },
      async (req) => {
        const { platform } = platformOf(req);
        return retryOnConflict(() => ctx.db.transaction().execute((trx) => sandboxSend(trx, ctx, platform, req.body)));
      },
    );

    app.post(
      '/sandbox/uma/receive',
      {
        config: { auth: 'platform', permission: 'TRANSACT' },
        preHandler: sandboxOnly,
        schema: {
          operationId: 'sandboxReceive', tags: ['Sandbox'], summary: 'Simulate an incoming UMA payment to a customer (sandbox)', security,
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
      async (req) => {
        const { platform } = platformOf(req);
        return retryOnConflict(() => ctx.db.transaction().execute((trx) => sandboxUmaReceive(trx, ctx, platform, req.body)));
      },
    );
  };
}

