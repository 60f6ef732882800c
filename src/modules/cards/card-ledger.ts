/**
 * The money of card transactions: the ledger entries each step posts (with the BALANCE_UPDATED
 * events of the funding account, as payments emit them). Where the money sits (docs/cards.md):
 *
 * - a DEBIT authorization holds its amount on the funding account: AVAILABLE → PENDING;
 * - a clearing pays the card network from the hold: PENDING → CARD_NETWORK, and what it clears
 *   beyond the hold is pulled post hoc: AVAILABLE → CARD_NETWORK;
 * - a single-message (financial) debit is pulled at once: AVAILABLE → CARD_NETWORK;
 * - an expiry (a 0 clearing, the 7-day job, a smaller advice) releases: PENDING → AVAILABLE;
 * - a return pays back: CARD_NETWORK → AVAILABLE, and its reversal takes it again;
 * - a CREDIT authorization is a pending credit: CARD_NETWORK → PENDING; its clearing makes it
 *   available (PENDING → AVAILABLE, anything beyond straight from CARD_NETWORK), its expiry sends it
 *   back (PENDING → CARD_NETWORK); a financial credit arrives at once (CARD_NETWORK → AVAILABLE).
 *
 * CARD_NETWORK is the platform's system account for the card network (src/ledger/ledger.ts). Every
 * debit of an internal account is checked by the caller against the balance it read under the
 * account's row lock, so no posting here is ever refused for want of funds.
 */
import { type Bucket, type Posting, systemAccount } from '../../ledger/ledger.ts';
import type { Unit } from '../../unit.ts';
import { envOf, postAndNotify } from '../payments/payment-ledger.ts';

/** The transaction a movement belongs to: its id (the entries' reference), funding account and currency. */
export interface MoneyOf {
  id: string;
  account_id: string;
  currency: string;
}

type Place = 'AVAILABLE' | 'PENDING' | 'NETWORK';

function posting(u: Unit, t: MoneyOf, place: Place, amount: number): Posting {
  if (place === 'NETWORK')
    return { accountId: systemAccount(u.platform.id, 'CARD_NETWORK'), currency: t.currency, bucket: 'AVAILABLE', amount };
  return { accountId: t.account_id, currency: t.currency, bucket: place as Bucket, amount };
}

/** Moves `amount` from one place to another for the transaction (nothing for 0). */
async function move(u: Unit, kind: string, t: MoneyOf, from: Place, to: Place, amount: number): Promise<void> {
  if (amount === 0) return;
  if (amount < 0 || !Number.isSafeInteger(amount)) throw new Error(`card ledger move of ${amount}`);
  await postAndNotify(envOf(u), kind, t.id, [posting(u, t, from, -amount), posting(u, t, to, amount)]);
}

export const cardLedger = {
  /** A DEBIT authorization (or an advice raising it) holds money on the funding account. */
  hold: (u: Unit, t: MoneyOf, amount: number) => move(u, 'CARD_HOLD', t, 'AVAILABLE', 'PENDING', amount),
  /** A hold (or part of it) ends without clearing. */
  release: (u: Unit, t: MoneyOf, amount: number) => move(u, 'CARD_HOLD_RELEASE', t, 'PENDING', 'AVAILABLE', amount),
  /** A clearing pays the network from the hold. */
  clearFromHold: (u: Unit, t: MoneyOf, amount: number) => move(u, 'CARD_CLEARING', t, 'PENDING', 'NETWORK', amount),
  /** A post-hoc pull (over-clearing), a single-message debit, or a return reversal: straight from the available balance. */
  pull: (u: Unit, kind: 'CARD_POST_HOC_PULL' | 'CARD_FINANCIAL_PULL' | 'CARD_RETURN_REVERSAL', t: MoneyOf, amount: number) =>
    move(u, kind, t, 'AVAILABLE', 'NETWORK', amount),
  /** A merchant's return pays the funding account back. */
  refund: (u: Unit, t: MoneyOf, amount: number) => move(u, 'CARD_RETURN', t, 'NETWORK', 'AVAILABLE', amount),
  /** A CREDIT authorization (or an advice raising it): the credit is pending on the account. */
  pendingCredit: (u: Unit, t: MoneyOf, amount: number) => move(u, 'CARD_CREDIT_HOLD', t, 'NETWORK', 'PENDING', amount),
  /** A pending credit clears. */
  clearCredit: (u: Unit, t: MoneyOf, amount: number) => move(u, 'CARD_CREDIT_CLEARING', t, 'PENDING', 'AVAILABLE', amount),
  /** A pending credit ends without clearing. */
  cancelCredit: (u: Unit, t: MoneyOf, amount: number) => move(u, 'CARD_CREDIT_RELEASE', t, 'PENDING', 'NETWORK', amount),
  /** A credit arriving straight (single-message, or cleared beyond the pending credit). */
  credit: (u: Unit, t: MoneyOf, amount: number) => move(u, 'CARD_CREDIT', t, 'NETWORK', 'AVAILABLE', amount),
};
