/**
 * The payment state machine. Every transition is one compare-and-set on the transaction's status,
 * its ledger entry (payment-ledger.ts) and its outbox events, all in the caller's unit of work, so
 * each move — and the money it moves — happens exactly once. The delayed outcomes run as jobs
 * (`settlePaymentJob`, `failPaymentJob`, `returnPaymentJob`, listed in src/background.ts).
 */
import type { JobBatch, JobHandler, JobRow } from '../../jobs/jobs.ts';
import { currency } from '../../lib/currencies.ts';
import type { TransactionRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { paymentEventType, type PaymentEventSuffix } from '../../webhook-delivery/catalogue.ts';
import {
  BatchedBalances,
  type Env,
  releaseOutgoing,
  reverseIncoming,
  reverseOutgoing,
  settleIncoming,
  settleOutgoing,
  writeOffOutgoing,
} from './payment-ledger.ts';
import type { RefundWire, TransactionWire } from './payments.schemas.ts';
import {
  completeInFlight,
  completeTransaction,
  finishQuote,
  findTransaction,
  hasLedgerEntry,
  transitionQuote,
  transitionTransaction,
} from './payments.repo.ts';
import { rateDetailsOf } from './rate-details.ts';
import { parseScenario, type RefundReason } from './sandbox-outcomes.ts';

export { envOf, holdIncoming, holdOutgoing, requireFunds, type Env } from './payment-ledger.ts';

export const JOB_SETTLE = 'PAYMENT_SETTLE';
export const JOB_FAIL = 'PAYMENT_FAIL';
export const JOB_RETURN = 'PAYMENT_RETURN';

/**
 * Statuses a payment is in flight in: a quote's transaction is PENDING until executed (no money
 * held yet). `completeInFlight` (payments.repo.ts) states the same rule in SQL.
 */
function inFlight(t: TransactionRow): string[] {
  return t.kind === 'QUOTE' ? ['PROCESSING'] : ['PENDING', 'PROCESSING'];
}

// ---------------------------------------------------------------------------------------------
// Wire shape and events

export function transactionToWire(t: TransactionRow): TransactionWire {
  const w: TransactionWire = {
    id: t.id,
    status: t.status as TransactionWire['status'],
    type: t.type as TransactionWire['type'],
    direction: t.direction as TransactionWire['direction'],
    source: JSON.parse(t.source) as TransactionWire['source'],
    destination: JSON.parse(t.destination) as TransactionWire['destination'],
    customerId: t.customer_id,
    platformCustomerId: t.platform_customer_id,
    sentAmount: { amount: Number(t.sent_amount), currency: currency(t.sent_currency) },
    receivedAmount: { amount: Number(t.received_amount), currency: currency(t.received_currency) },
    fees: Number(t.fees),
    platformFees: Number(t.platform_fees),
    exchangeRate: Number(t.exchange_rate),
    paymentRail: (t.payment_rail as TransactionWire['paymentRail']) ?? null,
    reconciliationInstructions: { reference: t.reference },
    createdAt: t.created_at,
    updatedAt: t.updated_at,
  };
  if (t.quote_id) w.quoteId = t.quote_id;
  if (t.agent_id) w.agentId = t.agent_id;
  if (t.description) w.description = t.description;
  if (t.type === 'OUTGOING') outgoingFields(w, t);
  if (t.failure_reason) w.failureReason = t.failure_reason;
  if (t.refund) w.refund = JSON.parse(t.refund) as RefundWire;
  if (t.settled_at) w.settledAt = t.settled_at;
  if (t.receipt_delivery_confirmed_at) w.receiptDeliveryConfirmedAt = t.receipt_delivery_confirmed_at;
  if (t.extra) {
    const extra = JSON.parse(t.extra) as Partial<TransactionWire>;
    if (extra.remittanceInformation) w.remittanceInformation = extra.remittanceInformation;
    if (extra.purposeOfPayment) w.purposeOfPayment = extra.purposeOfPayment;
  }
  return w;
}

/**
 * The live OutgoingTransaction's own fields: the quote's rate details (a quote payment), how the
 * rail was chosen, and when the payment is expected to settle (docs/decisions.md, "Wire fidelity").
 */
function outgoingFields(w: TransactionWire, t: TransactionRow): void {
  const rateDetails = rateDetailsOf({
    exchangeRate: t.exchange_rate,
    fees: Number(t.fees),
    feeFixed: t.fee_fixed,
    feeVariableBps: t.fee_variable_bps,
  });
  if (rateDetails) w.rateDetails = rateDetails;
  w.railSelectionMode = t.payment_rail && t.rail_selection_mode ? (t.rail_selection_mode as TransactionWire['railSelectionMode']) : null;
  const expected = t.expected_settlement_at ?? null;
  w.expectedSettlementAt = expected;
  // From the transaction's creation: for a quote payment, when the quote was created.
  w.settlementTimelineSeconds = expected === null ? null : Math.max(0, Math.ceil((Date.parse(expected) - Date.parse(t.created_at)) / 1000));
}

/** Emits `<INCOMING|OUTGOING>_PAYMENT.<suffix>` carrying the transaction as it now is. */
export function emitPayment(env: Env, t: TransactionRow, suffix: PaymentEventSuffix): void {
  env.u.emit(paymentEventType(t.type, suffix), t.id, transactionToWire(t));
}

// ---------------------------------------------------------------------------------------------
// Transitions

async function move(env: Env, t: TransactionRow, from: string[], set: Partial<TransactionRow>): Promise<TransactionRow | undefined> {
  const next = { ...t, ...set, updated_at: env.u.at };
  const ok = await transitionTransaction(env.u.trx, t.id, from, { ...set, updated_at: env.u.at });
  return ok ? next : undefined;
}

async function moveQuote(env: Env, t: TransactionRow, status: string): Promise<void> {
  if (t.quote_id) await finishQuote(env.u.trx, t.quote_id, status, env.u.at);
}

/** Whether the payment's sandbox outcome fails it inside the request (no delayed job). */
export function failsAtOnce(t: TransactionRow): boolean {
  const s = parseScenario(t.scenario);
  return s.kind === 'FAIL' && s.delayMs === 'now';
}

/** Starts the sandbox outcome of a payment that has just begun (hold already taken). */
export async function scheduleOutcome(env: Env, t: TransactionRow): Promise<TransactionRow> {
  const s = parseScenario(t.scenario);
  if (s.kind === 'FAIL' && s.delayMs === 'now') return (await failPayment(env, t, s.reason, s.refund, s.refundReason)) ?? t;
  const delayMs = s.kind === 'SUCCESS' ? s.delayMs : s.kind === 'FAIL' ? (s.delayMs as number) : 0;
  await env.u.schedule(s.kind === 'FAIL' ? JOB_FAIL : JOB_SETTLE, { transactionId: t.id }, delayMs);
  return t;
}

/** Settles an in-flight payment: money reaches its destination. */
export async function completePayment(env: Env, t: TransactionRow): Promise<TransactionRow | undefined> {
  if ((await completeTransaction(env.u.trx, t.id, inFlight(t), env.u.at)) === 0) return undefined;
  const next: TransactionRow = { ...t, status: 'COMPLETED', settled_at: env.u.at, updated_at: env.u.at };
  await completed(env, next);
  return next;
}

/** What follows a payment's move to COMPLETED (`t` as it now is): ledger, quote, events, return. */
async function completed(env: Env, t: TransactionRow): Promise<void> {
  if (t.type === 'OUTGOING') await settleOutgoing(env, t);
  else await settleIncoming(env, t);
  await moveQuote(env, t, 'COMPLETED');
  emitPayment(env, t, 'COMPLETED');
  const s = parseScenario(t.scenario);
  if (s.kind === 'RETURNED') await env.u.schedule(JOB_RETURN, { transactionId: t.id }, s.returnAfterMs);
}

/**
 * Fails an in-flight payment and returns its money exactly once: an outgoing hold is released to
 * the source (or written off when the refund itself fails); an incoming pull's pending credit is
 * taken back.
 */
export async function failPayment(
  env: Env,
  t: TransactionRow,
  reason: string | null,
  refundOutcome: 'COMPLETED' | 'FAILED',
  refundReason: RefundReason,
): Promise<TransactionRow | undefined> {
  const { at } = env.u;
  const outgoing = t.type === 'OUTGOING';
  const refund: RefundWire | undefined = outgoing
    ? {
        reference: `${t.reference}-REFUND`,
        initiatedAt: at,
        status: refundOutcome,
        reason: refundReason,
        ...(refundOutcome === 'COMPLETED' ? { settledAt: at } : {}),
      }
    : undefined;
  const next = await move(env, t, inFlight(t), {
    status: 'FAILED',
    failure_reason: reason,
    refund: refund ? JSON.stringify(refund) : null,
  });
  if (!next) return undefined;
  if (outgoing) {
    if (refundOutcome === 'COMPLETED') await releaseOutgoing(env, t);
    else await writeOffOutgoing(env, t);
  } else if (t.kind === 'TRANSFER_IN' && (await hasLedgerEntry(env.u.trx, env.u.platform.id, t.id, 'INCOMING_PENDING'))) {
    // Fail-at-once pulls never posted a pending credit.
    await reverseIncoming(env, t);
  }
  await moveQuote(env, t, 'FAILED');
  emitPayment(env, next, 'FAILED');
  if (refund) {
    const pending = { ...next, refund: JSON.stringify({ ...refund, status: 'PENDING', settledAt: undefined }) };
    emitPayment(env, pending, 'REFUND_PENDING');
    emitPayment(env, next, refundOutcome === 'COMPLETED' ? 'REFUND_COMPLETED' : 'REFUND_FAILED');
  }
  return next;
}

/** The receiving bank returned a completed payment: it fails and the principal is refunded. */
export async function returnPayment(env: Env, t: TransactionRow): Promise<TransactionRow | undefined> {
  const { at } = env.u;
  const refund: RefundWire = {
    reference: `${t.reference}-REFUND`,
    initiatedAt: at,
    settledAt: at,
    status: 'COMPLETED',
    reason: 'TRANSACTION_FAILED',
  };
  const next = await move(env, t, ['COMPLETED'], { status: 'FAILED', failure_reason: 'PAYOUT_RETURNED', refund: JSON.stringify(refund) });
  if (!next) return undefined;
  await reverseOutgoing(env, t);
  if (t.quote_id) await transitionQuote(env.u.trx, t.quote_id, ['COMPLETED'], { status: 'FAILED', updated_at: at });
  emitPayment(env, next, 'FAILED');
  emitPayment(env, { ...next, refund: JSON.stringify({ ...refund, status: 'PENDING', settledAt: undefined }) }, 'REFUND_PENDING');
  emitPayment(env, next, 'REFUND_COMPLETED');
  return next;
}

// ---------------------------------------------------------------------------------------------
// Jobs (listed in src/background.ts)

/** The batch's payment jobs move balances together at its end: no payment job reads a balance. */
function jobEnv(u: Unit, batch: JobBatch): Env {
  return { u, balances: batch.part('payments:balances', () => new BatchedBalances()) };
}

function jobTransactionId(job: JobRow): string {
  return (JSON.parse(job.payload) as { transactionId: string }).transactionId;
}

/**
 * A payment's delayed success: completes it if it is still in flight, in one statement that also
 * reads it (the compare-and-set returns the row), then moves its money and sends its events.
 */
export const settlePaymentJob: JobHandler = async (u, job, batch) => {
  const next = await completeInFlight(u.trx, u.platform.id, jobTransactionId(job), u.at);
  if (next) await completed(jobEnv(u, batch), next);
};

/** A payment's delayed failure, as its sandbox scenario says. */
export const failPaymentJob: JobHandler = async (u, job, batch) => {
  const t = await findTransaction(u.trx, u.platform.id, jobTransactionId(job));
  const s = t ? parseScenario(t.scenario) : undefined;
  if (t && s?.kind === 'FAIL') await failPayment(jobEnv(u, batch), t, s.reason, s.refund, s.refundReason);
};

/** A settled payment's return by the receiving bank. */
export const returnPaymentJob: JobHandler = async (u, job, batch) => {
  const t = await findTransaction(u.trx, u.platform.id, jobTransactionId(job));
  if (t) await returnPayment(jobEnv(u, batch), t);
};
