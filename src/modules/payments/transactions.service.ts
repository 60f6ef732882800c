/**
 * Transactions after the fact: listing, cancelling a pending bank-rail transfer, confirming receipt
 * delivery, approving or rejecting an incoming payment that waits for the platform (by the API or
 * by the answer to its INCOMING_PAYMENT.PENDING webhook), and the two
 * sandbox simulations that start payments from outside (paying a real-time funded quote, and an
 * incoming UMA payment).
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { ApiError, errors } from '../../http/errors.ts';
import { decodeCursor, toPage } from '../../http/pagination.ts';
import { scheduleJob } from '../../jobs/jobs.ts';
import { findCurrency } from '../../lib/currencies.ts';
import { sandboxRate, sendingForReceiving } from '../../lib/rates.ts';
import { normalizeDateTime, platformNowMs } from '../../lib/time.ts';
import type { Database, PlatformRow, TransactionRow } from '../../store/schema.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { newFundingReference } from '../internal-accounts/internal-accounts.service.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { completePayment, emitPayment, envFor, failPayment, holdOutgoing, scheduleOutcome, transactionToWire, type Env } from './payment-engine.ts';
import type { TransactionListQueryT, TransactionWire } from './payments.schemas.ts';
import { sandboxUmaParty } from './sandbox-outcomes.ts';
import { findQuote, findTransaction, insertTransaction, listTransactions, transitionQuote, transitionTransaction, updateTransaction } from './transactions.repo.ts';
import { INCOMING_FAILURE_REASONS } from '../../webhooks/catalogue.ts';

/** The live API gives the platform 5 seconds to approve or reject an incoming payment. */
export const APPROVAL_WINDOW_MS = 5_000;
export const JOB_APPROVAL_TIMEOUT = 'PAYMENT_APPROVAL_TIMEOUT';

export async function getTransaction(db: Kysely<Database>, platformId: string, id: string): Promise<TransactionRow> {
  const t = await findTransaction(db, platformId, id);
  if (!t) throw new ApiError(404, 'TRANSACTION_NOT_FOUND', `Transaction ${id} not found`);
  return t;
}

export async function listTransactionPage(db: Kysely<Database>, platformId: string, q: TransactionListQueryT) {
  const limit = q.limit ?? 20;
  const { rows, totalCount } = await listTransactions(
    db,
    platformId,
    {
      customerId: q.customerId,
      platformCustomerId: q.platformCustomerId,
      accountIdentifier: q.accountIdentifier,
      senderAccountIdentifier: q.senderAccountIdentifier,
      receiverAccountIdentifier: q.receiverAccountIdentifier,
      status: q.status,
      type: q.type,
      reference: q.reference,
      startDate: normalizeDateTime(q.startDate),
      endDate: normalizeDateTime(q.endDate),
    },
    { limit, afterId: decodeCursor(q.cursor), order: q.sortOrder ?? 'desc' },
  );
  return toPage(rows, limit, totalCount, transactionToWire);
}

/** Cancels a pending bank-rail transfer; its held money goes back (refund reason USER_CANCELLATION). */
export async function cancelTransaction(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, id: string): Promise<TransactionWire> {
  const t = await findTransaction(trx, platform.id, id, ctx.store.kind);
  if (!t) throw new ApiError(404, 'TRANSACTION_NOT_FOUND', `Transaction ${id} not found`);
  if (t.kind !== 'TRANSFER_OUT' && t.kind !== 'TRANSFER_IN') {
    throw errors.invalidInput(`Only pending bank-rail transfers can be cancelled; ${id} is a ${t.kind === 'QUOTE' ? 'quote payment' : 'UMA payment'}`);
  }
  // docs/payments.md: a cancelled pull ends like a failed one (COLLECTION_FAILED); a cancelled push
  // carries no failure reason, only its refund with reason USER_CANCELLATION.
  const reason = t.kind === 'TRANSFER_IN' ? 'COLLECTION_FAILED' : null;
  const failed = t.status === 'PENDING' ? await failPayment(envFor(trx, ctx, platform), t, reason, 'COMPLETED', 'USER_CANCELLATION') : undefined;
  if (!failed) throw new ApiError(409, 'TRANSACTION_NOT_CANCELLABLE', `Transaction ${id} is ${t.status} and can no longer be cancelled`);
  return transactionToWire(failed);
}

export async function confirmReceipt(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, id: string, at: string | undefined): Promise<TransactionWire> {
  const t = await getTransaction(trx, platform.id, id);
  const env = envFor(trx, ctx, platform);
  const when = normalizeDateTime(at) ?? env.at;
  await updateTransaction(trx, t.id, { receipt_delivery_confirmed_at: when, updated_at: env.at });
  return transactionToWire({ ...t, receipt_delivery_confirmed_at: when, updated_at: env.at });
}

function awaitingApproval(t: TransactionRow): boolean {
  return t.kind === 'UMA_RECEIVE' && t.status === 'PENDING' && !!t.extra && (JSON.parse(t.extra) as { awaitingApproval?: boolean }).awaitingApproval === true;
}

/** The platform's decision on an incoming payment waiting for it. */
type Decision =
  | { approve: true; receiverCustomerInfo?: Record<string, unknown> | undefined }
  | { approve: false; status: 'REJECTED' | 'FAILED'; reason: string | null; requiredFields?: string[] | undefined };

/** Approves (credits) or rejects an incoming payment waiting for the platform's decision. */
export async function decideIncoming(
  trx: Kysely<Database>,
  ctx: AppContext,
  platform: PlatformRow,
  id: string,
  decision: { approve: true; receiverCustomerInfo?: Record<string, string> | undefined } | { approve: false; reason?: string | undefined },
): Promise<TransactionWire> {
  const t = await findTransaction(trx, platform.id, id, ctx.store.kind);
  if (!t) throw new ApiError(404, 'TRANSACTION_NOT_FOUND', `Transaction ${id} not found`);
  if (!awaitingApproval(t)) {
    throw new ApiError(409, 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL', `Transaction ${id} is not waiting for the platform's approval`);
  }
  const d: Decision = decision.approve ? decision : { approve: false, status: 'REJECTED', reason: decision.reason ?? null };
  return transactionToWire(await applyDecision(envFor(trx, ctx, platform), t, d));
}

/** Carries a decision out on a transaction known to await approval (the caller holds its row). */
async function applyDecision(env: Env, t: TransactionRow, d: Decision): Promise<TransactionRow> {
  const extra: Record<string, unknown> = { ...(JSON.parse(t.extra!) as Record<string, unknown>), awaitingApproval: false };
  if (d.approve && d.receiverCustomerInfo) extra.receiverCustomerInfo = d.receiverCustomerInfo;
  if (!d.approve && d.requiredFields) extra.requiredFields = d.requiredFields;
  // `failureReason` only ever carries the live enum's values; the platform's own words for a
  // rejection (e.g. RESTRICTED_JURISDICTION) are kept with the transaction, not on the wire.
  let reason = d.approve ? null : d.reason;
  if (!d.approve && reason !== null && !(INCOMING_FAILURE_REASONS as readonly string[]).includes(reason)) {
    extra.rejectionReason = reason;
    reason = null;
  }
  const row = { ...t, extra: JSON.stringify(extra) };
  await updateTransaction(env.trx, t.id, { extra: row.extra });
  if (d.approve) return (await completePayment(env, row)) ?? row;
  return rejectIncoming(env, row, d.status, reason);
}

async function rejectIncoming(env: Env, t: TransactionRow, status: 'REJECTED' | 'FAILED', reason: string | null): Promise<TransactionRow> {
  const set = { status, failure_reason: reason, updated_at: env.at };
  if (!(await transitionTransaction(env.trx, t.id, ['PENDING'], set))) return t;
  const next = { ...t, ...set };
  await emitPayment(env, next, 'FAILED');
  return next;
}

/**
 * The approval window's timeout job (the platform did not decide in time), and the webhook reply
 * hook through which the receiver's answer decides.
 */
export function registerIncomingJobs(ctx: AppContext): void {
  ctx.jobHandlers.set(JOB_APPROVAL_TIMEOUT, async (trx, job, platform) => {
    const { transactionId } = JSON.parse(job.payload) as { transactionId: string };
    const t = await findTransaction(trx, platform.id, transactionId, ctx.store.kind);
    if (t && awaitingApproval(t)) await rejectIncoming(envFor(trx, ctx, platform), t, 'FAILED', 'PAYMENT_APPROVAL_TIMED_OUT');
  });
  registerIncomingApproval(ctx);
}

/** The longest failure reason kept from a receiver's 403 (as POST /transactions/{id}/reject allows). */
const MAX_REASON_LENGTH = 255;

/**
 * The receiver's answer to `INCOMING_PAYMENT.PENDING` for a payment awaiting approval decides it
 * (facts §9.3), in the transaction that records the delivery attempt:
 * - 200 approves; a JSON body's `receiverCustomerInfo` object is kept as the approve API keeps it;
 * - 202 defers to POST /transactions/{id}/approve|reject (the approval-timeout job still applies);
 * - 403 rejects, keeping the body's `reason` as the failure reason, as the reject API does;
 * - 422 rejects as more information required (MISSING_MANDATORY_PAYEE_DATA), keeping `requiredFields`;
 * - anything else, or no answer, fails it with PAYMENT_APPROVAL_WEBHOOK_ERROR (and the delivery).
 * Payments no longer awaiting approval (bank rails, auto-approved, already decided or timed out)
 * are untouched: for them the event is informational.
 */
function registerIncomingApproval(ctx: AppContext): void {
  ctx.webhooks.onReply('INCOMING_PAYMENT.PENDING', async (trx, reply) => {
    const t = await findTransaction(trx, reply.platform.id, reply.event.resource_id, ctx.store.kind);
    if (!t || !awaitingApproval(t)) return undefined;
    const env = envFor(trx, ctx, reply.platform);
    const body = jsonObject(reply.body);
    switch (reply.status) {
      case 200: {
        const info = body?.receiverCustomerInfo;
        await applyDecision(env, t, { approve: true, receiverCustomerInfo: isPlainObject(info) ? info : undefined });
        return { delivered: true };
      }
      case 202:
        return { delivered: true };
      case 403: {
        const reason = typeof body?.reason === 'string' && body.reason !== '' ? body.reason.slice(0, MAX_REASON_LENGTH) : null;
        await applyDecision(env, t, { approve: false, status: 'REJECTED', reason });
        return { delivered: true };
      }
      case 422: {
        const fields = Array.isArray(body?.requiredFields) ? body.requiredFields.filter((f): f is string => typeof f === 'string') : undefined;
        await applyDecision(env, t, { approve: false, status: 'REJECTED', reason: 'MISSING_MANDATORY_PAYEE_DATA', requiredFields: fields });
        return { delivered: true };
      }
      default:
        await applyDecision(env, t, { approve: false, status: 'FAILED', reason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' });
        return { delivered: false };
    }
  });
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A response body parsed as a JSON object, or undefined (empty, not JSON, cut at 4 KiB, not an object). */
function jsonObject(text: string | null): Record<string, unknown> | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return isPlainObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** POST /sandbox/uma/receive: an incoming UMA payment to one of the platform's customers. */
export async function sandboxUmaReceive(
  trx: Kysely<Database>,
  ctx: AppContext,
  platform: PlatformRow,
  body: { senderUmaAddress: string; receiverUmaAddress?: string | undefined; customerId?: string | undefined; receivingCurrencyCode: string; receivingCurrencyAmount: number },
): Promise<TransactionWire> {
  const env = envFor(trx, ctx, platform);
  if ((body.receiverUmaAddress === undefined) === (body.customerId === undefined)) {
    throw errors.invalidInput('Give exactly one of receiverUmaAddress and customerId', [{ field: 'receiverUmaAddress', message: 'exactly one of receiverUmaAddress and customerId' }]);
  }
  const sender = sandboxUmaParty(body.senderUmaAddress, ctx.config.sandboxUmaDomain, 'senderUmaAddress');
  const cur = body.receivingCurrencyCode;
  if (!findCurrency(cur)) throw errors.invalidCurrency(cur, 'receivingCurrencyCode');

  let customer;
  if (body.customerId) customer = await findCustomer(trx, platform.id, body.customerId);
  else customer = await trx.selectFrom('customers').selectAll().where('platform_id', '=', platform.id).where('uma_address', '=', body.receiverUmaAddress!.toLowerCase()).where('deleted_at', 'is', null).executeTakeFirst();
  if (!customer || customer.deleted_at) throw new ApiError(404, 'USER_NOT_FOUND', 'No such receiving customer on this platform');
  const account = await trx.selectFrom('internal_accounts').selectAll().where('platform_id', '=', platform.id).where('customer_id', '=', customer.id).where('currency', '=', cur).where('type', '!=', 'EMBEDDED_WALLET').orderBy('id').executeTakeFirst();
  if (!account) throw new ApiError(400, 'INVALID_CURRENCY', `Customer ${customer.id} holds no ${cur} account`, { errors: [{ field: 'receivingCurrencyCode', message: `the customer has no ${cur} internal account` }] });

  const rate = sandboxRate(sender.currency, cur, platformNowMs(ctx.deps.clock, platform));
  const sent = Number(sendingForReceiving(body.receivingCurrencyAmount, rate));
  const approvalNeeded = settingsOf(platform).webhookEndpoint !== undefined;
  const t: TransactionRow = {
    id: ctx.deps.ids.next('Transaction'),
    platform_id: platform.id,
    customer_id: customer.id,
    platform_customer_id: customer.platform_customer_id,
    type: 'INCOMING',
    direction: 'CREDIT',
    status: 'PENDING',
    kind: 'UMA_RECEIVE',
    source: JSON.stringify({ sourceType: 'UMA_ADDRESS', umaAddress: body.senderUmaAddress, currency: sender.currency }),
    destination: JSON.stringify({ destinationType: 'ACCOUNT', accountId: account.id, currency: cur }),
    sender_account_id: body.senderUmaAddress.toLowerCase(),
    receiver_account_id: account.id,
    internal_account_id: account.id,
    sent_amount: sent,
    sent_currency: sender.currency,
    received_amount: body.receivingCurrencyAmount,
    received_currency: cur,
    fees: 0,
    platform_fees: 0,
    exchange_rate: rate.text,
    quote_id: null,
    description: null,
    reference: newFundingReference(ctx.deps),
    payment_rail: null,
    scenario: JSON.stringify(sender.scenario),
    failure_reason: null,
    refund: null,
    settled_at: null,
    receipt_delivery_confirmed_at: null,
    extra: JSON.stringify({ awaitingApproval: approvalNeeded }),
    created_at: env.at,
    updated_at: env.at,
  };
  await insertTransaction(trx, t);
  await emitPayment(env, t, 'PENDING');
  if (sender.scenario.kind === 'FAIL') return transactionToWire(await rejectIncoming(env, t, 'FAILED', sender.scenario.reason));
  if (!approvalNeeded) return transactionToWire((await completePayment(env, t)) ?? t);
  await scheduleJob(trx, ctx.deps.clock, { id: ctx.deps.ids.next('Job'), platformId: platform.id, kind: JOB_APPROVAL_TIMEOUT, payload: { transactionId: t.id }, delayMs: APPROVAL_WINDOW_MS, at: env.at });
  return transactionToWire(t);
}

/** POST /sandbox/send: the payer pays a real-time funded quote's instructions; the quote executes. */
export async function sandboxSend(
  trx: Kysely<Database>,
  ctx: AppContext,
  platform: PlatformRow,
  body: { quoteId: string; currencyCode: string; currencyAmount?: number | undefined },
): Promise<TransactionWire> {
  const env = envFor(trx, ctx, platform);
  const quote = await findQuote(trx, platform.id, body.quoteId, ctx.store.kind);
  if (!quote) throw new ApiError(404, 'QUOTE_NOT_FOUND', `Quote ${body.quoteId} not found`);
  if (!quote.funding_reference) throw errors.invalidField('quoteId', 'is not a real-time funded quote');
  if (quote.status !== 'PENDING' || platformNowMs(ctx.deps.clock, platform) >= Date.parse(quote.expires_at)) {
    throw errors.conflict(`Quote ${quote.id} is ${quote.status === 'PENDING' ? 'EXPIRED' : quote.status} and cannot be funded`);
  }
  if (body.currencyCode !== quote.sending_currency) {
    throw new ApiError(400, 'INVALID_CURRENCY', `The quote is funded in ${quote.sending_currency}`, { errors: [{ field: 'currencyCode', message: `must be ${quote.sending_currency}` }] });
  }
  const txn = await getTransaction(trx, platform.id, quote.transaction_id);
  const paid = body.currencyAmount ?? Number(quote.total_sending_amount);
  await transitionQuote(trx, quote.id, ['PENDING'], { status: 'PROCESSING', updated_at: env.at });
  await transitionTransaction(trx, txn.id, ['PENDING'], { status: 'PROCESSING', updated_at: env.at });
  const processing = { ...txn, status: 'PROCESSING', updated_at: env.at };
  if (paid !== Number(quote.total_sending_amount)) {
    // The payer's money never entered the ledger: it bounces back to them.
    const set = { status: 'FAILED', failure_reason: 'FUNDING_AMOUNT_MISMATCH', updated_at: env.at };
    await transitionTransaction(trx, txn.id, ['PROCESSING'], set);
    await transitionQuote(trx, quote.id, ['PROCESSING'], { status: 'FAILED', updated_at: env.at });
    const failed = { ...processing, ...set };
    await emitPayment(env, failed, 'FAILED');
    return transactionToWire(failed);
  }
  await holdOutgoing(env, processing);
  await emitPayment(env, processing, 'PROCESSING');
  return transactionToWire(await scheduleOutcome(env, processing));
}
