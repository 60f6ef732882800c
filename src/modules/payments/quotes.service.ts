/**
 * Quotes: price a payment (rate, fees, amounts), lock it for review or execute it at once, and
 * expire it. A quote's transaction exists from the start (status PENDING), moves to PROCESSING on
 * execution, and then follows the sandbox outcome of its destination.
 */
import type { Kysely } from 'kysely';
import { errors } from '../../http/errors.ts';
import type { JobHandler } from '../../jobs/jobs.ts';
import { currency } from '../../lib/currencies.ts';
import { feesFor, receivingAmount, sandboxRate, sendingForReceiving, type FeeTerms, type Rate } from '../../lib/rates.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import type { Database, PlatformRow, QuoteRow, TransactionRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import type { Signed } from '../auth/signed-retry.ts';
import { authorizeWalletExecute, checkExecuteStamp } from '../auth/wallet-actions.service.ts';
import { crossCurrencyFeeTerms, sendingLimits } from '../exchange-rates/exchange-rates.service.ts';
import { findInternalAccount } from '../internal-accounts/internal-accounts.repo.ts';
import { newFundingReference } from '../internal-accounts/internal-accounts.service.ts';
import { honourLookup } from '../lookups/lookups.service.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { resolveDestination, resolveSource, type ResolvedDestination, type ResolvedSource } from './parties.ts';
import { emitPayment, type Env, envOf, failsAtOnce, holdOutgoing, requireFunds, scheduleOutcome } from './payment-engine.ts';
import type { QuoteCreate, QuoteWire } from './payments.schemas.ts';
import { rateDetailsOf } from './rate-details.ts';
import { expectedSettlementAt } from './sandbox-outcomes.ts';
import { findQuote, findTransaction, insertQuote, insertTransaction, transitionQuote, transitionTransaction } from './payments.repo.ts';

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
  const rateDetails = rateDetailsOf({
    exchangeRate: q.exchange_rate,
    fees: Number(q.fees_included),
    feeFixed: q.fee_fixed,
    feeVariableBps: q.fee_variable_bps,
  });
  if (rateDetails) w.rateDetails = rateDetails;
  if (q.payment_instructions) w.paymentInstructions = JSON.parse(q.payment_instructions) as QuoteWire['paymentInstructions'];
  if (q.description) w.description = q.description;
  return w;
}

interface Priced {
  total: number;
  receiving: number;
  fees: number;
  rate: Rate;
  /** The fee terms applied (none: no fees), kept with the quote for its rate details. */
  terms: FeeTerms | undefined;
}

/**
 * Amounts for a locked side. Fees apply to cross-currency quotes only (the live FeeType).
 * Finite for every input: the receiving side is a bounded binary search, and a fee of 100 % (which
 * no total can pay) is a 400 naming the platform's fee configuration.
 */
export function price(
  body: Pick<QuoteCreate, 'lockedCurrencySide' | 'lockedCurrencyAmount'>,
  rate: Rate,
  terms: FeeTerms | undefined,
  applies: 'cross-currency' | 'always' = 'cross-currency',
): Priced {
  const t = applies === 'cross-currency' && rate.from === rate.to ? undefined : terms;
  if (body.lockedCurrencySide === 'SENDING') {
    const total = BigInt(body.lockedCurrencyAmount);
    const fees = feesFor(total, t);
    return finish(total, receivingAmount(total, fees, rate), fees.total, rate, t);
  }
  const receiving = BigInt(body.lockedCurrencyAmount);
  const total = totalForNet(sendingForReceiving(receiving, rate), t);
  return finish(total, receiving, feesFor(total, t).total, rate, t);
}

/**
 * The smallest total T with T − fee(T) ≥ net. T − fee(T) never decreases as T grows while the
 * variable fee is under 100 %, so a binary search between T ≥ net + fixed and an upper bound from
 * the closed form finds it in at most ~64 steps. At 100 % it never grows: no total pays `net`.
 */
export function totalForNet(net: bigint, t: FeeTerms | undefined): bigint {
  const bps = BigInt(t?.variableFeeBps ?? 0);
  const fixed = BigInt(t?.fixedFee ?? 0);
  if (net <= 0n) return fixed;
  if (bps >= 10_000n) {
    throw errors.amountOutOfRange(`The platform's variable fee of ${bps} bps takes the whole sending amount: no amount can be received`, [
      {
        field: 'lockedCurrencyAmount',
        message: 'cannot be received: the feeConfigs variableFeeBps of the sending currency is 10000 (100 %)',
      },
    ]);
  }
  const netOf = (x: bigint) => x - feesFor(x, t).total;
  let lo = net + fixed; // fee(T) ≥ fixed, so no smaller T pays net
  // The closed form's ceiling plus one unit of rounding slack always pays net (checked below anyway).
  let hi = ((net + fixed) * 10_000n + (10_000n - bps) - 1n) / (10_000n - bps) + 1n;
  if (netOf(hi) < net) throw new Error(`price: no total up to ${hi} pays ${net}`);
  if (netOf(lo) >= net) return lo;
  // Invariant: netOf(lo) < net ≤ netOf(hi).
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if (netOf(mid) >= net) hi = mid;
    else lo = mid;
  }
  return hi;
}

function finish(total: bigint, receiving: bigint, fees: bigint, rate: Rate, terms: FeeTerms | undefined): Priced {
  if (total > BigInt(Number.MAX_SAFE_INTEGER) || receiving > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw errors.amountOutOfRange('The quote amounts exceed the largest supported amount', [
      { field: 'lockedCurrencyAmount', message: 'too large' },
    ]);
  }
  if (receiving <= 0n) {
    throw errors.amountOutOfRange('Nothing would arrive: the amount does not cover the fees', [
      { field: 'lockedCurrencyAmount', message: 'too small to cover the fees' },
    ]);
  }
  return { total: Number(total), receiving: Number(receiving), fees: Number(fees), rate, terms };
}

/**
 * The fee terms of a `platformFeeOverride`: they replace the configured fees for this quote, whatever
 * the currencies. As the live API: USD sources only, the fixed fee in the source currency.
 */
function overrideTerms(o: NonNullable<QuoteCreate['platformFeeOverride']>, sourceCurrency: string): FeeTerms {
  if (sourceCurrency !== 'USD') {
    throw errors.invalidField('platformFeeOverride', `is supported when the source currency is USD (this quote's is ${sourceCurrency})`);
  }
  if (o.platformFixedFee.currency !== sourceCurrency) {
    throw errors.invalidField('platformFeeOverride.platformFixedFee.currency', `must be the source currency, ${sourceCurrency}`);
  }
  return { fixedFee: o.platformFixedFee.amount, variableFeeBps: o.platformVariableFeeBps };
}

/**
 * Creates a quote (and its PENDING transaction); executes it at once when asked. `agentId`: the agent
 * creating it (POST /agents/me/quotes), whose payment it then is (the transaction's `agentId`).
 */
export async function createQuote(u: Unit, body: QuoteCreate, agentId?: string): Promise<QuoteWire> {
  const env = envOf(u);
  const source = await resolveSource(env, body.source);
  const destination = await resolveDestination(env, body.destination);
  // A receiver lookup the request names must be this platform's, live, and made for this receiver and sender.
  if (body.lookupId !== undefined) {
    const lookup = {
      lookupId: body.lookupId,
      senderCustomerId: source.customerId,
      destination,
      senderCustomerInfo: body.senderCustomerInfo,
    };
    await honourLookup(u, lookup);
  }
  const settings = settingsOf(u.platform);

  const sendCfg = settings.supportedCurrencies.find((c) => c.currencyCode === source.currency);
  if (!sendCfg?.enabledTransactionTypes.includes('OUTGOING')) throw errors.sendingCurrencyNotEnabled(source.currency);
  if (body.immediatelyExecute && source.walletAccount) {
    throw errors.invalidField('immediatelyExecute', 'is not supported for EMBEDDED_WALLET sources: the execution must be signed');
  }
  const rate = sandboxRate(source.currency, destination.currency, u.nowMs);
  const override = body.platformFeeOverride ? overrideTerms(body.platformFeeOverride, source.currency) : undefined;
  const priced = override ? price(body, rate, override, 'always') : price(body, rate, crossCurrencyFeeTerms(settings, source.currency));
  const limits = sendingLimits(settings, source.currency);
  if (priced.total < limits.min || priced.total > limits.max) {
    throw errors.amountOutOfRange(`The sending amount ${priced.total} is outside ${limits.min}..${limits.max} ${source.currency}`, [
      { field: 'lockedCurrencyAmount', message: `sending amount must be within ${limits.min}..${limits.max}` },
    ]);
  }

  const quoteId = u.deps.ids.next('Quote');
  const reference = newFundingReference(u.deps);
  const txn = newQuoteTransaction(u, body, source, destination, priced, quoteId, reference, agentId ?? null);
  const quote: QuoteRow = {
    id: quoteId,
    platform_id: u.platform.id,
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
    fee_fixed: priced.terms?.fixedFee ?? 0,
    fee_variable_bps: priced.terms?.variableFeeBps ?? 0,
    description: body.description ?? null,
    payment_instructions: paymentInstructions(source, reference, priced.total),
    funding_reference: source.realtime ? reference : null,
    expires_at: new Date(Date.parse(u.at) + QUOTE_TTL_MS).toISOString(),
    created_at: u.at,
    updated_at: u.at,
  };
  if (body.immediatelyExecute && !source.realtime) return quoteToWire(await createExecuted(env, source, quote, txn), u.nowMs);
  await insertTransaction(u.trx, txn);
  await insertQuote(u.trx, quote);
  emitPayment(env, txn, 'PENDING');
  await u.schedule(JOB_QUOTE_EXPIRE, { quoteId }, QUOTE_TTL_MS);
  return quoteToWire(quote, u.nowMs);
}

function newQuoteTransaction(
  u: Unit,
  body: QuoteCreate,
  s: ResolvedSource,
  d: ResolvedDestination,
  p: Priced,
  quoteId: string,
  reference: string,
  agentId: string | null,
): TransactionRow {
  const extra: Record<string, unknown> = {};
  if (body.remittanceInformation) extra.remittanceInformation = body.remittanceInformation;
  if (body.purposeOfPayment) extra.purposeOfPayment = body.purposeOfPayment;
  return {
    id: u.deps.ids.next('Transaction'),
    platform_id: u.platform.id,
    customer_id: s.customerId ?? u.platform.id,
    platform_customer_id: s.platformCustomerId ?? u.platform.id,
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
    // Every fee Corridor charges is the platform's (its feeConfigs, or this quote's override).
    platform_fees: p.fees,
    fee_fixed: p.terms?.fixedFee ?? 0,
    fee_variable_bps: p.terms?.variableFeeBps ?? 0,
    exchange_rate: p.rate.text,
    quote_id: quoteId,
    description: body.description ?? null,
    reference,
    payment_rail: d.paymentRail,
    rail_selection_mode: d.railSelectionMode,
    scenario: JSON.stringify(d.scenario),
    // Known once the payment starts (execution): its outcome's delay runs from then.
    expected_settlement_at: null,
    agent_id: agentId,
    failure_reason: null,
    refund: null,
    settled_at: null,
    receipt_delivery_confirmed_at: null,
    extra: Object.keys(extra).length ? JSON.stringify(extra) : null,
    created_at: u.at,
    updated_at: u.at,
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
      isPlatformAccount: !s.customerId,
      accountOrWalletInfo: s.fundingInfo(reference),
    },
  ]);
}

/**
 * A quote executed as it is created: its quote and transaction are written PROCESSING at once
 * (nobody can have seen them PENDING), with the same events, hold and outcome as creating it and
 * then executing it.
 *
 * One write order on both stores. A shortfall is refused first, before anything is written, from
 * the source balance `resolveSource` read in this unit (on SQLite a refusal after a write costs the
 * other requests of its commit group a replay). Then the hold — whose balance UPDATE locks the
 * source account's row until COMMIT, so on PostgreSQL payments of one account queue on it — comes
 * after the rows no other request touches; so does the delayed outcome's job, unless the outcome
 * fails the payment at once (that moves the held money back, so it follows the hold). The events
 * are written with the unit's others, in one INSERT when it ends.
 */
async function createExecuted(env: Env, source: ResolvedSource, quote: QuoteRow, txn: TransactionRow): Promise<QuoteRow> {
  const { u } = env;
  const processing = { ...txn, status: 'PROCESSING', expected_settlement_at: expectedSettlementAt(txn.scenario, u.nowMs) };
  if (source.internalAccount) requireFunds(source.internalAccount, Number(processing.sent_amount));
  emitPayment(env, txn, 'PENDING');
  await insertTransaction(u.trx, processing);
  await insertQuote(u.trx, { ...quote, status: 'PROCESSING' });
  const jobFirst = !failsAtOnce(processing);
  if (jobFirst) await scheduleOutcome(env, processing);
  await holdOutgoing(env, processing);
  emitPayment(env, processing, 'PROCESSING');
  const after = jobFirst ? processing : await scheduleOutcome(env, processing);
  // A payment that failed inside the request has already moved its quote to FAILED.
  return { ...quote, status: after.status === 'FAILED' ? 'FAILED' : 'PROCESSING' };
}

/**
 * Takes the money and starts the payment: quote and transaction move to PROCESSING. `agentId`: the
 * agent whose action executes it (its own quote, so already the transaction's).
 */
async function execute(env: Env, quote: QuoteRow, txn: TransactionRow, agentId?: string): Promise<QuoteRow> {
  const { u } = env;
  const started = {
    status: 'PROCESSING',
    updated_at: u.at,
    expected_settlement_at: expectedSettlementAt(txn.scenario, u.nowMs),
    ...(agentId ? { agent_id: agentId } : {}),
  };
  if (!(await transitionTransaction(u.trx, txn.id, ['PENDING'], started))) {
    throw errors.conflict(`Quote ${quote.id} was already executed`);
  }
  if (!(await transitionQuote(u.trx, quote.id, ['PENDING'], { status: 'PROCESSING', updated_at: u.at }))) {
    throw errors.conflict(`Quote ${quote.id} was already executed`);
  }
  const processing = { ...txn, ...started };
  await holdOutgoing(env, processing);
  emitPayment(env, processing, 'PROCESSING');
  const after = await scheduleOutcome(env, processing);
  // A payment that failed inside the request has already moved its quote to FAILED.
  return { ...quote, status: after.status === 'FAILED' ? 'FAILED' : 'PROCESSING', updated_at: u.at };
}

/** The payload an embedded wallet's session signs to execute the quote (from its payment instructions). */
export function walletPayloadOf(quote: QuoteRow): string {
  const instructions = JSON.parse(quote.payment_instructions ?? '[]') as {
    accountOrWalletInfo: { accountType: string; payloadToSign?: string };
  }[];
  return instructions.find((i) => i.accountOrWalletInfo.accountType === 'EMBEDDED_WALLET')?.accountOrWalletInfo.payloadToSign ?? '';
}

/** A locked quote ready to execute (404, 409 or 400 otherwise), its transaction and its embedded-wallet source. */
async function executable(u: Unit, quoteId: string): Promise<{ quote: QuoteRow; txn: TransactionRow; walletId: string | undefined }> {
  const quote = await findQuote(u.trx, u.platform.id, quoteId, { forUpdate: true });
  if (!quote) throw errors.quoteNotFound(quoteId);
  if (quote.status !== 'PENDING') throw errors.conflict(`Quote ${quoteId} is ${quote.status} and cannot be executed`);
  if (u.nowMs >= Date.parse(quote.expires_at)) throw errors.conflict(`Quote ${quoteId} expired at ${quote.expires_at}`);
  const src = JSON.parse(quote.source) as { sourceType: string };
  if (src.sourceType === 'REALTIME_FUNDING') {
    throw errors.invalidInput(
      'A real-time funded quote executes when its payment instructions are paid (POST /sandbox/send in the sandbox)',
    );
  }
  const txn = await findTransaction(u.trx, u.platform.id, quote.transaction_id);
  if (!txn) throw new Error(`quote ${quote.id} has no transaction ${quote.transaction_id}`);
  const wallet = txn.internal_account_id ? await findInternalAccount(u.trx, u.platform.id, txn.internal_account_id) : undefined;
  return { quote, txn, walletId: wallet?.type === 'EMBEDDED_WALLET' ? wallet.id : undefined };
}

/**
 * POST /quotes/{id}/execute for a locked quote funded from an account. An embedded-wallet source
 * needs a wallet session's signature (`authorizeWalletExecute`): without one, the outcome is a
 * signed-retry challenge (202) bound to the quote and `content` (the request body); the retry with
 * `Request-Id`, or a stamp over the quote's own payloadToSign, executes it. Other sources ignore
 * the signature headers.
 */
export async function executeQuoteSigned(
  u: Unit,
  input: { quoteId: string; signature: WalletSignature; content: unknown },
): Promise<Signed<QuoteWire>> {
  const { quote, txn, walletId } = await executable(u, input.quoteId);
  if (walletId !== undefined) {
    const auth = await authorizeWalletExecute(u, {
      signature: input.signature,
      walletAccountId: walletId,
      quoteId: quote.id,
      quotePayload: walletPayloadOf(quote),
      quoteExpiresAt: quote.expires_at,
      content: input.content,
    });
    if (auth.kind === 'challenge') return auth;
  }
  return { kind: 'done', value: quoteToWire(await execute(envOf(u), quote, txn), u.nowMs) };
}

/**
 * Executes a locked quote with the stamp form only: an embedded-wallet source needs `walletStamp`
 * over the quote's own payloadToSign (an agent action's execute, at submission and at approval, by
 * the agent `agentId`).
 */
export async function executeQuote(u: Unit, quoteId: string, walletStamp: string | undefined, agentId?: string): Promise<QuoteWire> {
  const { quote, txn, walletId } = await executable(u, quoteId);
  if (walletId !== undefined) await checkExecuteStamp(u, walletStamp, walletId, walletPayloadOf(quote));
  return quoteToWire(await execute(envOf(u), quote, txn, agentId), u.nowMs);
}

/** GET /quotes/{id}: the quote as the platform sees it at platform time `nowMs`. */
export async function getQuote(
  db: Kysely<Database>,
  platform: Pick<PlatformRow, 'id'>,
  nowMs: number,
  quoteId: string,
): Promise<QuoteWire> {
  const q = await findQuote(db, platform.id, quoteId);
  if (!q) throw errors.quoteNotFound(quoteId);
  return quoteToWire(q, nowMs);
}

/** Job: a locked quote nobody executed expires with its transaction (listed in src/background.ts). */
export const expireQuoteJob: JobHandler = async (u, job) => {
  const { quoteId } = JSON.parse(job.payload) as { quoteId: string };
  if (!(await transitionQuote(u.trx, quoteId, ['PENDING'], { status: 'EXPIRED', updated_at: u.at }))) return;
  const quote = await findQuote(u.trx, u.platform.id, quoteId);
  if (!quote) return;
  const txn = await findTransaction(u.trx, u.platform.id, quote.transaction_id);
  if (!txn) return;
  const set = { status: 'EXPIRED', failure_reason: 'QUOTE_EXPIRED', updated_at: u.at };
  if (await transitionTransaction(u.trx, txn.id, ['PENDING'], set)) emitPayment(envOf(u), { ...txn, ...set }, 'EXPIRED');
};
