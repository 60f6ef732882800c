/**
 * Beneficial owners of BUSINESS customers. Creating one runs the sandbox's automatic KYC on the
 * person: the last 3 characters of `personalInfo.lastName` decide `kycStatus` (001 PENDING,
 * 002 REJECTED, anything else APPROVED); a PATCH that changes the last name re-runs it.
 */
import type { Kysely } from 'kysely';
import { errors, type FieldError } from '../../http/errors.ts';
import type { BeneficialOwnerRow, Database } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { requireCustomer } from '../customers/customers.service.ts';
import {
  allBeneficialOwners,
  findBeneficialOwner,
  insertBeneficialOwner,
  updateBeneficialOwner as updateRow,
} from './beneficial-owners.repo.ts';
import type {
  BeneficialOwnerCreate,
  BeneficialOwnerPersonalInfo,
  BeneficialOwnerUpdate,
  BeneficialOwnerWire,
} from './beneficial-owners.schemas.ts';
import { beneficialOwnerToWire } from './beneficial-owners.wire.ts';
import { kycStatusForName } from './kyc.customers.ts';

/** A beneficial owner of this platform, or 404 REFERENCE_NOT_FOUND. */
export async function requireBeneficialOwner(db: Kysely<Database>, platformId: string, id: string): Promise<BeneficialOwnerRow> {
  const row = await findBeneficialOwner(db, platformId, id);
  if (!row) throw errors.notFound('BeneficialOwner', id);
  return row;
}

/** Adds an owner to a BUSINESS customer (locked: its owners' shares are checked against each other). */
export async function createBeneficialOwner(u: Unit, body: BeneficialOwnerCreate): Promise<BeneficialOwnerWire> {
  const { trx, platform, at } = u;
  const customer = await requireCustomer(trx, platform.id, body.customerId, { forUpdate: true });
  if (customer.customer_type !== 'BUSINESS') {
    throw errors.invalidField('customerId', 'must be a BUSINESS customer (beneficial owners belong to businesses)');
  }
  const problems = [
    ...checkPersonalInfo(body.personalInfo, at, 'personalInfo'),
    ...(await checkOwnershipTotal(trx, platform.id, customer.id, body.ownershipPercentage, undefined)),
  ];
  if (problems.length > 0) throw errors.invalidInput(`Invalid beneficial owner: ${problems[0]!.field} ${problems[0]!.message}`, problems);
  const row: BeneficialOwnerRow = {
    id: u.deps.ids.next('BeneficialOwner'),
    platform_id: platform.id,
    customer_id: customer.id,
    roles: JSON.stringify(body.roles),
    ownership_percentage: body.ownershipPercentage,
    personal_info: JSON.stringify(body.personalInfo),
    kyc_status: kycStatusForName(body.personalInfo.lastName),
    created_at: at,
    updated_at: at,
  };
  await insertBeneficialOwner(trx, row);
  return beneficialOwnerToWire(row);
}

/** Changes the fields sent; a new last name runs the automatic KYC again. */
export async function updateBeneficialOwner(u: Unit, id: string, patch: BeneficialOwnerUpdate): Promise<BeneficialOwnerWire> {
  const { trx, platform, at } = u;
  const found = await requireBeneficialOwner(trx, platform.id, id);
  await requireCustomer(trx, platform.id, found.customer_id, { forUpdate: true });
  // Read again under the customer's lock: a concurrent PATCH may have committed meanwhile.
  const row = await requireBeneficialOwner(trx, platform.id, id);
  const before = beneficialOwnerToWire(row);
  const info: BeneficialOwnerPersonalInfo = { ...before.personalInfo };
  if (patch.personalInfo) {
    for (const [k, v] of Object.entries(patch.personalInfo)) {
      if (v !== undefined) (info as Record<string, unknown>)[k] = v;
    }
  }
  const problems = [
    ...(patch.personalInfo ? checkPersonalInfo(info, at, 'personalInfo') : []),
    ...(patch.ownershipPercentage !== undefined
      ? await checkOwnershipTotal(trx, platform.id, row.customer_id, patch.ownershipPercentage, row.id)
      : []),
  ];
  if (problems.length > 0) throw errors.invalidInput(`Invalid beneficial owner: ${problems[0]!.field} ${problems[0]!.message}`, problems);

  const next: BeneficialOwnerRow = {
    ...row,
    roles: patch.roles !== undefined ? JSON.stringify(patch.roles) : row.roles,
    ownership_percentage: patch.ownershipPercentage ?? Number(row.ownership_percentage),
    personal_info: JSON.stringify(info),
    // A new last name is a new identity to check: the automatic KYC runs again.
    kyc_status: info.lastName !== before.personalInfo.lastName ? kycStatusForName(info.lastName) : row.kyc_status,
  };
  const changed =
    next.roles !== row.roles || next.ownership_percentage !== Number(row.ownership_percentage) || next.personal_info !== row.personal_info;
  if (!changed) return before;
  next.updated_at = at;
  await updateRow(trx, platform.id, row.id, {
    roles: next.roles,
    ownership_percentage: next.ownership_percentage,
    personal_info: next.personal_info,
    kyc_status: next.kyc_status,
    updated_at: at,
  });
  return beneficialOwnerToWire(next);
}

/** Checks the schema cannot express: a birth date in the past. */
function checkPersonalInfo(info: BeneficialOwnerPersonalInfo, nowIso: string, base: string): FieldError[] {
  const out: FieldError[] = [];
  if (info.birthDate > nowIso.slice(0, 10)) out.push({ field: `${base}.birthDate`, message: 'must not be in the future' });
  return out;
}

/** The ownership percentages of one business's owners add up to at most 100. */
async function checkOwnershipTotal(
  trx: Kysely<Database>,
  platformId: string,
  customerId: string,
  percentage: number,
  exceptId: string | undefined,
): Promise<FieldError[]> {
  const others = (await allBeneficialOwners(trx, platformId, customerId)).filter((o) => o.id !== exceptId);
  const total = others.reduce((sum, o) => sum + Number(o.ownership_percentage), 0) + percentage;
  if (total <= 100) return [];
  return [
    {
      field: 'ownershipPercentage',
      message: `would bring the business's total ownership to ${total}%; the owners' shares add up to at most 100`,
    },
  ];
}
