/**
 * The app's background work, listed in one place: every durable job kind with its handler, and
 * every webhook reply hook. buildApp wires these; `main` (and tests that ask) start the loops.
 *
 * A job handler is `(u, job, batch)`: the job runner opens the unit of its job's platform over the
 * batch's transaction and flushes it before the commit. A reply hook here is `(u, reply)` as well:
 * `inUnit` opens the unit over the transaction that records the delivery attempt.
 */
import type { AppContext } from './context.ts';
import type { JobHandler } from './jobs/jobs.ts';
import { bulkImportJob, JOB_BULK_IMPORT } from './modules/bulk-import/bulk-import.service.ts';
import { holdExpiryJob, JOB_CARD_HOLD_EXPIRY, JOB_CARD_PULL_CONFIRM, pullConfirmJob } from './modules/cards/card-transactions.service.ts';
import { JOB_CARD_PROVISION, provisionCardJob } from './modules/cards/cards.service.ts';
import { JOB_OWNERSHIP_LIVENESS, livenessResultJob } from './modules/ownership/ownership.service.ts';
import { failPaymentJob, JOB_FAIL, JOB_RETURN, JOB_SETTLE, returnPaymentJob, settlePaymentJob } from './modules/payments/payment-engine.ts';
import { expireQuoteJob, JOB_QUOTE_EXPIRE } from './modules/payments/quotes.service.ts';
import { scaQuoteExpireJob } from './modules/payments/quote-authorize.service.ts';
import { JOB_SCA_QUOTE_EXPIRE } from './modules/payments/sca-gate.ts';
import { approvalTimeoutJob, incomingApprovalReply, JOB_APPROVAL_TIMEOUT } from './modules/payments/transactions.service.ts';
import { JOB_SCA_RESET_EXPIRE, JOB_SCA_RESET_REVIEW, scaResetExpireJob, scaResetReviewJob } from './modules/sca/sca.resets.service.ts';
import { JOB_STABLECOIN_OPERATION, operationStepJob } from './modules/stablecoins/operation-flow.ts';
import { JOB_STABLECOIN_LINK_LAPSE, linkLapseJob } from './modules/stablecoins/provider-accounts.service.ts';
import { issuanceJob, JOB_STABLECOIN_ISSUANCE } from './modules/stablecoins/stablecoins.service.ts';
import { openUnit, type Unit } from './unit.ts';
import type { ReplyHook, ReplyVerdict, WebhookReply } from './webhook-delivery/deliverer.ts';

/**
 * Job kinds whose jobs of one batch run side by side on PostgreSQL (jobs.ts `concurrentKinds`): a
 * payment's settlement touches its own transaction and quote by conditional statements, and moves
 * balances only through the batch's balance moves.
 */
export function concurrentJobKinds(): ReadonlySet<string> {
  return new Set([JOB_SETTLE]);
}

/** Every job kind this process runs, with its handler. */
export function jobHandlers(): ReadonlyMap<string, JobHandler> {
  return new Map<string, JobHandler>([
    [JOB_SETTLE, settlePaymentJob],
    [JOB_FAIL, failPaymentJob],
    [JOB_RETURN, returnPaymentJob],
    [JOB_QUOTE_EXPIRE, expireQuoteJob],
    [JOB_SCA_QUOTE_EXPIRE, scaQuoteExpireJob],
    [JOB_APPROVAL_TIMEOUT, approvalTimeoutJob],
    [JOB_BULK_IMPORT, bulkImportJob],
    [JOB_OWNERSHIP_LIVENESS, livenessResultJob],
    [JOB_CARD_PROVISION, provisionCardJob],
    [JOB_CARD_HOLD_EXPIRY, holdExpiryJob],
    [JOB_CARD_PULL_CONFIRM, pullConfirmJob],
    [JOB_SCA_RESET_REVIEW, scaResetReviewJob],
    [JOB_SCA_RESET_EXPIRE, scaResetExpireJob],
    [JOB_STABLECOIN_LINK_LAPSE, linkLapseJob],
    [JOB_STABLECOIN_ISSUANCE, issuanceJob],
    [JOB_STABLECOIN_OPERATION, operationStepJob],
  ]);
}

/** The hooks that act on receivers' answers to webhooks (INCOMING_PAYMENT.PENDING approvals). */
export function installReplyHooks(ctx: AppContext): void {
  ctx.webhooks.onReply('INCOMING_PAYMENT.PENDING', inUnit(ctx, incomingApprovalReply));
}

/**
 * A reply hook acting through a unit of work of the event's platform, over the transaction that
 * records the delivery attempt; the unit's events are written before that transaction commits.
 */
function inUnit(ctx: AppContext, hook: (u: Unit, reply: WebhookReply) => Promise<ReplyVerdict>): ReplyHook {
  return async (trx, reply) => {
    const u = openUnit(trx, ctx, reply.platform);
    const verdict = await hook(u, reply);
    await u.flush();
    return verdict;
  };
}
