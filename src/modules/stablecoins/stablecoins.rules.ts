/**
 * The rules of stablecoin issuance that are neither storage nor HTTP: the amount rule, the
 * simulated provider (Corridor connects to no real Brale; its answers are derived here, with the
 * sandbox magic values), the operations' timelines and the text they show. docs/stablecoins.md
 * has the why of each.
 */
import { createHash } from 'node:crypto';
import { SANDBOX_BANK_NAME, SANDBOX_ROUTING_NUMBER } from '../internal-accounts/funding.ts';
import type { BurnRail, IssuanceStatus, OperationStatus, ProviderAccountStatus } from './stablecoins.tables.ts';

// ── provider metadata ────────────────────────────────────────────────────────────────────────

/** What the provider reports of a token: Corridor derives it from the token's identifier. */
export interface TokenMetadata {
  name: string;
  symbol: string;
  decimals: number;
  baseCurrency: string;
}

export function tokenMetadata(providerTokenIdentifier: string): TokenMetadata {
  return { name: `${providerTokenIdentifier} Stablecoin`, symbol: providerTokenIdentifier, decimals: 6, baseCurrency: 'USD' };
}

/** The last three characters of a value when they are digits ('' otherwise): the sandbox selector. */
export function magicSuffix(value: string): string {
  const tail = value.slice(-3);
  return /^[0-9]{3}$/.test(tail) ? tail : '';
}

// ── provider account links ───────────────────────────────────────────────────────────────────

/** How long after linking the provider revokes (003) or invalidates (004) a sandbox link. */
export const LINK_LAPSE_MS = 60_000;

/** The simulated credential check at link time, by the sandbox suffix of `apiClientId`. */
export type LinkVerdict =
  | { kind: 'REFUSED' }
  | { kind: 'ACTIVE'; lapsesTo?: Exclude<ProviderAccountStatus, 'ACTIVE'>; severalAccounts: boolean };

export function verifyCredentials(apiClientId: string, sandbox: boolean): LinkVerdict {
  if (!sandbox) return { kind: 'ACTIVE', severalAccounts: false };
  switch (magicSuffix(apiClientId)) {
    case '002':
      return { kind: 'REFUSED' };
    case '003':
      return { kind: 'ACTIVE', lapsesTo: 'REVOKED', severalAccounts: false };
    case '004':
      return { kind: 'ACTIVE', lapsesTo: 'INVALID', severalAccounts: false };
    case '007':
      return { kind: 'ACTIVE', severalAccounts: true };
    default:
      return { kind: 'ACTIVE', severalAccounts: false };
  }
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * The one provider account credentials expose when they expose one: a 27-character base62 id (the
 * shape of Brale's ids) derived from the client id, so the same credentials always name the same
 * account (and a second link of them is a duplicate).
 */
export function providerAccountIdFor(apiClientId: string): string {
  let n = BigInt(`0x${createHash('sha256').update(`brale-account\u0000${apiClientId}`).digest('hex')}`);
  let out = '';
  for (let i = 0; i < 27; i++) {
    out += BASE62[Number(n % 62n)];
    n /= 62n;
  }
  return out;
}

// ── issuance ─────────────────────────────────────────────────────────────────────────────────

export const REVIEW_MS = 60_000;
export const PROVISIONING_MS = 5_000;

/**
 * The issuance path of a registered token by the sandbox suffix of its providerTokenIdentifier:
 * 001 is reviewed first, 002 is rejected in review, 003 fails while provisioning; anything else
 * (and every token of a PRODUCTION platform) provisions.
 */
export function issuancePath(providerTokenIdentifier: string, sandbox: boolean): { first: IssuanceStatus; delayMs: number } {
  const s = sandbox ? magicSuffix(providerTokenIdentifier) : '';
  return s === '001' || s === '002' ? { first: 'PENDING_REVIEW', delayMs: REVIEW_MS } : { first: 'PROVISIONING', delayMs: PROVISIONING_MS };
}

/** The issuance status after `from`, and how long until the one after it (undefined: final). */
export function nextIssuance(
  from: IssuanceStatus,
  providerTokenIdentifier: string,
  sandbox: boolean,
): { to: IssuanceStatus; delayMs?: number } | undefined {
  const s = sandbox ? magicSuffix(providerTokenIdentifier) : '';
  if (from === 'PENDING_REVIEW') return s === '002' ? { to: 'REJECTED' } : { to: 'PROVISIONING', delayMs: PROVISIONING_MS };
  if (from === 'PROVISIONING') return { to: s === '003' ? 'FAILED' : 'PROVISIONED' };
  return undefined;
}

// ── amounts ──────────────────────────────────────────────────────────────────────────────────

/** An amount as the rule accepts it: in the token's smallest unit and in whole cents of its base currency. */
export interface CheckedAmount {
  amount: number;
  cents: number;
}

/**
 * The amount rule: a decimal string of the token's smallest unit, > 0, at most 2^53−1, converting
 * exactly to whole cents (with 6 decimals: a multiple of 10,000). A message for `amount` otherwise.
 */
export function checkAmount(text: string, decimals: number): CheckedAmount | { problem: string } {
  if (!/^[0-9]+$/.test(text)) return { problem: 'must be a decimal string of digits' };
  const n = BigInt(text);
  if (n === 0n) return { problem: 'must be greater than 0' };
  if (n > BigInt(Number.MAX_SAFE_INTEGER)) return { problem: `must be at most ${Number.MAX_SAFE_INTEGER}` };
  if (decimals < 2) throw new Error(`a stablecoin with ${decimals} decimals has no whole cents`);
  const unit = 10n ** BigInt(decimals - 2);
  if (n % unit !== 0n) {
    return { problem: `must convert exactly to whole cents: with ${decimals} decimals, a multiple of ${unit}` };
  }
  return { amount: Number(n), cents: Number(n / unit) };
}

// ── operations ───────────────────────────────────────────────────────────────────────────────

/** A sandbox operation's outcome, by the last two digits of its amount in cents. */
export type Scenario = 'NORMAL' | 'FAIL' | 'NEVER_FUNDED' | 'UNAVAILABLE';

export function scenarioOf(cents: number, sandbox: boolean): Scenario {
  if (!sandbox) return 'NORMAL';
  switch (cents % 100) {
    case 2:
      return 'FAIL';
    case 3:
      return 'NEVER_FUNDED';
    case 5:
      return 'UNAVAILABLE';
    default:
      return 'NORMAL';
  }
}

/** The failure code of a failed provider transfer. */
export const PROVIDER_TRANSFER_FAILED = 'PROVIDER_TRANSFER_FAILED';
/** How long an operation awaiting funds waits for them. */
export const FUNDING_WINDOW_MS = 7 * 24 * 3600_000;
/** Sandbox: external funds (a wire, a token deposit) arrive this long after creation. */
export const FUNDS_ARRIVE_MS = 10_000;
/** The provider's time per step (accepting a debit, starting, finishing). */
export const PROVIDER_STEP_MS = 5_000;

/** How an operation starts: awaiting external funds, created (an ACH debit), or with the provider at once. */
export type Flow = 'FUNDING' | 'DEBIT' | 'PROVIDER';

export function flowOf(sourceType: string): Flow {
  if (sourceType === 'WIRE' || sourceType === 'EXTERNAL_ACCOUNT') return 'FUNDING';
  if (sourceType === 'ACH_DEBIT' || sourceType === 'SAME_DAY_ACH_DEBIT') return 'DEBIT';
  return 'PROVIDER';
}

/** The status at creation of each flow. */
export const INITIAL_STATUS: Record<Flow, OperationStatus> = { FUNDING: 'PENDING_FUNDING', DEBIT: 'CREATED', PROVIDER: 'PENDING_PROVIDER' };

/**
 * The milestones of an operation: from `atMs` after its creation it is in `status`. The last is
 * terminal. A NEVER_FUNDED operation awaiting funds only expires.
 */
export function timeline(flow: Flow, scenario: Scenario): { atMs: number; status: OperationStatus }[] {
  const end: OperationStatus = scenario === 'FAIL' ? 'FAILED' : 'COMPLETED';
  if (flow === 'FUNDING') {
    if (scenario === 'NEVER_FUNDED') return [{ atMs: FUNDING_WINDOW_MS, status: 'EXPIRED' }];
    const t = FUNDS_ARRIVE_MS;
    return [
      { atMs: t, status: 'PENDING_PROVIDER' },
      { atMs: t + PROVIDER_STEP_MS, status: 'PROCESSING' },
      { atMs: t + 2 * PROVIDER_STEP_MS, status: end },
    ];
  }
  const steps: OperationStatus[] = flow === 'DEBIT' ? ['PENDING_PROVIDER', 'PROCESSING', end] : ['PROCESSING', end];
  return steps.map((status, i) => ({ atMs: (i + 1) * PROVIDER_STEP_MS, status }));
}

/** Where an operation stands `elapsedMs` after its creation. */
export function statusAt(flow: Flow, scenario: Scenario, elapsedMs: number): OperationStatus {
  let status = INITIAL_STATUS[flow];
  for (const m of timeline(flow, scenario)) if (elapsedMs >= m.atMs) status = m.status;
  return status;
}

export const TERMINAL: ReadonlySet<OperationStatus> = new Set(['COMPLETED', 'FAILED', 'EXPIRED']);

/** The provider's own (sanitised) word for each status. */
export const PROVIDER_STATUS: Record<OperationStatus, string> = {
  CREATED: 'created',
  PENDING_FUNDING: 'awaiting_funds',
  PENDING_PROVIDER: 'pending',
  PROCESSING: 'processing',
  COMPLETED: 'complete',
  FAILED: 'failed',
  EXPIRED: 'expired',
};

function digest(seed: string): string {
  return createHash('sha256').update(seed).digest('hex');
}

function digits(seed: string, n: number): string {
  const h = digest(seed);
  let out = '';
  for (let i = 0; out.length < n; i++) out += String(Number.parseInt(h.slice((i * 2) % 64, ((i * 2) % 64) + 2), 16) % 10);
  return out;
}

/** Where the issuer wires the fiat of a WIRE mint (the provider's account; the reference names the mint). */
export function wireInstructions(operationId: string, cents: number, currency: string): { rail: string } & Record<string, string> {
  return {
    rail: 'WIRE',
    bankName: SANDBOX_BANK_NAME,
    routingNumber: SANDBOX_ROUTING_NUMBER,
    accountNumber: digits(`${operationId}:account`, 12),
    beneficiaryName: 'Brale Inc.',
    reference: `BRL${digits(`${operationId}:reference`, 10)}`,
    amount: String(cents),
    currency,
  };
}

/** Where the issuer sends the tokens of an EXTERNAL_ACCOUNT burn: a Spark deposit address (regtest on sandbox platforms). */
export function depositInstructions(operationId: string, symbol: string, sandbox: boolean): { rail: string } & Record<string, string> {
  const prefix = sandbox ? 'sparkrt1' : 'spark1';
  return { rail: 'SPARK', network: 'SPARK', address: `${prefix}${digest(`${operationId}:deposit`).slice(0, 58)}`, valueType: symbol };
}

const TIMING: Record<BurnRail, string> = {
  WIRE: 'Same business day',
  ACH_CREDIT: '1-3 business days',
  SAME_DAY_ACH_CREDIT: 'Same business day',
  RTP_CREDIT: 'Within minutes',
};

/** The static payout estimate of a burn. */
export function estimatedDelivery(
  rail: BurnRail,
  cents: number,
  currency: string,
): { rail: string; amount: string; currency: string; timing: string } {
  return { rail, amount: String(cents), currency, timing: TIMING[rail] };
}
