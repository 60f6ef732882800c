/**
 * A beneficial owner on the wire. Apart from the service (which needs the customers module) so the
 * customers module can embed a business's owners (`BusinessCustomer.beneficialOwners`) without an
 * import cycle.
 */
import type { BeneficialOwnerRow } from '../../store/schema.ts';
import type { BeneficialOwnerPersonalInfo, BeneficialOwnerRole, BeneficialOwnerWire } from './beneficial-owners.schemas.ts';

export function beneficialOwnerToWire(row: BeneficialOwnerRow): BeneficialOwnerWire {
  return {
    id: row.id,
    customerId: row.customer_id,
    roles: JSON.parse(row.roles) as BeneficialOwnerRole[],
    ownershipPercentage: Number(row.ownership_percentage),
    personalInfo: JSON.parse(row.personal_info) as BeneficialOwnerPersonalInfo,
    kycStatus: row.kyc_status as BeneficialOwnerWire['kycStatus'],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
