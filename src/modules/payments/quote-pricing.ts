/**
 * Pricing a quote: its amounts for the locked side, the rate and the fee terms (the configured
 * ones, or a request's `platformFeeOverride`). Pure and bounded for every input.
 */
import { errors } from '../../http/errors.ts';
import { feesFor, receivingAmount, sendingForReceiving, type FeeTerms, type Rate } from '../../lib/rates.ts';
import type { QuoteCreate } from './payments.schemas.ts';

export interface Priced {
  total: number;
  receiving: number;
  fees: number;
  rate: Rate;
  /** The fee terms applied (none: no fees), kept with the quote for its rate details. */
  terms: FeeTerms | undefined;
}

/**
 * Amounts for a locked side. Fees apply to cross-currency quotes only (the live FeeType).
 * Finite for every input: the receiving side is a bounded binary search, and a fee of 100 % (which
 * no total can pay) is a 400 naming the platform's fee configuration.
 */
export function price(
  body: Pick<QuoteCreate, 'lockedCurrencySide' | 'lockedCurrencyAmount'>,
  rate: Rate,
  terms: FeeTerms | undefined,
  applies: 'cross-currency' | 'always' = 'cross-currency',
): Priced {
  const t = applies === 'cross-currency' && rate.from === rate.to ? undefined : terms;
  if (body.lockedCurrencySide === 'SENDING') {
    const total = BigInt(body.lockedCurrencyAmount);
    const fees = feesFor(total, t);
    return finish(total, receivingAmount(total, fees, rate), fees.total, rate, t);
  }
  const receiving = BigInt(body.lockedCurrencyAmount);
  const total = totalForNet(sendingForReceiving(receiving, rate), t);
  return finish(total, receiving, feesFor(total, t).total, rate, t);
}

/**
 * The smallest total T with T − fee(T) ≥ net. T − fee(T) never decreases as T grows while the
 * variable fee is under 100 %, so a binary search between T ≥ net + fixed and an upper bound from
 * the closed form finds it in at most ~64 steps. At 100 % it never grows: no total pays `net`.
 */
export function totalForNet(net: bigint, t: FeeTerms | undefined): bigint {
  const bps = BigInt(t?.variableFeeBps ?? 0);
  const fixed = BigInt(t?.fixedFee ?? 0);
  if (net <= 0n) return fixed;
  if (bps >= 10_000n) {
    throw errors.amountOutOfRange(`The platform's variable fee of ${bps} bps takes the whole sending amount: no amount can be received`, [
      {
        field: 'lockedCurrencyAmount',
        message: 'cannot be received: the feeConfigs variableFeeBps of the sending currency is 10000 (100 %)',
      },
    ]);
  }
  const netOf = (x: bigint) => x - feesFor(x, t).total;
  let lo = net + fixed; // fee(T) ≥ fixed, so no smaller T pays net
  // The closed form's ceiling plus one unit of rounding slack always pays net (checked below anyway).
  let hi = ((net + fixed) * 10_000n + (10_000n - bps) - 1n) / (10_000n - bps) + 1n;
  if (netOf(hi) < net) throw new Error(`price: no total up to ${hi} pays ${net}`);
  if (netOf(lo) >= net) return lo;
  // Invariant: netOf(lo) < net ≤ netOf(hi).
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if (netOf(mid) >= net) hi = mid;
    else lo = mid;
  }
  return hi;
}

function finish(total: bigint, receiving: bigint, fees: bigint, rate: Rate, terms: FeeTerms | undefined): Priced {
  if (total > BigInt(Number.MAX_SAFE_INTEGER) || receiving > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw errors.amountOutOfRange('The quote amounts exceed the largest supported amount', [
      { field: 'lockedCurrencyAmount', message: 'too large' },
    ]);
  }
  if (receiving <= 0n) {
    throw errors.amountOutOfRange('Nothing would arrive: the amount does not cover the fees', [
      { field: 'lockedCurrencyAmount', message: 'too small to cover the fees' },
    ]);
  }
  return { total: Number(total), receiving: Number(receiving), fees: Number(fees), rate, terms };
}

/**
 * The fee terms of a `platformFeeOverride`: they replace the configured fees for this quote, whatever
 * the currencies. As the live API: USD sources only, the fixed fee in the source currency.
 */
export function overrideTerms(o: NonNullable<QuoteCreate['platformFeeOverride']>, sourceCurrency: string): FeeTerms {
  if (sourceCurrency !== 'USD') {
    throw errors.invalidField('platformFeeOverride', `is supported when the source currency is USD (this quote's is ${sourceCurrency})`);
  }
  if (o.platformFixedFee.currency !== sourceCurrency) {
    throw errors.invalidField('platformFeeOverride.platformFixedFee.currency', `must be the source currency, ${sourceCurrency}`);
  }
  return { fixedFee: o.platformFixedFee.amount, variableFeeBps: o.platformVariableFeeBps };
}
