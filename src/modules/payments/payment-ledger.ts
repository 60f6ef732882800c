/**
 * The money of a payment: the ledger entries each step posts, and the BALANCE_UPDATED events of the
 * internal accounts they move.
 *
 * Where an outgoing payment's money sits while it is in flight:
 * - from an internal account: the account's PENDING bucket (balance down, totalBalance unchanged);
 * - real-time funded or pulled from an external account: the platform's IN_TRANSIT system account.
 * Settlement sends (amount − fees) to RAIL_CLEARING and the fees to the platform's internal account
 * in the sending currency. A failure before settlement releases the hold (the refund); a failed
 * refund writes the hold off to RAIL_CLEARING; a return after settlement refunds the principal.
 *
 * Every entry is written before the balance UPDATEs it makes (`balancesLast`): the UPDATE takes the
 * account row's lock until COMMIT, and on PostgreSQL concurrent payments of one account queue on it,
 * so it comes after the rows no other request touches. A refusal for want of funds is found before
 * anything is written instead, from the balance the step read (`requireFunds`).
 */
import type { Kysely } from 'kysely';
import type { BatchPart } from '../../jobs/jobs.ts';
import { BalanceBatch, InsufficientFundsError, postEntry, systemAccount, type EntryInput, type Posting } from '../../ledger/ledger.ts';
import type { Database, InternalAccountRow, TransactionRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findPlatformAccountIn } from '../internal-accounts/internal-accounts.repo.ts';
import { internalAccountToWire } from '../internal-accounts/internal-accounts.service.ts';

/**
 * A payment step's view of its unit of work: the unit, and — for the payment jobs of a job batch —
 * the batch's balance moves, applied when the batch ends.
 */
export interface Env {
  readonly u: Unit;
  readonly balances?: BatchedBalances | undefined;
}

/** The payment steps' view of a unit outside a job batch: balances move at once. */
export function envOf(u: Unit): Env {
  return { u };
}

/**
 * Refuses a payment its source account cannot cover, from the balance the step read from that
 * account in this unit, before the step writes anything (on SQLite a refusal after a write costs
 * the other requests of its commit group a replay). The hold's conditional UPDATE stays the guard:
 * this only answers earlier, with the same error.
 */
export function requireFunds(account: Pick<InternalAccountRow, 'id' | 'available'>, amount: number): void {
  if (Number(account.available) < amount) throw new InsufficientFundsError(account.id);
}

/**
 * Posts a ledger entry and emits INTERNAL_ACCOUNT.BALANCE_UPDATED for each internal account it
 * moves — at once, or, when `env.balances` batches them, at the end of the job batch.
 */
export async function postAndNotify(env: Env, kind: string, referenceId: string, postings: Posting[]): Promise<void> {
  const { u } = env;
  const entry: EntryInput = {
    id: u.deps.ids.next('LedgerEntry'),
    platformId: u.platform.id,
    kind,
    referenceId,
    postings,
    at: u.at,
    balancesLast: true,
  };
  if (env.balances) return env.balances.post(u, entry);
  await u.beforeRowLock();
  for (const row of await postEntry(u.trx, entry)) emitBalance(u, row);
}

function emitBalance(u: Unit, row: InternalAccountRow): void {
  u.emit('INTERNAL_ACCOUNT.BALANCE_UPDATED', row.id, internalAccountToWire(row, '', false));
}

/**
 * The balance moves of a job batch's payment jobs, applied when the batch ends (ledger
 * `BalanceBatch`: every account once, in id order across the batch's platforms), with their
 * BALANCE_UPDATED events. Those events are emitted then, after the account rows are locked, so
 * their ids sort after every event of the account committed before; each goes through the unit of
 * its platform, which the job runner flushes after the batch's parts finish.
 */
export class BatchedBalances implements BatchPart {
  private readonly ledger = new BalanceBatch();
  private readonly units = new Map<string, Unit>();

  post(u: Unit, entry: EntryInput): Promise<void> {
    this.units.set(u.platform.id, u);
    return this.ledger.post(u.trx, entry);
  }

  async finish(trx: Kysely<Database>): Promise<void> {
    for (const m of await this.ledger.flush(trx)) {
      for (const row of m.moved) {
        const u = this.units.get(row.platform_id);
        if (!u) throw new Error(`balance moved on platform ${row.platform_id} without its unit`);
        emitBalance(u, row);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Ledger flows

function held(env: Env, t: TransactionRow, amount: number): Posting {
  return t.internal_account_id && t.type === 'OUTGOING'
    ? { accountId: t.internal_account_id, currency: t.sent_currency, bucket: 'PENDING', amount }
    : { accountId: systemAccount(env.u.platform.id, 'IN_TRANSIT'), currency: t.sent_currency, bucket: 'AVAILABLE', amount };
}

function clearing(env: Env, cur: string, amount: number): Posting {
  return { accountId: systemAccount(env.u.platform.id, 'RAIL_CLEARING'), currency: cur, bucket: 'AVAILABLE', amount };
}

/** Takes an outgoing payment's amount from where it comes from into its in-flight place. */
export async function holdOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.sent_amount);
  const from: Posting = t.internal_account_id
    ? { accountId: t.internal_account_id, currency: t.sent_currency, bucket: 'AVAILABLE', amount: -amount }
    : clearing(env, t.sent_currency, -amount);
  await postAndNotify(env, 'PAYMENT_HOLD', t.id, [from, held(env, t, amount)]);
}

export async function releaseOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.sent_amount);
  const to: Posting = t.internal_account_id
    ? { accountId: t.internal_account_id, currency: t.sent_currency, bucket: 'AVAILABLE', amount }
    : clearing(env, t.sent_currency, amount);
  await postAndNotify(env, 'PAYMENT_REFUND', t.id, [held(env, t, -amount), to]);
}

export async function writeOffOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.sent_amount);
  await postAndNotify(env, 'PAYMENT_REFUND_FAILED', t.id, [held(env, t, -amount), clearing(env, t.sent_currency, amount)]);
}

export async function settleOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.sent_amount);
  const fees = Number(t.fees);
  const postings: Posting[] = [held(env, t, -amount), clearing(env, t.sent_currency, amount - fees)];
  if (fees > 0)
    postings.push({ accountId: await feeAccount(env, t.sent_currency), currency: t.sent_currency, bucket: 'AVAILABLE', amount: fees });
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
export async function reverseOutgoing(env: Env, t: TransactionRow): Promise<void> {
  const principal = Number(t.sent_amount) - Number(t.fees);
  if (principal <= 0 || !t.internal_account_id) return; // real-time funded: it goes back to the payer's instrument, outside the ledger
  await postAndNotify(env, 'PAYMENT_RETURN', t.id, [
    clearing(env, t.sent_currency, -principal),
    { accountId: t.internal_account_id, currency: t.sent_currency, bucket: 'AVAILABLE', amount: principal },
  ]);
}

/** The platform internal account fees in `cur` settle into (a system account if it has none). */
async function feeAccount(env: Env, cur: string): Promise<string> {
  const row = await findPlatformAccountIn(env.u.trx, env.u.platform.id, cur);
  return row?.id ?? systemAccount(env.u.platform.id, 'FEES');
}

/** An incoming bank pull: the amount shows as pending on the receiving account. */
export async function holdIncoming(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.received_amount);
  await postAndNotify(env, 'INCOMING_PENDING', t.id, [
    clearing(env, t.received_currency, -amount),
    { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'PENDING', amount },
  ]);
}

/** An incoming payment settles: a pull's pending credit becomes available, anything else arrives from the rail. */
export async function settleIncoming(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.received_amount);
  if (t.kind === 'TRANSFER_IN') {
    await postAndNotify(env, 'INCOMING_SETTLEMENT', t.id, [
      { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'PENDING', amount: -amount },
      { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'AVAILABLE', amount },
    ]);
  } else {
    await postAndNotify(env, 'INCOMING_SETTLEMENT', t.id, [
      clearing(env, t.received_currency, -amount),
      { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'AVAILABLE', amount },
    ]);
  }
}

/** A failed pull takes its pending credit back. */
export async function reverseIncoming(env: Env, t: TransactionRow): Promise<void> {
  const amount = Number(t.received_amount);
  await postAndNotify(env, 'INCOMING_REVERSAL', t.id, [
    { accountId: t.internal_account_id!, currency: t.received_currency, bucket: 'PENDING', amount: -amount },
    clearing(env, t.received_currency, amount),
  ]);
}
