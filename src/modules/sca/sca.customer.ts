/**
 * Who SCA applies to: a customer whose address country (individual and business alike: the
 * customer's `address.country`) is in the European Economic Area — the EU's 27 members and
 * Iceland, Liechtenstein and Norway. Every other customer is not an SCA customer: every SCA
 * operation answers 409 CONFLICT for it.
 */
import type { Kysely } from 'kysely';
import type { LockOptions } from '../../store/row-lock.ts';
import type { CustomerRow, Database } from '../../store/schema.ts';
import { requireCustomer } from '../customers/customers.service.ts';
import { scaErrors } from './sca.errors.ts';

const EEA = new Set('AT BE BG HR CY CZ DK EE FI FR DE GR HU IE IT LV LT LU MT NL PL PT RO SK SI ES SE IS LI NO'.split(' '));

/** The country of the customer's address, when it has one. */
export function addressCountry(row: Pick<CustomerRow, 'data'>): string | undefined {
  const data = JSON.parse(row.data) as { address?: { country?: string } };
  return data.address?.country;
}

/** Whether SCA applies to this (non-deleted) customer row. */
export function isScaCustomerRow(row: CustomerRow): boolean {
  const country = addressCountry(row);
  return row.deleted_at === null && country !== undefined && EEA.has(country);
}

/**
 * The customer an SCA operation acts on: unknown or another platform's → 404 USER_NOT_FOUND,
 * deleted → 410 CUSTOMER_DELETED, not an SCA customer → 409 CONFLICT. With `{ forUpdate: true }`
 * its row stays locked until the transaction ends, so the customer's SCA writes run one after the other.
 */
export async function requireScaCustomer(
  db: Kysely<Database>,
  platformId: string,
  customerId: string,
  opts?: LockOptions,
): Promise<CustomerRow> {
  const row = await requireCustomer(db, platformId, customerId, opts);
  if (!isScaCustomerRow(row)) throw scaErrors.notScaCustomer(row.id);
  return row;
}

/** The customer's phone number (E.164) as its data holds it. */
export function customerPhone(row: Pick<CustomerRow, 'data'>): string | undefined {
  return (JSON.parse(row.data) as { phoneNumber?: string }).phoneNumber;
}
