/**
 * The auditor's model: what every internal account, transaction, quote and agent action should be,
 * computed only from the workload's own reading of docs/payments.md and docs/decisions.md — never
 * from the server's ledger. The driver tells it what each request was and what came back (ids,
 * the rate a quote was priced at, server timestamps); the model decides what that must have done
 * to the money and which delayed outcomes it starts.
 *
 * Time is the platform's sandbox clock, in ms. Delayed outcomes are timers due at a platform time;
 * the driver fires them when the clock passes them (a clock advance it issued, or the job runner's
 * poll for outcomes due at once).
 */

// ---- the sandbox magic values, as docs/payments.md states them

export type Scenario =
  /** Settles after `delayMs` (0: right after the request, through the job runner). */
  | { kind: 'SUCCESS'; delayMs: number }
  /** Fails after `delayMs`, or inside the request (`now`); the refund ends as given. */
  | { kind: 'FAIL'; delayMs: number | 'now'; reason: string; refund: 'COMPLETED' | 'FAILED'; refundReason: string }
  /** Completes at once, then the receiving bank returns it after `returnAfterMs`. */
  | { kind: 'RETURNED'; returnAfterMs: number };

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const QUOTE_TTL_MS = 5 * MINUTE;
export const APPROVAL_WINDOW_MS = 5 * SECOND;
export const SESSION_MS = 15 * MINUTE;
/** An SCA challenge (per-transaction or login) lives 5 minutes on the platform clock; an SCA login session 180 days. */
export const SCA_CHALLENGE_TTL_MS = 5 * MINUTE;
export const SCA_SESSION_MS = 180 * 24 * 60 * MINUTE;
/** The sandbox SMS code, and the wrong proofs one challenge takes (the last voids it). */
export const SCA_CODE = '123456';
export const SCA_MAX_WRONG = 5;

const ok: Scenario = { kind: 'SUCCESS', delayMs: 0 };

/** Transfers (transfer-out and transfer-in), by the external account's identifier suffix. */
export function transferScenario(suffix: string, incoming: boolean): Scenario {
  const fail = (delayMs: number | 'now', outgoing: string): Scenario => ({
    kind: 'FAIL',
    delayMs,
    reason: incoming ? 'COLLECTION_FAILED' : outgoing,
    refund: 'COMPLETED',
    refundReason: 'TRANSACTION_FAILED',
  });
  switch (suffix) {
    case '002':
      return fail('now', 'LIMIT_EXCEEDED');
    case '003':
      return fail('now', 'ACCOUNT_INVALID');
    case '004':
      return fail(0, 'ACCOUNT_CANNOT_RECEIVE');
    case '005':
      return fail(30 * SECOND, 'ACCOUNT_CANNOT_RECEIVE');
    default:
      return ok;
  }
}

/** Quote execution to an external account, by the destination's identifier suffix. */
export function quoteScenario(suffix: string): Scenario {
  const fail = (reason: string, refund: 'COMPLETED' | 'FAILED', refundReason = 'TRANSACTION_FAILED'): Scenario => ({
    kind: 'FAIL',
    delayMs: 0,
    reason,
    refund,
    refundReason,
  });
  switch (suffix) {
    case '002':
      return fail('QUOTE_EXECUTION_FAILED', 'COMPLETED');
    case '003':
      return { kind: 'SUCCESS', delayMs: 6 * MINUTE };
    case '004':
      return fail('ACCOUNT_CANNOT_RECEIVE', 'COMPLETED');
    case '005':
      return { kind: 'RETURNED', returnAfterMs: 60 * SECOND };
    case '006':
      return fail('QUOTE_EXECUTION_FAILED', 'COMPLETED', 'USER_CANCELLATION');
    case '007':
      return fail('ACCOUNT_CANNOT_RECEIVE', 'FAILED');
    default:
      return ok;
  }
}

/** The sandbox UMA parties: the currency each receives and what paying it does. */
export const UMA_PARTIES: Record<string, { currency: string; scenario: Scenario }> = {
  '$success.usd': { currency: 'USD', scenario: ok },
  '$success.eur': { currency: 'EUR', scenario: ok },
  '$success.mxn': { currency: 'MXN', scenario: ok },
  '$pending.long.usd': { currency: 'USD', scenario: { kind: 'SUCCESS', delayMs: 60 * MINUTE } },
  '$fail.compliance.usd': {
    currency: 'USD',
    scenario: { kind: 'FAIL', delayMs: 0, reason: 'COMPLIANCE_REJECTED', refund: 'COMPLETED', refundReason: 'TRANSACTION_FAILED' },
  },
};

// ---- pricing (docs/decisions.md, "Exchange rates" and "Quote amounts")

/** A decimal rate as `units / 10^scale`, parsed from the number the API sent. */
export interface Rate {
  units: bigint;
  scale: number;
  value: number;
}

export function parseRate(value: number): Rate {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i.exec(String(value));
  if (!m) throw new Error(`unparseable rate ${value}`);
  let digits = m[1]! + (m[2] ?? '');
  let scale = (m[2] ?? '').length - Number(m[3] ?? 0);
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  return { units: BigInt(digits), scale, value };
}

export interface FeeTerms {
  fixed: number;
  bps: number;
}

/** `fixed + round(total × bps / 10000)`, ties up; none without terms. */
export function feeOf(total: bigint, terms: FeeTerms | undefined): bigint {
  if (!terms) return 0n;
  return BigInt(terms.fixed) + (total * BigInt(terms.bps) + 5_000n) / 10_000n;
}

export interface Priced {
  total: number;
  receiving: number;
  fees: number;
}

/** A quote's amounts for the locked side (fees only when the currencies differ, set by the caller). */
export function priceQuote(side: 'SENDING' | 'RECEIVING', amount: number, rate: Rate, terms: FeeTerms | undefined): Priced {
  const pow = 10n ** BigInt(rate.scale);
  if (side === 'SENDING') {
    const total = BigInt(amount);
    const fees = feeOf(total, terms);
    const net = total - fees;
    const receiving = net > 0n ? (net * rate.units) / pow : 0n;
    return { total: Number(total), receiving: Number(receiving), fees: Number(fees) };
  }
  const receiving = BigInt(amount);
  // The least sending amount before fees that delivers at least `receiving`: ceil(r / rate).
  const net = (receiving * pow + rate.units - 1n) / rate.units;
  // The least total whose net of fees covers it.
  const bps = BigInt(terms?.bps ?? 0);
  const fixed = BigInt(terms?.fixed ?? 0);
  let total = ((net + fixed) * 10_000n + (10_000n - bps) - 1n) / (10_000n - bps);
  while (total - feeOf(total, terms) < net) total += 1n;
  while (total > 1n && total - 1n - feeOf(total - 1n, terms) >= net) total -= 1n;
  return { total: Number(total), receiving: Number(receiving), fees: Number(feeOf(total, terms)) };
}

// ---- state

export interface MAccount {
  id: string;
  currency: string;
  type: string;
  customerId: string | null;
  /** `balance` on the wire. */
  available: number;
  /** `totalBalance − balance` on the wire. */
  pending: number;
}

export interface MExternal {
  id: string;
  currency: string;
  suffix: string;
  customerId: string | null;
  accountType: string;
}

export type TxKind = 'TRANSFER_OUT' | 'TRANSFER_IN' | 'QUOTE' | 'UMA_RECEIVE';

export interface MTx {
  id: string;
  kind: TxKind;
  status: string;
  /** Expected `failureReason` (null: absent); undefined: not stated by the docs, not checked. */
  failureReason: string | null | undefined;
  /** Expected refund status and reason (null: no refund). */
  refund: { status: string; reason: string } | null;
  /** The internal account the money is held on (outgoing) or arrives in (incoming); null when none. */
  account: string | null;
  /** Sent amount (outgoing: what is held) in `currency`. */
  amount: number;
  fees: number;
  currency: string;
  received: number;
  receivedCurrency: string;
  /** An internal account a quote pays into. */
  receiver: string | null;
  scenario: Scenario;
  quoteId: string | null;
  /** An incoming UMA payment waiting for the platform's decision. */
  awaitingApproval: boolean;
  /** Whether an incoming pull's pending credit was posted. */
  incomingHeld: boolean;
  /** The payment webhook events it must have emitted, in order (docs/payments.md's Events columns). */
  events: string[];
}

export type QuoteStatus = 'PENDING' | 'PENDING_AUTHORIZATION' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'EXPIRED';

/** The SCA challenge a parked quote waits on (PENDING_AUTHORIZATION). */
export interface MChallenge {
  id: string;
  expiresAt: number;
  /** Wrong codes tried; the SCA_MAX_WRONG-th voids it (429 after, until it lapses). */
  wrong: number;
}

export interface MQuote {
  id: string;
  txId: string;
  status: QuoteStatus;
  expiresAt: number;
  /** The internal account it is paid from (for a real-time funded quote: one in its currency, which it does not touch). */
  source: string;
  /** Funded in real time (POST /sandbox/send), not from an internal account. */
  realtime: boolean;
  total: number;
  receiving: number;
  fees: number;
  /** The EMBEDDED_WALLET payloadToSign, for wallet sources. */
  payload: string | null;
  agentId: string | null;
  /**
   * Its sender is an SCA customer and nothing exempts it (not to the customer's own account, no
   * trusted beneficiary, above the low-value limit): executing it parks it in PENDING_AUTHORIZATION.
   */
  scaGated: boolean;
  /** The challenge it waits on while PENDING_AUTHORIZATION (null otherwise). */
  challenge: MChallenge | null;
  /** Whether its customer authorised it: only then may its money move. */
  authorised: boolean;
}

export interface MAgent {
  id: string;
  customerId: string;
  token: string;
  mode: 'AUTO' | 'APPROVAL_REQUIRED';
  /** USD, the only currency agents move in the workload. */
  perTransactionLimit: number;
  /** Per-account rule overriding the default mode, if any. */
  ruleAccount: string | null;
  ruleMode: 'AUTO' | 'APPROVAL_REQUIRED' | null;
}

export interface MAction {
  id: string;
  agentId: string;
  type: 'EXECUTE_QUOTE' | 'TRANSFER_OUT' | 'TRANSFER_IN';
  status: 'PENDING_APPROVAL' | 'APPROVED' | 'REJECTED' | 'FAILED';
  /** What approving it runs. */
  transfer: { source: string; destination: string; amount: number } | null;
  quoteId: string | null;
  txId: string | null;
  /** Waiting for approval when created: it emitted AGENT_ACTION.PENDING_APPROVAL. */
  announced: boolean;
}

/** An invitation (docs/invitations.md); `n` is the workload's own number for it (its code is random). */
export interface MInvitation {
  n: number;
  code: string;
  inviterUma: string;
  /** As written; a PENDING one past `expiresAt` reads EXPIRED (`invitationStatus`). */
  status: 'PENDING' | 'CLAIMED' | 'CANCELLED';
  createdAt: string;
  expiresAt: number | null;
  firstName: string | null;
  amountToSend: { amount: number; currency: string } | null;
  inviteeUma: string | null;
  claimedAt: string | null;
}

export const LOOKUP_TTL_MS = 15 * MINUTE;

/** The cards' delayed outcomes (card-model.ts): a card's provisioning, a hold's 7-day expiry, a delayed pull's confirmation. */
export type CardTimerKind = 'CARD_PROVISION' | 'CARD_HOLD_EXPIRY' | 'CARD_PULL_CONFIRM';

export type TimerKind = 'SETTLE' | 'FAIL' | 'RETURN' | 'EXPIRE' | 'APPROVAL_TIMEOUT' | 'SCA_LAPSE' | CardTimerKind;

export function isCardTimer(t: Timer): boolean {
  return t.kind.startsWith('CARD_');
}

/** The part of the model that owns the card timers (card-model.ts): it fires them and says whether they still matter. */
export interface CardTimers {
  fire(timer: Timer, at: number): boolean;
  effective(timer: Timer): boolean;
}

export interface Timer {
  seq: number;
  dueAt: number;
  kind: TimerKind;
  /** Transaction id (quote id for EXPIRE; SCA_LAPSE: the parked quote's transaction; CARD_PROVISION: the card id). */
  ref: string;
}

/** A model discrepancy with what the server said (thrown; the driver adds seed and step). */
export class AuditError extends Error {
  override name = 'AuditError';
}

export class Model {
  readonly accounts = new Map<string, MAccount>();
  readonly externals: MExternal[] = [];
  readonly txs = new Map<string, MTx>();
  readonly quotes = new Map<string, MQuote>();
  readonly agents = new Map<string, MAgent>();
  readonly actions = new Map<string, MAction>();
  timers: Timer[] = [];
  private timerSeq = 0;
  /** Invitations by code, in creation order. */
  readonly invitations = new Map<string, MInvitation>();
  /** Bulk import jobs by id, with the BULK_UPLOAD.* event each must have emitted once. */
  readonly bulkJobs = new Map<string, string>();
  /** INTERNAL_ACCOUNT.BALANCE_UPDATED events each account must have emitted: one per ledger entry that moves it. */
  readonly balanceEvents = new Map<string, number>();
  /** The cards' model (card-model.ts), which fires the card timers. */
  cards: CardTimers | undefined;

  /** An invitation's status as read at platform time `at`: a PENDING one past its expiry is EXPIRED. */
  invitationStatus(inv: MInvitation, at: number): 'PENDING' | 'CLAIMED' | 'CANCELLED' | 'EXPIRED' {
    return inv.status === 'PENDING' && inv.expiresAt !== null && at >= inv.expiresAt ? 'EXPIRED' : inv.status;
  }

  account(id: string): MAccount {
    const a = this.accounts.get(id);
    if (!a) throw new AuditError(`model: unknown account ${id}`);
    return a;
  }

  tx(id: string): MTx {
    const t = this.txs.get(id);
    if (!t) throw new AuditError(`model: unknown transaction ${id}`);
    return t;
  }

  /** The platform's own internal account in `currency` (where fees of that currency settle). */
  platformAccount(currency: string): MAccount | undefined {
    return [...this.accounts.values()].find((a) => a.customerId === null && a.currency === currency);
  }

  /**
   * One ledger entry: moves each account's balance (`available`) and pending part by the given
   * amounts (summed per account, as one entry moves an account once) and counts the
   * BALANCE_UPDATED event each account it moves emits. (Public for the cards' ledger, card-model.ts.)
   */
  entry(...moves: [id: string | null, dAvailable: number, dPending: number][]): void {
    const net = new Map<string, [number, number]>();
    for (const [id, da, dp] of moves) {
      if (!id) continue;
      const prior = net.get(id) ?? [0, 0];
      net.set(id, [prior[0] + da, prior[1] + dp]);
    }
    for (const [id, [da, dp]] of net) {
      if (da === 0 && dp === 0) continue;
      const a = this.account(id);
      a.available += da;
      a.pending += dp;
      if (a.available < 0 || a.pending < 0) throw new AuditError(`model: ${id} would go negative (${a.available}/${a.pending})`);
      this.balanceEvents.set(id, (this.balanceEvents.get(id) ?? 0) + 1);
    }
  }

  event(t: MTx, suffix: string): void {
    t.events.push(`${t.kind === 'TRANSFER_OUT' || t.kind === 'QUOTE' ? 'OUTGOING_PAYMENT' : 'INCOMING_PAYMENT'}.${suffix}`);
  }

  schedule(kind: TimerKind, ref: string, dueAt: number): void {
    this.timers.push({ seq: this.timerSeq++, dueAt, kind, ref });
  }

  /** Timers due at or before `at`, in due order (then creation order, as the job runner takes them). */
  dueTimers(at: number): Timer[] {
    return this.timers.filter((t) => t.dueAt <= at).sort((a, b) => a.dueAt - b.dueAt || a.seq - b.seq);
  }

  dropTimer(t: Timer): void {
    this.timers = this.timers.filter((x) => x !== t);
  }

  // ---- money movement, per docs/payments.md

  fund(accountId: string, amount: number): void {
    this.entry([accountId, amount, 0]);
  }

  /**
   * A payment leaves: its amount is held on the source account (balance down, totalBalance the
   * same); then it fails inside the request or waits for its outcome.
   */
  startOutgoing(t: MTx, at: number): void {
    this.entry([t.account, -t.amount, t.amount]);
    this.txs.set(t.id, t);
    if (t.kind === 'TRANSFER_OUT') this.event(t, 'PENDING');
    const s = t.scenario;
    if (s.kind === 'FAIL' && s.delayMs === 'now') {
      this.failTx(t, s.reason, s.refund, s.refundReason);
      return;
    }
    const delay = s.kind === 'SUCCESS' ? s.delayMs : s.kind === 'FAIL' ? (s.delayMs as number) : 0;
    this.schedule(s.kind === 'FAIL' ? 'FAIL' : 'SETTLE', t.id, at + delay);
  }

  /** A pull: pending on the destination until the bank answers; a refusal at once credits nothing. */
  startPull(t: MTx, at: number): void {
    this.txs.set(t.id, t);
    const s = t.scenario;
    this.event(t, 'PENDING');
    if (s.kind === 'FAIL' && s.delayMs === 'now') {
      t.status = 'FAILED';
      t.failureReason = s.reason;
      this.event(t, 'FAILED');
      return;
    }
    this.entry([t.account, 0, t.amount]);
    t.incomingHeld = true;
    this.schedule(
      s.kind === 'FAIL' ? 'FAIL' : 'SETTLE',
      t.id,
      at + (s.kind === 'FAIL' ? (s.delayMs as number) : s.kind === 'SUCCESS' ? s.delayMs : 0),
    );
  }

  /** Statuses an outcome may still apply in: a quote payment is in flight only once executed. */
  inFlight(t: MTx): boolean {
    return t.kind === 'QUOTE' ? t.status === 'PROCESSING' : t.status === 'PENDING';
  }

  completeTx(t: MTx, at: number): void {
    t.status = 'COMPLETED';
    if (t.kind === 'TRANSFER_IN') {
      this.entry([t.account, t.amount, -t.amount]);
    } else if (t.kind === 'UMA_RECEIVE') {
      this.entry([t.account, t.received, 0]);
    } else {
      // Outgoing: the hold leaves; fees are earned by the platform's account in the sending currency.
      const fees = t.fees > 0 ? (this.platformAccount(t.currency)?.id ?? null) : null;
      this.entry([t.account, 0, -t.amount], [fees, t.fees, 0], [t.receiver, t.received, 0]);
    }
    this.event(t, 'COMPLETED');
    if (t.quoteId) this.quotes.get(t.quoteId)!.status = 'COMPLETED';
    if (t.scenario.kind === 'RETURNED') this.schedule('RETURN', t.id, at + t.scenario.returnAfterMs);
  }

  failTx(t: MTx, reason: string | null, refund: 'COMPLETED' | 'FAILED', refundReason: string): void {
    t.status = 'FAILED';
    t.failureReason = reason;
    this.event(t, 'FAILED');
    if (t.kind === 'TRANSFER_OUT' || t.kind === 'QUOTE') {
      t.refund = { status: refund, reason: refundReason };
      // The hold goes back to the source, or is written off when the refund itself fails.
      this.entry([t.account, refund === 'COMPLETED' ? t.amount : 0, -t.amount]);
      this.event(t, 'REFUND_PENDING');
      this.event(t, `REFUND_${refund}`);
    } else if (t.kind === 'TRANSFER_IN' && t.incomingHeld) {
      this.entry([t.account, 0, -t.amount]);
    }
    if (t.quoteId) this.quotes.get(t.quoteId)!.status = 'FAILED';
  }

  /** The receiving bank returned a completed payment: the principal (sent − fees) comes back. */
  returnTx(t: MTx): void {
    t.status = 'FAILED';
    t.failureReason = 'PAYOUT_RETURNED';
    t.refund = { status: 'COMPLETED', reason: 'TRANSACTION_FAILED' };
    const principal = t.amount - t.fees;
    if (principal > 0) this.entry([t.account, principal, 0]);
    this.event(t, 'FAILED');
    this.event(t, 'REFUND_PENDING');
    this.event(t, 'REFUND_COMPLETED');
    if (t.quoteId) this.quotes.get(t.quoteId)!.status = 'FAILED';
  }

  /** A locked quote is executed: its transaction becomes PROCESSING and the money is held. */
  executeQuote(q: MQuote, at: number): void {
    const t = this.tx(q.txId);
    // The model itself never lets an SCA payment move money before its customer authorised it.
    if (q.scaGated && !q.authorised) throw new AuditError(`model: quote ${q.id} needs SCA and was not authorised, yet would move money`);
    q.status = 'PROCESSING';
    t.status = 'PROCESSING';
    this.event(t, 'PROCESSING');
    this.startOutgoing(t, at);
  }

  /**
   * An SCA customer's quote is executed: it is parked in PENDING_AUTHORIZATION with its challenge,
   * and NOTHING moves (no hold, no balance event); the challenge lapses at `challenge.expiresAt`.
   */
  parkQuote(q: MQuote, challenge: MChallenge): void {
    if (!q.scaGated) throw new AuditError(`model: quote ${q.id} parked without needing SCA`);
    const t = this.tx(q.txId);
    q.status = 'PENDING_AUTHORIZATION';
    t.status = 'PENDING_AUTHORIZATION';
    q.challenge = challenge;
    this.event(t, 'PENDING_AUTHORIZATION');
    this.schedule('SCA_LAPSE', t.id, challenge.expiresAt);
  }

  /** The right code for a parked quote: the payment is released exactly as a normal execution. */
  authorizeQuote(q: MQuote, at: number): void {
    if (q.status !== 'PENDING_AUTHORIZATION') throw new AuditError(`model: authorising quote ${q.id} in ${q.status}`);
    q.authorised = true;
    q.challenge = null;
    this.executeQuote(q, at);
  }

  /** Quotes needing SCA that were never authorised (pending, parked, lapsed, expired): their money must never have moved. */
  unauthorised(): MQuote[] {
    return [...this.quotes.values()].filter((q) => q.scaGated && !q.authorised);
  }

  /**
   * Fires one due timer at platform time `at`; returns false when it was a no-op (its payment had
   * already left the state it applies to: cancelled, decided, executed).
   */
  fire(timer: Timer, at: number): boolean {
    this.dropTimer(timer);
    if (isCardTimer(timer)) return this.cards!.fire(timer, at);
    if (timer.kind === 'EXPIRE') {
      const q = this.quotes.get(timer.ref)!;
      if (q.status !== 'PENDING') return false;
      q.status = 'EXPIRED';
      const t = this.tx(q.txId);
      t.status = 'EXPIRED';
      t.failureReason = 'QUOTE_EXPIRED';
      this.event(t, 'EXPIRED');
      return true;
    }
    const t = this.tx(timer.ref);
    switch (timer.kind) {
      case 'SETTLE':
        if (!this.inFlight(t)) return false;
        this.completeTx(t, at);
        return true;
      case 'FAIL': {
        if (!this.inFlight(t) || t.scenario.kind !== 'FAIL') return false;
        this.failTx(t, t.scenario.reason, t.scenario.refund, t.scenario.refundReason);
        return true;
      }
      case 'RETURN':
        if (t.status !== 'COMPLETED') return false;
        this.returnTx(t);
        return true;
      case 'APPROVAL_TIMEOUT':
        if (!(t.status === 'PENDING' && t.awaitingApproval)) return false;
        t.status = 'FAILED';
        t.failureReason = 'PAYMENT_APPROVAL_TIMED_OUT';
        t.awaitingApproval = false;
        this.event(t, 'FAILED');
        return true;
      case 'SCA_LAPSE': {
        // The challenge lapsed unanswered (or voided): the payment fails; nothing had moved, nothing is refunded.
        if (t.status !== 'PENDING_AUTHORIZATION') return false;
        t.status = 'FAILED';
        t.failureReason = 'SCA_NOT_COMPLETED';
        this.event(t, 'FAILED');
        const q = this.quotes.get(t.quoteId!)!;
        q.status = 'FAILED';
        q.challenge = null;
        return true;
      }
    }
    return false;
  }

  /** The status its transaction shows once `timer` has fired (what the driver waits for or looks for). */
  statusAfter(timer: Timer): string {
    if (timer.kind === 'EXPIRE') return 'EXPIRED';
    return timer.kind === 'SETTLE' ? 'COMPLETED' : 'FAILED';
  }

  /** Whether firing `timer` now would change anything. */
  effective(timer: Timer): boolean {
    if (isCardTimer(timer)) return this.cards?.effective(timer) ?? false;
    if (timer.kind === 'EXPIRE') return this.quotes.get(timer.ref)?.status === 'PENDING';
    const t = this.txs.get(timer.ref);
    if (!t) return false;
    switch (timer.kind) {
      case 'SETTLE':
      case 'FAIL':
        return this.inFlight(t);
      case 'RETURN':
        return t.status === 'COMPLETED';
      case 'APPROVAL_TIMEOUT':
        return t.status === 'PENDING' && t.awaitingApproval;
      case 'SCA_LAPSE':
        return t.status === 'PENDING_AUTHORIZATION';
    }
    return false;
  }
}
