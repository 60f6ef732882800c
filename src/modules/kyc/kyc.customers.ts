/** Helpers the KYC module reads customers with (the customers module owns the table and `requireCustomer`). */
import type { CustomerRow } from '../../store/schema.ts';

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
