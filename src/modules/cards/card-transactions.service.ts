/**
 * Card transactions after the fact: the wire shape (the live CardTransaction), their events, the
 * jobs that act on them later (a 7-day hold expiry, a delayed pull's confirmation), and their part
 * of GET /transactions and GET /transactions/{id}.
 */
import type { Kysely } from 'kysely';
import type { JobHandler } from '../../jobs/jobs.ts';
import { currency } from '../../lib/currencies.ts';
import type { Database } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { cardLedger } from './card-ledger.ts';
import {
  type CardTransactionFilter,
  countCardTransactions,
  findCardTransaction,
  pageCardTransactions,
  updateCardTransaction,
} from './card-transactions.repo.ts';
import { findCard } from './cards.repo.ts';
import type { CardMerchantWire, CardTransactionWire } from './cards.schemas.ts';
import type { CardTransactionRow, CardTransactionsTable } from './cards.tables.ts';

export const JOB_CARD_HOLD_EXPIRY = 'CARD_HOLD_EXPIRY';
export const JOB_CARD_PULL_CONFIRM = 'CARD_PULL_CONFIRM';

/** The id prefix of card transactions among GET /transactions' ids. */
export const CARD_TRANSACTION_PREFIX = 'CardTransaction:';

export function cardTransactionToWire(t: CardTransactionRow): CardTransactionWire {
  const cur = currency(t.currency);
  const amount = (n: number) => ({ amount: Number(n), currency: { ...cur } });
  return {
    type: 'CARD',
    id: t.id,
    cardId: t.card_id,
    customerId: t.customer_id,
    platformCustomerId: t.platform_customer_id,
    issuerTransactionToken: t.issuer_transaction_token,
    status: t.status,
    direction: t.direction,
    merchant: JSON.parse(t.merchant) as CardMerchantWire,
    authorizedAmount: amount(t.authorized_amount),
    settledAmount: amount(t.settled_amount),
    refundedAmount: amount(t.refunded_amount),
    accountId: t.account_id,
    pullSummary: { count: Number(t.pull_count), totalAmount: Number(t.pull_total), pendingCount: Number(t.pull_pending_count) },
    refundSummary: { count: Number(t.refund_count), totalAmount: Number(t.refunded_amount) },
    settlementSummary: { count: Number(t.settlement_count), totalAmount: Number(t.settled_amount) },
    authorizedAt: t.created_at,
    lastEventAt: t.last_event_at,
    createdAt: t.created_at,
    updatedAt: t.updated_at,
  };
}

/** Emits `CARD_TRANSACTION.<status>` carrying the transaction as it now is (every change emits one). */
export function emitCardTransaction(u: Unit, t: CardTransactionRow): void {
  u.emit(`CARD_TRANSACTION.${t.status}` as const, t.id, cardTransactionToWire(t));
}

/** Writes the changed columns of a transaction (and its event time) and emits its event; returns it as it now is. */
export async function saveCardTransaction(
  u: Unit,
  t: CardTransactionRow,
  set: Partial<CardTransactionsTable>,
): Promise<CardTransactionRow> {
  const changes = { ...set, last_event_at: u.at, updated_at: u.at };
  await updateCardTransaction(u.trx, u.platform.id, t.id, changes);
  const next = { ...t, ...changes };
  emitCardTransaction(u, next);
  return next;
}

/**
 * A transaction's row for a job, locked in the order every writer takes them (its card, then it),
 * or undefined when it is gone (a sandbox reset).
 */
async function lockForJob(u: Unit, transactionId: string): Promise<CardTransactionRow | undefined> {
  const peek = await findCardTransaction(u.trx, u.platform.id, transactionId);
  if (!peek) return undefined;
  await findCard(u.trx, u.platform.id, peek.card_id, { forUpdate: true });
  return findCardTransaction(u.trx, u.platform.id, transactionId, { forUpdate: true });
}

/**
 * Ends what is still held for an open transaction without clearing it (an authorization expiry):
 * a DEBIT's hold returns to AVAILABLE, a CREDIT's pending credit to the network. The transaction is
 * SETTLED: closed against its funding source with what cleared before (docs/cards.md).
 */
export async function expireOpenTransaction(u: Unit, t: CardTransactionRow): Promise<CardTransactionRow> {
  const held = Number(t.held_amount);
  if (t.direction === 'DEBIT') await cardLedger.release(u, t, held);
  else await cardLedger.cancelCredit(u, t, held);
  return saveCardTransaction(u, t, {
    status: 'SETTLED',
    held_amount: 0,
    pull_total: t.direction === 'DEBIT' ? Number(t.pull_total) - held : Number(t.pull_total),
    hold_expires_at: null,
  });
}

/** Job: 7 days after its last authorization or advice, an open transaction's hold is released. */
export const holdExpiryJob: JobHandler = async (u, job) => {
  const { cardTransactionId } = JSON.parse(job.payload) as { cardTransactionId: string };
  const t = await lockForJob(u, cardTransactionId);
  if (!t || (t.status !== 'AUTHORIZED' && t.status !== 'PARTIALLY_SETTLED')) return;
  // An advice since pushed the expiry back (its own job comes later).
  if (t.hold_expires_at === null || t.hold_expires_at > u.at) return;
  await expireOpenTransaction(u, t);
};

/** Job: a delayed pull (descriptor suffix 005) is confirmed 30 s later. */
export const pullConfirmJob: JobHandler = async (u, job) => {
  const { cardTransactionId } = JSON.parse(job.payload) as { cardTransactionId: string };
  const t = await lockForJob(u, cardTransactionId);
  if (!t || Number(t.pull_pending_count) === 0) return;
  await saveCardTransaction(u, t, { pull_pending_count: Number(t.pull_pending_count) - 1 });
};

// ── GET /transactions and GET /transactions/{id} ──────────────────────────────────────────────

/** A card transaction of the platform as GET /transactions/{id} returns it, or undefined. */
export async function findCardTransactionWire(
  db: Kysely<Database>,
  platformId: string,
  id: string,
): Promise<CardTransactionWire | undefined> {
  const t = await findCardTransaction(db, platformId, id);
  return t && cardTransactionToWire(t);
}

/**
 * The card transactions matching a GET /transactions filter, for merging with payments: the total,
 * and (only when there is any) up to `limit` of them after `afterUuid` in id order. A platform with
 * no card transactions pays one indexed count.
 */
export async function cardTransactionsForList(
  db: Kysely<Database>,
  platformId: string,
  filter: CardTransactionFilter,
  page: { limit: number; afterUuid: string | undefined; order: 'asc' | 'desc' },
): Promise<{ rows: CardTransactionWire[]; totalCount: number }> {
  const totalCount = await countCardTransactions(db, platformId, filter);
  if (totalCount === 0) return { rows: [], totalCount };
  const afterId = page.afterUuid === undefined ? undefined : `${CARD_TRANSACTION_PREFIX}${page.afterUuid}`;
  const rows = await pageCardTransactions(db, platformId, filter, { limit: page.limit, afterId, order: page.order });
  return { rows: rows.map(cardTransactionToWire), totalCount };
}
