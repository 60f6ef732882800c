/** SQL of invitations. Every query a request can reach filters on platform_id. */
import type { Kysely, Updateable } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database } from '../../store/schema.ts';
import type { InvitationRow, InvitationsTable } from './invitations.tables.ts';
import { guard } from '../../store/guard.ts';

export async function insertInvitation(db: Kysely<Database>, row: InvitationRow): Promise<void> {
  await db.insertInto('invitations').values(row).execute();
}

/** The platform's invitation with this code; `forUpdate` holds its row until the caller's transaction ends. */
export async function findInvitationByCode(
  db: Kysely<Database>,
  platformId: string,
  code: string,
  opts?: LockOptions,
): Promise<InvitationRow | undefined> {
  const q = db.selectFrom('invitations').selectAll().where('code', '=', code).where('platform_id', '=', platformId);
  return lockRows(db, q, opts).executeTakeFirst();
}

/**
 * Whether any platform holds this code. Only for drawing a fresh one: codes are unique across
 * platforms (they make the invitation's URL), and a drawn code is never shown before it is free.
 */
export async function codeInUse(db: Kysely<Database>, code: string): Promise<boolean> {
  const r = await db.selectFrom('invitations').select('id').where('code', '=', code).executeTakeFirst();
  return r !== undefined;
}

/**
 * Moves the invitation out of PENDING. The condition on the status makes a second writer a no-op
 * (false) even where the store has no row locks; the caller read the row under its lock first.
 */
export async function finishPending(
  db: Kysely<Database>,
  platformId: string,
  id: string,
  set: Updateable<InvitationsTable>,
): Promise<boolean> {
  const r = await db
    .updateTable('invitations')
    .set(set)
    .where('id', '=', id)
    .where(guard('platform_id', platformId))
    .where('status', '=', 'PENDING')
    .executeTakeFirst();
  return r.numUpdatedRows > 0n;
}
