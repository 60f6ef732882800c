/**
 * SQL of embedded-wallet auth: credentials, sessions, pending requests (signed retries, OTP
 * issuances, passkey challenges), rate-limit attempts, the per-platform wallet key, wallet recovery
 * phrases, and the wallet account reads and writes the module does. Functions take the unit's
 * transaction (`u.trx`); a read its caller will write back takes `{ forUpdate: true }`.
 * Sealing and opening of secret columns stays with the callers (they hold `u.app.secrets`).
 */
import type { Kysely } from 'kysely';
import { lockRows, type LockOptions } from '../../store/row-lock.ts';
import type { Database, InternalAccountRow } from '../../store/schema.ts';
import type { AuthCredentialRow, AuthRequestRow, AuthSessionRow } from '../../store/schema-auth.ts';
import { guard } from '../../store/guard.ts';

type Db = Kysely<Database>;

// ── Wallet accounts ─────────────────────────────────────────────────────────────────────────────

/** The platform's internal account `id` (of any type), or undefined. */
export async function findInternalAccount(
  db: Db,
  platformId: string,
  id: string,
  opts?: LockOptions,
): Promise<InternalAccountRow | undefined> {
  const q = db.selectFrom('internal_accounts').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

export async function setAccountPrivacy(db: Db, accountId: string, privateEnabled: 0 | 1, at: string): Promise<void> {
  await db.updateTable('internal_accounts').set({ private_enabled: privateEnabled, updated_at: at }).where('id', '=', accountId).execute();
}

/** A customer's `data` JSON (contact details live there), or undefined. */
export async function findCustomerData(db: Db, platformId: string, customerId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('customers')
    .select('data')
    .where('id', '=', customerId)
    .where(guard('platform_id', platformId))
    .executeTakeFirst();
  return row?.data;
}

// ── Credentials ─────────────────────────────────────────────────────────────────────────────────

export async function findCredential(db: Db, platformId: string, id: string, opts?: LockOptions): Promise<AuthCredentialRow | undefined> {
  const q = db.selectFrom('auth_credentials').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

export async function listAccountCredentials(db: Db, platformId: string, accountId: string): Promise<AuthCredentialRow[]> {
  return db
    .selectFrom('auth_credentials')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
}

/** Whether the account holds a credential with this unique key (`EMAIL_OTP`, `PASSKEY:<id>`, …). */
export async function hasCredentialKey(db: Db, accountId: string, uniqueKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('auth_credentials')
    .select('id')
    .where('account_id', '=', accountId)
    .where('unique_key', '=', uniqueKey)
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether the account holds any credential, other than `exceptId` when given. */
export async function hasCredential(db: Db, accountId: string, exceptId?: string): Promise<boolean> {
  let q = db.selectFrom('auth_credentials').select('id').where('account_id', '=', accountId);
  if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
  return (await q.limit(1).executeTakeFirst()) !== undefined;
}

/**
 * Inserts a credential; false when the account already has one with its unique key (the unique
 * index settles two racing adds of the same key: one wins).
 */
export async function insertCredential(db: Db, row: AuthCredentialRow): Promise<boolean> {
  const inserted = await db
    .insertInto('auth_credentials')
    .values(row)
    .onConflict((oc) => oc.columns(['account_id', 'unique_key']).doNothing())
    .executeTakeFirst();
  return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function touchCredential(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('auth_credentials').set({ updated_at: at }).where('id', '=', id).execute();
}

export async function setPasskeyCounter(db: Db, id: string, counter: number, at: string): Promise<void> {
  await db.updateTable('auth_credentials').set({ webauthn_counter: counter, updated_at: at }).where('id', '=', id).execute();
}

export async function deleteCredential(db: Db, id: string): Promise<void> {
  await db.deleteFrom('auth_credentials').where('id', '=', id).execute();
}

// ── Sessions ────────────────────────────────────────────────────────────────────────────────────

export async function insertSession(db: Db, row: AuthSessionRow): Promise<void> {
  await db.insertInto('auth_sessions').values(row).execute();
}

/** The session `id` of the platform in any state (revoked, expired), or undefined. */
export async function findSession(db: Db, platformId: string, id: string, opts?: LockOptions): Promise<AuthSessionRow | undefined> {
  const q = db.selectFrom('auth_sessions').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

/** A session with the type, nickname and passkey id of the credential that issued it. */
export type SessionWithCredential = AuthSessionRow & { cred_type: string; cred_nickname: string; cred_webauthn_id: string | null };

/** The account's sessions unrevoked and unexpired at `at`, with their credentials. */
export async function listActiveSessions(db: Db, platformId: string, accountId: string, at: string): Promise<SessionWithCredential[]> {
  return db
    .selectFrom('auth_sessions as s')
    .innerJoin('auth_credentials as c', 'c.id', 's.credential_id')
    .selectAll('s')
    .select(['c.type as cred_type', 'c.nickname as cred_nickname', 'c.webauthn_id as cred_webauthn_id'])
    .where('s.platform_id', '=', platformId)
    .where('s.account_id', '=', accountId)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', at)
    .orderBy('s.id')
    .execute();
}

/** The account's sessions unrevoked and unexpired at `at` whose key is `publicKey` (who may stamp). */
export async function activeSessionsWithKey(
  db: Db,
  platformId: string,
  accountId: string,
  publicKey: string,
  at: string,
): Promise<Pick<AuthSessionRow, 'id' | 'credential_id'>[]> {
  return db
    .selectFrom('auth_sessions')
    .select(['id', 'credential_id'])
    .where('platform_id', '=', platformId)
    .where('account_id', '=', accountId)
    .where((eb) => eb.or([eb('public_key', '=', publicKey), eb('client_public_key', '=', publicKey)]))
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .execute();
}

export async function revokeSessionRow(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('auth_sessions').set({ revoked_at: at, updated_at: at }).where('id', '=', id).execute();
}

/** Ends every unrevoked session a credential issued. */
export async function revokeCredentialSessions(db: Db, credentialId: string, at: string): Promise<void> {
  await db
    .updateTable('auth_sessions')
    .set({ revoked_at: at, updated_at: at })
    .where('credential_id', '=', credentialId)
    .where('revoked_at', 'is', null)
    .execute();
}

// ── Pending requests ────────────────────────────────────────────────────────────────────────────

export async function insertRequest(db: Db, row: AuthRequestRow): Promise<void> {
  await db.insertInto('auth_requests').values(row).execute();
}

/** Inserts a request unless its id exists; false when it did (a single-use marker already taken). */
export async function insertRequestOnce(db: Db, row: AuthRequestRow): Promise<boolean> {
  const marked = await db
    .insertInto('auth_requests')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  return Number(marked.numInsertedOrUpdatedRows ?? 0n) === 1;
}

/** Whether a request with this id exists (of any platform: marker ids are platform-specific hashes). */
export async function requestExists(db: Db, id: string): Promise<boolean> {
  return (await db.selectFrom('auth_requests').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

export async function findRequest(db: Db, platformId: string, id: string, opts?: LockOptions): Promise<AuthRequestRow | undefined> {
  const q = db.selectFrom('auth_requests').selectAll().where('id', '=', id).where(guard('platform_id', platformId));
  return lockRows(db, q, opts).executeTakeFirst();
}

/** Marks a request used at `at`; false when it already was (exactly one caller can do this). */
export async function consumeRequest(db: Db, id: string, at: string): Promise<boolean> {
  const done = await db
    .updateTable('auth_requests')
    .set({ consumed_at: at })
    .where('id', '=', id)
    .where('consumed_at', 'is', null)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) === 1;
}

/** Marks every unused request of `operation` on `targetId` used at `at`. */
export async function consumeOpenRequests(db: Db, targetId: string, operation: string, at: string): Promise<void> {
  await db
    .updateTable('auth_requests')
    .set({ consumed_at: at })
    .where('target_id', '=', targetId)
    .where('operation', '=', operation)
    .where('consumed_at', 'is', null)
    .execute();
}

/** The newest request of `operation` on `targetId` unused and unexpired at `at`, or undefined. */
export async function latestOpenRequest(db: Db, targetId: string, operation: string, at: string): Promise<AuthRequestRow | undefined> {
  return db
    .selectFrom('auth_requests')
    .selectAll()
    .where('target_id', '=', targetId)
    .where('operation', '=', operation)
    .where('consumed_at', 'is', null)
    .where('expires_at', '>', at)
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

// ── Rate-limit attempts ─────────────────────────────────────────────────────────────────────────

/** The times (ms, newest first) of at most `max` attempts of `kind` on a credential after `sinceMs`. */
export async function recentAttempts(db: Db, credentialId: string, kind: string, sinceMs: number, max: number): Promise<number[]> {
  const rows = await db
    .selectFrom('auth_attempts')
    .select('at_ms')
    .where('credential_id', '=', credentialId)
    .where('kind', '=', kind)
    .where('at_ms', '>', sinceMs)
    .orderBy('at_ms', 'desc')
    .limit(max)
    .execute();
  return rows.map((r) => Number(r.at_ms));
}

export async function insertAttempt(
  db: Db,
  row: { id: string; platform_id: string; credential_id: string; kind: string; at_ms: number },
): Promise<void> {
  await db.insertInto('auth_attempts').values(row).execute();
}

// ── Wallet keys and recovery phrases (sealed values; the callers seal and open them) ────────────

export async function findWalletKey(db: Db, platformId: string): Promise<{ private_key_pem: string; public_key_hex: string } | undefined> {
  return db
    .selectFrom('wallet_keys')
    .select(['private_key_pem', 'public_key_hex'])
    .where('platform_id', '=', platformId)
    .executeTakeFirst();
}

/** Stores a platform's wallet key unless it has one (two racing first uses: the first insert wins). */
export async function insertWalletKey(
  db: Db,
  row: { platform_id: string; private_key_pem: string; public_key_hex: string; created_at: string },
): Promise<void> {
  await db
    .insertInto('wallet_keys')
    .values(row)
    .onConflict((oc) => oc.column('platform_id').doNothing())
    .execute();
}

export async function findWalletMnemonic(db: Db, accountId: string): Promise<string | undefined> {
  return (await db.selectFrom('wallet_secrets').select('mnemonic').where('account_id', '=', accountId).executeTakeFirst())?.mnemonic;
}

/** Stores a wallet's sealed phrase unless it has one (two racing first exports: the first insert wins). */
export async function insertWalletMnemonic(db: Db, row: { account_id: string; platform_id: string; mnemonic: string }): Promise<void> {
  await db
    .insertInto('wallet_secrets')
    .values(row)
    .onConflict((oc) => oc.column('account_id').doNothing())
    .execute();
}
