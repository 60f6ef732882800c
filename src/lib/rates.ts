/**
 * The sandbox rate table and the exact money math on top of it. Corridor has no market-data feed:
 * every currency in the catalogue has a reference USD price, and each 5-minute window nudges it by a
 * small deterministic amount keyed by (currency, window index). A rate is therefore a pure function
 * of the pair and the window, so every process agrees on it and "cached for about 5 minutes" holds
 * without a shared cache. Quotes reuse `sandboxRate`, `applyRate` and `feesFor`.
 *
 * Direction and units (spec §2, Quote.exchangeRate): a rate is RECEIVING SMALLEST UNITS PER SENDING
 * SMALLEST UNIT. USD→EUR at 0.92 EUR per dollar is 0.92 (cents to cents); USD→USDC at par is 10000
 * (one cent is 10,000 micro-USDC); USD→VND at 25,316 dong per dollar is 253.16.
 *
 * Arithmetic: prices are decimal strings parsed into BigInt; nothing passes through a float.
 *   pairRate(from, to) = P(from) × 10^dec(to) / (P(to) × 10^dec(from))       P = USD per main unit
 * truncated (floor) to RATE_SIGNIFICANT_DIGITS significant digits. That truncated decimal *is* the
 * rate: amounts are computed from it exactly, `receiving = floor(sending × rate)`, so anyone holding
 * the published number can reproduce every amount to the unit.
 */
import { currency } from './currencies.ts';

/** Length of one rate window: rates and their `updatedAt` are constant within it (spec: ~5 minutes). */
export const RATE_WINDOW_MS = 5 * 60 * 1000;

/** Significant digits a pair rate keeps (10 round-trips exactly through a JSON number). */
export const RATE_SIGNIFICANT_DIGITS = 10;

/** Reference prices, USD per one main unit. Sandbox values, roughly market levels of 2025. */
const USD_PRICES: Readonly<Record<string, string>> = {
  USD: '1',
  EUR: '1.08',
  GBP: '1.27',
  MXN: '0.0585',
  BRL: '0.18',
  INR: '0.012',
  CAD: '0.735',
  DKK: '0.145',
  HKD: '0.128',
  IDR: '0.0000625',
  MYR: '0.213',
  NGN: '0.00065',
  PHP: '0.0175',
  SGD: '0.745',
  THB: '0.0278',
  VND: '0.0000395',
  ARS: '0.00105',
  COP: '0.00025',
  KES: '0.00775',
  ZAR: '0.0545',
  JPY: '0.0067',
  AED: '0.2723',
  BDT: '0.0082',
  BWP: '0.074',
  CNY: '0.138',
  EGP: '0.0204',
  GHS: '0.065',
  GTQ: '0.13',
  HTG: '0.0076',
  JMD: '0.0064',
  MWK: '0.000577',
  PKR: '0.00355',
  RWF: '0.00071',
  TZS: '0.00038',
  UGX: '0.00027',
  XAF: '0.00165',
  XOF: '0.00165',
  ZMW: '0.037',
  BTC: '65000',
  USDC: '1',
  USDT: '1',
  USDB: '1',
};

/** Per-window wobble amplitude in parts per million: USD and the dollar stablecoins never move. */
const PEGGED = new Set(['USD', 'USDC', 'USDT', 'USDB']);
const WOBBLE_PPM_FIAT = 2_500; // ±0.25 %
const WOBBLE_PPM_BTC = 20_000; // ±2 %

const PRICE_SCALE = 12; // digits after the point kept from USD_PRICES
const PPM = 1_000_000n;

/** The window an instant falls in: its index and start (the `updatedAt` of every rate in it). */
export interface RateWindow {
  index: number;
  startMs: number;
}

export function rateWindow(atMs: number): RateWindow {
  const index = Math.floor(atMs / RATE_WINDOW_MS);
  return { index, startMs: index * RATE_WINDOW_MS };
}

/**
 * A pair rate: `units / 10^scale` receiving smallest units per sending smallest unit.
 * `text` is the exact decimal; `value` is the same number as a JSON number (exact round trip).
 */
export interface Rate {
  from: string;
  to: string;
  units: bigint;
  scale: number;
  text: string;
  value: number;
  /** Start of the window the rate belongs to (its `updatedAt`). */
  windowStartMs: number;
}

/** The sandbox rate from `from` to `to` at instant `atMs` (platform time). Codes must be in the catalogue. */
export function sandboxRate(from: string, to: string, atMs: number): Rate {
  const w = rateWindow(atMs);
  return pairRate(from, to, (c) => windowPrice(c, w.index), w.startMs);
}

/** The rate at the unmoving reference prices: for bounds and defaults that must not drift per window. */
export function referenceRate(from: string, to: string): Rate {
  return pairRate(from, to, basePrice, 0);
}

export type Rounding = 'floor' | 'ceil';

/** `amount × rate`, rounded as asked (default floor: the receiver never gets a fraction more). */
export function applyRate(amount: number | bigint, rate: Rate, rounding: Rounding = 'floor'): bigint {
  return divide(BigInt(amount) * rate.units, 10n ** BigInt(rate.scale), rounding);
}

/** Converts a smallest-unit amount at the sandbox rate of `atMs`, flooring. */
export function convert(amount: number | bigint, from: string, to: string, atMs: number, rounding: Rounding = 'floor'): bigint {
  return applyRate(amount, sandboxRate(from, to, atMs), rounding);
}

/**
 * The smallest sending amount `s` with `floor(s × rate) ≥ receiving`: what a quote locked on the
 * receiving side must take (before fees) so that at least `receiving` arrives.
 */
export function sendingForReceiving(receiving: number | bigint, rate: Rate): bigint {
  return divide(BigInt(receiving) * 10n ** BigInt(rate.scale), rate.units, 'ceil');
}

/** A platform's cross-currency fee terms in the sending currency. */
export interface FeeTerms {
  variableFeeBps: number;
  /** Fixed part, in the sending currency's smallest unit. */
  fixedFee: number;
}

export interface Fees {
  fixed: bigint;
  variable: bigint;
  total: bigint;
}

/**
 * Fees on a sending amount: `fixed + round(sending × bps / 10000)`, the variable part rounded to the
 * nearest smallest unit with ties up (toward the fee). No terms → no fees.
 */
export function feesFor(sendingAmount: number | bigint, terms: FeeTerms | undefined): Fees {
  if (!terms) return { fixed: 0n, variable: 0n, total: 0n };
  const fixed = BigInt(terms.fixedFee);
  const variable = (BigInt(sendingAmount) * BigInt(terms.variableFeeBps) + 5_000n) / 10_000n;
  return { fixed, variable, total: fixed + variable };
}

/**
 * What arrives for `sendingAmount` after `fees`: `floor(max(0, sending − fees.total) × rate)`.
 * Fees larger than the amount leave nothing to convert (0), never a negative amount.
 */
export function receivingAmount(sendingAmount: number | bigint, fees: Fees, rate: Rate): bigint {
  const net = BigInt(sendingAmount) - fees.total;
  return net > 0n ? applyRate(net, rate, 'floor') : 0n;
}

// ---------------------------------------------------------------------------------------------

function pairRate(from: string, to: string, price: (code: string) => bigint, windowStartMs: number): Rate {
  if (from === to) return { from, to, units: 1n, scale: 0, text: '1', value: 1, windowStartMs };
  const num = price(from) * 10n ** BigInt(currency(to).decimals);
  const den = price(to) * 10n ** BigInt(currency(from).decimals);
  // Smallest scale that gives RATE_SIGNIFICANT_DIGITS digits (a rate ≥ 10^(digits−1) keeps its integer part).
  const floorDigits = 10n ** BigInt(RATE_SIGNIFICANT_DIGITS - 1);
  let scale = 0;
  let units = num / den;
  while (units < floorDigits) {
    scale += 1;
    units = (num * 10n ** BigInt(scale)) / den;
  }
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  const text = decimalText(units, scale);
  return { from, to, units, scale, text, value: Number(text), windowStartMs };
}

/** Reference price scaled by 10^(PRICE_SCALE + 6), the same scale as windowPrice. */
function basePrice(code: string): bigint {
  return parseScaled(priceText(code), PRICE_SCALE) * PPM;
}

/** The price in window `index`: reference × (1 + wobble ppm), scaled by 10^(PRICE_SCALE + 6). */
function windowPrice(code: string, index: number): bigint {
  const amplitude = PEGGED.has(code) ? 0 : code === 'BTC' ? WOBBLE_PPM_BTC : WOBBLE_PPM_FIAT;
  const wobble = amplitude === 0 ? 0 : (fnv1a(`${code}|${index}`) % (2 * amplitude + 1)) - amplitude;
  return parseScaled(priceText(code), PRICE_SCALE) * (PPM + BigInt(wobble));
}

function priceText(code: string): string {
  const p = USD_PRICES[code];
  if (p === undefined) throw new Error(`no sandbox price for ${code}`);
  return p;
}

/** A non-negative decimal string as an integer scaled by 10^scale (extra digits are a table bug). */
function parseScaled(text: string, scale: number): bigint {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!m || (m[2]?.length ?? 0) > scale) throw new Error(`bad price ${text}`);
  return BigInt(m[1]! + (m[2] ?? '').padEnd(scale, '0'));
}

function decimalText(units: bigint, scale: number): string {
  if (scale === 0) return units.toString();
  const s = units.toString().padStart(scale + 1, '0');
  return `${s.slice(0, -scale)}.${s.slice(-scale)}`;
}

function divide(n: bigint, d: bigint, rounding: Rounding): bigint {
  const q = n / d;
  return rounding === 'ceil' && q * d !== n ? q + 1n : q;
}

/** 32-bit FNV-1a: a stable, well-spread hash for the wobble (not for anything secret). */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i += 1) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}
