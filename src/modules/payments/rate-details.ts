/**
 * A quote's `rateDetails` (the live `OutgoingRateDetails`), from what its pricing stored: the exchange
 * rate and the fee terms it applied. Corridor has no mSATs leg: the intermediate unit of the live
 * API's two multipliers is the sending currency's smallest unit. A quote locked on the sending side has
 *   totalReceivingAmount = floor((totalSendingAmount − gridApiFixedFee − gridApiVariableFeeAmount) × counterpartyMultiplier)
 *                          − counterpartyFixedFee
 * to the unit (one locked on the receiving side sends the least total whose net pays at least the
 * locked amount), and gridApiMultiplier × counterpartyMultiplier is the rate net of the variable fee. Every fee Corridor charges is the platform's configured one (or the quote's override), all on
 * the sending side; the receiving side charges nothing (docs/decisions.md, "Wire fidelity").
 */
import type { RateDetailsWire } from './payments.schemas.ts';

const BPS = 10_000;

export interface PricedTerms {
  /** Receiving smallest units per sending smallest unit, as stored (decimal text). */
  exchangeRate: string;
  /** Total fees in the sending currency (fixed + variable). */
  fees: number;
  /** The fixed part, and the variable rate in basis points; null when the row predates them (migration 0014). */
  feeFixed: number | null | undefined;
  feeVariableBps: number | null | undefined;
}

/** The rate details of a priced quote (or its payment); undefined when its fee terms were not recorded. */
export function rateDetailsOf(p: PricedTerms): RateDetailsWire | undefined {
  if (p.feeFixed === null || p.feeFixed === undefined || p.feeVariableBps === null || p.feeVariableBps === undefined) return undefined;
  const fixed = Number(p.feeFixed);
  const bps = Number(p.feeVariableBps);
  return {
    counterpartyMultiplier: Number(p.exchangeRate),
    counterpartyFixedFee: 0,
    // A priced quote's variable fee is under 100 % (pricing refuses one that leaves nothing to receive), so this is > 0.
    gridApiMultiplier: (BPS - bps) / BPS,
    gridApiFixedFee: fixed,
    gridApiVariableFeeRate: bps / BPS,
    gridApiVariableFeeAmount: Number(p.fees) - fixed,
  };
}
