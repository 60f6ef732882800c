/**
 * Quotes: price a payment (rate, fees, amounts), lock it for review or execute it at once, and
 * expire it. A quote's transaction exists from the start (status PENDING), moves to PROCESSING on
 * execution, and then follows the sandbox outcome of its destination.
 */
import type { Kysely } from 'kysely';
import { errors } from '../../http/errors.ts';
import type { JobHandler } from '../../jobs/jobs.ts';
import { currency } from '../../lib/currencies.ts';
import { sandboxRate } from '../../lib/rates.ts';
import { overrideTerms, price, type Priced } from './quote-pricing.ts';
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
import { awaitAuthorization, type GateInput, perTransactionFactor, scaStepsFor } from './sca-gate.ts';
import { pendingChallenge, type ScaChallengeWire } from '../sca/sca-challenges.ts';
import { expectedSettlementAt } from './sandbox-outcomes.ts';
import { findQuote, findTransaction, insertQuote, insertTransaction, transitionQuote, transitionTransaction } from './payments.repo.ts';

/** How long a locked quote's rate holds: the live API's "typically 1–5 minutes". */
export const QUOTE_TTL_MS = 5 * 60_000;
export const JOB_QUOTE_EXPIRE = 'QUOTE_EXPIRE';

/** The quote on the wire; `challenge`: the SCA challenge it waits on (PENDING_AUTHORIZATION). */
export function quoteToWire(q: QuoteRow, nowMs: number, challenge?: ScaChallengeWire): QuoteWire {
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
  // A real-time funded quote's instructions are withheld until the customer authorises it.
  if (q.payment_instructions && q.status !== 'PENDING_AUTHORIZATION') {
    w.paymentInstructions = JSON.parse(q.payment_instructions) as QuoteWire['paymentInstructions'];
  }
  if (q.description) w.description = q.description;
  if (challenge) w.scaChallenge = challenge;
  return w;
}

/**
 * Creates a quote (and its PENDING transaction); executes it at once when asked. `agentId`: the agent
 * creating it (POST /agents/me/quotes), whose payment it then is (the transaction's `agentId`).
 */
export async function createQuote(u: Unit, body: QuoteCreate, agentId?: string): Promise<QuoteWire> {
  const env = envOf(u);
  // Read side by side (on PostgreSQL the two reads share a round trip); the source's refusal, if
  // any, is the one reported, as when they were read one after the other.
  const [sourceRead, destinationRead] = await Promise.allSettled([
    resolveSource(env, body.source),
    resolveDestination(env, body.destination),
  ]);
  if (sourceRead.status === 'rejected') throw sourceRead.reason;
  if (destinationRead.status === 'rejected') throw destinationRead.reason;
  const source = sourceRead.value;
  const destination = destinationRead.value;
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
  // A payment the customer must authorise (SCA) waits for it: a real-time funded one from its
  // creation, a prefunded one from its execution (here at once when asked to execute immediately).
  const steps = source.realtime || body.immediatelyExecute ? await scaStepsFor(u, gateOf(source, destination, priced)) : undefined;
  if (body.immediatelyExecute && !source.realtime && !steps) return quoteToWire(await createExecuted(env, source, quote, txn), u.nowMs);
  if (steps && source.internalAccount) requireFunds(source.internalAccount, priced.total);
  await insertTransaction(u.trx, txn);
  await insertQuote(u.trx, quote);
  emitPayment(env, txn, 'PENDING');
  await u.schedule(JOB_QUOTE_EXPIRE, { quoteId }, QUOTE_TTL_MS);
  if (steps) {
    const parked = await awaitAuthorization(env, quote, txn, steps, perTransactionFactor(body.scaFactor));
    return quoteToWire(parked.quote, u.nowMs, parked.challenge);
  }
  return quoteToWire(quote, u.nowMs);
}

function gateOf(s: ResolvedSource, d: ResolvedDestination, p: Priced): GateInput {
  return {
    customerId: s.customerId,
    scaCustomer: s.scaCustomer,
    sendingCurrency: s.currency,
    receivingCurrency: d.currency,
    amount: p.total,
    destinationAccountId: d.accountId,
    realtime: s.realtime,
  };
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
 * emitted before the hold (PENDING, PROCESSING) are written ahead of it, on PostgreSQL in the same
 * round trip; its BALANCE_UPDATED, which carries the balance the UPDATE returned, goes with COMMIT.
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
  emitPayment(env, processing, 'PROCESSING');
  await holdOutgoing(env, processing);
  const after = jobFirst ? processing : await scheduleOutcome(env, processing);
  // A payment that failed inside the request has already moved its quote to FAILED.
  return { ...quote, status: after.status === 'FAILED' ? 'FAILED' : 'PROCESSING' };
}

/**
 * Takes the money and starts the payment: quote and transaction move to PROCESSING. `agentId`: the
 * agent whose action executes it (its own quote, so already the transaction's).
 */
export async function execute(
  env: Env,
  quote: QuoteRow,
  txn: TransactionRow,
  agentId?: string,
  from: string[] = ['PENDING'],
): Promise<QuoteRow> {
  const { u } = env;
  const started = {
    status: 'PROCESSING',
    updated_at: u.at,
    expected_settlement_at: expectedSettlementAt(txn.scenario, u.nowMs),
    ...(agentId ? { agent_id: agentId } : {}),
  };
  if (!(await transitionTransaction(u.trx, txn.id, from, started))) {
    throw errors.conflict(`Quote ${quote.id} was already executed`);
  }
  if (!(await transitionQuote(u.trx, quote.id, from, { status: 'PROCESSING', updated_at: u.at }))) {
    throw errors.conflict(`Quote ${quote.id} was already executed`);
  }
  const processing = { ...txn, ...started };
  // Emitted before the hold, which locks the payer's balance row: it is then written ahead of it.
  emitPayment(env, processing, 'PROCESSING');
  await holdOutgoing(env, processing);
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
  const factor = (input.content as { scaFactor?: string } | undefined)?.scaFactor;
  return { kind: 'done', value: await executeOrAwait(u, quote, txn, factor) };
}

/**
 * Executes the quote, or — when its customer must authorise it (SCA) — parks it in
 * PENDING_AUTHORIZATION with a challenge (the live API's 200 with `scaChallenge`).
 */
async function executeOrAwait(
  u: Unit,
  quote: QuoteRow,
  txn: TransactionRow,
  factor: string | undefined,
  agentId?: string,
): Promise<QuoteWire> {
  const env = envOf(u);
  const steps = await scaStepsFor(u, {
    customerId: quote.customer_id,
    sendingCurrency: quote.sending_currency,
    receivingCurrency: quote.receiving_currency,
    amount: Number(quote.total_sending_amount),
    destinationAccountId: txn.receiver_account_id,
    realtime: false,
  });
  if (!steps) return quoteToWire(await execute(env, quote, txn, agentId), u.nowMs);
  if (txn.internal_account_id) {
    const account = await findInternalAccount(u.trx, u.platform.id, txn.internal_account_id);
    if (account) requireFunds(account, Number(txn.sent_amount));
  }
  // The preferred factor matters (and TOTP is refused) only when SCA applies; otherwise it is ignored.
  const parked = await awaitAuthorization(env, quote, txn, steps, perTransactionFactor(factor));
  return quoteToWire(parked.quote, u.nowMs, parked.challenge);
}

/**
 * Executes a locked quote with the stamp form only: an embedded-wallet source needs `walletStamp`
 * over the quote's own payloadToSign (an agent action's execute, at submission and at approval, by
 * the agent `agentId`).
 */
export async function executeQuote(u: Unit, quoteId: string, walletStamp: string | undefined, agentId?: string): Promise<QuoteWire> {
  const { quote, txn, walletId } = await executable(u, quoteId);
  if (walletId !== undefined) await checkExecuteStamp(u, walletStamp, walletId, walletPayloadOf(quote));
  return executeOrAwait(u, quote, txn, undefined, agentId);
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
  const challenge = q.status === 'PENDING_AUTHORIZATION' ? await pendingChallenge(db, platform.id, q.id, nowMs) : undefined;
  return quoteToWire(q, nowMs, challenge);
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
