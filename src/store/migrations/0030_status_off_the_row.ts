/**
 * PostgreSQL only (issue #26): a transaction's status leaves the transactions table's indexes, so a
 * settlement — which changes only its status, settled_at and updated_at — is a HOT update: no entry
 * in any of the table's nine remaining indexes, and nothing for vacuum to clean out of them.
 *
 * Before, every settlement put a new entry into all eleven indexes (two of them hold the status),
 * and every autovacuum pass over the table read all eleven end to end; on a database of a few
 * hundred thousand payments such a pass wrote ~36 MB of full-page images in four seconds and set the
 * payments' p99 (docs/performance.md, eighth session). The status filters of the transaction list
 * and their counts (issue #8) read `transaction_statuses` instead: one narrow row per transaction
 * (platform, type, status, id) with the two indexes the table had, kept by triggers in the same
 * transaction as every INSERT, UPDATE and DELETE of a transaction — whichever code path writes it.
 *
 * Pages of `transactions` are filled to 50 % (0029 set 70 %), so that a row's settled version almost
 * always fits beside it. SQLite has no HOT updates and keeps the status in its indexes.
 */
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../row-lock.ts';
import type { Database } from '../schema.ts';
import type { Migration } from './index.ts';

export const m0030StatusOffTheRow: Migration = {
  name: '0030_status_off_the_row',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    if (!isPostgres(db as Kysely<Database>)) return;
    await sql`create table transaction_statuses (
        id text primary key,
        platform_id text not null,
        type text not null,
        status text not null
      )`.execute(db);
    await sql`insert into transaction_statuses (id, platform_id, type, status)
      select id, platform_id, type, status from transactions`.execute(db);
    await sql`create index transaction_statuses_status on transaction_statuses (platform_id, status, id)`.execute(db);
    await sql`create index transaction_statuses_type_status on transaction_statuses (platform_id, type, status, id)`.execute(db);
    await sql`create function transaction_statuses_keep() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into transaction_statuses (id, platform_id, type, status)
            values (new.id, new.platform_id, new.type, new.status);
        elsif tg_op = 'UPDATE' then
          update transaction_statuses
            set id = new.id, platform_id = new.platform_id, type = new.type, status = new.status
            where id = old.id;
        else
          delete from transaction_statuses where id = old.id;
        end if;
        return null;
      end
    $$`.execute(db);
    await sql`create trigger transaction_statuses_insert after insert on transactions
      for each row execute function transaction_statuses_keep()`.execute(db);
    await sql`create trigger transaction_statuses_update after update of id, platform_id, type, status on transactions
      for each row when ((old.id, old.platform_id, old.type, old.status) is distinct from (new.id, new.platform_id, new.type, new.status))
      execute function transaction_statuses_keep()`.execute(db);
    await sql`create trigger transaction_statuses_delete after delete on transactions
      for each row execute function transaction_statuses_keep()`.execute(db);
    await sql`drop index transactions_status`.execute(db);
    await sql`drop index transactions_type_status`.execute(db);
    await sql`alter table transactions set (fillfactor = 50)`.execute(db);
  },
};
