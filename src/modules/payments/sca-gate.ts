/**
 * Per-transaction Strong Customer Authentication on quotes (issue #23; docs/sca.md, "Quote
 * authorisation"): whether a payment needs the customer's authorisation, and parking it in
 * PENDING_AUTHORIZATION with its challenge until it has one. Nothing moves while it waits.
 *
 * A payment needs SCA when its sender is an SCA customer (modules/sca: an EEA customer), unless
 * - it goes to another account of the same customer (PSD2 RTS art. 15), or
 * - it goes to a beneficiary the customer trusts (art. 13: trust/confirm), or
 * - it is a low-value payment (art. 16): at most EUR 30, while the customer's payments exempted
 *   since its last authorised one are fewer than 5 and, with this one, at most EUR 100.
 * A prefunded send is one challenge (PAYOUT); a real-time funded cross-currency send is two
 * (CURRENCY_CONVERSION, then PAYOUT), as the live API describes today.
 */
import { errors } from '../../http/errors.ts';
import { applyRate, referenceRate } from '../../lib/rates.ts';
import type { QuoteRow, TransactionRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findInternalAccount } from '../internal-accounts/internal-accounts.repo.ts';
import { issueChallenge, isScaCustomer, isTrustedBeneficiary, type ScaChallengeWire } from '../sca/sca-challenges.ts';
import { emitPayment, type Env } from './payment-engine.ts';
import { transitionQuote, transitionTransaction } from './payments.repo.ts';
import { requireOwnTransaction } from '../../store/pg-group-commit.ts';
import { findLowValue, saveLowValue } from './sca-low-value.repo.ts';

export const JOB_SCA_QUOTE_EXPIRE = 'SCA_QUOTE_EXPIRE';

/** PSD2 RTS art. 16, in euro cents. */
export const LOW_VALUE_LIMIT_EUR_CENTS = 3_000;
export const LOW_VALUE_CUMULATIVE_EUR_CENTS = 10_000;
export const LOW_VALUE_MAX_COUNT = 5;

export type PerTransactionFactor = 'SMS_OTP' | 'PASSKEY';

/** The factor a request asks for; TOTP cannot carry dynamic linking (400 on the field). */
export function perTransactionFactor(factor: string | undefined, field = 'scaFactor'): PerTransactionFactor | null {
  if (factor === undefined) return null;
  if (factor === 'TOTP') throw errors.invalidField(field, 'TOTP cannot authorise a payment (no dynamic linking): use SMS_OTP or PASSKEY');
  return factor as PerTransactionFactor;
}

/** What a payment is about to do, as the gate needs it. */
export interface GateInput {
  customerId: string | null;
  /** Whether SCA applies to that customer, when the caller has read its row in this unit already. */
  scaCustomer?: boolean;
  sendingCurrency: string;
  receivingCurrency: string;
  amount: number;
  destinationAccountId: string | null;
  realtime: boolean;
}

/**
 * The authorisations a payment needs, in order, or undefined when it needs none. Uses up the
 * low-value exemption when that is what spares it (in this unit: a rolled-back payment does not).
 */
export async function scaStepsFor(u: Unit, p: GateInput): Promise<string[] | undefined> {
  if (!p.customerId || !(p.scaCustomer ?? (await isScaCustomer(u.trx, u.platform.id, p.customerId)))) return undefined;
  // The low-value count below is read and written back: not beside other payments in a shared
  // transaction (nothing is written yet, so leaving it costs only this unit's reads).
  requireOwnTransaction(u.trx);
  const dest = p.destinationAccountId;
  if (dest?.startsWith('InternalAccount:')) {
    const account = await findInternalAccount(u.trx, u.platform.id, dest);
    if (account?.customer_id === p.customerId) return undefined;
  } else if (dest?.startsWith('ExternalAccount:') && (await isTrustedBeneficiary(u.trx, u.platform.id, dest))) {
    return undefined;
  }
  if (await lowValueExempt(u, p)) return undefined;
  return p.realtime && p.sendingCurrency !== p.receivingCurrency ? ['CURRENCY_CONVERSION', 'PAYOUT'] : ['PAYOUT'];
}

async function lowValueExempt(u: Unit, p: GateInput & { customerId: string | null }): Promise<boolean> {
  const eur = p.sendingCurrency === 'EUR' ? BigInt(p.amount) : applyRate(p.amount, referenceRate(p.sendingCurrency, 'EUR'), 'ceil');
  if (eur > BigInt(LOW_VALUE_LIMIT_EUR_CENTS)) return false;
  const customerId = p.customerId as string;
  const cur = await findLowValue(u.trx, u.platform.id, customerId);
  const count = cur?.exempted_count ?? 0;
  const total = BigInt(cur?.exempted_eur_cents ?? 0) + eur;
  if (count >= LOW_VALUE_MAX_COUNT || total > BigInt(LOW_VALUE_CUMULATIVE_EUR_CENTS)) return false;
  await saveLowValue(u.trx, { platformId: u.platform.id, customerId, count: count + 1, eurCents: Number(total), at: u.at });
  return true;
}

/** An authorised payment starts the low-value count again. */
export async function resetLowValue(u: Unit, customerId: string): Promise<void> {
  await saveLowValue(u.trx, { platformId: u.platform.id, customerId, count: 0, eurCents: 0, at: u.at });
}

/**
 * Parks a quote and its transaction (both PENDING) in PENDING_AUTHORIZATION with the challenge of
 * its first step: OUTGOING_PAYMENT.PENDING_AUTHORIZATION, and a job that fails the payment if the
 * challenge lapses unsatisfied. 409 when another request moved it first.
 */
export async function awaitAuthorization(
  env: Env,
  quote: QuoteRow,
  txn: TransactionRow,
  steps: string[],
  factor: PerTransactionFactor | null,
): Promise<{ quote: QuoteRow; challenge: ScaChallengeWire }> {
  const { u } = env;
  const set = { status: 'PENDING_AUTHORIZATION', updated_at: u.at };
  if (!(await transitionTransaction(u.trx, txn.id, ['PENDING'], set))) throw errors.conflict(`Quote ${quote.id} was already executed`);
  const parked = { status: 'PENDING_AUTHORIZATION', sca_steps: JSON.stringify(steps), sca_factor: factor, updated_at: u.at };
  if (!(await transitionQuote(u.trx, quote.id, ['PENDING'], parked))) throw errors.conflict(`Quote ${quote.id} was already executed`);
  emitPayment(env, { ...txn, ...set }, 'PENDING_AUTHORIZATION');
  const challenge = await challengeStep(u, quote, steps[0] ?? 'PAYOUT', factor);
  return { quote: { ...quote, ...parked }, challenge };
}

/** Issues the challenge of one step and schedules its lapse. */
export async function challengeStep(
  u: Unit,
  quote: Pick<QuoteRow, 'id' | 'customer_id'>,
  purpose: string,
  factor: PerTransactionFactor | null,
): Promise<ScaChallengeWire> {
  if (!quote.customer_id) throw new Error(`quote ${quote.id} needs SCA without a customer`);
  const challenge = await issueChallenge(u, { customerId: quote.customer_id, subjectId: quote.id, purpose, factor: factor ?? 'SMS_OTP' });
  const delayMs = Math.max(0, Date.parse(challenge.expiresAt) - u.nowMs);
  await u.schedule(JOB_SCA_QUOTE_EXPIRE, { quoteId: quote.id, challengeId: challenge.id }, delayMs);
  return challenge;
}
