/**
 * Transactions after the fact: reading and listing them, cancelling a pending bank-rail transfer,
 * confirming receipt delivery, and approving or rejecting an incoming payment that waits for the
 * platform (by the API, by the answer to its INCOMING_PAYMENT.PENDING webhook, or by the approval
 * window running out).
 */
import type { Kysely } from 'kysely';
import { errors } from '../../http/errors.ts';
import { type Page, pageOf, type PageRequest } from '../../lib/paging.ts';
import type { JobHandler } from '../../jobs/jobs.ts';
import { normalizeDateTime } from '../../lib/time.ts';
import type { Database, TransactionRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { INCOMING_FAILURE_REASONS } from '../../webhook-delivery/catalogue.ts';
import type { ReplyVerdict, WebhookReply } from '../../webhook-delivery/deliverer.ts';
import type { CardTransactionFilter } from '../cards/card-transactions.repo.ts';
import { CARD_TRANSACTION_PREFIX, cardTransactionsForList, findCardTransactionWire } from '../cards/card-transactions.service.ts';
import { completePayment, emitPayment, type Env, envOf, failPayment, transactionToWire } from './payment-engine.ts';
import type { TransactionListQueryT, TransactionOneOfWire, TransactionWire } from './payments.schemas.ts';
import { findTransaction, listTransactions, transitionTransaction, updateTransaction } from './payments.repo.ts';

/** The live API gives the platform 5 seconds to approve or reject an incoming payment. */
export const APPROVAL_WINDOW_MS = 5_000;
export const JOB_APPROVAL_TIMEOUT = 'PAYMENT_APPROVAL_TIMEOUT';

export async function getTransaction(db: Kysely<Database>, platformId: string, id: string): Promise<TransactionRow> {
  const t = await findTransaction(db, platformId, id);
  if (!t) throw errors.transactionNotFound(id);
  return t;
}

/** GET /transactions/{transactionId}: a payment, or a card transaction for a `CardTransaction:` id. */
export async function getTransactionWire(db: Kysely<Database>, platformId: string, id: string): Promise<TransactionOneOfWire> {
  if (!id.startsWith(CARD_TRANSACTION_PREFIX)) return transactionToWire(await getTransaction(db, platformId, id));
  const card = await findCardTransactionWire(db, platformId, id);
  if (!card) throw errors.transactionNotFound(id);
  return card;
}

/**
 * The card-transaction side of a GET /transactions filter, or undefined when the filter excludes card
 * transactions: `type` (INCOMING/OUTGOING, never CARD) and `reference` (they have none) do; the
 * account filters match the funding account (as sender of a DEBIT, receiver of a CREDIT).
 */
function cardFilterOf(q: Omit<TransactionListQueryT, 'cursor' | 'limit'>): CardTransactionFilter | undefined {
  if (q.type !== undefined || q.reference !== undefined) return undefined;
  if (q.senderAccountIdentifier !== undefined && q.receiverAccountIdentifier !== undefined) return undefined;
  const accounts = new Set([q.accountIdentifier, q.senderAccountIdentifier, q.receiverAccountIdentifier].filter((a) => a !== undefined));
  if (accounts.size > 1) return undefined;
  return {
    customerId: q.customerId,
    platformCustomerId: q.platformCustomerId,
    accountId: [...accounts][0],
    direction: q.senderAccountIdentifier !== undefined ? 'DEBIT' : q.receiverAccountIdentifier !== undefined ? 'CREDIT' : undefined,
    status: q.status,
    startDate: normalizeDateTime(q.startDate),
    endDate: normalizeDateTime(q.endDate),
  };
}

/**
 * GET /transactions: payments and card transactions in one keyset page. Ids are `<Type>:<uuid v7>`,
 * so the two merge by their (time-ordered) uuid: each side gives `limit + 1` rows after the cursor's
 * uuid, the merge is cut at `limit`, and the total is the sum. Payments are read exactly as before;
 * the card side costs one indexed count when the platform has no matching card transactions.
 */
export async function listTransactionPage(
  db: Kysely<Database>,
  platformId: string,
  q: Omit<TransactionListQueryT, 'cursor' | 'limit'>,
  { limit, afterId }: PageRequest,
): Promise<Page<TransactionOneOfWire>> {
  const order = q.sortOrder ?? 'desc';
  const afterUuid = afterId === undefined ? undefined : afterId.slice(afterId.indexOf(':') + 1);
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
    { limit, afterId: afterUuid === undefined ? undefined : `Transaction:${afterUuid}`, order },
  );
  const cardFilter = cardFilterOf(q);
  const cards = cardFilter && (await cardTransactionsForList(db, platformId, cardFilter, { limit: limit + 1, afterUuid, order }));
  if (!cards || cards.totalCount === 0) return pageOf(rows, limit, totalCount, transactionToWire);
  const uuidOf = (id: string) => id.slice(id.indexOf(':') + 1);
  const merged: { id: string; wire: () => TransactionOneOfWire }[] = [
    ...rows.map((r) => ({ id: r.id, wire: () => transactionToWire(r) })),
    ...cards.rows.map((c) => ({ id: c.id, wire: () => c })),
  ].sort((a, b) => (uuidOf(a.id) < uuidOf(b.id) ? -1 : 1) * (order === 'desc' ? -1 : 1));
  return pageOf(merged, limit, totalCount + cards.totalCount, (m) => m.wire());
}

/** A transaction the caller is about to change, its row held until the unit ends. */
async function lockTransaction(u: Unit, id: string): Promise<TransactionRow> {
  const t = await findTransaction(u.trx, u.platform.id, id, { forUpdate: true });
  if (!t) throw errors.transactionNotFound(id);
  return t;
}

/** Cancels a pending bank-rail transfer; its held money goes back (refund reason USER_CANCELLATION). */
export async function cancelTransaction(u: Unit, id: string): Promise<TransactionWire> {
  const t = await lockTransaction(u, id);
  if (t.kind !== 'TRANSFER_OUT' && t.kind !== 'TRANSFER_IN') {
    throw errors.invalidInput(
      `Only pending bank-rail transfers can be cancelled; ${id} is a ${t.kind === 'QUOTE' ? 'quote payment' : 'UMA payment'}`,
    );
  }
  // docs/payments.md: a cancelled pull ends like a failed one (COLLECTION_FAILED); a cancelled push
  // carries no failure reason, only its refund with reason USER_CANCELLATION.
  const reason = t.kind === 'TRANSFER_IN' ? 'COLLECTION_FAILED' : null;
  const failed = t.status === 'PENDING' ? await failPayment(envOf(u), t, reason, 'COMPLETED', 'USER_CANCELLATION') : undefined;
  if (!failed) throw errors.transactionNotCancellable(id, t.status);
  return transactionToWire(failed);
}

/** Records that the receipt was delivered (at `at`, or now). */
export async function confirmReceipt(u: Unit, id: string, at: string | undefined): Promise<TransactionWire> {
  const t = await getTransaction(u.trx, u.platform.id, id);
  const when = normalizeDateTime(at) ?? u.at;
  await updateTransaction(u.trx, t.id, { receipt_delivery_confirmed_at: when, updated_at: u.at });
  return transactionToWire({ ...t, receipt_delivery_confirmed_at: when, updated_at: u.at });
}

function awaitingApproval(t: TransactionRow): boolean {
  return (
    t.kind === 'UMA_RECEIVE' &&
    t.status === 'PENDING' &&
    !!t.extra &&
    (JSON.parse(t.extra) as { awaitingApproval?: boolean }).awaitingApproval === true
  );
}

/** The platform's decision on an incoming payment waiting for it. */
type Decision =
  | { approve: true; receiverCustomerInfo?: Record<string, unknown> | undefined }
  | { approve: false; status: 'REJECTED' | 'FAILED'; reason: string | null; requiredFields?: string[] | undefined };

/** An incoming payment waiting for the platform's decision, its row held until the unit ends. */
async function lockAwaitingApproval(u: Unit, id: string): Promise<TransactionRow> {
  const t = await lockTransaction(u, id);
  if (!awaitingApproval(t)) throw errors.transactionNotPendingApproval(id);
  return t;
}

/** POST /transactions/{id}/approve: credits an incoming payment waiting for the platform. */
export async function approveIncoming(
  u: Unit,
  id: string,
  receiverCustomerInfo: Record<string, string> | undefined,
): Promise<TransactionWire> {
  const t = await lockAwaitingApproval(u, id);
  return transactionToWire(await applyDecision(envOf(u), t, { approve: true, receiverCustomerInfo }));
}

/** POST /transactions/{id}/reject: rejects an incoming payment waiting for the platform. */
export async function rejectIncoming(u: Unit, id: string, reason: string | undefined): Promise<TransactionWire> {
  const t = await lockAwaitingApproval(u, id);
  return transactionToWire(await applyDecision(envOf(u), t, { approve: false, status: 'REJECTED', reason: reason ?? null }));
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
  await updateTransaction(env.u.trx, t.id, { extra: row.extra });
  if (d.approve) return (await completePayment(env, row)) ?? row;
  return refuseIncoming(env, row, d.status, reason);
}

/** Ends a PENDING incoming payment as REJECTED or FAILED (nothing was credited yet). */
export async function refuseIncoming(
  env: Env,
  t: TransactionRow,
  status: 'REJECTED' | 'FAILED',
  reason: string | null,
): Promise<TransactionRow> {
  const set = { status, failure_reason: reason, updated_at: env.u.at };
  if (!(await transitionTransaction(env.u.trx, t.id, ['PENDING'], set))) return t;
  const next = { ...t, ...set };
  emitPayment(env, next, 'FAILED');
  return next;
}

/** Job: the approval window ran out before the platform decided (listed in src/background.ts). */
export const approvalTimeoutJob: JobHandler = async (u, job) => {
  const { transactionId } = JSON.parse(job.payload) as { transactionId: string };
  const t = await findTransaction(u.trx, u.platform.id, transactionId, { forUpdate: true });
  if (t && awaitingApproval(t)) await refuseIncoming(envOf(u), t, 'FAILED', 'PAYMENT_APPROVAL_TIMED_OUT');
};

/** The longest failure reason kept from a receiver's 403 (as POST /transactions/{id}/reject allows). */
const MAX_REASON_LENGTH = 255;

/**
 * Reply hook (listed in src/background.ts): the receiver's answer to `INCOMING_PAYMENT.PENDING` for
 * a payment awaiting approval decides it (facts §9.3), in the unit over the transaction that
 * records the delivery attempt:
 * - 200 approves; a JSON body's `receiverCustomerInfo` object is kept as the approve API keeps it;
 * - 202 defers to POST /transactions/{id}/approve|reject (the approval-timeout job still applies);
 * - 403 rejects, keeping the body's `reason` as the failure reason, as the reject API does;
 * - 422 rejects as more information required (MISSING_MANDATORY_PAYEE_DATA), keeping `requiredFields`;
 * - anything else, or no answer, fails it with PAYMENT_APPROVAL_WEBHOOK_ERROR (and the delivery).
 * Payments no longer awaiting approval (bank rails, auto-approved, already decided or timed out)
 * are untouched: for them the event is informational.
 */
export async function incomingApprovalReply(u: Unit, reply: WebhookReply): Promise<ReplyVerdict> {
  const t = await findTransaction(u.trx, u.platform.id, reply.event.resource_id, { forUpdate: true });
  if (!t || !awaitingApproval(t)) return undefined;
  const env = envOf(u);
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
      const fields = Array.isArray(body?.requiredFields)
        ? body.requiredFields.filter((f): f is string => typeof f === 'string')
        : undefined;
      await applyDecision(env, t, { approve: false, status: 'REJECTED', reason: 'MISSING_MANDATORY_PAYEE_DATA', requiredFields: fields });
      return { delivered: true };
    }
    default:
      await applyDecision(env, t, { approve: false, status: 'FAILED', reason: 'PAYMENT_APPROVAL_WEBHOOK_ERROR' });
      return { delivered: false };
  }
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
