/**
 * An account's postings in entry order (issue #25: the dashboard pages an internal account's
 * postings, newest first, with a cursor on (entry_id, seq)). The index on (account_id, bucket) gave
 * way to it rather than being joined by it: no query pages or filters by bucket through an index
 * (the ledger check sums every posting, the stablecoin check groups an account's few), so the ledger
 * keeps one index per posting — each payment's postings pay no more upkeep (issue #26).
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0027PostingsByAccount: Migration = {
  name: '0027_postings_by_account',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema.dropIndex('ledger_postings_account').execute();
    await db.schema.createIndex('ledger_postings_account_entry').on('ledger_postings').columns(['account_id', 'entry_id', 'seq']).execute();
  },
};
