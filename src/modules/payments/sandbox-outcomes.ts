import { errors } from '../../http/errors.ts';
import { iso } from '../../lib/time.ts';

/**
 * The sandbox rail: which outcome a payment gets, chosen from the spec's magic values when the
 * payment starts and stored with it (so a restart, or another process, finishes it the same way).
 */

export type RefundReason = 'TRANSACTION_FAILED' | 'USER_CANCELLATION' | 'TIMEOUT';

export type Scenario =
  /** Settles after `delayMs` (0: right after the request, through the job runner). */
  | { kind: 'SUCCESS'; delayMs: number }
  /** Fails after `delayMs` (`now`: inside the request itself); the refund ends as given. */
  | { kind: 'FAIL'; delayMs: number | 'now'; reason: string; refund: 'COMPLETED' | 'FAILED'; refundReason: RefundReason }
  /** Settles, then the receiving bank returns it after `returnAfterMs`. */
  | { kind: 'RETURNED'; returnAfterMs: number };

/** The spec's "about 30 seconds" pending transfer (suffix 005). */
export const TRANSFER_PENDING_MS = 30_000;
/** The spec's "about 6 minutes" slow quote payment (suffix 003). */
export const SLOW_PAYMENT_MS = 6 * 60_000;
/** How long after completing a returned payment (suffix 005) the return arrives. */
export const RETURN_AFTER_MS = 60_000;
/** `$pending.long.usd`: how long the long-pending UMA payment stays in flight. */
export const LONG_PENDING_MS = 60 * 60_000;

const success: Scenario = { kind: 'SUCCESS', delayMs: 0 };

/** Quote execution to an external account, by the destination identifier's last 3 digits. */
export function quoteScenario(suffix: string): Scenario {
  switch (suffix) {
    case '002':
      return { kind: 'FAIL', delayMs: 0, reason: 'QUOTE_EXECUTION_FAILED', refund: 'COMPLETED', refundReason: 'TRANSACTION_FAILED' };
    case '003':
      return { kind: 'SUCCESS', delayMs: SLOW_PAYMENT_MS };
    case '004':
      return { kind: 'FAIL', delayMs: 0, reason: 'ACCOUNT_CANNOT_RECEIVE', refund: 'COMPLETED', refundReason: 'TRANSACTION_FAILED' };
    case '005':
      return { kind: 'RETURNED', returnAfterMs: RETURN_AFTER_MS };
    case '006':
      return { kind: 'FAIL', delayMs: 0, reason: 'QUOTE_EXECUTION_FAILED', refund: 'COMPLETED', refundReason: 'USER_CANCELLATION' };
    case '007':
      return { kind: 'FAIL', delayMs: 0, reason: 'ACCOUNT_CANNOT_RECEIVE', refund: 'FAILED', refundReason: 'TRANSACTION_FAILED' };
    default:
      return success;
  }
}

/**
 * Same-currency transfers, by the external account identifier's last 3 digits. `incoming` is a
 * transfer-in (a pull), whose failures are collection failures.
 */
export function transferScenario(suffix: string, incoming: boolean): Scenario {
  const reason = (outgoing: string) => (incoming ? 'COLLECTION_FAILED' : outgoing);
  const fail = (delayMs: number | 'now', outgoing: string): Scenario => ({
    kind: 'FAIL',
    delayMs,
    reason: reason(outgoing),
    refund: 'COMPLETED',
    refundReason: 'TRANSACTION_FAILED',
  });
  switch (suffix) {
    case '002':
      return fail('now', 'LIMIT_EXCEEDED');
    case '003':
      return fail('now', 'ACCOUNT_INVALID');
    case '004':
      return fail(0, 'ACCOUNT_CANNOT_RECEIVE');
    case '005':
      return fail(TRANSFER_PENDING_MS, 'ACCOUNT_CANNOT_RECEIVE');
    default:
      return success;
  }
}

/** The sandbox UMA receivers (`$<name>@<sandbox UMA domain>`) and the currency each receives. */
export const SANDBOX_UMA_RECEIVERS: Record<string, { currency: string; scenario: Scenario }> = {
  '$success.usd': { currency: 'USD', scenario: success },
  '$success.eur': { currency: 'EUR', scenario: success },
  '$success.mxn': { currency: 'MXN', scenario: success },
  '$pending.long.usd': { currency: 'USD', scenario: { kind: 'SUCCESS', delayMs: LONG_PENDING_MS } },
  '$fail.compliance.usd': {
    currency: 'USD',
    scenario: { kind: 'FAIL', delayMs: 0, reason: 'COMPLIANCE_REJECTED', refund: 'COMPLETED', refundReason: 'TRANSACTION_FAILED' },
  },
};

const UMA_ADDRESS = /^\$([a-z0-9._-]{1,64})@([a-z0-9.-]{1,253})$/i;

/**
 * The sandbox UMA party at `address`: 400 `INVALID_UMA_ADDRESS` (naming `field`) when it is not a
 * UMA address, 404 `UMA_NOT_FOUND` when no sandbox party lives there.
 */
/**
 * The live docs' sandbox UMA domain, and the one the spec's examples use (`$success.usd@sandbox.grid.uma.money`):
 * where the first steers the sandbox, so does the second.
 */
const DOCS_SANDBOX_DOMAIN = 'sandbox.uma.money';
const SPEC_SANDBOX_DOMAIN = 'sandbox.grid.uma.money';

export function sandboxUmaParty(address: string, sandboxDomain: string, field: string): { currency: string; scenario: Scenario } {
  const m = UMA_ADDRESS.exec(address);
  if (!m) throw errors.invalidUmaAddress(address, field);
  const domain = m[2]!.toLowerCase();
  const sandbox = domain === sandboxDomain || (sandboxDomain === DOCS_SANDBOX_DOMAIN && domain === SPEC_SANDBOX_DOMAIN);
  const party = sandbox ? SANDBOX_UMA_RECEIVERS[`$${m[1]!.toLowerCase()}`] : undefined;
  if (!party) throw errors.umaNotFound(address);
  return party;
}

export function parseScenario(text: string): Scenario {
  return JSON.parse(text) as Scenario;
}

/**
 * When a payment whose outcome starts at `startMs` is expected to settle: when its delayed outcome
 * (settlement, or the failure that ends a pending transfer) is due. Null when that outcome comes at
 * once (the job runner's next turn, or inside the request): the live API's "instant".
 */
export function expectedSettlementAt(scenario: string, startMs: number): string | null {
  const s = parseScenario(scenario);
  const delayMs = s.kind === 'SUCCESS' ? s.delayMs : s.kind === 'FAIL' && s.delayMs !== 'now' ? s.delayMs : 0;
  return delayMs > 0 ? iso(startMs + delayMs) : null;
}
