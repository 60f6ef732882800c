/**
 * Beneficiary schemas: who owns an external account. Bank-account variants require one (a union on
 * `beneficiaryType`: INDIVIDUAL with per-currency required fields, or BUSINESS); wallets take an
 * optional one (INDIVIDUAL with fullName and countryOfResidence, or BUSINESS).
 *
 * The live API types these fields as plain strings; Corridor checks the obvious formats (ISO
 * 3166-1 alpha-2 countries, `YYYY-MM-DD` dates, e-mail, E.164 phone) so a typo is a 400 naming the
 * field rather than data a payout would later fail on.
 */
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';
import { Obj } from '../../http/schemas.ts';

export const CountryCode = Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2', examples: ['US'] });
export const PhoneNumber = Type.String({
  pattern: '^\\+[0-9]{6,14}$',
  minLength: 7,
  maxLength: 15,
  description: 'E.164, e.g. +14155550123',
});
const Name = (description: string) => Type.String({ minLength: 1, maxLength: 255, description });
const Text = (description: string) => Type.String({ minLength: 1, maxLength: 255, description });

export const AddressSchema = Obj(
  {
    line1: Type.String({ minLength: 1, maxLength: 255, description: 'Street address line 1' }),
    line2: Type.Optional(Type.String({ maxLength: 255 })),
    city: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    state: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    postalCode: Type.String({ minLength: 1, maxLength: 32 }),
    country: CountryCode,
  },
  { title: 'Address' },
);

/** The optional fields every individual bank-account beneficiary may carry. */
const INDIVIDUAL_FIELDS: Record<string, TSchema> = {
  birthDate: Type.String({ format: 'date', description: 'YYYY-MM-DD' }),
  nationality: CountryCode,
  email: Type.String({ format: 'email', maxLength: 255 }),
  phoneNumber: PhoneNumber,
  countryOfResidence: CountryCode,
  address: AddressSchema,
};

export const BusinessBeneficiarySchema = Obj(
  {
    beneficiaryType: Type.Literal('BUSINESS'),
    legalName: Name('The legal name of the business'),
    registrationNumber: Type.Optional(Text('Company registration number')),
    taxId: Type.Optional(Text('Tax identification number')),
    email: Type.Optional(INDIVIDUAL_FIELDS.email!),
    phoneNumber: Type.Optional(PhoneNumber),
    countryOfResidence: Type.Optional(CountryCode),
    address: Type.Optional(AddressSchema),
  },
  { title: 'BusinessBeneficiary' },
);

export interface BeneficiaryFlavor {
  /** Individual fields that are required for this currency (besides beneficiaryType and fullName). */
  required?: string[];
  /** Extra individual fields this currency accepts. */
  extra?: Record<string, TSchema>;
}

/** An INDIVIDUAL beneficiary for one currency: the shared fields plus the currency's own rules. */
export function individualBeneficiary(title: string, flavor: BeneficiaryFlavor = {}) {
  const props: TProperties = { beneficiaryType: Type.Literal('INDIVIDUAL'), fullName: Name('The full name of the beneficiary') };
  const all = { ...INDIVIDUAL_FIELDS, ...flavor.extra };
  for (const [name, schema] of Object.entries(all)) {
    props[name] = flavor.required?.includes(name) ? schema : Type.Optional(schema);
  }
  return Obj(props, { title });
}

/**
 * A oneOf on `beneficiaryType` (Ajv's `discriminator`, so only the chosen branch reports errors).
 * `Type.Unsafe`: TypeBox unions are `anyOf`, and Ajv's discriminator needs `oneOf`.
 */
export function beneficiaryUnion(individual: TSchema, description: string) {
  return Type.Unsafe<Record<string, unknown>>({
    // Ajv applies `discriminator` to objects only: without the type, a non-object would pass.
    type: 'object',
    oneOf: [individual, BusinessBeneficiarySchema],
    discriminator: { propertyName: 'beneficiaryType' },
    description,
  });
}

export const WalletIndividualBeneficiarySchema = Obj(
  {
    beneficiaryType: Type.Literal('INDIVIDUAL'),
    fullName: Name('The full name of the beneficiary'),
    countryOfResidence: CountryCode,
  },
  { title: 'WalletIndividualBeneficiary' },
);

export const WalletBeneficiarySchema = beneficiaryUnion(
  WalletIndividualBeneficiarySchema,
  "The wallet's owner: optional for FIRST_PARTY wallets (the customer is the owner)",
);

/** The name a beneficiary goes by: fullName for individuals, legalName for businesses. */
export function beneficiaryName(b: unknown): string | undefined {
  if (!b || typeof b !== 'object') return undefined;
  const o = b as { fullName?: unknown; legalName?: unknown };
  if (typeof o.fullName === 'string') return o.fullName;
  if (typeof o.legalName === 'string') return o.legalName;
  return undefined;
}
