/** Wire schemas for KYC/KYB verifications (`/verifications`). */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';
import { StringEnum } from './beneficial-owners.schemas.ts';
import { DocumentTypeSchema } from './documents.schemas.ts';

export const VERIFICATION_STATUSES = [
  'RESOLVE_ERRORS',
  'PENDING_MANUAL_REVIEW',
  'IN_PROGRESS',
  'APPROVED',
  'REJECTED',
  'READY_FOR_VERIFICATION',
] as const;
export type VerificationStatus = (typeof VERIFICATION_STATUSES)[number];

export const VerificationStatusSchema = StringEnum(VERIFICATION_STATUSES, { title: 'VerificationStatus' });

export const VERIFICATION_ERROR_TYPES = [
  'MISSING_FIELD',
  'INVALID_FIELD',
  'MISSING_LEGAL_PRESENCE_DOCUMENT',
  'MISSING_CONTROL_STRUCTURE_DOCUMENT',
  'MISSING_OWNERSHIP_STRUCTURE_DOCUMENT',
  'MISSING_PROOF_OF_ADDRESS_DOCUMENT',
  'MISSING_IDENTITY_DOCUMENT',
  'INVALID_DOCUMENT',
  'EXPIRED_DOCUMENT',
  'POOR_QUALITY_DOCUMENT',
  'SUSPECTED_FRAUD_DOCUMENT',
  'WRONG_DOCUMENT_TYPE',
  'INCOMPLETE_DOCUMENT',
  'UNREADABLE_DOCUMENT',
  'DOCUMENT_VERIFICATION_FAILED',
  'APPLICANT_SANCTIONED',
  'APPLICANT_FRAUD',
  'APPLICANT_CRIMINAL_RECORD',
  'APPLICANT_REJECTED',
  'MISSING_BENEFICIAL_OWNER',
  'MISSING_CONTROL_PERSON',
  'MISSING_GOOD_STANDING_DOCUMENT',
] as const;
export type VerificationErrorType = (typeof VERIFICATION_ERROR_TYPES)[number];

export const VerificationErrorSchema = Obj(
  {
    resourceId: Type.String({ description: 'The Customer, BeneficialOwner or Document with the problem' }),
    type: StringEnum(VERIFICATION_ERROR_TYPES, { title: 'VerificationErrorType' }),
    field: Type.Optional(
      Type.String({ description: 'Dot path of the field (MISSING_FIELD, INVALID_FIELD)', examples: ['customer.address.line1'] }),
    ),
    acceptedDocumentTypes: Type.Optional(Type.Array(DocumentTypeSchema, { description: 'Any one of these satisfies the requirement' })),
    reason: Type.String({ description: 'What is wrong, for people' }),
  },
  { title: 'VerificationError' },
);
export type VerificationErrorWire = Static<typeof VerificationErrorSchema>;

export const VerificationSchema = Obj(
  {
    id: Type.String({ examples: ['Verification:019542f5-b3e7-7d02-8000-000000000001'] }),
    customerId: Type.String(),
    verificationStatus: VerificationStatusSchema,
    errors: Type.Array(VerificationErrorSchema, {
      description: 'Every problem to fix before the verification can proceed; empty otherwise',
    }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Verification' },
);
export type VerificationWire = Static<typeof VerificationSchema>;

export const VerificationRequestSchema = Obj(
  { customerId: IdString('Customer:019542f5-b3e7-7d02-8000-000000000001') },
  { title: 'VerificationRequest' },
);

export const VerificationListQuery = Obj({
  customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
  verificationStatus: Type.Optional(VerificationStatusSchema),
  ...PageQueryFields,
});

export const VerificationIdParams = Obj({ verificationId: IdString('Verification:019542f5-b3e7-7d02-8000-000000000001') });

export const VerificationListSchema = Page(VerificationSchema, 'VerificationListResponse');
