/**
 * KYC/KYB submissions. Every `POST /verifications` creates a new Verification:
 *
 * 1. A customer already APPROVED or REJECTED cannot be submitted again (400).
 * 2. Sandbox KYB magic values (spec §4.12): on a SANDBOX platform a business whose
 *    businessInfo.registrationNumber ends in 3 digits is decided by them alone, whatever else the
 *    submission lacks (the spec's minimal submission is enough): 001 → PENDING_MANUAL_REVIEW (kybStatus
 *    PENDING), 002 → REJECTED, any other 3 digits → APPROVED. Without such an ending (or on PRODUCTION)
 *    the completeness checks below run first.
 * 3. Completeness: every missing item is one VerificationError and the status is RESOLVE_ERRORS
 *    (the customer's status does not change). Fix the data (PATCH the customer, add or PATCH
 *    beneficial owners, upload documents) and POST again.
 *    - INDIVIDUAL: fullName, birthDate, nationality, address (line1, city, postalCode, country),
 *      idType, identifier, and an identity document (PASSPORT, DRIVERS_LICENSE or NATIONAL_ID).
 *    - BUSINESS: businessInfo legalName, country, incorporatedOn, taxId, countriesOfOperation;
 *      address (line1, city, postalCode, country); a legal-presence, an ownership-structure and a
 *      proof-of-address document; at least one beneficial owner and a CONTROL_PERSON among them;
 *      each owner's personal info complete (US persons identified by SSN or ITIN) and, for non-US
 *      owners, a passport plus one more identity document.
 * 4. Outcome once complete (magic values):
 *    - BUSINESS, last 3 characters of businessInfo.registrationNumber: 001 → PENDING_MANUAL_REVIEW
 *      (kybStatus PENDING), 002 → REJECTED, anything else → APPROVED.
 *    - INDIVIDUAL, last 3 characters of fullName: 001 → PENDING_MANUAL_REVIEW (kycStatus PENDING),
 *      002 → REJECTED, 003 → RESOLVE_ERRORS with POOR_QUALITY_DOCUMENT on the identity document,
 *      anything else → APPROVED.
 * A verification past RESOLVE_ERRORS marks the documents it used as submitted (no longer deletable).
 * Events, in the same transaction: VERIFICATION.<status> for the new verification, and CUSTOMER.KYB_* /
 * CUSTOMER.KYC_* when the customer's status changes.
 */
import type { Kysely } from 'kysely';
import { errors } from '../../http/errors.ts';
import type { BeneficialOwnerRow, CustomerRow, Database, DocumentRow, VerificationRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { requireCustomer, setCustomerVerificationStatus } from '../customers/customers.service.ts';
import { allBeneficialOwners } from './beneficial-owners.repo.ts';
import { documentsOfCustomer, markSubmitted } from './documents.repo.ts';
import type { DocumentType } from './documents.schemas.ts';
import { customerData, suffixOf } from './kyc.customers.ts';
import { findVerification, insertVerification } from './verifications.repo.ts';
import type { VerificationErrorWire, VerificationStatus, VerificationWire } from './verifications.schemas.ts';

type DocumentRequirement =
  | 'MISSING_IDENTITY_DOCUMENT'
  | 'MISSING_LEGAL_PRESENCE_DOCUMENT'
  | 'MISSING_CONTROL_STRUCTURE_DOCUMENT'
  | 'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT'
  | 'MISSING_PROOF_OF_ADDRESS_DOCUMENT';

/** Which document types satisfy each document requirement (the live API's table). */
export const ACCEPTED_DOCUMENT_TYPES: Record<DocumentRequirement, DocumentType[]> = {
  MISSING_IDENTITY_DOCUMENT: ['PASSPORT', 'DRIVERS_LICENSE', 'NATIONAL_ID'],
  MISSING_LEGAL_PRESENCE_DOCUMENT: [
    'CERTIFICATE_OF_INCORPORATION',
    'ARTICLES_OF_INCORPORATION',
    'ARTICLES_OF_ASSOCIATION',
    'STATE_REGISTRY_EXCERPT',
  ],
  MISSING_CONTROL_STRUCTURE_DOCUMENT: ['DIRECTOR_REGISTRY', 'TRUST_AGREEMENT', 'STATE_COMPANY_REGISTRY', 'PARTNERSHIP_CONTROL_AGREEMENT'],
  MISSING_OWNERSHIP_STRUCTURE_DOCUMENT: ['SHAREHOLDER_REGISTER', 'TRUST_AGREEMENT', 'PARTNERSHIP_AGREEMENT'],
  MISSING_PROOF_OF_ADDRESS_DOCUMENT: ['UTILITY_BILL', 'RENT_OR_LEASE_AGREEMENT', 'ELECTRICITY_BILL', 'BANK_STATEMENT', 'TAX_RETURN'],
};

/** A required field: its path inside the resource and a human name. */
type FieldRequirement = readonly [path: string, label: string];

const ADDRESS_FIELDS: FieldRequirement[] = [
  ['address.line1', 'address line 1'],
  ['address.city', 'address city'],
  ['address.postalCode', 'address postal code'],
  ['address.country', 'address country'],
];

const INDIVIDUAL_FIELDS: FieldRequirement[] = [
  ['fullName', 'Full name'],
  ['birthDate', 'Date of birth'],
  ['nationality', 'Nationality'],
  ...ADDRESS_FIELDS.map(([p, l]) => [p, `Residential ${l}`] as const),
  ['idType', 'ID type (SSN or ITIN)'],
  ['identifier', 'ID number'],
];

const BUSINESS_FIELDS: FieldRequirement[] = [
  ['businessInfo.legalName', 'Legal name'],
  ['businessInfo.country', 'Country of incorporation'],
  ['businessInfo.incorporatedOn', 'Date of incorporation'],
  ['businessInfo.taxId', 'Tax identification number'],
  ['businessInfo.countriesOfOperation', 'Countries of operation'],
  ...ADDRESS_FIELDS.map(([p, l]) => [p, `Business ${l}`] as const),
];

const OWNER_FIELDS: FieldRequirement[] = [
  ['firstName', 'First name'],
  ['lastName', 'Last name'],
  ['birthDate', 'Date of birth'],
  ['nationality', 'Nationality'],
  ...ADDRESS_FIELDS.map(([p, l]) => [p, `Residential ${l}`] as const),
  ['idType', 'ID type'],
  ['identifier', 'ID number'],
];

const BUSINESS_DOCUMENTS: { type: DocumentRequirement; reason: string }[] = [
  {
    type: 'MISSING_LEGAL_PRESENCE_DOCUMENT',
    reason:
      'A company formation document (certificate or articles of incorporation, articles of association or a state registry excerpt) is required',
  },
  {
    type: 'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT',
    reason: 'Proof of the ownership structure (shareholder register, trust or partnership agreement) is required',
  },
  { type: 'MISSING_PROOF_OF_ADDRESS_DOCUMENT', reason: 'Proof of the business address dated within the last 3 months is required' },
];

function valueAt(obj: Record<string, unknown>, path: string): unknown {
  let cur: unknown = obj;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

function isMissing(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);
}

function missingFields(
  resourceId: string,
  obj: Record<string, unknown>,
  reqs: FieldRequirement[],
  prefix: string,
  whose: string,
): VerificationErrorWire[] {
  return reqs
    .filter(([path]) => isMissing(valueAt(obj, path)))
    .map(([path, label]) => ({
      resourceId,
      type: 'MISSING_FIELD' as const,
      field: `${prefix}${path}`,
      reason: `${label} is required${whose}`,
    }));
}

function missingDocument(
  resourceId: string,
  type: DocumentRequirement,
  reason: string,
  accepted = ACCEPTED_DOCUMENT_TYPES[type],
): VerificationErrorWire {
  return { resourceId, type, acceptedDocumentTypes: accepted, reason };
}

function hasDocument(docs: DocumentRow[], holder: string, accepted: readonly string[]): boolean {
  return docs.some((d) => d.document_holder === holder && accepted.includes(d.document_type));
}

/** Everything an individual still lacks. */
function individualErrors(customer: CustomerRow, docs: DocumentRow[]): VerificationErrorWire[] {
  const out = missingFields(customer.id, customerData(customer), INDIVIDUAL_FIELDS, 'customer.', '');
  if (!hasDocument(docs, customer.id, ACCEPTED_DOCUMENT_TYPES.MISSING_IDENTITY_DOCUMENT)) {
    out.push(
      missingDocument(
        customer.id,
        'MISSING_IDENTITY_DOCUMENT',
        "An identity document (passport, driver's license or national id) is required",
      ),
    );
  }
  return out;
}

/** Everything a business (and its owners) still lacks. */
function businessErrors(customer: CustomerRow, owners: BeneficialOwnerRow[], docs: DocumentRow[]): VerificationErrorWire[] {
  const out = missingFields(customer.id, customerData(customer), BUSINESS_FIELDS, 'customer.', '');
  for (const d of BUSINESS_DOCUMENTS) {
    if (!hasDocument(docs, customer.id, ACCEPTED_DOCUMENT_TYPES[d.type])) out.push(missingDocument(customer.id, d.type, d.reason));
  }
  if (owners.length === 0) {
    out.push({
      resourceId: customer.id,
      type: 'MISSING_BENEFICIAL_OWNER',
      reason: 'At least one beneficial owner is required: every individual owning 25% or more',
    });
  }
  const roles = owners.map((o) => JSON.parse(o.roles) as string[]);
  if (!roles.some((r) => r.includes('CONTROL_PERSON'))) {
    out.push({
      resourceId: customer.id,
      type: 'MISSING_CONTROL_PERSON',
      reason: 'One beneficial owner with the CONTROL_PERSON role is required',
    });
  }
  for (const o of owners) out.push(...ownerErrors(o, docs));
  return out;
}

function ownerErrors(owner: BeneficialOwnerRow, docs: DocumentRow[]): VerificationErrorWire[] {
  const info = JSON.parse(owner.personal_info) as Record<string, unknown>;
  const out = missingFields(owner.id, info, OWNER_FIELDS, 'personalInfo.', ' for beneficial owners');
  const nationality = info.nationality;
  if (nationality === 'US' && !isMissing(info.idType) && info.idType !== 'SSN' && info.idType !== 'ITIN') {
    out.push({
      resourceId: owner.id,
      type: 'INVALID_FIELD',
      field: 'personalInfo.idType',
      reason: 'US persons are identified by SSN or ITIN',
    });
  }
  if (typeof nationality === 'string' && nationality !== '' && nationality !== 'US') {
    if (!hasDocument(docs, owner.id, ['PASSPORT'])) {
      out.push(missingDocument(owner.id, 'MISSING_IDENTITY_DOCUMENT', 'Non-US beneficial owners need a passport', ['PASSPORT']));
    }
    if (!hasDocument(docs, owner.id, ['DRIVERS_LICENSE', 'NATIONAL_ID'])) {
      out.push(
        missingDocument(
          owner.id,
          'MISSING_IDENTITY_DOCUMENT',
          'Non-US beneficial owners need one more government-issued photo id besides the passport',
          ['DRIVERS_LICENSE', 'NATIONAL_ID'],
        ),
      );
    }
  }
  return out;
}

interface Outcome {
  status: VerificationStatus;
  errors: VerificationErrorWire[];
  /** The customer's new kycStatus/kybStatus, when the verification decides one. */
  customerStatus?: 'PENDING' | 'APPROVED' | 'REJECTED';
}

function bySuffix(suffix: string): Outcome {
  if (suffix === '001') return { status: 'PENDING_MANUAL_REVIEW', errors: [], customerStatus: 'PENDING' };
  if (suffix === '002') return { status: 'REJECTED', errors: [], customerStatus: 'REJECTED' };
  return { status: 'APPROVED', errors: [], customerStatus: 'APPROVED' };
}

/** The spec's KYB magic value: the last 3 characters of businessInfo.registrationNumber when they are digits. */
function kybMagicSuffix(data: Record<string, unknown>): string | undefined {
  const suffix = suffixOf(valueAt(data, 'businessInfo.registrationNumber'));
  return /^\d{3}$/.test(suffix) ? suffix : undefined;
}

function decide(customer: CustomerRow, owners: BeneficialOwnerRow[], docs: DocumentRow[], sandbox: boolean): Outcome {
  const data = customerData(customer);
  if (customer.customer_type === 'BUSINESS') {
    // Sandbox: a magic registrationNumber decides on its own, even on the spec's minimal submission.
    const magic = sandbox ? kybMagicSuffix(data) : undefined;
    if (magic !== undefined) return bySuffix(magic);
    const problems = businessErrors(customer, owners, docs);
    if (problems.length > 0) return { status: 'RESOLVE_ERRORS', errors: problems };
    return bySuffix(suffixOf(valueAt(data, 'businessInfo.registrationNumber')));
  }
  const problems = individualErrors(customer, docs);
  if (problems.length > 0) return { status: 'RESOLVE_ERRORS', errors: problems };
  const suffix = suffixOf(data.fullName);
  if (suffix === '003') {
    const idDocs = docs.filter(
      (d) =>
        d.document_holder === customer.id && ACCEPTED_DOCUMENT_TYPES.MISSING_IDENTITY_DOCUMENT.includes(d.document_type as DocumentType),
    );
    const latest = idDocs[idDocs.length - 1]!;
    return {
      status: 'RESOLVE_ERRORS',
      errors: [
        {
          resourceId: latest.id,
          type: 'POOR_QUALITY_DOCUMENT',
          acceptedDocumentTypes: ACCEPTED_DOCUMENT_TYPES.MISSING_IDENTITY_DOCUMENT,
          reason: 'The identity document is of too low quality to read; upload a clearer scan',
        },
      ],
    };
  }
  return bySuffix(suffix);
}

export function verificationToWire(row: VerificationRow): VerificationWire {
  return {
    id: row.id,
    customerId: row.customer_id,
    verificationStatus: row.verification_status as VerificationStatus,
    errors: JSON.parse(row.errors) as VerificationErrorWire[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** An outcome decided outside this module: the sandbox's hosted KYC page (modules/kyc-links), where the tester picks it. */
export type ChosenOutcome = 'APPROVED' | 'REJECTED' | 'PENDING_MANUAL_REVIEW';

/**
 * POST /verifications: a new verification of the customer, its outcome and its events. With
 * `chosen`, that outcome instead of the checks and magic values (same row, events and documents).
 */
export async function createVerification(u: Unit, customerId: string, chosen?: ChosenOutcome): Promise<VerificationWire> {
  const { trx, platform, at } = u;
  // The customer's row lock (PostgreSQL) serialises submissions and KYC edits of one customer.
  const customer = await requireCustomer(trx, platform.id, customerId, { forUpdate: true });
  const current = customer.customer_type === 'BUSINESS' ? customer.kyb_status : customer.kyc_status;
  if (current === 'APPROVED' || current === 'REJECTED') {
    const what = customer.customer_type === 'BUSINESS' ? 'kybStatus' : 'kycStatus';
    throw errors.invalidField('customerId', `the customer's ${what} is already ${current}; a decided customer cannot be submitted again`);
  }
  const owners = customer.customer_type === 'BUSINESS' ? await allBeneficialOwners(trx, platform.id, customer.id) : [];
  const docs = await documentsOfCustomer(trx, platform.id, customer.id);
  const outcome: Outcome = chosen
    ? { status: chosen, errors: [], customerStatus: chosen === 'PENDING_MANUAL_REVIEW' ? 'PENDING' : chosen }
    : decide(customer, owners, docs, platform.environment === 'SANDBOX');

  const row: VerificationRow = {
    id: u.deps.ids.next('Verification'),
    platform_id: platform.id,
    customer_id: customer.id,
    verification_status: outcome.status,
    errors: JSON.stringify(outcome.errors),
    created_at: at,
    updated_at: at,
  };
  await insertVerification(trx, row);
  const wire = verificationToWire(row);
  u.emit(`VERIFICATION.${outcome.status}`, row.id, wire);
  if (outcome.status !== 'RESOLVE_ERRORS') {
    await markSubmitted(
      trx,
      platform.id,
      docs.map((d) => d.id),
      at,
    );
  }
  if (outcome.customerStatus) await setCustomerVerificationStatus(u, customer.id, outcome.customerStatus);
  return wire;
}

/** A verification of this platform, or 404 REFERENCE_NOT_FOUND. */
export async function requireVerification(db: Kysely<Database>, platformId: string, id: string): Promise<VerificationRow> {
  const row = await findVerification(db, platformId, id);
  if (!row) throw errors.notFound('Verification', id);
  return row;
}
