/**
 * Same-currency transfers: transfer-out pushes from an internal account to an external account;
 * transfer-in pulls from a pull-capable external account into an internal account. The sandbox
 * outcome comes from the external account's identifier suffix; a magic-value failure is the rail's
 * answer (201 with a FAILED transaction), while a real shortfall is refused before anything moves.
 */
import { errors } from '../../http/errors.ts';
import type { TransactionRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findCustomer } from '../customers/customers.repo.ts';
import { sandboxSuffix } from '../external-accounts/external-accounts.service.ts';
import { newFundingReference } from '../internal-accounts/internal-accounts.service.ts';
import { sendingLimits } from '../exchange-rates/exchange-rates.service.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import {
  emitPayment,
  type Env,
  envOf,
  holdIncoming,
  holdOutgoing,
  requireFunds,
  scheduleOutcome,
  transactionToWire,
} from './payment-engine.ts';
import { activeInternalAccount, chooseRail, liveExternalAccount, PULLABLE_ACCOUNT_TYPES, railSelectionMode } from './parties.ts';
import type { TransactionWire, TransferIn, TransferOut } from './payments.schemas.ts';
import { expectedSettlementAt, transferScenario } from './sandbox-outcomes.ts';
import { insertTransaction } from './payments.repo.ts';

/** Transfers move one currency; a conversion goes through a quote. */
export function sameCurrency(a: string, b: string): void {
  if (a !== b) throw errors.transferCurrencyMismatch(a, b);
}

function checkLimits(env: Env, cur: string, amount: number): void {
  const { min, max } = sendingLimits(settingsOf(env.u.platform), cur);
  if (amount < min || amount > max) {
    throw errors.amountOutOfRange(`The amount ${amount} is outside ${min}..${max} ${cur}`, [
      { field: 'amount', message: `must be within ${min}..${max}` },
    ]);
  }
}

async function owner(env: Env, customerId: string | null): Promise<{ customer_id: string; platform_customer_id: string }> {
  if (!customerId) return { customer_id: env.u.platform.id, platform_customer_id: env.u.platform.id };
  const c = await findCustomer(env.u.trx, env.u.platform.id, customerId);
  return { customer_id: customerId, platform_customer_id: c?.platform_customer_id ?? customerId };
}

function baseRow(
  env: Env,
  fields: Omit<
    TransactionRow,
    | 'id'
    | 'platform_id'
    | 'status'
    | 'fees'
    | 'platform_fees'
    | 'exchange_rate'
    | 'quote_id'
    | 'description'
    | 'failure_reason'
    | 'refund'
    | 'settled_at'
    | 'receipt_delivery_confirmed_at'
    | 'created_at'
    | 'updated_at'
    | 'reference'
    | 'fee_fixed'
    | 'fee_variable_bps'
  > &
    // Optional on a row (migration 0014), but every transfer states them.
    Required<Pick<TransactionRow, 'agent_id' | 'rail_selection_mode' | 'expected_settlement_at'>>,
): TransactionRow {
  return {
    id: env.u.deps.ids.next('Transaction'),
    platform_id: env.u.platform.id,
    status: 'PENDING',
    fees: 0,
    platform_fees: 0,
    exchange_rate: '1',
    quote_id: null,
    description: null,
    failure_reason: null,
    refund: null,
    settled_at: null,
    receipt_delivery_confirmed_at: null,
    reference: newFundingReference(env.u.deps),
    created_at: env.u.at,
    updated_at: env.u.at,
    fee_fixed: null,
    fee_variable_bps: null,
    ...fields,
  };
}

/**
 * POST /transfer-out, or an agent's transfer-out action (`agentId`: the agent that started it, shown
 * as the transaction's `agentId`).
 */
export async function transferOut(u: Unit, body: TransferOut, agentId?: string): Promise<TransactionWire> {
  const env = envOf(u);
  const source = await activeInternalAccount(env, body.source.accountId, 'source.accountId');
  // An embedded wallet is self-custodial: its money leaves only on a wallet-session signature, and
  // transfer-out has no signed step, so its funds go out through a quote (signed execute).
  if (source.type === 'EMBEDDED_WALLET') {
    throw errors.invalidField('source.accountId', 'an EMBEDDED_WALLET sends through POST /quotes and a signed execute, not transfer-out');
  }
  const dest = await liveExternalAccount(env, body.destination.accountId);
  sameCurrency(source.currency, dest.currency);
  // Without an amount the whole spendable balance goes (the live CLI's "full balance").
  const amount = body.amount ?? Number(source.available);
  if (amount <= 0) throw errors.invalidField('amount', 'the source account has no spendable balance to transfer');
  checkLimits(env, source.currency, amount);
  const extra: Record<string, unknown> = {};
  if (body.remittanceInformation) extra.remittanceInformation = body.remittanceInformation;
  if (body.purposeOfPayment) extra.purposeOfPayment = body.purposeOfPayment;
  const rail = chooseRail(dest, body.destination.paymentRail, 'destination.paymentRail');
  const scenario = JSON.stringify(transferScenario(sandboxSuffix(dest), false));
  const txn = baseRow(env, {
    ...(await owner(env, source.customer_id)),
    type: 'OUTGOING',
    direction: 'DEBIT',
    kind: 'TRANSFER_OUT',
    source: JSON.stringify({ sourceType: 'ACCOUNT', accountId: source.id, currency: source.currency }),
    destination: JSON.stringify({ destinationType: 'ACCOUNT', accountId: dest.id, currency: dest.currency }),
    sender_account_id: source.id,
    receiver_account_id: dest.id,
    internal_account_id: source.id,
    sent_amount: amount,
    sent_currency: source.currency,
    received_amount: amount,
    received_currency: dest.currency,
    payment_rail: rail,
    rail_selection_mode: railSelectionMode(rail, body.destination.paymentRail),
    scenario,
    // The outcome is scheduled in this request: its delay is known now.
    expected_settlement_at: expectedSettlementAt(scenario, u.nowMs),
    agent_id: agentId ?? null,
    extra: Object.keys(extra).length ? JSON.stringify(extra) : null,
  });
  // A real shortfall is refused before anything is written (from the balance read above), and the
  // whole request rolls back; then the hold is the first write.
  requireFunds(source, amount);
  await holdOutgoing(env, txn);
  await insertTransaction(u.trx, txn);
  emitPayment(env, txn, 'PENDING');
  return transactionToWire(await scheduleOutcome(env, txn));
}

/** POST /transfer-in, or an agent's transfer-in action (`agentId`, as for transferOut). */
export async function transferIn(u: Unit, body: TransferIn, agentId?: string): Promise<TransactionWire> {
  const env = envOf(u);
  const source = await liveExternalAccount(env, body.source.accountId);
  if (!PULLABLE_ACCOUNT_TYPES.has(source.account_type)) {
    throw errors.invalidField(
      'source.accountId',
      `external account ${source.id} (${source.account_type}) cannot be pulled from; fund the internal account through its funding instructions`,
    );
  }
  const dest = await activeInternalAccount(env, body.destination.accountId, 'destination.accountId');
  sameCurrency(source.currency, dest.currency);
  if (body.amount === undefined) throw errors.invalidField('amount', 'is required for a pull');
  checkLimits(env, dest.currency, body.amount);
  const txn = baseRow(env, {
    ...(await owner(env, dest.customer_id)),
    type: 'INCOMING',
    direction: 'DEBIT',
    kind: 'TRANSFER_IN',
    source: JSON.stringify({ sourceType: 'ACCOUNT', accountId: source.id, currency: source.currency }),
    destination: JSON.stringify({ destinationType: 'ACCOUNT', accountId: dest.id, currency: dest.currency }),
    sender_account_id: source.id,
    receiver_account_id: dest.id,
    internal_account_id: dest.id,
    sent_amount: body.amount,
    sent_currency: source.currency,
    received_amount: body.amount,
    received_currency: dest.currency,
    payment_rail: 'ACH',
    rail_selection_mode: 'AUTO',
    scenario: JSON.stringify(transferScenario(sandboxSuffix(source), true)),
    // The live IncomingTransaction has no expected settlement.
    expected_settlement_at: null,
    agent_id: agentId ?? null,
    extra: null,
  });
  await insertTransaction(u.trx, txn);
  const scenario = JSON.parse(txn.scenario) as { kind: string; delayMs?: unknown };
  // A pull the bank refuses at once never credits anything; others show as pending first.
  if (!(scenario.kind === 'FAIL' && scenario.delayMs === 'now')) await holdIncoming(env, txn);
  emitPayment(env, txn, 'PENDING');
  return transactionToWire(await scheduleOutcome(env, txn));
}
