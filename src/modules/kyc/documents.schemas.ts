/** Wire schemas for KYC/KYB documents (`/documents`). */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';
import { CountryCode, StringEnum } from './beneficial-owners.schemas.ts';

export const DOCUMENT_TYPES = [
  'PASSPORT',
  'DRIVERS_LICENSE',
  'NATIONAL_ID',
  'PROOF_OF_ADDRESS',
  'BANK_STATEMENT',
  'TAX_RETURN',
  'CERTIFICATE_OF_INCORPORATION',
  'ARTICLES_OF_INCORPORATION',
  'ARTICLES_OF_ASSOCIATION',
  'STATE_REGISTRY_EXCERPT',
  'GOOD_STANDING_CERTIFICATE',
  'INFORMATION_STATEMENT',
  'INCUMBENCY_CERTIFICATE',
  'BUSINESS_LICENSE',
  'SHAREHOLDER_REGISTER',
  'POWER_OF_ATTORNEY',
  'UTILITY_BILL',
  'ELECTRICITY_BILL',
  'RENT_OR_LEASE_AGREEMENT',
  'DIRECTOR_REGISTRY',
  'TRUST_AGREEMENT',
  'STATE_COMPANY_REGISTRY',
  'PARTNERSHIP_CONTROL_AGREEMENT',
  'PARTNERSHIP_AGREEMENT',
  'SELFIE',
  'OTHER',
] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export const DocumentTypeSchema = StringEnum(DOCUMENT_TYPES, { title: 'DocumentType' });

export const DocumentSideSchema = StringEnum(['FRONT', 'BACK'], {
  description: "Which side of a two-sided document (driver's licence, national id)",
});

/** The largest accepted file: 10 MiB. */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

const HolderId = Type.String({
  minLength: 1,
  maxLength: 200,
  pattern: '^(Customer|BeneficialOwner):',
  description: 'A Customer id or a BeneficialOwner id',
  examples: ['BeneficialOwner:019542f5-b3e7-7d02-8000-000000000001'],
});

export const DocumentSchema = Obj(
  {
    id: Type.String({ examples: ['Document:019542f5-b3e7-7d02-8000-000000000001'] }),
    documentHolder: Type.String({ description: 'The Customer or BeneficialOwner the document belongs to' }),
    documentType: DocumentTypeSchema,
    side: Type.Optional(DocumentSideSchema),
    country: Type.String({ description: 'Issuing country (ISO 3166-1 alpha-2)' }),
    documentNumber: Type.Optional(Type.String()),
    issuingAuthority: Type.Optional(Type.String()),
    fileName: Type.String({ description: 'The original file name' }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Document' },
);
export type DocumentWire = Static<typeof DocumentSchema>;

const baseFields = {
  file: Type.String({ format: 'binary', description: 'The document: PDF, JPEG or PNG (checked by content), at most 10 MiB' }),
  documentType: DocumentTypeSchema,
  side: Type.Optional(DocumentSideSchema),
  country: CountryCode,
  documentNumber: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  issuingAuthority: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
};

/**
 * The multipart form of `POST /documents`. The route parses the form itself (see documents.routes)
 * and validates the text fields against this schema; `file` is checked there (type, size).
 */
export const DocumentUploadSchema = Obj({ ...baseFields, documentHolder: HolderId }, { title: 'DocumentUploadRequest' });
export type DocumentUpload = Static<typeof DocumentUploadSchema>;

/** The multipart form of `PUT /documents/{documentId}`: replaces the file and every metadata field. */
export const DocumentReplaceSchema = Obj(baseFields, { title: 'DocumentReplaceRequest' });
export type DocumentReplace = Static<typeof DocumentReplaceSchema>;

export const DocumentListQuery = Obj({
  documentHolder: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
  ...PageQueryFields,
});

export const DocumentIdParams = Obj({ documentId: IdString('Document:019542f5-b3e7-7d02-8000-000000000001') });

export const DocumentListSchema = Page(DocumentSchema, 'DocumentListResponse');
