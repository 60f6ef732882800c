/**
 * The SQL of the payment hot path (creating and settling a payment), compiled once per store and
 * re-run with new arguments (see store/prepared.ts). Every statement filters on the platform or
 * on an id that was found through it.
 */
import type { TransactionRow } from '../../store/schema.ts';
import { prepared, preparedInsert, type Prepared } from '../../store/prepared.ts';

export const selectInternalAccount = prepared((db, a: { platformId: string; id: string }) =>
  db.selectFrom('internal_accounts').selectAll().where('platform_id', '=', a.platformId).where('id', '=', a.id),
);

/** A live (not deleted) external account, customer-owned or the platform's. */
export const selectLiveExternalAccount = prepared((db, a: { platformId: string; id: string }) =>
  db.selectFrom('external_accounts').selectAll().where('platform_id', '=', a.platformId).where('id', '=', a.id).where('deleted_at', 'is', null),
);

export const selectTransaction = prepared((db, a: { platformId: string; id: string }) =>
  db.selectFrom('transactions').selectAll().where('platform_id', '=', a.platformId).where('id', '=', a.id),
);

export const insertTransactionRow = preparedInsert<'transactions', TransactionRow>('transactions', {
  id: true, platform_id: true, customer_id: true, platform_customer_id: true, type: true, direction: true, status: true, kind: true,
  source: true, destination: true, sender_account_id: true, receiver_account_id: true, internal_account_id: true,
  sent_amount: true, sent_currency: true, received_amount: true, received_currency: true, fees: true, platform_fees: true,
  exchange_rate: true, quote_id: true, description: true, reference: true, payment_rail: true, scenario: true,
  failure_reason: true, refund: true, settled_at: true, receipt_delivery_confirmed_at: true, extra: true,
  created_at: true, updated_at: true,
});

export const insertQuoteRow = preparedInsert('quotes', {
  id: true, platform_id: true, customer_id: true, status: true, transaction_id: true, source: true, destination: true,
  sending_currency: true, receiving_currency: true, locked_side: true, locked_amount: true, total_sending_amount: true,
  total_receiving_amount: true, exchange_rate: true, fees_included: true, platform_fees_included: true, description: true,
  payment_instructions: true, funding_reference: true, expires_at: true, created_at: true, updated_at: true,
});

const settleStatements = new Map<number, Prepared<{ id: string; at: string } & Record<string, unknown>, unknown>>();

/**
 * Compare-and-set of an in-flight payment to COMPLETED (arguments `from0`…: the statuses it may
 * be in). Changes one row, or none when another writer moved it first.
 */
export function completeTransaction(fromCount: number): Prepared<{ id: string; at: string } & Record<string, unknown>, unknown> {
  let stmt = settleStatements.get(fromCount);
  if (!stmt) {
    stmt = prepared((db, a: { id: string; at: string } & Record<string, unknown>) =>
      db
        .updateTable('transactions')
        .set({ status: 'COMPLETED', settled_at: a.at, updated_at: a.at })
        .where('id', '=', a.id)
        .where('status', 'in', Array.from({ length: fromCount }, (_, i) => a[`from${i}`] as string)),
    );
    settleStatements.set(fromCount, stmt);
  }
  return stmt;
}

/**
 * The settlement's compare-and-set, returning the completed row: a payment is in flight while
 * PROCESSING, or PENDING unless it is a quote's (whose PENDING means not executed yet).
 */
export const completeInFlight = prepared((db, a: { platformId: string; id: string; at: string }) =>
  db
    .updateTable('transactions')
    .set({ status: 'COMPLETED', settled_at: a.at, updated_at: a.at })
    .where('platform_id', '=', a.platformId)
    .where('id', '=', a.id)
    .where((eb) => eb.or([eb('status', '=', 'PROCESSING'), eb.and([eb('status', '=', 'PENDING'), eb('kind', '!=', 'QUOTE')])]))
    .returningAll(),
);

/** Compare-and-set of a quote still PENDING or PROCESSING to its payment's outcome. */
export const finishQuote = prepared((db, a: { id: string; status: string; at: string }) =>
  db.updateTable('quotes').set({ status: a.status, updated_at: a.at }).where('id', '=', a.id).where('status', 'in', ['PENDING', 'PROCESSING']),
);
