/**
 * Wire schemas for customers. Requests and responses are discriminated on `customerType`
 * (INDIVIDUAL | BUSINESS); the validator only checks the branch the tag selects, so a field error
 * names the field of that branch rather than a mismatch with the other one.
 */
import { Type, type SchemaOptions, type Static, type TObject, type TUnion } from '@sinclair/typebox';
import { CurrencyCode, DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';
import { InternalAccountSchema, InternalAccountType } from '../internal-accounts/internal-accounts.schemas.ts';
import { BeneficialOwnerSchema } from '../kyc/beneficial-owners.schemas.ts';
import { ContactVerificationSchema } from '../contact-verification/contact-verification.schemas.ts';

/** An enum of string literals. */
function Enum<T extends string>(values: readonly T[], options: SchemaOptions = {}) {
  return Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );
}

/**
 * A `oneOf` with an OpenAPI/Ajv `discriminator` on `propertyName`; each branch must declare that
 * property as a required literal (which is what makes it required here: a top-level `required`
 * would only report a missing tag twice). Typed as the union of the branches.
 */
function OneOf<T extends TObject[]>(branches: [...T], propertyName: string, options: SchemaOptions = {}) {
  return Type.Unsafe<Static<TUnion<T>>>({
    ...options,
    type: 'object',
    discriminator: { propertyName },
    oneOf: branches,
  });
}

const Country = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 country code', examples: ['US'] });
const Countries = Type.Array(Country, { maxItems: 250 });
const Text = (maxLength = 255) => Type.String({ minLength: 1, maxLength });
const DateOnly = Type.String({ format: 'date', description: 'YYYY-MM-DD' });

export const CustomerTypeSchema = Enum(['INDIVIDUAL', 'BUSINESS'] as const, { description: 'Individual person or business entity' });

const VerificationStatusValues = ['UNVERIFIED', 'PENDING', 'APPROVED', 'REJECTED', 'HOLD'] as const;
export const KycStatusSchema = Enum(VerificationStatusValues, {
  description: 'KYC status of an individual customer; HOLD: more information may be needed',
});
export const KybStatusSchema = Enum(VerificationStatusValues, {
  description: 'KYB status of a business customer; HOLD: more information may be needed',
});
export type VerificationStatus = (typeof VerificationStatusValues)[number];

export const IdentificationTypeSchema = Enum(['SSN', 'ITIN', 'EIN', 'NON_US_TAX_ID'] as const);
const PurposeOfAccount = Enum([
  'CONTRACTOR_PAYOUTS',
  'CREATOR_PAYOUTS',
  'EMPLOYEE_PAYOUTS',
  'MARKETPLACE_SELLER_PAYOUTS',
  'SUPPLIER_PAYMENTS',
  'CROSS_BORDER_B2B',
  'AR_AUTOMATION',
  'AP_AUTOMATION',
  'EMBEDDED_PAYMENTS',
  'PLATFORM_FEE_COLLECTION',
  'P2P_TRANSFERS',
  'CHARITABLE_DONATIONS',
  'OTHER',
] as const);
const ExpectedMonthlyTransactionCount = Enum([
  'COUNT_UNDER_10',
  'COUNT_10_TO_100',
  'COUNT_100_TO_500',
  'COUNT_500_TO_1000',
  'COUNT_OVER_1000',
] as const);
const ExpectedMonthlyTransactionVolume = Enum([
  'VOLUME_UNDER_10K',
  'VOLUME_10K_TO_100K',
  'VOLUME_100K_TO_1M',
  'VOLUME_1M_TO_10M',
  'VOLUME_OVER_10M',
] as const);
const IndividualSourceOfFundsCategory = Enum([
  'SALARY',
  'SELF_EMPLOYMENT_INCOME',
  'INVESTMENT_INCOME',
  'PENSION',
  'RENTAL_INCOME',
  'GIFT',
  'INHERITANCE',
  'LOAN',
  'SAVINGS',
  'SALE_OF_ASSETS',
  'OTHER',
] as const);
const SourceOfWealthCategory = Enum([
  'SALARY',
  'BUSINESS_INCOME',
  'INVESTMENTS',
  'INHERITANCE',
  'PROPERTY_SALE',
  'GIFT',
  'RETIREMENT',
  'SAVINGS',
  'OTHER',
] as const);
const AnnualIncomeRange = Enum(['UNDER_50K', 'RANGE_50K_100K', 'RANGE_100K_250K', 'RANGE_250K_1M', 'OVER_1M'] as const);
const NetWorthRange = Enum(['UNDER_100K', 'RANGE_100K_500K', 'RANGE_500K_1M', 'RANGE_1M_5M', 'RANGE_5M_25M', 'OVER_25M'] as const);
const PepStatus = Enum(['NONE', 'DOMESTIC', 'FOREIGN', 'HIO', 'FAMILY_OR_ASSOCIATE'] as const);
const EntityType = Enum([
  'SOLE_PROPRIETORSHIP',
  'PARTNERSHIP',
  'LLC',
  'CORPORATION',
  'S_CORPORATION',
  'NON_PROFIT',
  'PUBLICLY_LISTED_COMPANY',
  'TRUST',
  'PRIVATE_FOUNDATION',
  'CHARITY',
  'OTHER',
] as const);
const BusinessType = Enum([
  'AGRICULTURE_FORESTRY_FISHING_AND_HUNTING',
  'MINING_QUARRYING_AND_OIL_AND_GAS_EXTRACTION',
  'UTILITIES',
  'CONSTRUCTION',
  'MANUFACTURING',
  'WHOLESALE_TRADE',
  'RETAIL_TRADE',
  'TRANSPORTATION_AND_WAREHOUSING',
  'INFORMATION',
  'FINANCE_AND_INSURANCE',
  'REAL_ESTATE_AND_RENTAL_AND_LEASING',
  'PROFESSIONAL_SCIENTIFIC_AND_TECHNICAL_SERVICES',
  'MANAGEMENT_OF_COMPANIES_AND_ENTERPRISES',
  'ADMINISTRATIVE_AND_SUPPORT_AND_WASTE_MANAGEMENT_AND_REMEDIATION_SERVICES',
  'EDUCATIONAL_SERVICES',
  'HEALTH_CARE_AND_SOCIAL_ASSISTANCE',
  'ARTS_ENTERTAINMENT_AND_RECREATION',
  'ACCOMMODATION_AND_FOOD_SERVICES',
  'OTHER_SERVICES',
  'PUBLIC_ADMINISTRATION',
] as const);
const SourceOfFundsCategory = Enum([
  'OPERATING_REVENUE',
  'INVESTMENT_INCOME',
  'LOANS',
  'VENTURE_CAPITAL',
  'PERSONAL_SAVINGS',
  'DONATIONS',
  'OTHER',
] as const);

export const AddressSchema = Obj(
  {
    line1: Text(),
    line2: Type.Optional(Text()),
    city: Type.Optional(Text()),
    state: Type.Optional(Text()),
    postalCode: Text(32),
    country: Country,
  },
  { title: 'Address' },
);

export const EndUserTermsConsentSchema = Obj(
  {
    acceptedAt: DateTime,
    ipAddress: Type.String({ minLength: 1, maxLength: 45, description: 'IP address of the device used to accept' }),
    termsVersion: Type.String({ minLength: 1, maxLength: 32, examples: ['V1'] }),
    acceptanceMethod: Enum(['CHECKBOX', 'CLICK_TO_ACCEPT'] as const),
  },
  { title: 'EndUserTermsConsent' },
);
export type EndUserTermsConsent = Static<typeof EndUserTermsConsentSchema>;

const Email = Type.String({ format: 'email', maxLength: 255 });
const Phone = Type.String({ pattern: '^\\+[1-9]\\d{1,14}$', description: 'E.164 phone number' });
const Currencies = Type.Array(CurrencyCode, { minItems: 1, maxItems: 50, uniqueItems: true });

/** Enhanced-due-diligence fields of an individual (top level on the customer). */
const EddFields = {
  sourceOfFundsCategories: Type.Optional(Type.Array(IndividualSourceOfFundsCategory, { maxItems: 11, uniqueItems: true })),
  sourceOfFundsOtherDescription: Type.Optional(Text(500)),
  sourceOfWealthCategories: Type.Optional(Type.Array(SourceOfWealthCategory, { maxItems: 9, uniqueItems: true })),
  sourceOfWealthOtherDescription: Type.Optional(Text(500)),
  purposeOfAccount: Type.Optional(PurposeOfAccount),
  purposeOfAccountOtherDescription: Type.Optional(Text(500)),
  expectedMonthlyTransactionCount: Type.Optional(ExpectedMonthlyTransactionCount),
  expectedMonthlyTransactionVolume: Type.Optional(ExpectedMonthlyTransactionVolume),
  annualIncomeRange: Type.Optional(AnnualIncomeRange),
  netWorthRange: Type.Optional(NetWorthRange),
  pepStatus: Type.Optional(PepStatus),
};

/** Individual fields a platform may write (kycStatus is set by verification, not by the platform). */
const IndividualWritableFields = {
  fullName: Type.Optional(Text()),
  birthDate: Type.Optional(DateOnly),
  nationality: Type.Optional(Country),
  address: Type.Optional(AddressSchema),
  idType: Type.Optional(IdentificationTypeSchema),
  identifier: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, writeOnly: true, description: 'SSN or ITIN (###-##-####); never returned' }),
  ),
  countryOfIssuance: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'Only US (the default) is accepted' })),
  ...EddFields,
};

const businessInfoFields = {
  legalName: Text(),
  doingBusinessAs: Type.Optional(Text()),
  country: Country,
  registrationNumber: Type.Optional(Text(64)),
  incorporatedOn: DateOnly,
  entityType: Type.Optional(EntityType),
  taxId: Text(64),
  countriesOfOperation: Type.Optional(Countries),
  businessType: Type.Optional(BusinessType),
  purposeOfAccount: Type.Optional(PurposeOfAccount),
  sourceOfFunds: Type.Optional(Text(1000)),
  expectedMonthlyTransactionCount: Type.Optional(ExpectedMonthlyTransactionCount),
  expectedMonthlyTransactionVolume: Type.Optional(ExpectedMonthlyTransactionVolume),
  expectedRecipientJurisdictions: Type.Optional(Countries),
  naicsCode: Type.Optional(Type.String({ pattern: '^\\d{2,6}$' })),
  sourceOfFundsCategories: Type.Optional(Type.Array(SourceOfFundsCategory, { maxItems: 7, uniqueItems: true })),
  sourceOfFundsOtherDescription: Type.Optional(Text(500)),
  purposeOfAccountOtherDescription: Type.Optional(Text(500)),
  expectedCounterpartyCountries: Type.Optional(Countries),
  primaryContactFirstName: Type.Optional(Text(250)),
  primaryContactLastName: Type.Optional(Text(250)),
};

/** Business information on create: legalName, country, taxId and incorporatedOn are required. */
export const BusinessInfoSchema = Obj(businessInfoFields, { title: 'BusinessInfo' });

/** Business information on update: every field optional; given fields replace the stored ones. */
export const BusinessInfoUpdateSchema = Type.Partial(BusinessInfoSchema, { title: 'BusinessInfoUpdate', additionalProperties: false });
export type BusinessInfoUpdate = Static<typeof BusinessInfoUpdateSchema>;

/** Business information in responses: only legalName is guaranteed. */
export const BusinessInfoResponseSchema = Obj(
  { ...Type.Partial(BusinessInfoSchema).properties, legalName: Text() },
  { title: 'BusinessInfoResponse' },
);

const CreateBaseFields = {
  platformCustomerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Generated when absent' })),
  region: Type.Optional(Country),
  currencies: Type.Optional(Currencies),
  email: Type.Optional(Email),
  phoneNumber: Type.Optional(Phone),
  umaAddress: Type.Optional(
    Type.String({ minLength: 1, maxLength: 320, description: '`$user@<platform umaDomain>`; generated when absent' }),
  ),
  endUserTermsConsent: Type.Optional(EndUserTermsConsentSchema),
};

/**
 * The live request schemas declare the customer's verification status (they reuse the response's
 * fields); a client that sends it back is accepted, and the value is ignored: the status is set by
 * the sandbox tables and verifications, never by the platform.
 */
const IgnoredKycStatus = {
  kycStatus: Type.Optional(Enum(VerificationStatusValues, { description: 'Accepted as the live API declares it, and ignored' })),
};
const IgnoredKybStatus = {
  kybStatus: Type.Optional(Enum(VerificationStatusValues, { description: 'Accepted as the live API declares it, and ignored' })),
};

export const IndividualCustomerCreateSchema = Obj(
  { customerType: Type.Literal('INDIVIDUAL'), ...CreateBaseFields, ...IndividualWritableFields, ...IgnoredKycStatus },
  { title: 'IndividualCustomerCreateRequest' },
);
export const BusinessCustomerCreateSchema = Obj(
  {
    customerType: Type.Literal('BUSINESS'),
    ...CreateBaseFields,
    address: Type.Optional(AddressSchema),
    businessInfo: BusinessInfoSchema,
    ...IgnoredKybStatus,
  },
  { title: 'BusinessCustomerCreateRequest' },
);
export const CustomerCreateSchema = OneOf([IndividualCustomerCreateSchema, BusinessCustomerCreateSchema], 'customerType', {
  title: 'CustomerCreateRequestOneOf',
});
export type CustomerCreate = Static<typeof CustomerCreateSchema>;
export type IndividualCustomerCreate = Static<typeof IndividualCustomerCreateSchema>;
export type BusinessCustomerCreate = Static<typeof BusinessCustomerCreateSchema>;

const UpdateBaseFields = {
  currencies: Type.Optional(Type.Array(CurrencyCode, { minItems: 1, maxItems: 50, uniqueItems: true, description: 'Replaces the list' })),
  email: Type.Optional(Email),
  phoneNumber: Type.Optional(Phone),
  umaAddress: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
  endUserTermsConsent: Type.Optional(EndUserTermsConsentSchema),
};

export const IndividualCustomerUpdateSchema = Obj(
  { customerType: Type.Literal('INDIVIDUAL'), ...UpdateBaseFields, ...IndividualWritableFields, ...IgnoredKycStatus },
  { title: 'IndividualCustomerUpdateRequest' },
);
export const BusinessCustomerUpdateSchema = Obj(
  {
    customerType: Type.Literal('BUSINESS'),
    ...UpdateBaseFields,
    address: Type.Optional(AddressSchema),
    businessInfo: Type.Optional(BusinessInfoUpdateSchema),
    ...IgnoredKybStatus,
  },
  { title: 'BusinessCustomerUpdateRequest' },
);
export const CustomerUpdateSchema = OneOf([IndividualCustomerUpdateSchema, BusinessCustomerUpdateSchema], 'customerType', {
  title: 'CustomerUpdateRequestOneOf',
});
export type CustomerUpdate = Static<typeof CustomerUpdateSchema>;

const CustomerBaseFields = {
  id: Type.String({ examples: ['Customer:019542f5-b3e7-7d02-8000-000000000001'] }),
  platformCustomerId: Type.String(),
  endUserTermsConsent: Type.Optional(EndUserTermsConsentSchema),
  region: Type.Optional(Type.String()),
  currencies: Type.Array(Type.String()),
  email: Type.Optional(Type.String()),
  phoneNumber: Type.Optional(Type.String()),
  umaAddress: Type.String(),
  createdAt: DateTime,
  updatedAt: DateTime,
  isDeleted: Type.Boolean(),
  /** Read-only: present when the customer must verify its contact details (modules/contact-verification). */
  contactVerification: Type.Optional(ContactVerificationSchema),
};

const { identifier: _writeOnly, ...IndividualReadableFields } = IndividualWritableFields;

export const IndividualCustomerSchema = Obj(
  { ...CustomerBaseFields, customerType: Type.Literal('INDIVIDUAL'), kycStatus: KycStatusSchema, ...IndividualReadableFields },
  { title: 'IndividualCustomer' },
);
export const BusinessCustomerSchema = Obj(
  {
    ...CustomerBaseFields,
    customerType: Type.Literal('BUSINESS'),
    kybStatus: KybStatusSchema,
    address: Type.Optional(AddressSchema),
    businessInfo: Type.Optional(BusinessInfoResponseSchema),
    beneficialOwners: Type.Array(BeneficialOwnerSchema, {
      description: "The business's beneficial owners, directors and officers (`/beneficial-owners`), oldest first; `[]` until one is added",
    }),
  },
  { title: 'BusinessCustomer' },
);
export const CustomerSchema = OneOf([IndividualCustomerSchema, BusinessCustomerSchema], 'customerType', { title: 'CustomerOneOf' });
export type CustomerWire = Static<typeof CustomerSchema>;

export const CustomerListQuery = Obj({
  platformCustomerId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  customerType: Type.Optional(CustomerTypeSchema),
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  updatedAfter: Type.Optional(DateTime),
  updatedBefore: Type.Optional(DateTime),
  region: Type.Optional(Country),
  currency: Type.Optional(CurrencyCode),
  umaAddress: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
  isIncludingDeleted: Type.Optional(Type.Boolean({ default: false, description: 'Also list deleted customers' })),
  ...PageQueryFields,
});

export const CustomerListSchema = Page(CustomerSchema, 'CustomerListResponse');

export const CustomerIdParams = Obj({ customerId: IdString('Customer:019542f5-b3e7-7d02-8000-000000000001') });

export const EndUserTermsSchema = Obj(
  {
    version: Type.String({ examples: ['V1'] }),
    url: Type.String({ format: 'uri' }),
  },
  { title: 'EndUserTerms' },
);

export const CustomerInternalAccountsQuery = Obj({
  customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
  currency: Type.Optional(CurrencyCode),
  type: Type.Optional(InternalAccountType),
  ...PageQueryFields,
});

export const InternalAccountListSchema = Page(InternalAccountSchema, 'InternalAccountListResponse');
