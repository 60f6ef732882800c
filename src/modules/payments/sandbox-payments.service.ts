/**
 * The two sandbox simulations that start payments from outside the platform: paying a real-time
 * funded quote's instructions (POST /sandbox/send), and an incoming UMA payment to a customer
 * (POST /sandbox/uma/receive).
 */
import { errors } from '../../http/errors.ts';
import { safeAmount } from '../../lib/amounts.ts';
import { findCurrency } from '../../lib/currencies.ts';
import { sandboxRate, sendingForReceiving } from '../../lib/rates.ts';
import type { CustomerRow, TransactionRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findActiveByUmaAddress, findCustomer } from '../customers/customers.repo.ts';
import { sendingLimits } from '../exchange-rates/exchange-rates.service.ts';
import { findCustomerHoldingAccountIn } from '../internal-accounts/internal-accounts.repo.ts';
import { newFundingReference } from '../internal-accounts/internal-accounts.service.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { completePayment, emitPayment, envOf, holdOutgoing, scheduleOutcome, transactionToWire } from './payment-engine.ts';
import type { TransactionWire } from './payments.schemas.ts';
import { findQuote, insertTransaction, transitionQuote, transitionTransaction } from './payments.repo.ts';
import { expectedSettlementAt, sandboxUmaParty } from './sandbox-outcomes.ts';
import { APPROVAL_WINDOW_MS, getTransaction, JOB_APPROVAL_TIMEOUT, refuseIncoming } from './transactions.service.ts';

export interface SandboxUmaReceive {
  senderUmaAddress: string;
  receiverUmaAddress?: string | undefined;
  customerId?: string | undefined;
  receivingCurrencyCode: string;
  receivingCurrencyAmount: number;
}

/** POST /sandbox/uma/receive: an incoming UMA payment to one of the platform's customers. */
export async function sandboxUmaReceive(u: Unit, body: SandboxUmaReceive): Promise<TransactionWire> {
  const env = envOf(u);
  if ((body.receiverUmaAddress === undefined) === (body.customerId === undefined)) {
    throw errors.invalidInput('Give exactly one of receiverUmaAddress and customerId', [
      { field: 'receiverUmaAddress', message: 'exactly one of receiverUmaAddress and customerId' },
    ]);
  }
  const sender = sandboxUmaParty(body.senderUmaAddress, u.app.config.sandboxUmaDomain, 'senderUmaAddress');
  const cur = body.receivingCurrencyCode;
  if (!findCurrency(cur)) throw errors.invalidCurrency(cur, 'receivingCurrencyCode');

  const customer: CustomerRow | undefined = body.customerId
    ? await findCustomer(u.trx, u.platform.id, body.customerId)
    : await findActiveByUmaAddress(u.trx, u.platform.id, body.receiverUmaAddress!.toLowerCase());
  if (!customer || customer.deleted_at) throw errors.receivingCustomerNotFound();
  const account = await findCustomerHoldingAccountIn(u.trx, u.platform.id, customer.id, cur);
  if (!account) throw errors.receivingAccountMissing(customer.id, cur);

  const limits = sendingLimits(settingsOf(u.platform), cur);
  if (body.receivingCurrencyAmount < limits.min || body.receivingCurrencyAmount > limits.max) {
    throw errors.amountOutOfRange(`The receiving amount ${body.receivingCurrencyAmount} is outside ${limits.min}..${limits.max} ${cur}`, [
      { field: 'receivingCurrencyAmount', message: `must be within ${limits.min}..${limits.max} (the platform's bounds for ${cur})` },
    ]);
  }
  const rate = sandboxRate(sender.currency, cur, u.nowMs);
  const sent = safeAmount(
    sendingForReceiving(body.receivingCurrencyAmount, rate),
    'receivingCurrencyAmount',
    `the sender's amount in ${sender.currency}`,
  );
  const approvalNeeded = settingsOf(u.platform).webhookEndpoint !== undefined;
  const t: TransactionRow = {
    id: u.deps.ids.next('Transaction'),
    platform_id: u.platform.id,
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
    reference: newFundingReference(u.deps),
    payment_rail: null,
    scenario: JSON.stringify(sender.scenario),
    failure_reason: null,
    refund: null,
    settled_at: null,
    receipt_delivery_confirmed_at: null,
    extra: JSON.stringify({ awaitingApproval: approvalNeeded }),
    created_at: u.at,
    updated_at: u.at,
    agent_id: null,
    rail_selection_mode: null,
    expected_settlement_at: null,
    fee_fixed: null,
    fee_variable_bps: null,
  };
  await insertTransaction(u.trx, t);
  emitPayment(env, t, 'PENDING');
  if (sender.scenario.kind === 'FAIL') return transactionToWire(await refuseIncoming(env, t, 'FAILED', sender.scenario.reason));
  if (!approvalNeeded) return transactionToWire((await completePayment(env, t)) ?? t);
  await u.schedule(JOB_APPROVAL_TIMEOUT, { transactionId: t.id }, APPROVAL_WINDOW_MS);
  return transactionToWire(t);
}

export interface SandboxSend {
  quoteId: string;
  currencyCode: string;
  currencyAmount?: number | undefined;
}

/** POST /sandbox/send: the payer pays a real-time funded quote's instructions; the quote executes. */
export async function sandboxSend(u: Unit, body: SandboxSend): Promise<TransactionWire> {
  const env = envOf(u);
  const quote = await findQuote(u.trx, u.platform.id, body.quoteId, { forUpdate: true });
  if (!quote) throw errors.quoteNotFound(body.quoteId);
  if (!quote.funding_reference) throw errors.invalidField('quoteId', 'is not a real-time funded quote');
  if (quote.status !== 'PENDING' || u.nowMs >= Date.parse(quote.expires_at)) {
    throw errors.conflict(`Quote ${quote.id} is ${quote.status === 'PENDING' ? 'EXPIRED' : quote.status} and cannot be funded`);
  }
  if (body.currencyCode !== quote.sending_currency) throw errors.fundingCurrencyMismatch(quote.sending_currency);
  const txn = await getTransaction(u.trx, u.platform.id, quote.transaction_id);
  const paid = body.currencyAmount ?? Number(quote.total_sending_amount);
  const funded = paid === Number(quote.total_sending_amount);
  // Paid in full, the payment starts now and its outcome's delay runs from here.
  const started = {
    status: 'PROCESSING',
    updated_at: u.at,
    expected_settlement_at: funded ? expectedSettlementAt(txn.scenario, u.nowMs) : null,
  };
  await transitionQuote(u.trx, quote.id, ['PENDING'], { status: 'PROCESSING', updated_at: u.at });
  await transitionTransaction(u.trx, txn.id, ['PENDING'], started);
  const processing = { ...txn, ...started };
  if (!funded) {
    // The payer's money never entered the ledger: it bounces back to them.
    const set = { status: 'FAILED', failure_reason: 'FUNDING_AMOUNT_MISMATCH', updated_at: u.at };
    await transitionTransaction(u.trx, txn.id, ['PROCESSING'], set);
    await transitionQuote(u.trx, quote.id, ['PROCESSING'], { status: 'FAILED', updated_at: u.at });
    const failed = { ...processing, ...set };
    emitPayment(env, failed, 'FAILED');
    return transactionToWire(failed);
  }
  await holdOutgoing(env, processing);
  emitPayment(env, processing, 'PROCESSING');
  return transactionToWire(await scheduleOutcome(env, processing));
}
