/**
 * Exchange rates for a platform: the sandbox rate table (src/lib/rates.ts) for each requested
 * corridor, with the platform's own cross-currency fee and sending bounds. Pure: no SQL, no HTTP.
 *
 *   fees.fixed      = feeConfig.fixedFee.amount                       (0 without a fee config)
 *   fees.total      = fees.fixed + round(sendingAmount × variableFeeBps / 10000)   ties up
 *   receivingAmount = floor(max(0, sendingAmount − fees.total) × exchangeRate)
 *   exchangeRate    = destination smallest units per source smallest unit (spec §2), before fees
 */
import { errors, type FieldError } from '../../http/errors.ts';
import { MAX_AMOUNT } from '../../http/schemas.ts';
import { CRYPTO_CODES, CURRENCY_CODES, currency, findCurrency } from '../../lib/currencies.ts';
import { iso } from '../../lib/time.ts';
import { feesFor, receivingAmount, referenceRate, applyRate, sandboxRate, type FeeTerms } from '../../lib/rates.ts';
import type { PlatformRow } from '../../store/schema.ts';
import { settingsOf, type PlatformSettings } from '../platforms/platform-settings.ts';
import { DEFAULT_SENDING_AMOUNT, type ExchangeRateQueryT, type ExchangeRateWire, type PaymentRail } from './exchange-rates.schemas.ts';

/**
 * The rail a payout in each fiat currency takes by default. Crypto assets have none: the live
 * PaymentRail enum has no crypto network, so they are priced by quotes, not listed here.
 */
const PAYOUT_RAILS: Readonly<Record<string, PaymentRail>> = {
  USD: 'ACH',
  EUR: 'SEPA_INSTANT',
  GBP: 'FASTER_PAYMENTS',
  MXN: 'SPEI',
  BRL: 'PIX',
  INR: 'UPI',
  CAD: 'BANK_TRANSFER',
  DKK: 'BANK_TRANSFER',
  HKD: 'BANK_TRANSFER',
  IDR: 'BANK_TRANSFER',
  MYR: 'BANK_TRANSFER',
  NGN: 'BANK_TRANSFER',
  PHP: 'INSTAPAY',
  SGD: 'PAYNOW',
  THB: 'BANK_TRANSFER',
  VND: 'BANK_TRANSFER',
  ARS: 'BANK_TRANSFER',
  COP: 'ACH_COLOMBIA',
  KES: 'MOBILE_MONEY',
  ZAR: 'BANK_TRANSFER',
  JPY: 'BANK_TRANSFER',
  AED: 'BANK_TRANSFER',
  BDT: 'BANK_TRANSFER',
  BWP: 'MOBILE_MONEY',
  CNY: 'BANK_TRANSFER',
  EGP: 'BANK_TRANSFER',
  GHS: 'BANK_TRANSFER',
  GTQ: 'BANK_TRANSFER',
  HTG: 'MOBILE_MONEY',
  JMD: 'BANK_TRANSFER',
  MWK: 'MOBILE_MONEY',
  PKR: 'BANK_TRANSFER',
  RWF: 'MOBILE_MONEY',
  TZS: 'MOBILE_MONEY',
  UGX: 'MOBILE_MONEY',
  XAF: 'MOBILE_MONEY',
  XOF: 'MOBILE_MONEY',
  ZMW: 'MOBILE_MONEY',
};

/** The default payout rail for a destination currency; undefined for crypto assets. */
export function payoutRailFor(code: string): PaymentRail | undefined {
  return PAYOUT_RAILS[code];
}

/** Bounds for a currency without a platform config: a new platform's fiat bounds, USD 0.01 to 1,000,000.00. */
const DEFAULT_MIN_USD_CENTS = 1;
const DEFAULT_MAX_USD_CENTS = 100_000_000;

/**
 * Per-transaction sending bounds: the platform's `supportedCurrencies` entry for the currency, else
 * the default USD bounds converted at the reference (non-moving) price, min rounded up and max down.
 */
export function sendingLimits(settings: PlatformSettings, code: string): { min: number; max: number } {
  const configured = settings.supportedCurrencies.find((c) => c.currencyCode === code);
  if (configured) return { min: configured.minAmount, max: configured.maxAmount };
  const rate = referenceRate('USD', code);
  const min = applyRate(DEFAULT_MIN_USD_CENTS, rate, 'ceil');
  const max = applyRate(DEFAULT_MAX_USD_CENTS, rate, 'floor');
  return { min: Number(min > 0n ? min : 1n), max: Number(max < BigInt(MAX_AMOUNT) ? max : BigInt(MAX_AMOUNT)) };
}

/** The platform's CROSS_CURRENCY_TRANSACTION fee terms for a source currency, if any. */
export function crossCurrencyFeeTerms(settings: PlatformSettings, sourceCurrency: string): FeeTerms | undefined {
  const f = settings.feeConfigs.find((c) => c.feeType === 'CROSS_CURRENCY_TRANSACTION' && c.sourceCurrency === sourceCurrency);
  return f ? { variableFeeBps: f.variableFeeBps, fixedFee: f.fixedFee.amount } : undefined;
}

/** The exchange rates a platform sees at platform time `atMs`. */
export function listExchangeRates(platform: PlatformRow, q: ExchangeRateQueryT, atMs: number): ExchangeRateWire[] {
  const settings = settingsOf(platform);
  const source = q.sourceCurrency ?? platform.fiat_currency;
  const destinations = resolveCurrencies(source, q.destinationCurrency);
  const sendingAmount = q.sendingAmount ?? DEFAULT_SENDING_AMOUNT;
  const limits = sendingLimits(settings, source);
  const terms = crossCurrencyFeeTerms(settings, source);
  const sourceWire = currency(source);

  return destinations.map((dest) => {
    const rate = sandboxRate(source, dest, atMs);
    // Same-currency corridors are not cross-currency: no CROSS_CURRENCY_TRANSACTION fee.
    const fees = feesFor(sendingAmount, dest === source ? undefined : terms);
    const receiving = receivingAmount(sendingAmount, fees, rate);
    if (receiving > BigInt(MAX_AMOUNT) || fees.total > BigInt(MAX_AMOUNT)) {
      const message = `too large: pricing it in ${dest} exceeds ${MAX_AMOUNT} smallest units`;
      throw errors.amountOutOfRange(`sendingAmount ${message}`, [{ field: 'sendingAmount', message }]);
    }
    return {
      sourceCurrency: sourceWire,
      destinationCurrency: currency(dest),
      destinationPaymentRail: payoutRailFor(dest)!,
      minSendingAmount: limits.min,
      maxSendingAmount: limits.max,
      sendingAmount,
      receivingAmount: Number(receiving),
      exchangeRate: rate.value,
      fees: { fixed: Number(fees.fixed), total: Number(fees.total) },
      updatedAt: iso(rate.windowStartMs),
    };
  });
}

/**
 * Validates the currencies (every problem at once, each with its field) and returns the
 * destinations in request order without repeats; no destination filter means every other
 * currency that has a payout rail, in catalogue order.
 */
function resolveCurrencies(source: string, requested: string[] | undefined): string[] {
  const problems: FieldError[] = [];
  // The platform's fiat currency is always in the catalogue, so only a given sourceCurrency can fail.
  if (!findCurrency(source)) problems.push({ field: 'sourceCurrency', message: `unknown currency ${source}` });
  let destinations: string[];
  if (requested === undefined) {
    destinations = CURRENCY_CODES.filter((c) => c !== source && payoutRailFor(c) !== undefined);
  } else {
    destinations = [];
    // Repeated keys and comma-separated lists (the live SDK joins an array with commas) alike.
    const codes = requested.flatMap((r) => r.split(',').map((c) => c.trim()));
    if (codes.length > 50) problems.push({ field: 'destinationCurrency', message: 'at most 50 currencies' });
    codes.slice(0, 50).forEach((code, i) => {
      const field = `destinationCurrency.${i}`;
      if (!findCurrency(code)) problems.push({ field, message: `unknown currency ${code}` });
      else if (!payoutRailFor(code)) {
        const kind = CRYPTO_CODES.has(code) ? 'a crypto asset' : 'a currency';
        problems.push({ field, message: `${code} is ${kind} without a payout rail; price it with a quote` });
      } else if (!destinations.includes(code)) destinations.push(code);
    });
  }
  if (problems.length > 0) throw errors.invalidCurrencies(problems);
  return destinations;
}
