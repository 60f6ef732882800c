/** Wire schemas for beneficial owners (`/beneficial-owners`), plus the small shared KYC types. */
import { Type, type SchemaOptions, type Static } from '@sinclair/typebox';
import { DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';

/** A string enum as one `enum` keyword (one clear error, one clean OpenAPI enum), typed as the union. */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

export const CountryCode = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 country code', examples: ['US'] });
const Text = (max = 255) => Type.String({ minLength: 1, maxLength: max });
export const DateOnly = Type.String({ format: 'date', description: 'YYYY-MM-DD', examples: ['1978-06-15'] });

export const KycStatusSchema = StringEnum(['UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED', 'HOLD'], {
  title: 'KycStatus',
  description: 'HOLD: on hold; more information may be required',
});

export const IdentificationTypeSchema = StringEnum(['SSN', 'ITIN', 'EIN', 'NON_US_TAX_ID'], { title: 'IdentificationType' });

export const BeneficialOwnerRoleSchema = StringEnum(
  ['UBO', 'DIRECTOR', 'COMPANY_OFFICER', 'CONTROL_PERSON', 'TRUSTEE', 'GENERAL_PARTNER'],
  {
    title: 'BeneficialOwnerRole',
  },
);
export type BeneficialOwnerRole = Static<typeof BeneficialOwnerRoleSchema>;

export const KycAddressSchema = Obj(
  {
    line1: Text(),
    line2: Type.Optional(Text()),
    city: Type.Optional(Text()),
    state: Type.Optional(Text()),
    postalCode: Text(32),
    country: CountryCode,
  },
  { title: 'Address' },
);

const personalInfoFields = {
  firstName: Text(),
  middleName: Type.Optional(Text()),
  lastName: Text(),
  birthDate: DateOnly,
  nationality: CountryCode,
  email: Type.Optional(Type.String({ format: 'email', maxLength: 255 })),
  phoneNumber: Type.Optional(Type.String({ pattern: '^\\+[1-9]\\d{1,14}$', description: 'E.164', examples: ['+14155550192'] })),
  address: KycAddressSchema,
  idType: IdentificationTypeSchema,
  identifier: Text(64),
  countryOfIssuance: Type.Optional(CountryCode),
};

export const BeneficialOwnerPersonalInfoSchema = Obj(personalInfoFields, { title: 'BeneficialOwnerPersonalInfo' });
export type BeneficialOwnerPersonalInfo = Static<typeof BeneficialOwnerPersonalInfoSchema>;

export const BeneficialOwnerPersonalInfoUpdateSchema = Obj(
  {
    firstName: Type.Optional(personalInfoFields.firstName),
    middleName: Type.Optional(Text()),
    lastName: Type.Optional(personalInfoFields.lastName),
    birthDate: Type.Optional(personalInfoFields.birthDate),
    nationality: Type.Optional(personalInfoFields.nationality),
    email: personalInfoFields.email,
    phoneNumber: personalInfoFields.phoneNumber,
    address: Type.Optional(personalInfoFields.address),
    idType: Type.Optional(personalInfoFields.idType),
    identifier: Type.Optional(personalInfoFields.identifier),
    countryOfIssuance: Type.Optional(CountryCode),
  },
  { title: 'BeneficialOwnerPersonalInfoUpdate', description: 'Only the fields sent change; `address` is replaced as a whole' },
);
export type BeneficialOwnerPersonalInfoUpdate = Static<typeof BeneficialOwnerPersonalInfoUpdateSchema>;

const Roles = Type.Array(BeneficialOwnerRoleSchema, { minItems: 1, maxItems: 6, uniqueItems: true });
const Percentage = Type.Integer({ minimum: 0, maximum: 100, description: 'Ownership in the business, 0-100 (meaningful with role UBO)' });

export const BeneficialOwnerSchema = Obj(
  {
    id: Type.String({ examples: ['BeneficialOwner:019542f5-b3e7-7d02-8000-000000000001'] }),
    customerId: Type.String({ examples: ['Customer:019542f5-b3e7-7d02-8000-000000000001'] }),
    roles: Type.Array(BeneficialOwnerRoleSchema),
    ownershipPercentage: Type.Integer({ minimum: 0, maximum: 100 }),
    personalInfo: BeneficialOwnerPersonalInfoSchema,
    kycStatus: KycStatusSchema,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'BeneficialOwner' },
);
export type BeneficialOwnerWire = Static<typeof BeneficialOwnerSchema>;

export const BeneficialOwnerCreateSchema = Obj(
  {
    customerId: IdString('Customer:019542f5-b3e7-7d02-8000-000000000001'),
    roles: Roles,
    ownershipPercentage: Percentage,
    personalInfo: BeneficialOwnerPersonalInfoSchema,
  },
  { title: 'BeneficialOwnerCreateRequest' },
);
export type BeneficialOwnerCreate = Static<typeof BeneficialOwnerCreateSchema>;

export const BeneficialOwnerUpdateSchema = Obj(
  {
    roles: Type.Optional(Roles),
    ownershipPercentage: Type.Optional(Percentage),
    personalInfo: Type.Optional(BeneficialOwnerPersonalInfoUpdateSchema),
  },
  { title: 'BeneficialOwnerUpdateRequest' },
);
export type BeneficialOwnerUpdate = Static<typeof BeneficialOwnerUpdateSchema>;

export const BeneficialOwnerListQuery = Obj({
  customerId: IdString('Customer:019542f5-b3e7-7d02-8000-000000000001'),
  ...PageQueryFields,
});

export const BeneficialOwnerIdParams = Obj({ beneficialOwnerId: IdString('BeneficialOwner:019542f5-b3e7-7d02-8000-000000000001') });

export const BeneficialOwnerListSchema = Page(BeneficialOwnerSchema, 'BeneficialOwnerListResponse');
