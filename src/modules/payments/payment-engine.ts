/**
 * The payment state machine. Every transition is one compare-and-set on the transaction's status,
 * its ledger entry and its outbox events, all in the caller's database transaction, so each move —
 * and the money it moves — happens exactly once.
 *
 * Where an outgoing payment's money sits while it is in flight:
 * - from an internal account: the account's PENDING bucket (balance down, totalBalance unchanged);
 * - real-time funded or pulled from an external account: the platform's IN_TRANSIT system account.
 * Settlement sends (amount − fees) to RAIL_CLEARING and the fees to the platform's internal account
 * in the sending currency. A failure before settlement releases the hold (the refund); a failed
 * refund writes the hold off to RAIL_CLEARING; a return after settlement refunds the principal.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { scheduleJob, type BatchPart, type JobBatch } from '../../jobs/jobs.ts';
import { BalanceBatch, postEntry, systemAccount, type EntryInput, type Posting } from '../../ledger/ledger.ts';
import { currency } from '../../lib/currencies.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import { enqueueEvent, enqueueEvents, type EventInput } from '../../outbox/outbox.ts';
import type { Database, InternalAccountRow, PlatformRow, TransactionRow } from '../../store/schema.ts';
import { paymentEventType, type PaymentEventSuffix } from '../../webhooks/catalogue.ts';
import { internalAccountToWire } from '../internal-accounts/internal-accounts.service.ts';
import type { RefundWire, TransactionWire } from './payments.schemas.ts';
import { parseScenario, type RefundReason, type Scenario } from './sandbox-outcomes.ts';
import { completeInFlight, completeTransaction, finishQuote, selectTransaction } from './payment-statements.ts';
import { transitionQuote, transitionTransaction } from './transactions.repo.ts';

export const JOB_SETTLE = 'PAYMENT_SETTLE';
export const JOB_FAIL = 'PAYMENT_FAIL';
export const JOB_RETURN = 'PAYMENT_RETURN';

/** Everything a transition needs: the database transaction, the app, the platform and its now. */
export interface Env {
  trx: Kysely<Database>;
  ctx: AppContext;
  platform: PlatformRow;
  at: string;
  /** Events held back to be written together at the end of `batchEvents`; unset: written at once. */
  events?: EventInput[] | undefined;
  /** Balance moves held back to the end of the job batch (payment jobs); unset: applied at once. */
  balances?: BatchedBalances | undefined;
}

/**
 * Runs `fn` with the events it emits written in one INSERT when it finishes (a payment step emits
 * two to four). On failure nothing is written — the caller's transaction rolls back anyway.
 */
export async function batchEvents<T>(env: Env, fn: () => Promise<T>): Promise<T> {
  if (env.events) return fn();
  env.events = [];
  try {
    const result = await fn();
    await enqueueEvents(env.trx, env.events);
    return result;
  } finally {
    env.events = undefined;
  }
}

/** Queues one event: into the batch when `batchEvents` is running, else written at once. */
async function emit(env: Env, e: EventInput): Promise<void> {
  if (env.events) env.events.push(e);
  else await enqueueEvent(env.trx, e);
}

export function envFor(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow): Env {
  return { trx, ctx, platform, at: iso(platformNowMs(ctx.deps.clock, platform)) };
}

/**
 * Statuses a payment is in flight in: a quote's transaction is PENDING until executed (no money
 * held yet). `completeInFlight` (payment-statements.ts) states the same rule in SQL.
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
  if (t.description) w.description = t.description;
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

/** Queues `<INCOMING|OUTGOING>_PAYMENT.<suffix>` carrying the transaction as it now is. */
export async function emitPayment(env: Env, t: TransactionRow, suffix: PaymentEventSuffix): Promise<void> {
  await emit(env, {
    id: env.ctx.deps.ids.next('Webhook'),
    platformId: env.platform.id,
    type: paymentEventType(t.type, suffix),
    resourceId: t.id,
    data: transactionToWire(t),
    at: env.at,
  });
}

/**
 * Posts a ledger entry and queues INTERNAL_ACCOUNT.BALANCE_UPDATED for each internal account it
 * moves — at once, or when `env.balances` batches them, at the end of the job batch.
 */
export async function postAndNotify(env: Env, kind: string, referenceId: string, postings: Posting[]): Promise<void> {
  const entry = { id: env.ctx.deps.ids.next('LedgerEntry'), platformId: env.platform.id, kind, referenceId, postings, at: env.at, balancesLast: env.ctx.store.kind === 'postgres' };
  if (env.balances) return env.balances.post(env.trx, entry);
  for (const row of await postEntry(env.trx, entry)) await emit(env, balanceEvent(env.ctx, row, env.at));
}

function balanceEvent(ctx: AppContext, row: InternalAccountRow, at: string): EventInput {
  return { id: ctx.deps.ids.next('Webhook'), platformId: row.platform_id, type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED', resourceId: row.id, data: internalAccountToWire(row, '', false), at };
}

/**
 * The balance moves of a job batch's payment jobs, applied when the batch ends (ledger
 * `BalanceBatch`), with their BALANCE_UPDATED events. Those events' ids are made then, after the
 * account rows are locked, so they sort after every event of the account committed before.
 */
class BatchedBalances implements BatchPart {
  private readonly ledger = new BalanceBatch();

  constructor(private readonly ctx: AppContext) {}

  post(trx: Kysely<Database>, entry: EntryInput): Promise<void> {
    return this.ledger.post(trx, entry);
  }

  async finish(trx: Kysely<Database>): Promise<void> {
    const events: EventInput[] = [];
    for (const m of await this.ledger.flush(trx)) for (const row of m.moved) events.push(balanceEvent(this.ctx, row, m.at));
    await enqueueEvents(trx, events);
  }
}

// ---------------------------------------------------------------------------------------------
// Ledger flows

function held(env: Env, t: TransactionRow, amount: number): Posting {
  return t.internal_account_id && t.type === 'OUTGOING'
    ? { accountId: t.internal_account_id, currency: t.sent_currency, bucket: 'PENDING', amount }
    : { accountId: systemAccount(env.platform.id, 'IN_TRANSIT'), currency: t.sent_currency, bucket: 'AVAILABLE', amount };
}

function clearing(env: Env, cur: string, amount: number): Posting {
  return { accountId: systemAccount(env.platform.id, 'RAIL_CLEARING'), currency: cur, bucket: 'AVAILABLE', amount };
}

/** Takes an outgoing payment's amount from where it comes from into its in-flight place. */
export async function holdOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.sent_amount);
  const from: Posting = t.internal_account_id
    ? { accountId: t.internal_account_id, currency: t.sent_currency, bucket: 'AVAILABLE', amount: -amount }
    : clearing(env, t.sent_currency, -amount);
  await postAndNotify(env, 'PAYMENT_HOLD', t.id, [from, held(env, t, amount)]);
}

async function releaseOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.sent_amount);
  const to: Posting = t.internal_account_id
    ? { accountId: t.internal_account_id, currency: t.sent_currency, bucket: 'AVAILABLE', amount }
    : clearing(env, t.sent_currency, amount);
  await postAndNotify(env, 'PAYMENT_REFUND', t.id, [held(env, t, -amount), to]);
}

async function writeOffOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.sent_amount);
  await postAndNotify(env, 'PAYMENT_REFUND_FAILED', t.id, [held(env, t, -amount), clearing(env, t.sent_currency, amount)]);
}

async function settleOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.sent_amount);
  const fees = Number(t.fees);
  const postings: Posting[] = [held(env, t, -amount), clearing(env, t.sent_currency, amount - fees)];
  if (fees > 0) postings.push({ accountId: await feeAccount(env, t.sent_currency), currency: t.sent_currency, bucket: 'AVAILABLE', amount: fees });
  if (t.receiver_account_id?.startsWith('InternalAccount:')) {
    // Paid to an internal account: the receiving side arrives from the rail in its own currency.
    const received = Number(t.received_amount);
    postings.push(clearing(env, t.received_currency, -received));
    postings.push({ accountId: t.receiver_account_id, currency: t.received_currency, bucket: 'AVAILABLE', amount: received });
  }
  await postAndNotify(env, 'PAYMENT_SETTLEMENT', t.id, mergePostings(postings));
}

/** Sums postings that hit the same account, bucket and currency, and drops the ones that net to zero. */
function mergePostings(postings: Posting[]): Posting[] {
  const byKey = new Map<string, Posting>();
  for (const p of postings) {
    const key = `${p.accountId}|${p.bucket}|${p.currency}`;
    const prior = byKey.get(key);
    if (prior) prior.amount += p.amount;
    else byKey.set(key, { ...p });
  }
  return [...byKey.values()].filter((p) => p.amount !== 0);
}

/** A returned payment refunds its principal (fees were earned when it settled). */
async function reverseOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const principal = Number(t.sent_amount) - Number(t.fees);
  if (principal <= 0 || !t.internal_account_id) return; // real-time funded: it goes back to the payer's instrument, outside the ledger
  await postAndNotify(env, 'PAYMENT_RETURN', t.id, [
    clearing(env, t.sent_currency, -principal),
    { accountId: t.internal_account_id, currency: t.sent_currency, bucket: 'AVAILABLE', amount: principal },
  ]);
}

/** The platform internal account fees in `cur` settle into (a system account if it has none). */
async function feeAccount(env: Env, cur: string): Promise<string> {
  const row = await env.trx
    .selectFrom('internal_accounts')
    .select('id')
    .where('platform_id', '=', env.platform.id)
    .where('customer_id', 'is', null)
    .where('currency', '=', cur)
    .orderBy('id')
    .executeTakeFirst();
  return row?.id ?? systemAccount(env.platform.id, 'FEES');
}

/** An incoming bank pull: the amount shows as pending on the receiving account. */
export async function holdIncoming(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.received_amount);
  await postAndNotify(env, 'INCOMING_PENDING', t.id, [
    clearing(env, t.received_currency, -amount),
    { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'PENDING', amount },
  ]);
}

// ---------------------------------------------------------------------------------------------
// Transitions

async function move(env: Env, t: TransactionRow, from: string[], set: Partial<TransactionRow>): Promise<TransactionRow | undefined> {
  const next = { ...t, ...set, updated_at: env.at };
  const ok = await transitionTransaction(env.trx, t.id, from, { ...set, updated_at: env.at });
  return ok ? next : undefined;
}

async function moveQuote(env: Env, t: TransactionRow, status: string): Promise<void> {
  if (t.quote_id) await finishQuote.run(env.trx, { id: t.quote_id, status, at: env.at });
}

/** Starts the sandbox outcome of a payment that has just begun (hold already taken). */
/** Whether the payment's sandbox outcome fails it inside the request (no delayed job). */
export function failsAtOnce(t: TransactionRow): boolean {
  const s = parseScenario(t.scenario);
  return s.kind === 'FAIL' && s.delayMs === 'now';
}

export async function scheduleOutcome(env: Env, t: TransactionRow): Promise<TransactionRow> {
  const s = parseScenario(t.scenario);
  if (s.kind === 'FAIL' && s.delayMs === 'now') return (await failPayment(env, t, s.reason, s.refund, s.refundReason)) ?? t;
  const delayMs = s.kind === 'SUCCESS' ? s.delayMs : s.kind === 'FAIL' ? (s.delayMs as number) : 0;
  await scheduleJob(env.trx, env.ctx.deps.clock, {
    id: env.ctx.deps.ids.next('Job'),
    platformId: env.platform.id,
    kind: s.kind === 'FAIL' ? JOB_FAIL : JOB_SETTLE,
    payload: { transactionId: t.id },
    delayMs,
    at: env.at,
  });
  return t;
}

/** Settles an in-flight payment: money reaches its destination. */
export async function completePayment(env: Env, t: TransactionRow): Promise<TransactionRow | undefined> {
  // Every payment settles: the compare-and-set is a statement compiled once per shape.
  const from = inFlight(t);
  const args: { id: string; at: string } & Record<string, unknown> = { id: t.id, at: env.at };
  from.forEach((s, i) => (args[`from${i}`] = s));
  if ((await completeTransaction(from.length).run(env.trx, args)) === 0) return undefined;
  const next: TransactionRow = { ...t, status: 'COMPLETED', settled_at: env.at, updated_at: env.at };
  await completed(env, next);
  return next;
}

/**
 * The settlement job: completes the payment if it is still in flight, in one statement that also
 * reads it (the compare-and-set returns the row), then moves its money and sends its events.
 */
async function settleJob(env: Env, transactionId: string): Promise<void> {
  const next = await completeInFlight.first(env.trx, { platformId: env.platform.id, id: transactionId, at: env.at });
  if (next) await completed(env, next);
}

/** What follows a payment's move to COMPLETED (`t` as it now is): ledger, quote, events, return. */
async function completed(env: Env, t: TransactionRow): Promise<void> {
  if (t.type === 'OUTGOING') {
    await settleOutgoing(env, t);
  } else if (t.kind === 'TRANSFER_IN') {
    const amount = Number(t.received_amount);
    await postAndNotify(env, 'INCOMING_SETTLEMENT', t.id, [
      { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'PENDING', amount: -amount },
      { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'AVAILABLE', amount },
    ]);
  } else {
    await postAndNotify(env, 'INCOMING_SETTLEMENT', t.id, [
      clearing(env, t.received_currency, -Number(t.received_amount)),
      { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'AVAILABLE', amount: Number(t.received_amount) },
    ]);
  }
  await moveQuote(env, t, 'COMPLETED');
  await emitPayment(env, t, 'COMPLETED');
  const s = parseScenario(t.scenario);
  if (s.kind === 'RETURNED') {
    await scheduleJob(env.trx, env.ctx.deps.clock, {
      id: env.ctx.deps.ids.next('Job'),
      platformId: env.platform.id,
      kind: JOB_RETURN,
      payload: { transactionId: t.id },
      delayMs: s.returnAfterMs,
      at: env.at,
    });
  }
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
  const outgoing = t.type === 'OUTGOING';
  const refund: RefundWire | undefined = outgoing
    ? { reference: `${t.reference}-REFUND`, initiatedAt: env.at, status: refundOutcome, reason: refundReason, ...(refundOutcome === 'COMPLETED' ? { settledAt: env.at } : {}) }
    : undefined;
  const next = await move(env, t, inFlight(t), { status: 'FAILED', failure_reason: reason, refund: refund ? JSON.stringify(refund) : null });
  if (!next) return undefined;
  if (outgoing) {
    if (refundOutcome === 'COMPLETED') await releaseOutgoing(env, t);
    else await writeOffOutgoing(env, t);
  } else if (t.kind === 'TRANSFER_IN' && (await hasIncomingHold(env, t))) {
    const amount = Number(t.received_amount);
    await postAndNotify(env, 'INCOMING_REVERSAL', t.id, [
      { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'PENDING', amount: -amount },
      clearing(env, t.received_currency, amount),
    ]);
  }
  await moveQuote(env, t, 'FAILED');
  await emitPayment(env, next, 'FAILED');
  if (refund) {
    const pending = { ...next, refund: JSON.stringify({ ...refund, status: 'PENDING', settledAt: undefined }) };
    await emitPayment(env, pending, 'REFUND_PENDING');
    await emitPayment(env, next, refundOutcome === 'COMPLETED' ? 'REFUND_COMPLETED' : 'REFUND_FAILED');
  }
  return next;
}

/** True when a transfer-in's pending credit was posted (fail-at-once pulls never post one). */
async function hasIncomingHold(env: Env, t: TransactionRow): Promise<boolean> {
  const row = await env.trx.selectFrom('ledger_entries').select('id').where('platform_id', '=', env.platform.id).where('reference_id', '=', t.id).where('kind', '=', 'INCOMING_PENDING').executeTakeFirst();
  return row !== undefined;
}

/** The receiving bank returned a completed payment: it fails and the principal is refunded. */
export async function returnPayment(env: Env, t: TransactionRow): Promise<TransactionRow | undefined> {
  const refund: RefundWire = { reference: `${t.reference}-REFUND`, initiatedAt: env.at, settledAt: env.at, status: 'COMPLETED', reason: 'TRANSACTION_FAILED' };
  const next = await move(env, t, ['COMPLETED'], { status: 'FAILED', failure_reason: 'PAYOUT_RETURNED', refund: JSON.stringify(refund) });
  if (!next) return undefined;
  await reverseOutgoing(env, t);
  if (t.quote_id) await transitionQuote(env.trx, t.quote_id, ['COMPLETED'], { status: 'FAILED', updated_at: env.at });
  await emitPayment(env, next, 'FAILED');
  await emitPayment(env, { ...next, refund: JSON.stringify({ ...refund, status: 'PENDING', settledAt: undefined }) }, 'REFUND_PENDING');
  await emitPayment(env, next, 'REFUND_COMPLETED');
  return next;
}

/** Registers the job handlers that carry delayed outcomes out. */
export function registerPaymentJobs(ctx: AppContext): void {
  const load = async (trx: Kysely<Database>, platform: PlatformRow, payload: string) => {
    const { transactionId } = JSON.parse(payload) as { transactionId: string };
    return selectTransaction.first(trx, { platformId: platform.id, id: transactionId });
  };
  // The batch's payment jobs move balances together at its end: no payment job reads a balance.
  const jobEnv = (trx: Kysely<Database>, platform: PlatformRow, batch: JobBatch): Env => ({
    ...envFor(trx, ctx, platform),
    balances: batch.part('payments:balances', () => new BatchedBalances(ctx)),
  });
  ctx.jobHandlers.set(JOB_SETTLE, async (trx, job, platform, batch) => {
    const { transactionId } = JSON.parse(job.payload) as { transactionId: string };
    const env = jobEnv(trx, platform, batch);
    await batchEvents(env, () => settleJob(env, transactionId));
  });
  ctx.jobHandlers.set(JOB_FAIL, async (trx, job, platform, batch) => {
    const t = await load(trx, platform, job.payload);
    if (!t) return;
    const s: Scenario = parseScenario(t.scenario);
    if (s.kind === 'FAIL') await failPayment(jobEnv(trx, platform, batch), t, s.reason, s.refund, s.refundReason);
  });
  ctx.jobHandlers.set(JOB_RETURN, async (trx, job, platform, batch) => {
    const t = await load(trx, platform, job.payload);
    if (t) await returnPayment(jobEnv(trx, platform, batch), t);
  });
}
