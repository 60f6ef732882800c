/**
 * The double-entry ledger. Every balance change is an entry whose postings sum to zero per
 * currency, written in the caller's transaction together with the state change that caused it.
 * Internal accounts keep materialised `available`/`pending` balances that postings move with a
 * conditional update, so a debit that would take either below zero changes nothing and fails.
 * System accounts (`System:<platform>:<ROLE>`: the sandbox issuer, rail clearing …) keep no
 * materialised balance; they are the other side of money entering or leaving Corridor.
 */
import { sql, type Kysely } from 'kysely';
import { ApiError, errors } from '../http/errors.ts';
import { lockRowsInOrder } from '../store/pg-group-commit.ts';
import { guard } from '../store/guard.ts';
import { prepared, type Prepared } from '../store/prepared.ts';
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
  /**
   * Write the entry and its postings before the balance UPDATEs (default: after). The UPDATE takes
   * the account row's lock until COMMIT; on PostgreSQL, where concurrent payments of one account
   * queue on that lock, taking it last shortens the queue. A caller that must refuse an overdraft
   * before writing anything checks the balance it read first (payments: `requireFunds` in
   * payment-ledger.ts); the conditional UPDATE still refuses one that a stale read let through.
   */
  balancesLast?: boolean;
}

/**
 * SANDBOX_ISSUER: source of sandbox funding; RAIL_CLEARING: the outside world on the payment rails;
 * IN_TRANSIT: payments in flight that are not held on an internal account; FEES: fees of a platform
 * without an internal account in the fee currency; CARD_NETWORK: the card network's settlement
 * side (merchants paid by clearings, refunds coming back); STABLECOIN_SUPPLY: the issued supply of
 * a platform's stablecoins (minus its balance, per stablecoin currency, is the supply);
 * STABLECOIN_RESERVE: the fiat that backs it.
 */
export type SystemRole =
  | 'SANDBOX_ISSUER'
  | 'RAIL_CLEARING'
  | 'IN_TRANSIT'
  | 'FEES'
  | 'CARD_NETWORK'
  | 'STABLECOIN_SUPPLY'
  | 'STABLECOIN_RESERVE';

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
  if (entry.balancesLast) {
    await writeEntry(trx, entry);
    return applyBalances(trx, entry);
  }
  const moved = await applyBalances(trx, entry);
  await writeEntry(trx, entry);
  return moved;
}

/**
 * One conditional UPDATE per account the entry moves; throws when a bound would be crossed. In a
 * PostgreSQL commit group the rows are first locked with the other members' in id order.
 */
async function applyBalances(trx: Kysely<Database>, entry: EntryInput): Promise<InternalAccountRow[]> {
  const moved: InternalAccountRow[] = [];
  const deltas = balanceDeltas(entry.postings);
  if (deltas.size > 0) await lockRowsInOrder(trx, [...deltas.keys()]);
  for (const [accountId, d] of deltas) {
    // One UPDATE per account moves both buckets, and its bound checks are part of it, so
    // concurrent debits cannot both pass them.
    const row = await balanceUpdate(Math.sign(d.available), Math.sign(d.pending)).first(trx, {
      available: d.available,
      pending: d.pending,
      availableBound: d.available < 0 ? -d.available : Number.MAX_SAFE_INTEGER - d.available,
      pendingBound: d.pending < 0 ? -d.pending : Number.MAX_SAFE_INTEGER - d.pending,
      at: entry.at,
      id: accountId,
      platformId: entry.platformId,
      currency: d.currency,
    });
    if (!row) {
      if (d.available < 0 || d.pending < 0) throw new InsufficientFundsError(accountId);
      throw errors.balanceOverflow(accountId);
    }
    moved.push(row);
  }
  return moved;
}

/** The entry row and its postings (one INSERT each). */
async function writeEntry(trx: Kysely<Database>, entry: EntryInput): Promise<void> {
  await insertEntry.defer(trx, {
    id: entry.id,
    platformId: entry.platformId,
    kind: entry.kind,
    referenceId: entry.referenceId,
    at: entry.at,
  });
  const args: Record<string, unknown> = { entryId: entry.id, platformId: entry.platformId, at: entry.at };
  entry.postings.forEach((p, i) => {
    args[`account${i}`] = p.accountId;
    args[`currency${i}`] = p.currency;
    args[`bucket${i}`] = p.bucket;
    args[`amount${i}`] = p.amount;
  });
  await insertPostings(entry.postings.length).defer(trx, args);
}

/** How an internal account stood right after one entry of a `BalanceBatch`. */
export interface BatchedMove {
  at: string;
  /** The internal accounts the entry moved, as they were right after it. */
  moved: InternalAccountRow[];
}

/**
 * Several entries whose balance changes are applied together at the end of a transaction: each
 * entry and its postings are written when posted, and `flush` moves every account once, by the
 * entries' net change, with bounds on every running total between them — so it refuses exactly
 * what posting the entries one by one, in order, would refuse. A job batch uses it (jobs.ts): the
 * account row's lock, which concurrent payments of that account queue on, is then taken only at
 * the end of the batch instead of from its first settlement to its commit.
 *
 * Nothing in the transaction may read a batched account's balances between `post` and `flush`.
 */
export class BalanceBatch {
  private entries: { platformId: string; at: string; deltas: Map<string, Delta> }[] = [];

  async post(trx: Kysely<Database>, entry: EntryInput): Promise<void> {
    assertBalanced(entry);
    await writeEntry(trx, entry);
    this.entries.push({ platformId: entry.platformId, at: entry.at, deltas: balanceDeltas(entry.postings) });
  }

  /**
   * Applies the posted entries' balance changes, one UPDATE per account in id order (so two
   * batches lock accounts in the same order), and returns each entry's moves in posting order.
   * Throws as `postEntry` does when a bound would be crossed; the caller's transaction must then
   * roll back.
   */
  async flush(trx: Kysely<Database>): Promise<BatchedMove[]> {
    const entries = this.entries;
    this.entries = [];
    const totals = new Map<string, { platformId: string; currency: string; net: Delta; low: Delta; high: Delta; at: string }>();
    for (const e of entries) {
      for (const [accountId, d] of e.deltas) {
        let t = totals.get(accountId);
        if (!t) {
          t = {
            platformId: e.platformId,
            currency: d.currency,
            net: zero(d.currency),
            low: zero(d.currency),
            high: zero(d.currency),
            at: e.at,
          };
          totals.set(accountId, t);
        }
        if (t.currency !== d.currency) throw new Error(`postings to ${accountId} in two currencies`);
        t.net.available += d.available;
        t.net.pending += d.pending;
        t.low.available = Math.min(t.low.available, t.net.available);
        t.low.pending = Math.min(t.low.pending, t.net.pending);
        t.high.available = Math.max(t.high.available, t.net.available);
        t.high.pending = Math.max(t.high.pending, t.net.pending);
        t.at = e.at;
      }
    }
    const after = new Map<string, InternalAccountRow>();
    for (const accountId of [...totals.keys()].sort()) {
      const t = totals.get(accountId)!;
      const row = await netBalanceUpdate.first(trx, {
        available: t.net.available,
        pending: t.net.pending,
        availableLow: -t.low.available,
        availableHigh: Number.MAX_SAFE_INTEGER - t.high.available,
        pendingLow: -t.low.pending,
        pendingHigh: Number.MAX_SAFE_INTEGER - t.high.pending,
        at: t.at,
        id: accountId,
        platformId: t.platformId,
        currency: t.currency,
      });
      if (!row) {
        if (t.low.available < 0 || t.low.pending < 0) throw new InsufficientFundsError(accountId);
        throw errors.balanceOverflow(accountId);
      }
      after.set(accountId, row);
    }
    // Walk back from the final rows: before entry k, each account stood at its state after k less k's change.
    const out: BatchedMove[] = new Array(entries.length);
    for (let k = entries.length - 1; k >= 0; k--) {
      const e = entries[k]!;
      const moved: InternalAccountRow[] = [];
      for (const [accountId, d] of e.deltas) {
        const row = after.get(accountId)!;
        moved.push({ ...row, updated_at: e.at });
        after.set(accountId, { ...row, available: Number(row.available) - d.available, pending: Number(row.pending) - d.pending });
      }
      out[k] = { at: e.at, moved };
    }
    return out;
  }
}

export interface Delta {
  currency: string;
  available: number;
  pending: number;
}

function zero(currency: string): Delta {
  return { currency, available: 0, pending: 0 };
}

// ---- the statements postEntry runs, compiled once per shape (see store/prepared.ts)

interface BalanceArgs extends Record<string, unknown> {
  available: number;
  pending: number;
  /** −delta for a debit (the balance must cover it), MAX_SAFE_INTEGER − delta for a credit. */
  availableBound: number;
  pendingBound: number;
  at: string;
  id: string;
  platformId: string;
  currency: string;
}

const balanceUpdates = new Map<string, Prepared<BalanceArgs, InternalAccountRow>>();

/** The conditional balance UPDATE for one combination of signs of the two bucket deltas. */
function balanceUpdate(availableSign: number, pendingSign: number): Prepared<BalanceArgs, InternalAccountRow> {
  const key = `${availableSign}|${pendingSign}`;
  let stmt = balanceUpdates.get(key);
  if (!stmt) {
    stmt = prepared((db, a: BalanceArgs) => {
      let q = db
        .updateTable('internal_accounts')
        .set({
          ...(availableSign !== 0 ? { available: sql<number>`available + ${a.available}` } : {}),
          ...(pendingSign !== 0 ? { pending: sql<number>`pending + ${a.pending}` } : {}),
          updated_at: a.at,
        })
        .where('id', '=', a.id)
        .where(guard('platform_id', a.platformId))
        .where(guard('currency', a.currency));
      if (availableSign < 0) q = q.where('available', '>=', a.availableBound);
      if (availableSign > 0) q = q.where('available', '<=', a.availableBound);
      if (pendingSign < 0) q = q.where('pending', '>=', a.pendingBound);
      if (pendingSign > 0) q = q.where('pending', '<=', a.pendingBound);
      return q.returningAll();
    });
    balanceUpdates.set(key, stmt);
  }
  return stmt;
}

/** `BalanceArgs` with both bounds of each bucket (a batch's running totals may go either way). */
type NetBalanceArgs = Pick<BalanceArgs, 'available' | 'pending' | 'at' | 'id' | 'platformId' | 'currency'> & {
  availableLow: number;
  availableHigh: number;
  pendingLow: number;
  pendingHigh: number;
};

/**
 * A batch's change of one account: both buckets, bounded so that every running total of the batch
 * stays within [0, MAX_SAFE_INTEGER] (`…Low` = −lowest running total, `…High` = MAX − highest).
 */
const netBalanceUpdate = prepared((db, a: NetBalanceArgs) =>
  db
    .updateTable('internal_accounts')
    .set({ available: sql<number>`available + ${a.available}`, pending: sql<number>`pending + ${a.pending}`, updated_at: a.at })
    .where('id', '=', a.id)
    .where(guard('platform_id', a.platformId))
    .where(guard('currency', a.currency))
    .where('available', '>=', a.availableLow)
    .where('available', '<=', a.availableHigh)
    .where('pending', '>=', a.pendingLow)
    .where('pending', '<=', a.pendingHigh)
    .returningAll(),
);

const insertEntry = prepared((db, a: { id: string; platformId: string; kind: string; referenceId: string; at: string }) =>
  db
    .insertInto('ledger_entries')
    .values({ id: a.id, platform_id: a.platformId, kind: a.kind, reference_id: a.referenceId, created_at: a.at }),
);

const postingInserts = new Map<number, Prepared<Record<string, unknown>, unknown>>();

/** One INSERT for an entry's `n` postings (arguments `account<i>`, `currency<i>`, `bucket<i>`, `amount<i>`). */
function insertPostings(n: number): Prepared<Record<string, unknown>, unknown> {
  let stmt = postingInserts.get(n);
  if (!stmt) {
    stmt = prepared((db, a: Record<string, unknown>) =>
      db.insertInto('ledger_postings').values(
        Array.from({ length: n }, (_, seq) => ({
          entry_id: a.entryId as string,
          seq,
          platform_id: a.platformId as string,
          account_id: a[`account${seq}`] as string,
          currency: a[`currency${seq}`] as string,
          bucket: a[`bucket${seq}`] as string,
          amount: a[`amount${seq}`] as number,
          created_at: a.at as string,
        })),
      ),
    );
    postingInserts.set(n, stmt);
  }
  return stmt;
}

/** Net change per internal account and bucket (system accounts keep no materialised balance). */
export function balanceDeltas(postings: Posting[]): Map<string, Delta> {
  const out = new Map<string, Delta>();
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

export function assertBalanced(entry: EntryInput): void {
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
  kind: 'UNBALANCED_ENTRY' | 'BALANCE_MISMATCH' | 'NEGATIVE_BALANCE' | 'SUPPLY_MISMATCH';
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

/**
 * Stablecoins (modules/stablecoins): each one's stored supply must equal −(its platform's
 * STABLECOIN_SUPPLY postings in its symbol), and each platform's STABLECOIN_RESERVE in a base
 * currency must equal the supply of its stablecoins on that currency in whole cents
 * (supply / 10^(decimals − 2)). One indexed query when no stablecoin is concerned.
 */
async function checkStablecoinSupply(db: Kysely<Database>, platformId?: string): Promise<LedgerProblem[]> {
  let q = db.selectFrom('stablecoins').select(['id', 'platform_id', 'symbol', 'decimals', 'base_currency', 'supply']);
  if (platformId) q = q.where('platform_id', '=', platformId);
  const coins = await q.execute();
  if (coins.length === 0) return [];
  const platforms = [...new Set(coins.map((c) => c.platform_id))];
  const accounts = platforms.flatMap((p) => [systemAccount(p, 'STABLECOIN_SUPPLY'), systemAccount(p, 'STABLECOIN_RESERVE')]);
  const sums = await db
    .selectFrom('ledger_postings')
    .select(['account_id', 'currency', (eb) => eb.fn.sum<number>('amount').as('total')])
    .where('account_id', 'in', accounts)
    .groupBy(['account_id', 'currency'])
    .execute();
  const total = (account: string, currency: string) =>
    Number(sums.find((r) => r.account_id === account && r.currency === currency)?.total ?? 0);
  const problems: LedgerProblem[] = [];
  const reserves = new Map<string, number>();
  for (const c of coins) {
    const stored = Number(c.supply);
    const posted = -total(systemAccount(c.platform_id, 'STABLECOIN_SUPPLY'), c.symbol);
    if (stored !== posted || stored < 0) {
      problems.push({ kind: 'SUPPLY_MISMATCH', id: c.id, detail: `supply is ${stored} ${c.symbol}, postings say ${posted}` });
    }
    const key = `${systemAccount(c.platform_id, 'STABLECOIN_RESERVE')}|${c.base_currency}`;
    reserves.set(key, (reserves.get(key) ?? 0) + stored / 10 ** (c.decimals - 2));
  }
  for (const [key, expected] of reserves) {
    const [account, currency] = key.split('|') as [string, string];
    const held = total(account, currency);
    if (held !== expected) {
      problems.push({ kind: 'SUPPLY_MISMATCH', id: account, detail: `reserve is ${held} ${currency}, the supply backs ${expected}` });
    }
  }
  return problems;
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
    for (const [bucket, stored] of [
      ['AVAILABLE', Number(a.available)],
      ['PENDING', Number(a.pending)],
    ] as const) {
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
  problems.push(...(await checkStablecoinSupply(db, platformId)));

  let counts = db
    .selectFrom('ledger_postings')
    .select([(eb) => eb.fn.countAll<number>().as('postings'), (eb) => eb.fn.count<number>('entry_id').distinct().as('entries')]);
  if (platformId) counts = counts.where('platform_id', '=', platformId);
  const c = await counts.executeTakeFirstOrThrow();
  return { ok: problems.length === 0, entries: Number(c.entries), postings: Number(c.postings), accounts: rows.length, problems };
}
