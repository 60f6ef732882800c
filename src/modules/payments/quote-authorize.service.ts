/**
 * POST /quotes/{quoteId}/authorize and /authorize/resend (issue #23), and the lapse of an
 * unanswered challenge. A quote in PENDING_AUTHORIZATION carries its current challenge; each
 * satisfied challenge moves it to the next step or, after the last, releases it: a prefunded send
 * starts (PROCESSING: the hold is taken now), a real-time funded one shows its payment instructions
 * and waits for the money (PENDING). A challenge that lapses fails the payment (SCA_NOT_COMPLETED);
 * no money had moved. See sca-gate.ts for when a payment needs SCA, docs/sca.md for the rest.
 */
import { type ApiError, errors } from '../../http/errors.ts';
import type { JobHandler } from '../../jobs/jobs.ts';
import type { QuoteRow, TransactionRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import {
  attemptChallenge,
  closeChallenge,
  isScaCustomer,
  pendingChallenge,
  resendChallenge,
  type ScaProof,
} from '../sca/sca-challenges.ts';
import { emitPayment, envOf } from './payment-engine.ts';
import type { QuoteWire } from './payments.schemas.ts';
import { findQuote, findTransaction, transitionQuote, transitionTransaction } from './payments.repo.ts';
import { execute, quoteToWire } from './quotes.service.ts';
import { challengeStep, type PerTransactionFactor, resetLowValue } from './sca-gate.ts';

/** The quote and its transaction, for an SCA step: 404 unknown, 409 for a customer SCA does not apply to. */
async function scaQuote(u: Unit, quoteId: string): Promise<{ quote: QuoteRow; customerId: string }> {
  const quote = await findQuote(u.trx, u.platform.id, quoteId, { forUpdate: true });
  if (!quote) throw errors.quoteNotFound(quoteId);
  if (!quote.customer_id || !(await isScaCustomer(u.trx, u.platform.id, quote.customer_id))) {
    throw errors.conflict('Strong Customer Authentication does not apply to this quote’s customer');
  }
  return { quote, customerId: quote.customer_id };
}

function noPendingChallenge(quote: QuoteRow) {
  return errors.conflict(`Quote ${quote.id} is ${quote.status}: it has no pending SCA challenge`);
}

async function transactionOf(u: Unit, quote: QuoteRow): Promise<TransactionRow> {
  const txn = await findTransaction(u.trx, u.platform.id, quote.transaction_id);
  if (!txn) throw new Error(`quote ${quote.id} has no transaction ${quote.transaction_id}`);
  return txn;
}

/**
 * Satisfies the quote's current challenge with `proof`: the quote as it now is, or — for a wrong
 * proof, which is counted (the 5th voids the challenge) — the 400 to answer once the unit commits
 * the count (the route uses writeThen). Every other refusal is thrown and changes nothing.
 */
export async function authorizeQuote(u: Unit, quoteId: string, proof: ScaProof): Promise<QuoteWire | ApiError> {
  const { quote, customerId } = await scaQuote(u, quoteId);
  if (quote.status !== 'PENDING_AUTHORIZATION') throw noPendingChallenge(quote);
  const wrong = await attemptChallenge(u, { customerId, subjectId: quote.id, proof, requireSession: true });
  if (wrong) return wrong;
  await resetLowValue(u, customerId);
  const steps = (JSON.parse(quote.sca_steps ?? '[]') as string[]).slice(1);
  const env = envOf(u);
  if (steps.length > 0) {
    const next = { sca_steps: JSON.stringify(steps), updated_at: u.at };
    await transitionQuote(u.trx, quote.id, ['PENDING_AUTHORIZATION'], next);
    const txn = await transactionOf(u, quote);
    // The live API may send PENDING_AUTHORIZATION again for each further step.
    emitPayment(env, txn, 'PENDING_AUTHORIZATION');
    const challenge = await challengeStep(u, quote, steps[0]!, quote.sca_factor as PerTransactionFactor | null);
    return quoteToWire({ ...quote, ...next }, u.nowMs, challenge);
  }
  const txn = await transactionOf(u, quote);
  const done = { sca_steps: '[]', updated_at: u.at };
  if (quote.funding_reference) {
    // Real-time funded: authorised, it now waits for its money with its instructions shown.
    await transitionQuote(u.trx, quote.id, ['PENDING_AUTHORIZATION'], { ...done, status: 'PENDING' });
    const set = { status: 'PENDING', updated_at: u.at };
    await transitionTransaction(u.trx, txn.id, ['PENDING_AUTHORIZATION'], set);
    emitPayment(env, { ...txn, ...set }, 'PENDING');
    return quoteToWire({ ...quote, ...done, status: 'PENDING' }, u.nowMs);
  }
  await transitionQuote(u.trx, quote.id, ['PENDING_AUTHORIZATION'], done);
  const started = await execute(env, { ...quote, ...done }, txn, undefined, ['PENDING_AUTHORIZATION']);
  return quoteToWire(started, u.nowMs);
}

/** Re-sends the SMS code of the quote's current challenge (same challenge, same expiry). */
export async function resendQuoteCode(u: Unit, quoteId: string): Promise<void> {
  const { quote, customerId } = await scaQuote(u, quoteId);
  if (quote.status !== 'PENDING_AUTHORIZATION') throw noPendingChallenge(quote);
  await resendChallenge(u, { customerId, subjectId: quote.id });
}

/**
 * Job: a quote's challenge lapsed. Unless it was satisfied or replaced by the next step's (which
 * has its own job), the payment fails with SCA_NOT_COMPLETED and its quote with it.
 */
export const scaQuoteExpireJob: JobHandler = async (u, job) => {
  const { quoteId, challengeId } = JSON.parse(job.payload) as { quoteId: string; challengeId: string };
  const quote = await findQuote(u.trx, u.platform.id, quoteId, { forUpdate: true });
  if (quote?.status !== 'PENDING_AUTHORIZATION') return;
  const current = await pendingChallenge(u.trx, u.platform.id, quote.id, u.nowMs);
  if (current && current.id !== challengeId) return;
  if (current) {
    // Not lapsed yet on this platform's clock (it was moved back?): look again when it is due.
    await u.schedule(job.kind, { quoteId, challengeId }, Math.max(1, Date.parse(current.expiresAt) - u.nowMs));
    return;
  }
  await closeChallenge(u, quote.id);
  await transitionQuote(u.trx, quote.id, ['PENDING_AUTHORIZATION'], { status: 'FAILED', updated_at: u.at });
  const txn = await transactionOf(u, quote);
  const set = { status: 'FAILED', failure_reason: 'SCA_NOT_COMPLETED', updated_at: u.at };
  if (await transitionTransaction(u.trx, txn.id, ['PENDING_AUTHORIZATION'], set)) emitPayment(envOf(u), { ...txn, ...set }, 'FAILED');
};
