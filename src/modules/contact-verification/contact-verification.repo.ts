/**
 * SQL of contact verification: the channel rows, and the embedded-wallet OTP credentials a contact
 * change on `PATCH /customers/{customerId}` carries along. Every query filters on platform_id.
 */
import type { Kysely } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database } from '../../store/schema.ts';
import type { AuthCredentialRow } from '../../store/schema-auth.ts';
import type { ContactChannel, ContactVerificationRow } from './contact-verification.tables.ts';

type Db = Kysely<Database>;

/** The channel rows of these customers (of this platform). */
export async function findVerifications(db: Db, platformId: string, customerIds: readonly string[]): Promise<ContactVerificationRow[]> {
  if (customerIds.length === 0) return [];
  return db
    .selectFrom('contact_verifications')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', 'in', customerIds)
    .execute();
}

/** One channel row of a customer, or undefined when that channel was never sent a code. */
export async function findVerification(
  db: Db,
  platformId: string,
  customerId: string,
  channel: ContactChannel,
  opts?: LockOptions,
): Promise<ContactVerificationRow | undefined> {
  const q = db
    .selectFrom('contact_verifications')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('customer_id', '=', customerId)
    .where('channel', '=', channel);
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Writes a channel row whole: inserted the first time, replaced after (the caller holds the customer's row lock). */
export async function saveVerification(db: Db, row: ContactVerificationRow): Promise<void> {
  const { platform_id: _p, customer_id: _c, channel: _ch, created_at: _created, ...changes } = row;
  await db
    .insertInto('contact_verifications')
    .values(row)
    .onConflict((oc) => oc.columns(['platform_id', 'customer_id', 'channel']).doUpdateSet(changes))
    .execute();
}

// ── Embedded-wallet OTP credentials (a contact change carries them along) ──────────────────────

/** The credentials of `type` on these wallet accounts (of this platform), by id. */
export async function otpCredentialsOf(
  db: Db,
  platformId: string,
  accountIds: readonly string[],
  type: 'EMAIL_OTP' | 'SMS_OTP',
): Promise<AuthCredentialRow[]> {
  if (accountIds.length === 0) return [];
  return db
    .selectFrom('auth_credentials')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('account_id', 'in', accountIds)
    .where('type', '=', type)
    .orderBy('id')
    .execute();
}

/**
 * Whether a credential of `type` on a wallet of this platform other than `exceptAccountIds` already
 * logs in with `contact` (an email compared case-insensitively).
 */
export async function otpContactTaken(
  db: Db,
  platformId: string,
  type: 'EMAIL_OTP' | 'SMS_OTP',
  contact: string,
  exceptAccountIds: readonly string[],
): Promise<boolean> {
  let q = db.selectFrom('auth_credentials').select('id').where('platform_id', '=', platformId).where('type', '=', type);
  q =
    type === 'EMAIL_OTP'
      ? q.where((eb) => eb(eb.fn('lower', ['nickname']), '=', contact.toLowerCase()))
      : q.where('nickname', '=', contact);
  if (exceptAccountIds.length > 0) q = q.where('account_id', 'not in', exceptAccountIds);
  return (await q.limit(1).executeTakeFirst()) !== undefined;
}

/** Points these credentials at a new contact (an OTP credential is named after the contact it sends codes to). */
export async function setCredentialContact(db: Db, platformId: string, ids: readonly string[], contact: string, at: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('auth_credentials')
    .set({ nickname: contact, updated_at: at })
    .where('platform_id', '=', platformId)
    .where('id', 'in', ids)
    .execute();
}
