/**
 * The auditor's model of cards (docs/cards.md), computed only from the docs' rules — never from the
 * server's ledger: each card's state, each CardTransaction's status and amounts, where its money
 * sits on the funding account (through the payments model's `entry`, so the balance audit and the
 * BALANCE_UPDATED counts cover it), the ledger entries each step must post, the CARD.* and
 * CARD_TRANSACTION.* events each resource must emit, and the delayed outcomes (provisioning, the
 * 7-day hold expiry, a delayed pull's confirmation) as timers of the shared model.
 *
 * Times are platform ms; `iso` strings are what the server stamps (in-process: exactly the model's
 * now; on a real clock: read back from the server).
 */
import { createHash } from 'node:crypto';
import { AuditError, type CardTimers, type Model, type Timer } from './model.ts';

export const PROVISION_DELAY_MS = 30_000;
export const HOLD_EXPIRY_MS = 7 * 24 * 3600_000;
export const PULL_CONFIRM_MS = 30_000;
export const VELOCITY_MAX = 10;
export const VELOCITY_WINDOW_MS = 60_000;

export type CardState = 'PROCESSING' | 'ACTIVE' | 'FROZEN' | 'CLOSED';
export type DeclineReason =
  | 'INSUFFICIENT_FUNDS'
  | 'CARD_PAUSED'
  | 'CARD_CLOSED'
  | 'CARD_NOT_ACTIVE'
  | 'EXCEEDS_MAX_SPEND_PER_TRANSACTION'
  | 'VELOCITY_LIMIT_EXCEEDED';
export type CardKind =
  | 'AUTHORIZATION'
  | 'FINANCIAL_AUTHORIZATION'
  | 'CREDIT_AUTHORIZATION'
  | 'FINANCIAL_CREDIT_AUTHORIZATION'
  | 'CREDIT_AUTHORIZATION_ADVICE';
export type CardTxStatus = 'AUTHORIZED' | 'PARTIALLY_SETTLED' | 'SETTLED' | 'REFUNDED' | 'EXCEPTION';

/** The simulation path of each authorization-like kind. */
export const KIND_PATH: Record<CardKind, string> = {
  AUTHORIZATION: 'authorization',
  FINANCIAL_AUTHORIZATION: 'financial_authorization',
  CREDIT_AUTHORIZATION: 'credit_authorization',
  FINANCIAL_CREDIT_AUTHORIZATION: 'financial_credit_authorization',
  CREDIT_AUTHORIZATION_ADVICE: 'credit_authorization_advice',
};

export const isDebit = (k: CardKind) => k === 'AUTHORIZATION' || k === 'FINANCIAL_AUTHORIZATION';
export const isSingle = (k: CardKind) => k === 'FINANCIAL_AUTHORIZATION' || k === 'FINANCIAL_CREDIT_AUTHORIZATION';

const suffix = (s: string) => s.slice(-3);

/** Issuance by the last 3 characters of platformCardId (of cardholderId when none is given). */
export type Provisioning = 'NOW' | 'DELAYED' | 'NEVER' | 'REJECT';
export function provisioningOf(key: string): Provisioning {
  return ({ '001': 'NEVER', '002': 'REJECT', '005': 'DELAYED' } as Record<string, Provisioning>)[suffix(key)] ?? 'NOW';
}

/** The sandbox refuses to bind an account whose id ends in 002 ("balance check") or 003 ("account closed"). */
export function sourceRefused(accountId: string): boolean {
  return suffix(accountId) === '002' || suffix(accountId) === '003';
}

/** What the descriptor's last 3 characters ask of an authorization-like simulation. */
export type Magic = 'DECLINE_FUNDS' | 'DECLINE_PAUSED' | 'DELAYED_PULL' | 'PULL_FAILS' | 'NONE';
export function magicOf(descriptor: string): Magic {
  return (
    ({ '002': 'DECLINE_FUNDS', '003': 'DECLINE_PAUSED', '005': 'DELAYED_PULL', '006': 'PULL_FAILS' } as Record<string, Magic>)[
      suffix(descriptor)
    ] ?? 'NONE'
  );
}

/** The brand is fixed by the card id: the first byte of its SHA-256, even → VISA. */
export function brandOf(cardId: string): 'VISA' | 'MASTERCARD' {
  return createHash('sha256').update(cardId, 'utf8').digest()[0]! % 2 === 0 ? 'VISA' : 'MASTERCARD';
}

export function stateDecline(state: CardState): DeclineReason | undefined {
  return state === 'ACTIVE' ? undefined : state === 'FROZEN' ? 'CARD_PAUSED' : state === 'CLOSED' ? 'CARD_CLOSED' : 'CARD_NOT_ACTIVE';
}

export interface MHolder {
  id: string;
  n: number;
  platformCustomerId: string;
  kyc: 'APPROVED' | 'PENDING';
  /** Its USD and EUR internal accounts. */
  usd: string;
  eur: string;
}

/** What a CARD.* event carries (the card as GET returns it then). */
export interface CardSnap {
  type: string;
  state: CardState;
  stateReason: string | null;
  fundingSources: string[];
  maxSpend: number | null;
  updatedAt: string;
}

export interface MCard {
  id: string;
  holder: MHolder;
  platformCardId: string;
  state: CardState;
  stateReason: string | null;
  fundingSources: string[];
  maxSpend: number | null;
  provisioning: Provisioning;
  createdAt: string;
  updatedAt: string;
  /** Filled at activation (last4 is random: read from the server). */
  activatedAt: number | null;
  last4: string | null;
  events: CardSnap[];
}

/** What a CARD_TRANSACTION.* event carries (the transaction as GET /transactions lists it then). */
export interface TxSnap {
  type: string;
  status: CardTxStatus;
  authorized: number;
  settled: number;
  refunded: number;
  settlements: number;
  refunds: number;
  pulls: number;
  pullTotal: number;
  pullPending: number;
  updatedAt: string;
}

export interface MCardTx {
  id: string;
  card: MCard;
  token: string;
  kind: CardKind;
  direction: 'DEBIT' | 'CREDIT';
  status: CardTxStatus;
  merchant: Record<string, string>;
  /** The funding account decisioning chose. */
  account: string;
  authorized: number;
  /** Still held (a DEBIT's hold, a CREDIT's pending credit). */
  held: number;
  settled: number;
  settlements: number;
  /** Amounts of the returns not reversed, oldest first (a reversal takes the last). */
  returns: number[];
  pulls: number;
  pullTotal: number;
  pullPending: number;
  createdMs: number;
  createdAt: string;
  updatedAt: string;
  /** When its hold expires (open transactions only). */
  expiresAt: number | null;
  events: TxSnap[];
}

type Place = 'AVAILABLE' | 'PENDING' | 'NETWORK';

const iso = (ms: number) => new Date(ms).toISOString();

export class CardModel implements CardTimers {
  readonly holders: MHolder[] = [];
  readonly cards = new Map<string, MCard>();
  readonly txs = new Map<string, MCardTx>();
  /** The card ledger entries the server must have posted: `kind ref account:bucket=amount …`, one per entry. */
  readonly entries: string[] = [];
  /** Accounts of the cardholders (kept out of the other operations' pickers). */
  readonly accounts = new Set<string>();

  constructor(private readonly m: Model) {
    m.cards = this;
  }

  refunded(t: MCardTx): number {
    return t.returns.reduce((s, x) => s + x, 0);
  }

  open(t: MCardTx): boolean {
    return t.status === 'AUTHORIZED' || t.status === 'PARTIALLY_SETTLED';
  }

  // ---- cards

  cardEvent(c: MCard, type: string): void {
    c.events.push({
      type,
      state: c.state,
      stateReason: c.stateReason,
      fundingSources: [...c.fundingSources],
      maxSpend: c.maxSpend,
      updatedAt: c.updatedAt,
    });
  }

  /** A card was issued at `atMs`: PROCESSING, and provisioning scheduled by its suffix. */
  issued(c: MCard, atMs: number): void {
    this.cards.set(c.id, c);
    if (c.provisioning === 'NOW' || c.provisioning === 'REJECT') this.m.schedule('CARD_PROVISION', c.id, atMs);
    else if (c.provisioning === 'DELAYED') this.m.schedule('CARD_PROVISION', c.id, atMs + PROVISION_DELAY_MS);
  }

  // ---- authorization decisioning

  /** Approved authorizations of the card whose creation is inside the window ending at `now` (server: created_at > now − 1 min). */
  velocity(c: MCard, now: number): number {
    let n = 0;
    for (const t of this.txs.values()) if (t.card === c && t.createdMs > now - VELOCITY_WINDOW_MS) n += 1;
    return n;
  }

  /**
   * What decisioning answers for an authorization-like message at `now` (docs/cards.md, in order:
   * the card's state, the descriptor suffix, the limit of a DEBIT, the velocity limit, then the first
   * funding source that covers it); `margin` > 0 (a real clock) may leave the velocity unknown.
   */
  decide(
    c: MCard,
    kind: CardKind,
    amount: number,
    descriptor: string,
    now: number,
    margin: number,
  ): { reason: DeclineReason } | { account: string } | 'UNKNOWN' {
    const byState = stateDecline(c.state);
    if (byState) return { reason: byState };
    const magic = magicOf(descriptor);
    if (magic === 'DECLINE_PAUSED') return { reason: 'CARD_PAUSED' };
    if (magic === 'DECLINE_FUNDS') return { reason: 'INSUFFICIENT_FUNDS' };
    if (isDebit(kind) && c.maxSpend !== null && amount > c.maxSpend) return { reason: 'EXCEEDS_MAX_SPEND_PER_TRANSACTION' };
    const surely = this.velocity(c, now + margin);
    const maybe = this.velocity(c, now - margin);
    if (surely >= VELOCITY_MAX) return { reason: 'VELOCITY_LIMIT_EXCEEDED' };
    if (maybe >= VELOCITY_MAX) return 'UNKNOWN';
    const need = isDebit(kind) ? amount : 0;
    const source = c.fundingSources.find((id) => this.m.account(id).available >= need);
    return source ? { account: source } : { reason: 'INSUFFICIENT_FUNDS' };
  }

  // ---- money

  /** One card ledger entry for `t`: `amount` from one place to another (nothing for 0). */
  private move(kind: string, t: MCardTx, from: Place, to: Place, amount: number): void {
    if (amount === 0) return;
    if (amount < 0) throw new AuditError(`model: card move of ${amount}`);
    const delta = { AVAILABLE: 0, PENDING: 0, NETWORK: 0 };
    delta[from] -= amount;
    delta[to] += amount;
    this.m.entry([t.account, delta.AVAILABLE, delta.PENDING]);
    const postings = (['AVAILABLE', 'PENDING', 'NETWORK'] as const)
      .filter((p) => delta[p] !== 0)
      .map((p) => (p === 'NETWORK' ? `NETWORK=${delta[p]}` : `${t.account}:${p}=${delta[p]}`));
    this.entries.push(entryKey(kind, t.id, postings));
  }

  private txEvent(t: MCardTx, at: string): void {
    t.updatedAt = at;
    t.events.push({
      type: `CARD_TRANSACTION.${t.status}`,
      status: t.status,
      authorized: t.authorized,
      settled: t.settled,
      refunded: this.refunded(t),
      settlements: t.settlements,
      refunds: t.returns.length,
      pulls: t.pulls,
      pullTotal: t.pullTotal,
      pullPending: t.pullPending,
      updatedAt: at,
    });
  }

  private scheduleExpiry(t: MCardTx, atMs: number): void {
    for (const x of this.m.timers) if (x.kind === 'CARD_HOLD_EXPIRY' && x.ref === t.id) this.m.dropTimer(x);
    t.expiresAt = atMs + HOLD_EXPIRY_MS;
    this.m.schedule('CARD_HOLD_EXPIRY', t.id, t.expiresAt);
  }

  private closeHold(t: MCardTx): void {
    t.expiresAt = null;
    for (const x of this.m.timers) if (x.kind === 'CARD_HOLD_EXPIRY' && x.ref === t.id) this.m.dropTimer(x);
  }

  /**
   * An approved authorization-like message made `t` (its id, token and times read from the
   * server; everything else as the model predicted): its money, status, timers and event.
   */
  approve(
    init: Pick<MCardTx, 'id' | 'card' | 'token' | 'kind' | 'merchant' | 'account' | 'authorized' | 'createdMs' | 'createdAt'>,
  ): MCardTx {
    const { kind, authorized: amount } = init;
    const debit = isDebit(kind);
    const single = isSingle(kind);
    const magic = magicOf(init.merchant.descriptor!);
    const fails = magic === 'PULL_FAILS';
    const t: MCardTx = {
      ...init,
      direction: debit ? 'DEBIT' : 'CREDIT',
      status: fails ? 'EXCEPTION' : single ? 'SETTLED' : 'AUTHORIZED',
      held: fails || single ? 0 : amount,
      settled: single ? amount : 0,
      settlements: single ? 1 : 0,
      returns: [],
      pulls: debit ? 1 : 0,
      pullTotal: debit && !fails ? amount : 0,
      pullPending: magic === 'DELAYED_PULL' ? 1 : 0,
      updatedAt: init.createdAt,
      expiresAt: null,
      events: [],
    };
    this.txs.set(t.id, t);
    if (!fails) {
      if (debit && single) this.move('CARD_FINANCIAL_PULL', t, 'AVAILABLE', 'NETWORK', amount);
      else if (debit) this.move('CARD_HOLD', t, 'AVAILABLE', 'PENDING', amount);
      else if (single) this.move('CARD_CREDIT', t, 'NETWORK', 'AVAILABLE', amount);
      else this.move('CARD_CREDIT_HOLD', t, 'NETWORK', 'PENDING', amount);
      if (!single) this.scheduleExpiry(t, t.createdMs);
      if (t.pullPending > 0) this.m.schedule('CARD_PULL_CONFIRM', t.id, t.createdMs + PULL_CONFIRM_MS);
    }
    this.txEvent(t, t.createdAt);
    return t;
  }

  /** What a clearing of `amount` does to an open transaction (the model's name for the path). */
  clearingOutcome(t: MCardTx, amount: number): string {
    if (amount === 0) return t.direction === 'DEBIT' ? 'expiry' : 'credit expiry';
    const beyond = amount - Math.min(amount, t.held);
    if (t.direction === 'CREDIT') return beyond > 0 ? 'credit over' : amount < t.held ? 'credit partial' : 'credit exact';
    if (beyond === 0) return amount < t.held ? 'partial' : 'exact';
    return this.m.account(t.account).available >= beyond ? 'post-hoc pull' : 'EXCEPTION';
  }

  /** The rest of an open transaction's hold ends uncleared (a 0 clearing, the 7-day expiry): SETTLED with what cleared. */
  expire(t: MCardTx, at: string): void {
    if (t.direction === 'DEBIT') {
      this.move('CARD_HOLD_RELEASE', t, 'PENDING', 'AVAILABLE', t.held);
      t.pullTotal -= t.held;
    } else this.move('CARD_CREDIT_RELEASE', t, 'PENDING', 'NETWORK', t.held);
    t.held = 0;
    t.status = 'SETTLED';
    this.closeHold(t);
    this.txEvent(t, at);
  }

  clear(t: MCardTx, amount: number, at: string): void {
    if (amount === 0) {
      this.expire(t, at);
      return;
    }
    const fromHeld = Math.min(amount, t.held);
    const beyond = amount - fromHeld;
    let exception = false;
    if (t.direction === 'DEBIT') {
      this.move('CARD_CLEARING', t, 'PENDING', 'NETWORK', fromHeld);
      if (beyond > 0) {
        // Over-clearing: a post-hoc pull if the account still has it, else EXCEPTION (nothing overdraws).
        if (this.m.account(t.account).available >= beyond) {
          this.move('CARD_POST_HOC_PULL', t, 'AVAILABLE', 'NETWORK', beyond);
          t.pulls += 1;
          t.pullTotal += beyond;
        } else exception = true;
      }
    } else {
      this.move('CARD_CREDIT_CLEARING', t, 'PENDING', 'AVAILABLE', fromHeld);
      this.move('CARD_CREDIT', t, 'NETWORK', 'AVAILABLE', beyond);
    }
    t.held -= fromHeld;
    t.settled += amount;
    t.settlements += 1;
    t.status = exception ? 'EXCEPTION' : t.held > 0 ? 'PARTIALLY_SETTLED' : 'SETTLED';
    if (t.status !== 'PARTIALLY_SETTLED') this.closeHold(t);
    this.txEvent(t, at);
  }

  /** An advice's outcome: 400 below what settled, a decline when a DEBIT's increase is not covered, else approved. */
  adviceOutcome(t: MCardTx, amount: number): 'BELOW_SETTLED' | 'DECLINED' | 'APPROVED' {
    if (amount < t.settled) return 'BELOW_SETTLED';
    const delta = amount - t.settled - t.held;
    if (t.direction === 'DEBIT' && delta > 0 && this.m.account(t.account).available < delta) return 'DECLINED';
    return 'APPROVED';
  }

  /** An approved advice: the new total authorized; the hold (or pending credit) follows; the expiry restarts. */
  advise(t: MCardTx, amount: number, atMs: number, at: string): void {
    const newHeld = amount - t.settled;
    const delta = newHeld - t.held;
    if (t.direction === 'DEBIT') {
      if (delta > 0) this.move('CARD_HOLD', t, 'AVAILABLE', 'PENDING', delta);
      else this.move('CARD_HOLD_RELEASE', t, 'PENDING', 'AVAILABLE', -delta);
      t.pullTotal += delta;
    } else if (delta > 0) this.move('CARD_CREDIT_HOLD', t, 'NETWORK', 'PENDING', delta);
    else this.move('CARD_CREDIT_RELEASE', t, 'PENDING', 'NETWORK', -delta);
    t.authorized = amount;
    t.held = newHeld;
    if (newHeld === 0) {
      t.status = 'SETTLED';
      this.closeHold(t);
    } else this.scheduleExpiry(t, atMs);
    this.txEvent(t, at);
  }

  /** What a return of `amount` answers: 400 on a credit, on a transaction not SETTLED, or above settled − refunded. */
  returnOutcome(t: MCardTx, amount: number): 'CREDIT' | 'NOT_SETTLED' | 'TOO_MUCH' | 'partial' | 'full' {
    if (t.direction !== 'DEBIT') return 'CREDIT';
    if (t.status !== 'SETTLED') return 'NOT_SETTLED';
    const refundable = t.settled - this.refunded(t);
    if (amount > refundable) return 'TOO_MUCH';
    return amount === refundable ? 'full' : 'partial';
  }

  ret(t: MCardTx, amount: number, at: string): void {
    this.move('CARD_RETURN', t, 'NETWORK', 'AVAILABLE', amount);
    t.returns.push(amount);
    t.status = this.refunded(t) === t.settled ? 'REFUNDED' : 'SETTLED';
    this.txEvent(t, at);
  }

  /** What a return reversal answers: 400 unless a REFUNDED DEBIT; covered (SETTLED) or not (EXCEPTION). */
  reversalOutcome(t: MCardTx): 'CREDIT' | 'NOT_REFUNDED' | 'covered' | 'EXCEPTION' {
    if (t.direction !== 'DEBIT') return 'CREDIT';
    if (t.status !== 'REFUNDED') return 'NOT_REFUNDED';
    return this.m.account(t.account).available >= t.returns.at(-1)! ? 'covered' : 'EXCEPTION';
  }

  reverse(t: MCardTx, at: string): void {
    const amount = t.returns.at(-1)!;
    const covered = this.m.account(t.account).available >= amount;
    if (covered) this.move('CARD_RETURN_REVERSAL', t, 'AVAILABLE', 'NETWORK', amount);
    t.returns.pop();
    t.status = covered ? 'SETTLED' : 'EXCEPTION';
    this.txEvent(t, at);
  }

  // ---- timers

  effective(timer: Timer): boolean {
    if (timer.kind === 'CARD_PROVISION') return this.cards.get(timer.ref)?.state === 'PROCESSING';
    const t = this.txs.get(timer.ref);
    if (!t) return false;
    if (timer.kind === 'CARD_HOLD_EXPIRY') return this.open(t) && t.expiresAt === timer.dueAt;
    return t.pullPending > 0;
  }

  fire(timer: Timer, at: number): boolean {
    if (!this.effective(timer)) return false;
    if (timer.kind === 'CARD_PROVISION') {
      const c = this.cards.get(timer.ref)!;
      if (c.provisioning === 'REJECT') {
        c.state = 'CLOSED';
        c.stateReason = 'ISSUER_REJECTED';
      } else {
        c.state = 'ACTIVE';
        c.activatedAt = at;
      }
      c.updatedAt = iso(at);
      this.cardEvent(c, 'CARD.STATE_CHANGE');
      return true;
    }
    const t = this.txs.get(timer.ref)!;
    if (timer.kind === 'CARD_HOLD_EXPIRY') this.expire(t, iso(at));
    else {
      // The delayed pull is confirmed: nothing moves; the transaction re-announces its status.
      t.pullPending -= 1;
      this.txEvent(t, iso(at));
    }
    return true;
  }
}

/** A ledger entry as the audit compares them: kind, reference, and its postings sorted (CARD_NETWORK as NETWORK). */
export function entryKey(kind: string, ref: string, postings: string[]): string {
  return `${kind} ${ref} ${[...postings].sort().join(' ')}`;
}
