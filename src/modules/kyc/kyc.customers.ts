/** How the KYC module reads the customers it works on (the customers module owns the table). */
import type { Kysely } from 'kysely';
import { errors } from '../../http/errors.ts';
import type { StoreKind } from '../../store/db.ts';
import type { CustomerRow, Database } from '../../store/schema.ts';
import { findCustomer } from '../customers/customers.repo.ts';

/**
 * A customer of this platform that may still change: unknown → 404 USER_NOT_FOUND, deleted → 410.
 * With `lock` (PostgreSQL, inside a transaction) the row stays locked until commit, which
 * serialises KYC writes on one customer across processes (SQLite transactions are serial anyway).
 */
export async function requireLiveCustomer(db: Kysely<Database>, platformId: string, id: string, lock?: StoreKind): Promise<CustomerRow> {
  await lockCustomer(db, platformId, id, lock);
  const row = await findCustomer(db, platformId, id);
  if (!row) throw errors.customerNotFound(id);
  if (row.deleted_at !== null) throw errors.customerDeleted(id);
  return row;
}

/** On PostgreSQL inside a transaction: locks the customer's row until commit (no-op elsewhere). */
export async function lockCustomer(db: Kysely<Database>, platformId: string, id: string, kind: StoreKind | undefined): Promise<void> {
  if (kind !== 'postgres') return;
  await db.selectFrom('customers').select('id').where('platform_id', '=', platformId).where('id', '=', id).forUpdate().execute();
}

/** The customer's type-specific fields (`data` JSON); an unreadable value counts as empty. */
export function customerData(row: CustomerRow): Record<string, unknown> {
  try {
    const v = JSON.parse(row.data) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The last `n` characters of a string (the sandbox's magic suffix), or '' when absent. */
export function suffixOf(v: unknown, n = 3): string {
  return typeof v === 'string' ? v.slice(-n) : '';
}

/** Sandbox KYC rule for a person by a name's last 3 characters: 001 PENDING, 002 REJECTED, else APPROVED. */
export function kycStatusForName(name: string): 'PENDING' | 'REJECTED' | 'APPROVED' {
  const s = suffixOf(name);
  if (s === '001') return 'PENDING';
  if (s === '002') return 'REJECTED';
  return 'APPROVED';
}
