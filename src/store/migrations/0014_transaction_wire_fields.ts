/**
 * Wire fidelity (issue #21): what a transaction and a quote must remember to answer the live API's
 * optional fields, each a nullable column so rows written before it read as "not known":
 * - transactions.agent_id: the agent whose action started the payment (`agentId`);
 * - transactions.rail_selection_mode: MANUAL when the request named the rail, AUTO otherwise (`railSelectionMode`);
 * - transactions.expected_settlement_at: when the delayed sandbox outcome is due (`expectedSettlementAt`,
 *   and `settlementTimelineSeconds` from it and `createdAt`);
 * - transactions and quotes fee_fixed, fee_variable_bps: the fee terms a quote was priced with (`rateDetails`).
 * One column per statement: SQLite's ALTER TABLE adds one at a time.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0014TransactionWireFields: Migration = {
  name: '0014_transaction_wire_fields',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema.alterTable('transactions').addColumn('agent_id', 'text').execute();
    await db.schema.alterTable('transactions').addColumn('rail_selection_mode', 'text').execute();
    await db.schema.alterTable('transactions').addColumn('expected_settlement_at', 'text').execute();
    await db.schema.alterTable('transactions').addColumn('fee_fixed', 'bigint').execute();
    await db.schema.alterTable('transactions').addColumn('fee_variable_bps', 'integer').execute();
    await db.schema.alterTable('quotes').addColumn('fee_fixed', 'bigint').execute();
    await db.schema.alterTable('quotes').addColumn('fee_variable_bps', 'integer').execute();
  },
};
