/** Internal accounts: creation (with the platform or a customer) and the wire shape. */
import type { Static } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.ts';
import { CRYPTO_CODES, currency } from '../../lib/currencies.ts';
import type { Database, InternalAccountRow } from '../../store/schema.ts';
import { fundingInstructions } from './funding.ts';
import type { InternalAccountSchema } from './internal-accounts.schemas.ts';
import { insertInternalAccount } from './internal-accounts.repo.ts';

export type InternalAccountType = 'INTERNAL_FIAT' | 'INTERNAL_CRYPTO' | 'EMBEDDED_WALLET';

export type InternalAccountWire = Static<typeof InternalAccountSchema>;

/** The account type Corridor gives a holding account in this currency. */
export function holdingTypeFor(code: string): InternalAccountType {
  return CRYPTO_CODES.has(code) ? 'INTERNAL_CRYPTO' : 'INTERNAL_FIAT';
}

const REF_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A memo reference such as `CRD-7KQ2M9XW4P`: unambiguous characters, 10 of them. */
export function newFundingReference(deps: Deps): string {
  const bytes = deps.rng.bytes(10);
  let s = '';
  for (const b of bytes) s += REF_ALPHABET[b % REF_ALPHABET.length];
  return `CRD-${s}`;
}

export async function createInternalAccount(
  db: Kysely<Database>,
  deps: Deps,
  a: { platformId: string; customerId: string | null; type: InternalAccountType; currency: string; at: string },
): Promise<InternalAccountRow> {
  const row: InternalAccountRow = {
    id: deps.ids.next('InternalAccount'),
    platform_id: a.platformId,
    customer_id: a.customerId,
    type: a.type,
    status: 'ACTIVE',
    currency: a.currency,
    available: 0,
    pending: 0,
    funding_reference: newFundingReference(deps),
    private_enabled: a.type === 'EMBEDDED_WALLET' ? 0 : null,
    created_at: a.at,
    updated_at: a.at,
  };
  await insertInternalAccount(db, row);
  return row;
}

/**
 * The API shape. `withInstructions` false gives the empty instruction list that events carry.
 */
export function internalAccountToWire(row: InternalAccountRow, holderName: string, withInstructions = true): InternalAccountWire {
  const cur = currency(row.currency);
  const available = Number(row.available);
  const wire: InternalAccountWire = {
    id: row.id,
    type: row.type as InternalAccountWire['type'],
    status: row.status as InternalAccountWire['status'],
    balance: { amount: available, currency: cur },
    totalBalance: { amount: available + Number(row.pending), currency: cur },
    fundingPaymentInstructions: withInstructions ? fundingInstructions(row, holderName, row.customer_id === null) : [],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.customer_id) wire.customerId = row.customer_id;
  if (row.private_enabled !== null) wire.privateEnabled = row.private_enabled === 1;
  return wire;
}
