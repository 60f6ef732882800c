/** Wire schemas for external accounts (customer and platform scope). */
import { Type, type Static } from '@sinclair/typebox';
import { CurrencyCode, DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';
import { AccountInfoCreateSchema, AccountInfoSchema, StrEnum } from './account-info.ts';

export const EXTERNAL_ACCOUNT_STATUSES = [
  'PENDING',
  'ACTIVE',
  'PENDING_OWNERSHIP_VERIFICATION',
  'UNVERIFIED',
  'UNDER_REVIEW',
  'INACTIVE',
] as const;
export const BENEFICIARY_VERIFICATION_STATUSES = [
  'MATCHED',
  'PARTIAL_MATCH',
  'NOT_MATCHED',
  'UNSUPPORTED',
  'CHECKED_BY_RECEIVING_FI',
  'PENDING',
] as const;
export type BeneficiaryVerificationStatus = (typeof BENEFICIARY_VERIFICATION_STATUSES)[number];
export type ExternalAccountStatus = (typeof EXTERNAL_ACCOUNT_STATUSES)[number];

export const OwnershipTypeSchema = StrEnum(['FIRST_PARTY', 'THIRD_PARTY'], {
  description: 'Whether the account belongs to the customer (or platform) itself or to someone else',
});

const PlatformAccountId = Type.String({
  minLength: 1,
  maxLength: 255,
  description: "The platform's own reference for the account",
  examples: ['ext_acc_123456'],
});

export const ExternalAccountCreateSchema = Obj(
  {
    customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
    currency: CurrencyCode,
    platformAccountId: Type.Optional(PlatformAccountId),
    ownershipType: Type.Optional(OwnershipTypeSchema),
    defaultUmaDepositAccount: Type.Optional(
      Type.Boolean({
        description:
          "Receive the customer's UMA payments here instead of the primary internal account (one per customer; replaces the current default)",
      }),
    ),
    accountInfo: AccountInfoCreateSchema,
  },
  { title: 'ExternalAccountCreateRequest', description: 'Without customerId the account is created for the platform' },
);
export type ExternalAccountCreate = Static<typeof ExternalAccountCreateSchema>;

export const PlatformExternalAccountCreateSchema = Obj(
  {
    currency: CurrencyCode,
    platformAccountId: Type.Optional(PlatformAccountId),
    ownershipType: Type.Optional(OwnershipTypeSchema),
    accountInfo: AccountInfoCreateSchema,
  },
  { title: 'PlatformExternalAccountCreateRequest' },
);

export const ExternalAccountSchema = Obj(
  {
    id: Type.String({ examples: ['ExternalAccount:019542f5-b3e7-7d02-8000-000000000001'] }),
    customerId: Type.Optional(Type.String({ description: 'Absent for platform accounts' })),
    status: StrEnum(EXTERNAL_ACCOUNT_STATUSES),
    platformAccountId: Type.Optional(Type.String()),
    ownershipType: Type.Optional(OwnershipTypeSchema),
    currency: Type.String(),
    defaultUmaDepositAccount: Type.Optional(Type.Boolean()),
    beneficiaryVerificationStatus: Type.Optional(
      StrEnum(BENEFICIARY_VERIFICATION_STATUSES, {
        description: 'Result of matching the beneficiary name against the account holder (sandbox: suffix 1xx of the primary identifier)',
      }),
    ),
    beneficiaryVerifiedData: Type.Optional(Obj({ fullName: Type.Optional(Type.String()) }, { title: 'BeneficiaryVerifiedData' })),
    accountInfo: AccountInfoSchema,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'ExternalAccount' },
);

export type ExternalAccountWire = Static<typeof ExternalAccountSchema>;

export const ExternalAccountListSchema = Page(ExternalAccountSchema, 'ExternalAccountListResponse');

export const CustomerExternalAccountListQuery = Obj({
  currency: Type.Optional(CurrencyCode),
  customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
  ...PageQueryFields,
});

export const PlatformExternalAccountListQuery = Obj({
  currency: Type.Optional(CurrencyCode),
  ...PageQueryFields,
});

export const ExternalAccountIdParams = Obj({
  externalAccountId: IdString('ExternalAccount:019542f5-b3e7-7d02-8000-000000000001'),
});
