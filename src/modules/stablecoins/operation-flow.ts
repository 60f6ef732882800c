/**
 * How a mint or burn moves once created: the simulated provider's timeline (stablecoins.rules.ts)
 * on the platform's clock, driven by jobs, and the one ledger entry of a completed operation.
 *
 * Each milestone of an operation's timeline has a job (all scheduled at creation, so one sandbox
 * clock advance past the end runs them all). A job brings the operation to where its timeline
 * says it stands now; a later job finding it there already does nothing. So jobs are idempotent,
 * and one that runs late (a retry) cannot strand the operation.
 *
 * Money moves only at COMPLETED, in the operation's unit together with the stablecoin's supply:
 * - mint: fiat from RAIL_CLEARING (the wire, the debited bank account) to STABLECOIN_RESERVE, and
 *   tokens from STABLECOIN_SUPPLY to RAIL_CLEARING (the issuer's external LAYER2_WALLET);
 * - burn: tokens from RAIL_CLEARING (the deposit address, the provider balance) back to
 *   STABLECOIN_SUPPLY, and fiat from STABLECOIN_RESERVE to RAIL_CLEARING (the payout).
 * FAILED and EXPIRED write nothing to the ledger; they release the operation's reservation.
 */
import type { JobHandler } from '../../jobs/jobs.ts';
import { postEntry, systemAccount, type Posting } from '../../ledger/ledger.ts';
import type { Unit } from '../../unit.ts';
import { findOperation, findStablecoin, moveOperation, settleSupply } from './stablecoins.repo.ts';
import { flowOf, PROVIDER_TRANSFER_FAILED, statusAt, TERMINAL, timeline, type Scenario } from './stablecoins.rules.ts';
import type { OperationRow, OperationStatus, StablecoinRow } from './stablecoins.tables.ts';

export const JOB_STABLECOIN_OPERATION = 'STABLECOIN_OPERATION_STEP';

/** Schedules a new operation's milestones (its row is written in the same unit). */
export async function scheduleOperation(u: Unit, op: Pick<OperationRow, 'id' | 'source_type' | 'scenario'>): Promise<void> {
  for (const m of timeline(flowOf(op.source_type), op.scenario as Scenario)) {
    await u.schedule(JOB_STABLECOIN_OPERATION, { operationId: op.id }, m.atMs);
  }
}

export const operationStepJob: JobHandler = async (u, job) => {
  const { operationId } = JSON.parse(job.payload) as { operationId: string };
  const op = await findOperation(u.trx, u.platform.id, operationId, { forUpdate: true });
  if (!op || TERMINAL.has(op.status)) return;
  const target = statusAt(flowOf(op.source_type), op.scenario as Scenario, u.nowMs - Date.parse(op.created_at));
  if (target === op.status) return;
  await moveTo(u, op, target);
};

/** Moves `op` (read under its row lock) to `target`, settling the stablecoin's supply and ledger at the end. */
async function moveTo(u: Unit, op: OperationRow, target: OperationStatus): Promise<void> {
  let status = target;
  let failureReason: string | null = null;
  if (target === 'FAILED') failureReason = PROVIDER_TRANSFER_FAILED;
  if (TERMINAL.has(target)) {
    const coin = await findStablecoin(u.trx, u.platform.id, op.stablecoin_id);
    if (!coin) throw new Error(`stablecoin ${op.stablecoin_id} of operation ${op.id} is gone`);
    const completed = target === 'COMPLETED';
    if (await settleSupply(u.trx, u.platform.id, coin.id, op.operation_type, op.amount, completed, u.at)) {
      if (completed) await postEntry(u.trx, entryOf(u, op, coin));
    } else {
      // Only reachable if the supply bounds were crossed despite the reservations: refuse, release, record why.
      if (!(await settleSupply(u.trx, u.platform.id, coin.id, op.operation_type, op.amount, false, u.at))) {
        throw new Error(`operation ${op.id} holds no reservation on stablecoin ${coin.id}`);
      }
      status = 'FAILED';
      failureReason = op.operation_type === 'MINT' ? 'SUPPLY_LIMIT_EXCEEDED' : 'INSUFFICIENT_SUPPLY';
    }
  }
  if (!(await moveOperation(u.trx, u.platform.id, op.id, op.status, { status, failure_reason: failureReason, updated_at: u.at }))) {
    throw new Error(`operation ${op.id} moved under its row lock`);
  }
}

/** The one entry of a completed operation. */
function entryOf(u: Unit, op: OperationRow, coin: StablecoinRow) {
  const p = u.platform.id;
  const at = (role: Parameters<typeof systemAccount>[1], currency: string, amount: number): Posting => ({
    accountId: systemAccount(p, role),
    currency,
    bucket: 'AVAILABLE',
    amount,
  });
  const sign = op.operation_type === 'MINT' ? 1 : -1;
  return {
    id: u.deps.ids.next('LedgerEntry'),
    platformId: p,
    kind: op.operation_type === 'MINT' ? 'STABLECOIN_MINT' : 'STABLECOIN_BURN',
    referenceId: op.id,
    at: u.at,
    postings: [
      at('RAIL_CLEARING', op.base_currency, -sign * op.fiat_amount),
      at('STABLECOIN_RESERVE', op.base_currency, sign * op.fiat_amount),
      at('STABLECOIN_SUPPLY', coin.symbol, -sign * op.amount),
      at('RAIL_CLEARING', coin.symbol, sign * op.amount),
    ],
  };
}
