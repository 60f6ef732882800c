/**
 * The sandbox card simulations: each delivers one issuer message to the card and applies its effect
 * in the request's unit of work (committed before the 202), as docs/cards.md describes — except a
 * delayed pull (descriptor suffix 005), confirmed by a job 30 s later on the platform's clock.
 *
 * Every simulation locks its card first, then the transaction it names, then the funding account it
 * moves: concurrent messages on one card run one after the other, and a balance read under the
 * account's lock is the balance the hold takes (nothing overdraws, whatever runs beside it).
 *
 * A decline moves no money and makes no CardTransaction: it is recorded as a card event with its
 * reason, and the 202 carries the token all the same (the route adds the decision as headers).
 */
import { iso } from '../../lib/time.ts';
import type { InternalAccountRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { findActiveKeyForPair } from '../delegated-keys/delegated-keys.repo.ts';
import { cardLedger } from './card-ledger.ts';
import {
  countRecentTransactions,
  findCardTransaction,
  insertCardEvent,
  insertCardTransaction,
  lastOpenReturn,
  markReturnReversed,
} from './card-transactions.repo.ts';
import {
  emitCardTransaction,
  expireOpenTransaction,
  JOB_CARD_HOLD_EXPIRY,
  JOB_CARD_PULL_CONFIRM,
  saveCardTransaction,
} from './card-transactions.service.ts';
import { cardErrors } from './cards.errors.ts';
import { findCard, findInternalAccounts } from './cards.repo.ts';
import {
  type DeclineReason,
  DELAYED_PULL_MS,
  descriptorMagic,
  HOLD_EXPIRY_MS,
  stateDecline,
  VELOCITY_MAX,
  VELOCITY_WINDOW_MS,
} from './cards.rules.ts';
import type { CardMerchantWire, SandboxCardAuthorization } from './cards.schemas.ts';
import type { CardRow, CardTransactionKind, CardTransactionRow, CardTransactionsTable } from './cards.tables.ts';

/** What a simulation answers: the issuer token, and whether the message was approved. */
export interface SimulationOutcome {
  token: string;
  decision: 'APPROVED' | 'DECLINED';
  declineReason?: DeclineReason;
}

const DEBIT_KINDS: ReadonlySet<CardTransactionKind> = new Set(['AUTHORIZATION', 'FINANCIAL_AUTHORIZATION']);
const SINGLE_MESSAGE: ReadonlySet<CardTransactionKind> = new Set(['FINANCIAL_AUTHORIZATION', 'FINANCIAL_CREDIT_AUTHORIZATION']);
const ALL_KINDS: readonly CardTransactionKind[] = [
  'AUTHORIZATION',
  'FINANCIAL_AUTHORIZATION',
  'CREDIT_AUTHORIZATION',
  'FINANCIAL_CREDIT_AUTHORIZATION',
  'CREDIT_AUTHORIZATION_ADVICE',
];

async function lockCard(u: Unit, cardId: string): Promise<CardRow> {
  const card = await findCard(u.trx, u.platform.id, cardId, { forUpdate: true });
  if (!card) throw cardErrors.notFound(cardId);
  return card;
}

/** The card's transaction `id`, locked (after its card): 404 when it is not this card's. */
async function lockTransaction(u: Unit, card: CardRow, id: string): Promise<CardTransactionRow> {
  const t = await findCardTransaction(u.trx, u.platform.id, id, { forUpdate: true, cardId: card.id });
  if (!t) throw cardErrors.transactionNotFound(id);
  return t;
}

function requireOpen(t: CardTransactionRow): void {
  if (t.status !== 'AUTHORIZED' && t.status !== 'PARTIALLY_SETTLED') {
    throw cardErrors.transactionState(t.id, t.status, 'AUTHORIZED or PARTIALLY_SETTLED');
  }
}

/** The available balance of the transaction's funding account, read under its row lock. */
async function lockedAvailable(u: Unit, accountId: string): Promise<number> {
  const [account] = await findInternalAccounts(u.trx, u.platform.id, [accountId], { forUpdate: true });
  return account ? Number(account.available) : 0;
}

async function record(
  u: Unit,
  card: CardRow,
  e: { token: string; type: string; amount: number; transactionId?: string | undefined; declined?: DeclineReason },
): Promise<void> {
  await insertCardEvent(u.trx, {
    id: u.deps.ids.next('CardEvent'),
    platform_id: u.platform.id,
    card_id: card.id,
    card_transaction_id: e.transactionId ?? null,
    issuer_transaction_token: e.token,
    type: e.type,
    amount: e.amount,
    outcome: e.declined ? 'DECLINED' : 'APPROVED',
    decline_reason: e.declined ?? null,
    reversed: 0,
    created_at: u.at,
  });
}

async function scheduleExpiry(u: Unit, transactionId: string): Promise<string> {
  await u.schedule(JOB_CARD_HOLD_EXPIRY, { cardTransactionId: transactionId }, HOLD_EXPIRY_MS);
  return iso(u.nowMs + HOLD_EXPIRY_MS);
}

// ── Authorizations (the five that make a transaction) ─────────────────────────────────────────

/**
 * The first funding source, in priority order, that can fund `amount` (any, for a credit): ACTIVE,
 * in the card's currency, an embedded wallet only with an ACTIVE delegated key for the card, and
 * with `amount` available under its row lock.
 */
async function fundingAccount(u: Unit, card: CardRow, amount: number): Promise<InternalAccountRow | undefined> {
  const ids = JSON.parse(card.funding_sources) as string[];
  const byId = new Map((await findInternalAccounts(u.trx, u.platform.id, ids, { forUpdate: true })).map((a) => [a.id, a]));
  for (const id of ids) {
    const a = byId.get(id);
    if (a?.status !== 'ACTIVE' || a.currency !== card.currency) continue;
    if (a.type === 'EMBEDDED_WALLET' && !(await findActiveKeyForPair(u.trx, u.platform.id, card.id, a.id))) continue;
    if (Number(a.available) >= amount) return a;
  }
  return undefined;
}

/** Why the card refuses this authorization before any money is looked at, if it does. */
async function refusal(
  u: Unit,
  card: CardRow,
  kind: CardTransactionKind,
  input: SandboxCardAuthorization,
): Promise<DeclineReason | undefined> {
  const byState = stateDecline(card.state);
  if (byState) return byState;
  const magic = descriptorMagic(input.merchant.descriptor);
  if (magic === 'DECLINE_CARD_PAUSED') return 'CARD_PAUSED';
  if (magic === 'DECLINE_INSUFFICIENT_FUNDS') return 'INSUFFICIENT_FUNDS';
  const limit = card.max_spend_per_transaction;
  if (DEBIT_KINDS.has(kind) && limit !== null && input.amount > Number(limit)) return 'EXCEEDS_MAX_SPEND_PER_TRANSACTION';
  const recent = await countRecentTransactions(u.trx, u.platform.id, card.id, iso(u.nowMs - VELOCITY_WINDOW_MS), ALL_KINDS);
  return recent >= VELOCITY_MAX ? 'VELOCITY_LIMIT_EXCEEDED' : undefined;
}

/** authorization, financial_authorization, credit_authorization, financial_credit_authorization, credit_authorization_advice. */
export async function simulateAuthorization(
  u: Unit,
  cardId: string,
  kind: CardTransactionKind,
  input: SandboxCardAuthorization,
): Promise<SimulationOutcome> {
  const card = await lockCard(u, cardId);
  if (input.currency.code !== card.currency) throw cardErrors.currencyMismatch(card.currency);
  const token = u.deps.ids.uuid();
  const debit = DEBIT_KINDS.has(kind);
  const decline = async (reason: DeclineReason): Promise<SimulationOutcome> => {
    await record(u, card, { token, type: kind, amount: input.amount, declined: reason });
    return { token, decision: 'DECLINED', declineReason: reason };
  };
  const refused = await refusal(u, card, kind, input);
  if (refused) return decline(refused);
  const account = await fundingAccount(u, card, debit ? input.amount : 0);
  if (!account) return decline('INSUFFICIENT_FUNDS');

  const holder = await findCustomer(u.trx, u.platform.id, card.cardholder_id);
  const merchant: CardMerchantWire = { descriptor: input.merchant.descriptor };
  if (input.merchant.mcc !== undefined) merchant.mcc = input.merchant.mcc;
  if (input.merchant.country !== undefined) merchant.country = input.merchant.country;
  const amount = input.amount;
  const single = SINGLE_MESSAGE.has(kind);
  const magic = descriptorMagic(input.merchant.descriptor);
  // 006: the pull (a credit's push) was made but its confirmation reports FAILED — nothing moves.
  const fails = magic === 'PULL_FAILS';
  const t: CardTransactionRow = {
    id: u.deps.ids.next('CardTransaction'),
    platform_id: u.platform.id,
    card_id: card.id,
    customer_id: card.cardholder_id,
    platform_customer_id: holder?.platform_customer_id ?? '',
    account_id: account.id,
    issuer_transaction_token: token,
    kind,
    direction: debit ? 'DEBIT' : 'CREDIT',
    status: fails ? 'EXCEPTION' : single ? 'SETTLED' : 'AUTHORIZED',
    merchant: JSON.stringify(merchant),
    currency: card.currency,
    authorized_amount: amount,
    held_amount: fails || single ? 0 : amount,
    settled_amount: single ? amount : 0,
    refunded_amount: 0,
    settlement_count: single ? 1 : 0,
    refund_count: 0,
    pull_count: debit ? 1 : 0,
    pull_total: debit && !fails ? amount : 0,
    pull_pending_count: magic === 'DELAYED_PULL' ? 1 : 0,
    shortfall: fails && debit ? amount : 0,
    exception_reason: fails ? 'PULL_FAILED' : null,
    hold_expires_at: fails || single ? null : iso(u.nowMs + HOLD_EXPIRY_MS),
    last_event_at: u.at,
    created_at: u.at,
    updated_at: u.at,
  };
  await insertCardTransaction(u.trx, t);
  if (!fails) {
    if (debit && single) await cardLedger.pull(u, 'CARD_FINANCIAL_PULL', t, amount);
    else if (debit) await cardLedger.hold(u, t, amount);
    else if (single) await cardLedger.credit(u, t, amount);
    else await cardLedger.pendingCredit(u, t, amount);
    if (!single) await u.schedule(JOB_CARD_HOLD_EXPIRY, { cardTransactionId: t.id }, HOLD_EXPIRY_MS);
    if (t.pull_pending_count > 0) await u.schedule(JOB_CARD_PULL_CONFIRM, { cardTransactionId: t.id }, DELAYED_PULL_MS);
  }
  await record(u, card, { token, type: kind, amount, transactionId: t.id });
  emitCardTransaction(u, t);
  return { token, decision: 'APPROVED' };
}

/** balance_inquiry: a 0-amount authorization — approved when the card can authorize; no money, no transaction. */
export async function simulateBalanceInquiry(u: Unit, cardId: string): Promise<SimulationOutcome> {
  const card = await lockCard(u, cardId);
  const token = u.deps.ids.uuid();
  const declined = stateDecline(card.state);
  await record(u, card, { token, type: 'BALANCE_INQUIRY', amount: 0, ...(declined ? { declined } : {}) });
  return declined ? { token, decision: 'DECLINED', declineReason: declined } : { token, decision: 'APPROVED' };
}

// ── Messages on an existing transaction ───────────────────────────────────────────────────────

/** clearing: settles part, all or more than the open amount; 0 expires the authorization. */
export async function simulateClearing(u: Unit, cardId: string, input: { cardTransactionId: string; amount: number }) {
  const card = await lockCard(u, cardId);
  const t = await lockTransaction(u, card, input.cardTransactionId);
  requireOpen(t);
  const token = u.deps.ids.uuid();
  const amount = input.amount;
  await record(u, card, { token, type: amount === 0 ? 'AUTHORIZATION_EXPIRY' : 'CLEARING', amount, transactionId: t.id });
  if (amount === 0) {
    await expireOpenTransaction(u, t);
    return { token, decision: 'APPROVED' } as const;
  }
  const held = Number(t.held_amount);
  const fromHeld = Math.min(amount, held);
  const beyond = amount - fromHeld;
  const set: Partial<CardTransactionsTable> = {
    held_amount: held - fromHeld,
    settled_amount: Number(t.settled_amount) + amount,
    settlement_count: Number(t.settlement_count) + 1,
  };
  let exception = false;
  if (t.direction === 'DEBIT') {
    await cardLedger.clearFromHold(u, t, fromHeld);
    if (beyond > 0) {
      // Over-clearing: the difference is pulled post hoc, if the account still has it.
      if ((await lockedAvailable(u, t.account_id)) >= beyond) {
        await cardLedger.pull(u, 'CARD_POST_HOC_PULL', t, beyond);
        set.pull_count = Number(t.pull_count) + 1;
        set.pull_total = Number(t.pull_total) + beyond;
      } else {
        exception = true;
        set.shortfall = Number(t.shortfall) + beyond;
        set.exception_reason = 'POST_HOC_PULL_FAILED';
      }
    }
  } else {
    await cardLedger.clearCredit(u, t, fromHeld);
    await cardLedger.credit(u, t, beyond);
  }
  set.status = exception ? 'EXCEPTION' : set.held_amount! > 0 ? 'PARTIALLY_SETTLED' : 'SETTLED';
  if (set.status !== 'PARTIALLY_SETTLED') set.hold_expires_at = null;
  await saveCardTransaction(u, t, set);
  return { token, decision: 'APPROVED' } as const;
}

/** authorization_advice: re-sizes an open authorization to a new total (up: held more, if the account has it; down: released). */
export async function simulateAdvice(
  u: Unit,
  cardId: string,
  input: { cardTransactionId: string; amount: number },
): Promise<SimulationOutcome> {
  const card = await lockCard(u, cardId);
  const t = await lockTransaction(u, card, input.cardTransactionId);
  requireOpen(t);
  const settled = Number(t.settled_amount);
  if (input.amount < settled) throw cardErrors.adviceBelowSettled(settled);
  const token = u.deps.ids.uuid();
  const held = Number(t.held_amount);
  const newHeld = input.amount - settled;
  const delta = newHeld - held;
  if (t.direction === 'DEBIT' && delta > 0 && (await lockedAvailable(u, t.account_id)) < delta) {
    await record(u, card, {
      token,
      type: 'AUTHORIZATION_ADVICE',
      amount: input.amount,
      transactionId: t.id,
      declined: 'INSUFFICIENT_FUNDS',
    });
    return { token, decision: 'DECLINED', declineReason: 'INSUFFICIENT_FUNDS' };
  }
  if (t.direction === 'DEBIT') {
    if (delta > 0) await cardLedger.hold(u, t, delta);
    else await cardLedger.release(u, t, -delta);
  } else if (delta > 0) await cardLedger.pendingCredit(u, t, delta);
  else await cardLedger.cancelCredit(u, t, -delta);
  await record(u, card, { token, type: 'AUTHORIZATION_ADVICE', amount: input.amount, transactionId: t.id });
  const closed = newHeld === 0;
  await saveCardTransaction(u, t, {
    authorized_amount: input.amount,
    held_amount: newHeld,
    pull_total: t.direction === 'DEBIT' ? Number(t.pull_total) + delta : Number(t.pull_total),
    status: closed ? 'SETTLED' : t.status,
    hold_expires_at: closed ? null : await scheduleExpiry(u, t.id),
  });
  return { token, decision: 'APPROVED' };
}

function requireDebit(t: CardTransactionRow): void {
  if (t.direction !== 'DEBIT') throw cardErrors.creditTransaction(t.id);
}

/** return: the merchant pays back part or all of what settled (CARD_NETWORK → the funding account). */
export async function simulateReturn(u: Unit, cardId: string, input: { cardTransactionId: string; amount: number }) {
  const card = await lockCard(u, cardId);
  const t = await lockTransaction(u, card, input.cardTransactionId);
  requireDebit(t);
  if (t.status !== 'SETTLED') throw cardErrors.transactionState(t.id, t.status, 'SETTLED');
  const refundable = Number(t.settled_amount) - Number(t.refunded_amount);
  if (input.amount > refundable) throw cardErrors.returnTooLarge(refundable);
  const token = u.deps.ids.uuid();
  await cardLedger.refund(u, t, input.amount);
  await record(u, card, { token, type: 'RETURN', amount: input.amount, transactionId: t.id });
  const refunded = Number(t.refunded_amount) + input.amount;
  await saveCardTransaction(u, t, {
    refunded_amount: refunded,
    refund_count: Number(t.refund_count) + 1,
    status: refunded === Number(t.settled_amount) ? 'REFUNDED' : 'SETTLED',
  });
  return { token, decision: 'APPROVED' } as const;
}

/** return_reversal: the latest return of a REFUNDED transaction is taken back from the funding account (EXCEPTION if it cannot be). */
export async function simulateReturnReversal(u: Unit, cardId: string, input: { cardTransactionId: string }) {
  const card = await lockCard(u, cardId);
  const t = await lockTransaction(u, card, input.cardTransactionId);
  requireDebit(t);
  if (t.status !== 'REFUNDED') throw cardErrors.transactionState(t.id, t.status, 'REFUNDED');
  const ret = await lastOpenReturn(u.trx, u.platform.id, t.id);
  if (!ret) throw cardErrors.transactionState(t.id, t.status, 'REFUNDED by a return not yet reversed');
  const amount = Number(ret.amount);
  const token = u.deps.ids.uuid();
  const covered = (await lockedAvailable(u, t.account_id)) >= amount;
  if (covered) await cardLedger.pull(u, 'CARD_RETURN_REVERSAL', t, amount);
  await markReturnReversed(u.trx, u.platform.id, ret.id);
  await record(u, card, { token, type: 'RETURN_REVERSAL', amount, transactionId: t.id });
  await saveCardTransaction(u, t, {
    refunded_amount: Number(t.refunded_amount) - amount,
    refund_count: Number(t.refund_count) - 1,
    status: covered ? 'SETTLED' : 'EXCEPTION',
    ...(covered ? {} : { shortfall: Number(t.shortfall) + amount, exception_reason: 'RETURN_REVERSAL_PULL_FAILED' }),
  });
  return { token, decision: 'APPROVED' } as const;
}
