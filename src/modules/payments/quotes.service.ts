/**
 * Quotes: price a payment (rate, fees, amounts), lock it for review or execute it at once, and
 * expire it. A quote's transaction exists from the start (status PENDING), moves to PROCESSING on
 * execution, and then follows the sandbox outcome of its destination.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { scheduleJob } from '../../jobs/jobs.ts';
import { ApiError, errors } from '../../http/errors.ts';
import { currency } from '../../lib/currencies.ts';
import { feesFor, receivingAmount, sandboxRate, sendingForReceiving, type FeeTerms, type Rate } from '../../lib/rates.ts';
import { platformNowMs } from '../../lib/time.ts';
import type { Database, PlatformRow, QuoteRow, TransactionRow } from '../../store/schema.ts';
import { crossCurrencyFeeTerms, sendingLimits } from '../exchange-rates/exchange-rates.service.ts';
import { newFundingReference } from '../internal-accounts/internal-accounts.service.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { batchEvents, emitPayment, envFor, failsAtOnce, holdOutgoing, scheduleOutcome, type Env } from './payment-engine.ts';
import type { QuoteCreate, QuoteWire } from './payments.schemas.ts';
import { resolveDestination, resolveSource, type ResolvedDestination, type ResolvedSource } from './parties.ts';
import { insertQuoteRow, insertTransactionRow } from './payment-statements.ts';
import { findQuote, transitionQuote, transitionTransaction } from './transactions.repo.ts';
import { checkExecuteStamp } from '../auth/wallet-actions.service.ts';

/** How long a locked quote's rate holds: the live API's "typically 1–5 minutes". */
export const QUOTE_TTL_MS = 5 * 60_000;
export const JOB_QUOTE_EXPIRE = 'QUOTE_EXPIRE';

export function quoteToWire(q: QuoteRow, nowMs: number): QuoteWire {
  const status = q.status === 'PENDING' && nowMs >= Date.parse(q.expires_at) ? 'EXPIRED' : q.status;
  const w: QuoteWire = {
    id: q.id,
    status: status as QuoteWire['status'],
    createdAt: q.created_at,
    expiresAt: q.expires_at,
    source: JSON.parse(q.source) as QuoteWire['source'],
    destination: JSON.parse(q.destination) as QuoteWire['destination'],
    sendingCurrency: currency(q.sending_currency),
    receivingCurrency: currency(q.receiving_currency),
    totalSendingAmount: Number(q.total_sending_amount),
    totalReceivingAmount: Number(q.total_receiving_amount),
    exchangeRate: Number(q.exchange_rate),
    feesIncluded: Number(q.fees_included),
    platformFeesIncluded: Number(q.platform_fees_included),
    transactionId: q.transaction_id,
  };
  if (q.payment_instructions) w.paymentInstructions = JSON.parse(q.payment_instructions) as QuoteWire['paymentInstructions'];
  if (q.description) w.description = q.description;
  return w;
}

interface Priced {
  total: number;
  receiving: number;
  fees: number;
  rate: Rate;
}

/** Amounts for a locked side. Fees apply to cross-currency quotes only (the live FeeType). */
export function price(body: Pick<QuoteCreate, 'lockedCurrencySide' | 'lockedCurrencyAmount'>, rate: Rate, terms: FeeTerms | undefined): Priced {
  const t = rate.from === rate.to ? undefined : terms;
  if (body.lockedCurrencySide === 'SENDING') {
    const total = BigInt(body.lockedCurrencyAmount);
    const fees = feesFor(total, t);
    return finish(total, receivingAmount(total, fees, rate), fees.total, rate);
  }
  const receiving = BigInt(body.lockedCurrencyAmount);
  const net = sendingForReceiving(receiving, rate);
  // Smallest total T with T − fee(T) ≥ net: start from the closed form, then step to the exact edge.
  const bps = BigInt(t?.variableFeeBps ?? 0);
  const fixed = BigInt(t?.fixedFee ?? 0);
  let total = bps >= 10_000n ? net + fixed : ((net + fixed) * 10_000n + (10_000n - bps) - 1n) / (10_000n - bps);
  const netOf = (x: bigint) => x - feesFor(x, t).total;
  while (netOf(total) < net) total += 1n;
  while (total > 1n && netOf(total - 1n) >= net) total -= 1n;
  return finish(total, receiving, feesFor(total, t).total, rate);
}

function finish(total: bigint, receiving: bigint, fees: bigint, rate: Rate): Priced {
  if (total > BigInt(Number.MAX_SAFE_INTEGER) || receiving > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw errors.amountOutOfRange('The quote amounts exceed the largest supported amount', [{ field: 'lockedCurrencyAmount', message: 'too large' }]);
  }
  if (receiving <= 0n) {
    throw errors.amountOutOfRange('Nothing would arrive: the amount does not cover the fees', [{ field: 'lockedCurrencyAmount', message: 'too small to cover the fees' }]);
  }
  return { total: Number(total), receiving: Number(receiving), fees: Number(fees), rate };
}

/** Creates a quote (and its PENDING transaction); executes it at once when asked. */
export async function createQuote(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, body: QuoteCreate): Promise<QuoteWire> {
  const env = envFor(trx, ctx, platform);
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  const source = await resolveSource(env, body.source);
  const destination = await resolveDestination(env, body.destination, ctx.config.sandboxUmaDomain);
  const settings = settingsOf(platform);

  const sendCfg = settings.supportedCurrencies.find((c) => c.currencyCode === source.currency);
  if (!sendCfg || !sendCfg.enabledTransactionTypes.includes('OUTGOING')) {
    throw new ApiError(400, 'INVALID_CURRENCY', `The platform does not send ${source.currency}`, { errors: [{ field: 'source', message: `sending currency ${source.currency} is not enabled for outgoing payments` }] });
  }
  if (body.immediatelyExecute && source.walletAccount) {
    throw errors.invalidField('immediatelyExecute', 'is not supported for EMBEDDED_WALLET sources: the execution must be signed');
  }
  const rate = sandboxRate(source.currency, destination.currency, nowMs);
  const priced = price(body, rate, crossCurrencyFeeTerms(settings, source.currency));
  const limits = sendingLimits(settings, source.currency);
  if (priced.total < limits.min || priced.total > limits.max) {
    throw errors.amountOutOfRange(`The sending amount ${priced.total} is outside ${limits.min}..${limits.max} ${source.currency}`, [
      { field: 'lockedCurrencyAmount', message: `sending amount must be within ${limits.min}..${limits.max}` },
    ]);
  }

  const quoteId = ctx.deps.ids.next('Quote');
  const reference = newFundingReference(ctx.deps);
  const txn = newQuoteTransaction(env, body, source, destination, priced, quoteId, reference);
  const quote: QuoteRow = {
    id: quoteId,
    platform_id: platform.id,
    customer_id: source.customerId,
    status: 'PENDING',
    transaction_id: txn.id,
    source: JSON.stringify(body.source),
    destination: JSON.stringify(body.destination),
    sending_currency: source.currency,
    receiving_currency: destination.currency,
    locked_side: body.lockedCurrencySide,
    locked_amount: body.lockedCurrencyAmount,
    total_sending_amount: priced.total,
    total_receiving_amount: priced.receiving,
    exchange_rate: rate.text,
    fees_included: priced.fees,
    platform_fees_included: priced.fees,
    description: body.description ?? null,
    payment_instructions: paymentInstructions(source, reference, priced.total),
    funding_reference: source.realtime ? reference : null,
    expires_at: new Date(Date.parse(env.at) + QUOTE_TTL_MS).toISOString(),
    created_at: env.at,
    updated_at: env.at,
  };
  if (body.immediatelyExecute && !source.realtime) return quoteToWire(await createExecuted(env, quote, txn), nowMs);
  await insertTransactionRow.run(trx, txn);
  await insertQuoteRow.run(trx, quote);
  await emitPayment(env, txn, 'PENDING');
  await scheduleJob(trx, ctx.deps.clock, { id: ctx.deps.ids.next('Job'), platformId: platform.id, kind: JOB_QUOTE_EXPIRE, payload: { quoteId }, delayMs: QUOTE_TTL_MS, at: env.at });
  return quoteToWire(quote, nowMs);
}

function newQuoteTransaction(env: Env, body: QuoteCreate, s: ResolvedSource, d: ResolvedDestination, p: Priced, quoteId: string, reference: string): TransactionRow {
  const extra: Record<string, unknown> = {};
  if (body.remittanceInformation) extra.remittanceInformation = body.remittanceInformation;
  if (body.purposeOfPayment) extra.purposeOfPayment = body.purposeOfPayment;
  return {
    id: env.ctx.deps.ids.next('Transaction'),
    platform_id: env.platform.id,
    customer_id: s.customerId ?? env.platform.id,
    platform_customer_id: s.platformCustomerId ?? env.platform.id,
    type: 'OUTGOING',
    direction: 'DEBIT',
    status: 'PENDING',
    kind: 'QUOTE',
    source: JSON.stringify(s.wire),
    destination: JSON.stringify(d.wire),
    sender_account_id: s.accountId,
    receiver_account_id: d.accountId,
    internal_account_id: s.internalAccountId,
    sent_amount: p.total,
    sent_currency: s.currency,
    received_amount: p.receiving,
    received_currency: d.currency,
    fees: p.fees,
    platform_fees: p.fees,
    exchange_rate: p.rate.text,
    quote_id: quoteId,
    description: body.description ?? null,
    reference,
    payment_rail: d.paymentRail,
    scenario: JSON.stringify(d.scenario),
    failure_reason: null,
    refund: null,
    settled_at: null,
    receipt_delivery_confirmed_at: null,
    extra: Object.keys(extra).length ? JSON.stringify(extra) : null,
    created_at: env.at,
    updated_at: env.at,
  };
}

/** Real-time funded quotes carry the instructions to pay them (with the memo reference). */
function paymentInstructions(s: ResolvedSource, reference: string, amount: number): string | null {
  if (s.walletAccount) {
    const payload = JSON.stringify({ amount, currency: s.currency, quoteReference: reference, sourceAccountId: s.accountId });
    return JSON.stringify([{ accountOrWalletInfo: { accountType: 'EMBEDDED_WALLET', payloadToSign: payload } }]);
  }
  if (!s.realtime) return null;
  return JSON.stringify([
    {
      instructionsNotes: `Pay exactly ${amount} (smallest unit of ${s.currency}) with the reference ${reference}; in the sandbox use POST /sandbox/send`,
      accountOrWalletInfo: s.fundingInfo(reference),
    },
  ]);
}

/**
 * A quote executed as it is created: its quote and transaction are written PROCESSING at once
 * (nobody can have seen them PENDING), with the same events, hold and outcome as creating it and
 * then executing it.
 */
async function createExecuted(env: Env, quote: QuoteRow, txn: TransactionRow): Promise<QuoteRow> {
  const processing = { ...txn, status: 'PROCESSING' };
  const after = await batchEvents(env, async () => {
    await emitPayment(env, txn, 'PENDING');
    if (env.ctx.store.kind === 'postgres') {
      // The hold (its balance UPDATE locks the source account's row until COMMIT) comes after the
      // rows no other request touches, so payments of one account queue on it for less time. So
      // does the delayed outcome's job, unless the outcome fails the payment at once (that moves
      // the held money back, so it follows the hold).
      await insertTransactionRow.run(env.trx, processing);
      await insertQuoteRow.run(env.trx, { ...quote, status: 'PROCESSING' });
      const jobFirst = !failsAtOnce(processing);
      if (jobFirst) await scheduleOutcome(env, processing);
      await holdOutgoing(env, processing);
      await emitPayment(env, processing, 'PROCESSING');
      return jobFirst ? processing : scheduleOutcome(env, processing);
    }
    // SQLite: the hold is the first write, so a shortfall refuses the request before anything was
    // written (which keeps the refusal from costing the other requests of its commit group).
    await holdOutgoing(env, processing);
    await insertTransactionRow.run(env.trx, processing);
    await insertQuoteRow.run(env.trx, { ...quote, status: 'PROCESSING' });
    await emitPayment(env, processing, 'PROCESSING');
    return scheduleOutcome(env, processing);
  });
  // A payment that failed inside the request has already moved its quote to FAILED.
  return { ...quote, status: after.status === 'FAILED' ? 'FAILED' : 'PROCESSING' };
}

/** Takes the money and starts the payment: quote and transaction move to PROCESSING. */
export async function execute(env: Env, quote: QuoteRow, txn: TransactionRow): Promise<QuoteRow> {
  if (!(await transitionTransaction(env.trx, txn.id, ['PENDING'], { status: 'PROCESSING', updated_at: env.at }))) {
    throw errors.conflict(`Quote ${quote.id} was already executed`);
  }
  if (!(await transitionQuote(env.trx, quote.id, ['PENDING'], { status: 'PROCESSING', updated_at: env.at }))) {
    throw errors.conflict(`Quote ${quote.id} was already executed`);
  }
  const processing = { ...txn, status: 'PROCESSING', updated_at: env.at };
  await holdOutgoing(env, processing);
  await emitPayment(env, processing, 'PROCESSING');
  const after = await scheduleOutcome(env, processing);
  // A payment that failed inside the request has already moved its quote to FAILED.
  return { ...quote, status: after.status === 'FAILED' ? 'FAILED' : 'PROCESSING', updated_at: env.at };
}

/** POST /quotes/{id}/execute for a locked quote funded from an account. */
export async function executeQuote(
  trx: Kysely<Database>,
  ctx: AppContext,
  platform: PlatformRow,
  quoteId: string,
  walletSignature: string | undefined,
): Promise<QuoteWire> {
  const env = envFor(trx, ctx, platform);
  const nowMs = platformNowMs(ctx.deps.clock, platform);
  const quote = await findQuote(trx, platform.id, quoteId, ctx.store.kind);
  if (!quote) throw new ApiError(404, 'QUOTE_NOT_FOUND', `Quote ${quoteId} not found`);
  if (quote.status !== 'PENDING') throw errors.conflict(`Quote ${quoteId} is ${quote.status} and cannot be executed`);
  if (nowMs >= Date.parse(quote.expires_at)) throw errors.conflict(`Quote ${quoteId} expired at ${quote.expires_at}`);
  const src = JSON.parse(quote.source) as { sourceType: string };
  if (src.sourceType === 'REALTIME_FUNDING') {
    throw errors.invalidInput('A real-time funded quote executes when its payment instructions are paid (POST /sandbox/send in the sandbox)');
  }
  const txn = await trx.selectFrom('transactions').selectAll().where('id', '=', quote.transaction_id).executeTakeFirstOrThrow();
  const wallet = txn.internal_account_id
    ? await trx.selectFrom('internal_accounts').select('type').where('id', '=', txn.internal_account_id).executeTakeFirst()
    : undefined;
  if (wallet?.type === 'EMBEDDED_WALLET') {
    // Embedded-wallet sources need a session signature over the quote's payloadToSign.
    const instructions = JSON.parse(quote.payment_instructions ?? '[]') as { accountOrWalletInfo: { accountType: string; payloadToSign?: string } }[];
    const payload = instructions.find((i) => i.accountOrWalletInfo.accountType === 'EMBEDDED_WALLET')?.accountOrWalletInfo.payloadToSign ?? '';
    await checkExecuteStamp(trx, ctx, platform, walletSignature, txn.internal_account_id!, payload);
  }
  return quoteToWire(await execute(env, quote, txn), nowMs);
}

/** Job: a locked quote nobody executed expires with its transaction. */
export function registerQuoteJobs(ctx: AppContext): void {
  ctx.jobHandlers.set(JOB_QUOTE_EXPIRE, async (trx, job, platform) => {
    const { quoteId } = JSON.parse(job.payload) as { quoteId: string };
    const env = envFor(trx, ctx, platform);
    if (!(await transitionQuote(trx, quoteId, ['PENDING'], { status: 'EXPIRED', updated_at: env.at }))) return;
    const quote = await findQuote(trx, platform.id, quoteId);
    if (!quote) return;
    const txn = await trx.selectFrom('transactions').selectAll().where('id', '=', quote.transaction_id).executeTakeFirst();
    if (!txn) return;
    if (await transitionTransaction(trx, txn.id, ['PENDING'], { status: 'EXPIRED', failure_reason: 'QUOTE_EXPIRED', updated_at: env.at })) {
      await emitPayment(env, { ...txn, status: 'EXPIRED', failure_reason: 'QUOTE_EXPIRED', updated_at: env.at }, 'EXPIRED');
    }
  });
}
