/**
 * Computed amounts (a conversion, a fee, a sum of counters) can leave the range every amount on
 * the wire and in the store keeps: integers in 0..2^53−1 (JSON numbers are exact only up to it).
 * Every computed amount passes one of these on its way to a row or a response.
 */
import { errors } from '../http/errors.ts';

export const MAX_SAFE_AMOUNT = BigInt(Number.MAX_SAFE_INTEGER);

/** `amount` as a number, or a 400 AMOUNT_OUT_OF_RANGE naming `field` when it leaves 0..2^53−1. */
export function safeAmount(amount: bigint, field: string, what: string): number {
  if (amount < 0n || amount > MAX_SAFE_AMOUNT) {
    throw errors.amountOutOfRange(`${what} (${amount}) is outside 0..${Number.MAX_SAFE_INTEGER}`, [
      { field, message: `${what} would exceed the largest supported amount` },
    ]);
  }
  return Number(amount);
}

/**
 * `amount` capped at 2^53−1: for limits and counters, where "more than any amount can be" means
 * the same as the largest amount (a limit recast into a weaker currency, a running total).
 */
export function cappedAmount(amount: bigint | number): number {
  const b = typeof amount === 'bigint' ? amount : BigInt(amount);
  return b > MAX_SAFE_AMOUNT ? Number.MAX_SAFE_INTEGER : Number(b);
}
