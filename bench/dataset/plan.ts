/**
 * The data set's plan, before any row exists: which customers hold which accounts, and who pays
 * whom, when, how much and with what outcome — as parallel typed arrays (a million objects would
 * cost far more memory) — and the balances all of it leaves, so accounts can be written with their
 * final balances before their history.
 */
import { feesFor } from '../../src/lib/rates.ts';
import { Rand } from './random.ts';

export const DAY_MS = 86_400_000;
export const YEAR_MS = 365 * DAY_MS;
/** Payments this close to the end date may still be in flight. */
export const IN_FLIGHT_WINDOW_MS = 3 * 3_600_000;
export const CUSTOMER_CURRENCIES = ['USD', 'EUR'] as const;
export const FOREIGN = ['MXN', 'GBP', 'PHP', 'CAD'] as const;
/** Cross-currency fee the platform charges (FeeConfig): 0.5 % plus a fixed part, per sending currency. */
export const FEES = { USD: { bps: 50, fixed: 30 }, EUR: { bps: 50, fixed: 25 } } as const;

/** Transaction kinds and outcomes of the plan (indexes into the typed arrays below). */
export const Kind = { TransferOut: 0, Quote: 1, TransferIn: 2, UmaReceive: 3 } as const;
export type Kind = (typeof Kind)[keyof typeof Kind];
export const Status = { Completed: 0, Failed: 1, Expired: 2, InFlight: 3 } as const;
export type Status = (typeof Status)[keyof typeof Status];
export const KIND_NAMES = ['TRANSFER_OUT', 'QUOTE', 'TRANSFER_IN', 'UMA_RECEIVE'] as const;

/** Transactions as parallel arrays (a million objects would cost far more memory). */
export interface Plan {
  n: number;
  atMs: Float64Array;
  customer: Int32Array;
  /** 0 USD, 1 EUR: which of the customer's accounts the payment moves. */
  cur: Uint8Array;
  kind: Uint8Array;
  status: Uint8Array;
  /** Sent amount for outgoing, received amount for incoming (smallest unit of the account's currency). */
  amount: Float64Array;
}

export interface CustomerPlan {
  holdsEur: Uint8Array;
  foreign: Uint8Array;
  createdMs: Float64Array;
}

export function planCustomers(count: number, endMs: number, r: Rand): CustomerPlan {
  const holdsEur = new Uint8Array(count);
  const foreign = new Uint8Array(count);
  const createdMs = new Float64Array(count);
  const start = endMs - 2 * YEAR_MS;
  for (let i = 0; i < count; i++) {
    holdsEur[i] = r.next() < 0.25 ? 1 : 0;
    foreign[i] = r.int(FOREIGN.length);
    // Spread over the year before the transactions start, in id order.
    createdMs[i] = Math.floor(start + ((i + r.next()) / count) * YEAR_MS);
  }
  return { holdsEur, foreign, createdMs };
}

export function planTransactions(n: number, customers: CustomerPlan, endMs: number, r: Rand): Plan {
  const atMs = new Float64Array(n);
  // Density rising linearly to twice the start rate (a growing platform): inverse CDF of (1+x)/1.5.
  for (let i = 0; i < n; i++) atMs[i] = Math.floor(endMs - YEAR_MS + (Math.sqrt(1 + 3 * r.next()) - 1) * YEAR_MS);
  atMs.sort();
  const c = customers.holdsEur.length;
  const p: Plan = {
    n,
    atMs,
    customer: new Int32Array(n),
    cur: new Uint8Array(n),
    kind: new Uint8Array(n),
    status: new Uint8Array(n),
    amount: new Float64Array(n),
  };
  for (let i = 0; i < n; i++) {
    // Skewed activity: customer index ~ c·u², so the first (oldest) customers are the busiest.
    const u = r.next();
    const cust = Math.min(c - 1, Math.floor(c * u * u));
    p.customer[i] = cust;
    const eur = customers.holdsEur[cust] === 1 && r.next() < 0.4;
    p.cur[i] = eur ? 1 : 0;
    const k = r.next();
    // EUR accounts cannot be pulled from (ACH pulls are USD only).
    const kind = k < 0.35 ? Kind.TransferOut : k < 0.6 ? Kind.Quote : k < 0.8 && !eur ? Kind.TransferIn : Kind.UmaReceive;
    p.kind[i] = kind;
    const s = r.next();
    let status: Status;
    if (atMs[i]! > endMs - IN_FLIGHT_WINDOW_MS && kind !== Kind.UmaReceive && s < 0.5) status = Status.InFlight;
    else if (kind === Kind.Quote) status = s < 0.85 ? Status.Completed : s < 0.9 ? Status.Failed : Status.Expired;
    else if (kind === Kind.TransferOut) status = s < 0.93 ? Status.Completed : Status.Failed;
    else if (kind === Kind.TransferIn) status = s < 0.92 ? Status.Completed : Status.Failed;
    else status = s < 0.97 ? Status.Completed : Status.Failed;
    p.status[i] = status;
    const incoming = kind === Kind.TransferIn || kind === Kind.UmaReceive;
    // Cents: payouts median 60.00, incoming median 400.00; at most 50,000.00.
    p.amount[i] = incoming ? r.amount(40_000, 1.0, 500, 5_000_000) : r.amount(6_000, 1.2, 100, 5_000_000);
  }
  return p;
}

export interface Balances {
  /** Per customer account (customer·2 + currency index): final available, pending, funding. */
  available: Float64Array;
  pending: Float64Array;
  funding: Float64Array;
  /** Cross-currency fees collected, per sending currency. */
  fees: Record<string, number>;
}

/**
 * Final balances from the plan: each account is funded once, up front, with everything it will
 * send plus a remainder, so no balance dips below zero at any point of the history.
 */
export function planBalances(p: Plan, c: CustomerPlan): Balances {
  const slots = c.holdsEur.length * 2;
  const b: Balances = {
    available: new Float64Array(slots),
    pending: new Float64Array(slots),
    funding: new Float64Array(slots),
    fees: { USD: 0, EUR: 0 },
  };
  const leftover = new Rand(0x5eed ^ slots);
  for (let i = 0; i < p.n; i++) {
    const slot = p.customer[i]! * 2 + p.cur[i]!;
    const a = p.amount[i]!;
    const kind = p.kind[i]! as Kind;
    const status = p.status[i]! as Status;
    if (kind === Kind.TransferOut || kind === Kind.Quote) {
      if (status === Status.Expired) continue;
      b.funding[slot]! += a;
      if (status === Status.Completed) {
        b.available[slot]! -= a;
        if (kind === Kind.Quote) b.fees[CUSTOMER_CURRENCIES[p.cur[i]!]!]! += quoteFees(a, p.cur[i]!);
      } else if (status === Status.InFlight) {
        b.available[slot]! -= a;
        b.pending[slot]! += a;
      }
    } else if (status === Status.Completed) {
      b.available[slot]! += a;
    } else if (status === Status.InFlight) {
      b.pending[slot]! += a;
    }
  }
  for (let s = 0; s < slots; s++) {
    if (s % 2 === 1 && c.holdsEur[s >> 1] === 0) continue;
    b.funding[s]! += leftover.amount(50_000, 1.0, 1_000, 10_000_000);
    b.available[s]! += b.funding[s]!;
  }
  return b;
}

function quoteFees(amount: number, cur: number): number {
  const f = FEES[CUSTOMER_CURRENCIES[cur]!];
  return Number(feesFor(amount, { variableFeeBps: f.bps, fixedFee: f.fixed }).total);
}
