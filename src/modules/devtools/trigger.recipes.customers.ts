/**
 * Trigger recipes for customers and what happens to them: KYC at creation, KYB and verifications
 * (POST /verifications with the sandbox's registration-number and name suffixes), a bulk CSV import
 * (the upload itself, then its import job), and an invitation claimed.
 */
import { Readable } from 'node:stream';
import type { Unit } from '../../unit.ts';
import type { WebhookType } from '../../webhook-delivery/catalogue.ts';
import { acceptUpload } from '../bulk-import/bulk-import.service.ts';
import type { CustomerCreate } from '../customers/customers.schemas.ts';
import { createCustomer } from '../customers/customers.service.ts';
import { findInvitationByCode } from '../invitations/invitations.repo.ts';
import { claimInvitation, createInvitation } from '../invitations/invitations.service.ts';
import { createVerification } from '../kyc/verifications.service.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { ADDRESS, CURRENCY, customer, ids, oneUnit, type Recipe } from './trigger.recipes.common.ts';

function kyc(nameSuffix: string, status: string): Recipe {
  return oneUnit(`an individual customer whose fullName ends in "${nameSuffix || 'anything else'}" (KYC ${status})`, async (u) => {
    const c = await customer(u, nameSuffix);
    return { created: ids(c), resourceId: c.customerId };
  });
}

/**
 * A business customer (kybStatus UNVERIFIED) submitted for KYB at once: on a sandbox the last three
 * digits of businessInfo.registrationNumber decide, even on this minimal submission (001 PENDING
 * with a PENDING_MANUAL_REVIEW verification, 002 REJECTED, any other APPROVED).
 */
async function kybSubmitted(u: Unit, suffix: string): Promise<{ customerId: string; verificationId: string }> {
  const body = {
    customerType: 'BUSINESS',
    businessInfo: {
      legalName: 'Trigger Business Inc',
      country: 'US',
      taxId: '12-3456789',
      incorporatedOn: '2015-06-01',
      registrationNumber: `TRIGGER-${suffix}`,
    },
    address: ADDRESS,
    currencies: [CURRENCY],
  } as CustomerCreate;
  const business = await createCustomer(u, body);
  const verification = await createVerification(u, business.id);
  return { customerId: business.id, verificationId: verification.id };
}

const KYB_HOW = (suffix: string, outcome: string) =>
  `a business customer submitted for KYB (POST /verifications) with a registrationNumber ending in ${suffix}: ${outcome}`;

/** CUSTOMER.KYB_<status>: the event is about the customer. */
function kyb(suffix: string, outcome: string): Recipe {
  return oneUnit(KYB_HOW(suffix, outcome), async (u) => {
    const v = await kybSubmitted(u, suffix);
    return { created: v, resourceId: v.customerId };
  });
}

/** VERIFICATION.<status> of a KYB submission: the event is about the verification. */
function verification(suffix: string, outcome: string): Recipe {
  return oneUnit(KYB_HOW(suffix, outcome), async (u) => {
    const v = await kybSubmitted(u, suffix);
    return { created: v, resourceId: v.verificationId };
  });
}

const BULK_HEADER = 'umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country';

/**
 * A one-row CSV uploaded as POST /customers/bulk/csv receives it (the same streaming reader, job and
 * import job); the row is a valid individual, or one whose birthDate is not a date (no row imported:
 * the job FAILED).
 */
function bulkUpload(rowImports: boolean): Recipe {
  return {
    how: rowImports
      ? 'a one-row customer CSV uploaded and imported (the job COMPLETED)'
      : 'a one-row customer CSV whose only row is refused (birthDate not a date), so the job FAILED',
    clockMs: 0,
    async run(s) {
      const user = `trigger-${s.ctx.deps.ids.uuid().slice(-12)}`;
      const birthDate = rowImports ? '1990-01-15' : 'not-a-date';
      const { line1, city, state, postalCode, country } = ADDRESS;
      const row = [`$${user}@${settingsOf(s.platform).umaDomain}`, user, 'INDIVIDUAL', 'Trigger Customer', birthDate];
      const csv = `${BULK_HEADER}\n${[...row, line1, city, state, postalCode, country].join(',')}\n`;
      const { jobId } = await acceptUpload(s.ctx, s.platform, Readable.from([Buffer.from(csv)]), s.ctx.config.bulkCsvMaxBytes);
      return { created: { bulkUploadJobId: jobId }, resourceId: jobId };
    },
  };
}

export const CUSTOMER_RECIPES: Partial<Record<WebhookType, Recipe>> = {
  'CUSTOMER.KYC_APPROVED': kyc('', 'APPROVED'),
  'CUSTOMER.KYC_PENDING': kyc(' 001', 'PENDING'),
  'CUSTOMER.KYC_REJECTED': kyc(' 002', 'REJECTED'),
  'CUSTOMER.KYB_APPROVED': kyb('100', 'kybStatus APPROVED'),
  'CUSTOMER.KYB_PENDING': kyb('001', 'kybStatus PENDING'),
  'CUSTOMER.KYB_REJECTED': kyb('002', 'kybStatus REJECTED'),
  'VERIFICATION.APPROVED': verification('100', 'verification APPROVED'),
  'VERIFICATION.PENDING_MANUAL_REVIEW': verification('001', 'verification PENDING_MANUAL_REVIEW'),
  'VERIFICATION.REJECTED': verification('002', 'verification REJECTED'),
  'VERIFICATION.RESOLVE_ERRORS': oneUnit(
    'an individual customer (fullName ending in 003: kycStatus UNVERIFIED) submitted for KYC without an id or an identity ' +
      'document: the verification lists what is missing',
    async (u) => {
      const c = await customer(u, ' 003');
      const v = await createVerification(u, c.customerId);
      return { created: { ...ids(c), verificationId: v.id }, resourceId: v.id };
    },
  ),
  'BULK_UPLOAD.COMPLETED': bulkUpload(true),
  'BULK_UPLOAD.FAILED': bulkUpload(false),
  'INVITATION.CLAIMED': oneUnit('a customer invites (POST /invitations) and the invitation is claimed by $trigger-invitee', async (u) => {
    const c = await customer(u);
    const invitation = await createInvitation(u, { inviterUma: c.umaAddress });
    await claimInvitation(u, invitation.code, { inviteeUma: `$trigger-invitee@${settingsOf(u.platform).umaDomain}` });
    // The event is about the invitation row, which the wire names by its code only.
    const row = await findInvitationByCode(u.trx, u.platform.id, invitation.code);
    if (!row) throw new Error(`invitation ${invitation.code} vanished in its own unit`);
    return { created: { ...ids(c), invitationCode: invitation.code }, resourceId: row.id };
  }),
};
