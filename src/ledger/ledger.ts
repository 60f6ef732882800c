/**
 * The double-entry ledger. Every balance change is an entry whose postings sum to zero per
 * currency, written in the caller's transaction together with the state change that caused it.
 * Internal accounts keep materialised `available`/`pending` balances that postings move with a
 * conditional update, so a debit that would take either below zero changes nothing and fails.
 * System accounts (`System:<platform>:<ROLE>`: the sandbox issuer, rail clearing …) keep no
 * materialised balance; they are the other side of money entering or leaving Corridor.
 */
import { sql, type Kysely } from 'kysely';
import { ApiError } from '../http/errors.ts';
import type { Database, InternalAccountRow } from '../store/schema.ts';

export type Bucket = 'AVAILABLE' | 'PENDING';

export interface Posting {
  accountId: string;
  currency: string;
  bucket: Bucket;
  /** Signed, in the currency's smallest unit; never zero. */
  amount: number;
}

export interface EntryInput {
  id: string;
  platformId: string;
  kind: string;
  referenceId: string;
  postings: Posting[];
  at: string;
}

/**
 * SANDBOX_ISSUER: source of sandbox funding; RAIL_CLEARING: the outside world on the payment rails;
 * IN_TRANSIT: payments in flight that are not held on an internal account; FEES: fees of a platform
 * without an internal account in the fee currency.
 */
export type SystemRole = 'SANDBOX_ISSUER' | 'RAIL_CLEARING' | 'IN_TRANSIT' | 'FEES';

/** The system account of a platform for a role (one per platform, any currency). */
export function systemAccount(platformId: string, role: SystemRole): string {
  return `System:${platformId}:${role}`;
}

export function isInternalAccount(accountId: string): boolean {
  return accountId.startsWith('InternalAccount:');
}

/** Raised when a posting would take an internal account's balance below zero. */
export class InsufficientFundsError extends ApiError<400> {
  constructor(readonly accountId: string) {
    super(400, 'INVALID_AMOUNT', `Insufficient funds in ${accountId}`, { accountId, reason: 'INSUFFICIENT_FUNDS' });
  }
}

/**
 * Writes one balanced entry and returns the internal accounts it moved, as they now are. Must run
 * inside a transaction: on failure the caller's whole transaction is rolled back, including any
 * balance already changed here.
 */
export async function postEntry(trx: Kysely<Database>, entry: EntryInput): Promise<InternalAccountRow[]> {
  assertBalanced(entry);
  const moved: InternalAccountRow[] = [];
  for (const [accountId, d] of balanceDeltas(entry.postings)) {
    // One UPDATE per account moves both buckets, and its bound checks are part of it, so
    // concurrent debits cannot both pass them.
    let q = trx
      .updateTable('internal_accounts')
      .set({
        ...(d.available !== 0 ? { available: sql<number>`available + ${d.available}` } : {}),
        ...(d.pending !== 0 ? { pending: sql<number>`pending + ${d.pending}` } : {}),
        updated_at: entry.at,
      })
      .where('id', '=', accountId)
      .where('platform_id', '=', entry.platformId)
      .where('currency', '=', d.currency);
    for (const [col, delta] of [['available', d.available], ['pending', d.pending]] as const) {
      if (delta < 0) q = q.where(col, '>=', -delta);
      if (delta > 0) q = q.where(col, '<=', Number.MAX_SAFE_INTEGER - delta);
    }
    const row = await q.returningAll().executeTakeFirst();
    if (!row) {
      if (d.available < 0 || d.pending < 0) throw new InsufficientFundsError(accountId);
      throw new ApiError(400, 'AMOUNT_OUT_OF_RANGE', `The balance of ${accountId} would exceed ${Number.MAX_SAFE_INTEGER}`);
    }
    moved.push(row);
  }
  await trx
    .insertInto('ledger_entries')
    .values({ id: entry.id, platform_id: entry.platformId, kind: entry.kind, reference_id: entry.referenceId, created_at: entry.at })
    .execute();
  await trx
    .insertInto('ledger_postings')
    .values(
      entry.postings.map((p, seq) => ({
        entry_id: entry.id,
        seq,
        platform_id: entry.platformId,
        account_id: p.accountId,
        currency: p.currency,
        bucket: p.bucket,
        amount: p.amount,
        created_at: entry.at,
      })),
    )
    .execute();
  return moved;
}

/** Net change per internal account and bucket (system accounts keep no materialised balance). */
function balanceDeltas(postings: Posting[]): Map<string, { currency: string; available: number; pending: number }> {
  const out = new Map<string, { currency: string; available: number; pending: number }>();
  for (const p of postings) {
    if (!isInternalAccount(p.accountId)) continue;
    const d = out.get(p.accountId) ?? { currency: p.currency, available: 0, pending: 0 };
    if (d.currency !== p.currency) throw new Error(`postings to ${p.accountId} in two currencies`);
    if (p.bucket === 'AVAILABLE') d.available += p.amount;
    else d.pending += p.amount;
    out.set(p.accountId, d);
  }
  return out;
}

function assertBalanced(entry: EntryInput): void {
  if (entry.postings.length < 2) throw new Error(`ledger entry ${entry.kind} needs at least two postings`);
  const sums = new Map<string, number>();
  for (const p of entry.postings) {
    if (!Number.isSafeInteger(p.amount) || p.amount === 0) {
      throw new Error(`ledger posting amount must be a non-zero safe integer (got ${p.amount})`);
    }
    sums.set(p.currency, (sums.get(p.currency) ?? 0) + p.amount);
  }
  for (const [cur, sum] of sums) {
    if (sum !== 0) throw new Error(`ledger entry ${entry.kind} is unbalanced in ${cur} by ${sum}`);
  }
}

export interface LedgerProblem {
  kind: 'UNBALANCED_ENTRY' | 'BALANCE_MISMATCH' | 'NEGATIVE_BALANCE';
  id: string;
  detail: string;
}

export interface LedgerReport {
  ok: boolean;
  entries: number;
  postings: number;
  accounts: number;
  problems: LedgerProblem[];
}

/**
 * Recomputes every internal account's balances from its postings and checks that every entry
 * balances per currency. Scoped to one platform when `platformId` is given.
 */
export async function checkLedger(db: Kysely<Database>, platformId?: string): Promise<LedgerReport> {
  // One snapshot for all the queries below, so movements committing meanwhile cannot make a
  // consistent ledger look inconsistent (repeatable read on PostgreSQL; SQLite's WAL read snapshot).
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute((trx) => checkLedgerIn(trx, platformId));
}

async function checkLedgerIn(db: Kysely<Database>, platformId?: string): Promise<LedgerReport> {
  const problems: LedgerProblem[] = [];

  let unbalanced = db
    .selectFrom('ledger_postings')
    .select(['entry_id', 'currency', (eb) => eb.fn.sum<number>('amount').as('total')])
    .groupBy(['entry_id', 'currency'])
    .having((eb) => eb.fn.sum('amount'), '!=', 0);
  if (platformId) unbalanced = unbalanced.where('platform_id', '=', platformId);
  for (const r of await unbalanced.execute()) {
    problems.push({ kind: 'UNBALANCED_ENTRY', id: r.entry_id, detail: `sums to ${Number(r.total)} ${r.currency}` });
  }

  let sums = db
    .selectFrom('ledger_postings')
    .select(['account_id', 'bucket', (eb) => eb.fn.sum<number>('amount').as('total')])
    .where('account_id', 'like', 'InternalAccount:%')
    .groupBy(['account_id', 'bucket']);
  if (platformId) sums = sums.where('platform_id', '=', platformId);
  const fromPostings = new Map<string, number>();
  for (const r of await sums.execute()) fromPostings.set(`${r.account_id}|${r.bucket}`, Number(r.total));

  let accounts = db.selectFrom('internal_accounts').select(['id', 'available', 'pending']);
  if (platformId) accounts = accounts.where('platform_id', '=', platformId);
  const rows = await accounts.execute();
  for (const a of rows) {
    for (const [bucket, stored] of [['AVAILABLE', Number(a.available)], ['PENDING', Number(a.pending)]] as const) {
      const expected = fromPostings.get(`${a.id}|${bucket}`) ?? 0;
      fromPostings.delete(`${a.id}|${bucket}`);
      if (expected !== stored) {
        problems.push({ kind: 'BALANCE_MISMATCH', id: a.id, detail: `${bucket} is ${stored}, postings say ${expected}` });
      }
      if (stored < 0) problems.push({ kind: 'NEGATIVE_BALANCE', id: a.id, detail: `${bucket} is ${stored}` });
    }
  }
  for (const [key, total] of fromPostings) {
    problems.push({ kind: 'BALANCE_MISMATCH', id: key.split('|')[0]!, detail: `postings to an unknown account total ${total}` });
  }

  let counts = db
    .selectFrom('ledger_postings')
    .select([(eb) => eb.fn.countAll<number>().as('postings'), (eb) => eb.fn.count<number>('entry_id').distinct().as('entries')]);
  if (platformId) counts = counts.where('platform_id', '=', platformId);
  const c = await counts.executeTakeFirstOrThrow();
  return { ok: problems.length === 0, entries: Number(c.entries), postings: Number(c.postings), accounts: rows.length, problems };
}
