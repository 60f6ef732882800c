/**
 * POST /crypto/estimate-withdrawal-fee: what withdrawing `amount` of a crypto asset from an
 * internal account to an address on a network would cost. Nothing is held or locked.
 *
 * Which asset travels on which network, and what an address looks like there, come from the wallet
 * external accounts (src/modules/external-accounts/wallet-variants.ts): a withdrawal goes where a
 * wallet account could. Each network has a fixed sandbox fee (below): the raw fee in its own asset,
 * and what that is worth in micro-USD at the sandbox's reference prices.
 *
 *   network part   = the raw fee itself when the withdrawal is in the fee's asset (BTC on Spark or
 *                    Lightning), else its USD value at the sandbox USD rate of the withdrawal
 *                    currency, rounded up (an estimate never understates a fee)
 *   applicationFee = 0 (Corridor has no withdrawal fee configuration)
 *   totalFee       = applicationFee + network part;   netAmount = amount − totalFee (≥ 1, else 400)
 */
import { errors } from '../../http/errors.ts';
import { cappedAmount } from '../../lib/amounts.ts';
import { CRYPTO_CODES, findCurrency } from '../../lib/currencies.ts';
import { sandboxRate } from '../../lib/rates.ts';
import type { Unit } from '../../unit.ts';
import { LIGHTNING, WALLET_VARIANTS } from '../external-accounts/wallet-variants.ts';
import { findInternalAccount } from '../internal-accounts/internal-accounts.repo.ts';
import { lookupErrors } from './lookups.errors.ts';
import type { CryptoNetwork, EstimateWithdrawalFee, EstimateWithdrawalFeeWire } from './lookups.schemas.ts';

export interface NetworkFee {
  /** The wallet external-account type whose assets and address shape the network has. */
  walletType: string;
  /** The asset the network charges in, and the raw fee in its smallest unit (≤ 2^53−1). */
  feeAsset: string;
  networkFee: number;
  /** That fee's worth at the sandbox reference prices, in millionths of a US dollar. */
  usdMicros: number;
}

/**
 * The sandbox network fees. Solana's is the live docs' example (5,000 lamports, 0.005 USD, so that
 * its example request gets its example answer); the others are typical costs of one token transfer.
 */
export const NETWORK_FEES: Readonly<Record<CryptoNetwork, NetworkFee>> = {
  // Spark transfers carry no fee.
  SPARK: { walletType: 'LAYER2_WALLET', feeAsset: 'BTC', networkFee: 0, usdMicros: 0 },
  // A routing fee of 10 sats (65,000 USD per BTC).
  LIGHTNING: { walletType: LIGHTNING.accountType, feeAsset: 'BTC', networkFee: 10, usdMicros: 6_500 },
  // One signature: 5,000 lamports.
  SOLANA: { walletType: 'CHAIN2_WALLET', feeAsset: 'SOL', networkFee: 5_000, usdMicros: 5_000 },
  // An ERC-20 transfer, ~65,000 gas at 20 gwei: 0.0013 ETH (3,200 USD per ETH).
  ETHEREUM: { walletType: 'ETHEREUM_WALLET', feeAsset: 'ETH', networkFee: 1_300_000_000_000_000, usdMicros: 4_160_000 },
  // The same transfer on Base: 0.000003 ETH.
  BASE: { walletType: 'BASE_WALLET', feeAsset: 'ETH', networkFee: 3_000_000_000_000, usdMicros: 9_600 },
  // 0.005 POL (0.40 USD per POL).
  POLYGON: { walletType: 'POLYGON_WALLET', feeAsset: 'POL', networkFee: 5_000_000_000_000_000, usdMicros: 2_000 },
  // A TRC-20 transfer without staked energy burns ~14 TRX (0.25 USD per TRX).
  TRON: { walletType: 'TRON_WALLET', feeAsset: 'TRX', networkFee: 14_000_000, usdMicros: 3_500_000 },
  // Plasma carries USDT transfers without a fee.
  PLASMA: { walletType: 'PLASMA_WALLET', feeAsset: 'XPL', networkFee: 0, usdMicros: 0 },
};

/** What each network carries and how its addresses look, from the wallet variants (regexes compiled once). */
const ROUTES: ReadonlyMap<string, { currencies: readonly string[]; accepts: (address: string) => boolean; shape: string }> = (() => {
  const out = new Map<string, { currencies: readonly string[]; accepts: (address: string) => boolean; shape: string }>();
  for (const v of WALLET_VARIANTS) {
    const re = new RegExp(v.addressPattern);
    out.set(v.accountType, { currencies: v.currencies, accepts: (a) => re.test(a), shape: v.addressDescription });
  }
  const lightning = [LIGHTNING.invoicePattern, LIGHTNING.bolt12Pattern, LIGHTNING.lightningAddressPattern].map((p) => new RegExp(p));
  out.set(LIGHTNING.accountType, {
    currencies: LIGHTNING.currencies,
    accepts: (a) => lightning.some((re) => re.test(a)),
    shape: 'Lightning invoice (BOLT11), offer (BOLT12) or Lightning address',
  });
  return out;
})();

/** The estimate for a withdrawal from one of the platform's internal accounts, at platform time `u.nowMs`. */
export async function estimateWithdrawalFee(u: Unit, body: EstimateWithdrawalFee): Promise<EstimateWithdrawalFeeWire> {
  const account = await findInternalAccount(u.trx, u.platform.id, body.internalAccountId);
  if (!account) throw errors.notFound('Internal account', body.internalAccountId);
  if (account.status !== 'ACTIVE') {
    throw lookupErrors.withdrawalField('internalAccountId', `internal account ${account.id} is ${account.status}`);
  }
  if (!findCurrency(body.currency)) throw errors.invalidCurrency(body.currency, 'currency');
  if (!CRYPTO_CODES.has(body.currency)) throw lookupErrors.withdrawalCurrency(`${body.currency} is not a crypto asset`);
  if (account.currency !== body.currency) {
    throw lookupErrors.withdrawalCurrency(`internal account ${account.id} holds ${account.currency}, not ${body.currency}`);
  }
  const fee = NETWORK_FEES[body.cryptoNetwork];
  const route = ROUTES.get(fee.walletType)!;
  if (!route.currencies.includes(body.currency)) {
    throw lookupErrors.withdrawalField(
      'cryptoNetwork',
      `${body.currency} cannot be withdrawn on ${body.cryptoNetwork}, which carries ${route.currencies.join(', ')}`,
    );
  }
  if (!route.accepts(body.destinationAddress)) {
    throw lookupErrors.withdrawalField('destinationAddress', `is not a ${body.cryptoNetwork} address: expected a ${route.shape}`);
  }
  const totalFee = networkPart(fee, body.currency, u.nowMs);
  if (totalFee >= BigInt(body.amount)) throw lookupErrors.feesExceedAmount(cappedAmount(totalFee));
  return {
    networkFee: fee.networkFee,
    networkFeeAsset: fee.feeAsset,
    applicationFee: 0,
    totalFee: Number(totalFee),
    netAmount: body.amount - Number(totalFee),
  };
}

/** The network fee in the withdrawal currency's smallest unit (see the file header). */
export function networkPart(fee: NetworkFee, code: string, atMs: number): bigint {
  if (fee.feeAsset === code) return BigInt(fee.networkFee);
  // micro-USD → USD cents is ÷ 10^4; the rate is `code` smallest units per cent.
  const rate = sandboxRate('USD', code, atMs);
  const num = BigInt(fee.usdMicros) * rate.units;
  const den = 10_000n * 10n ** BigInt(rate.scale);
  return (num + den - 1n) / den;
}
