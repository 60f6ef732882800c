/**
 * The bank-account (`<CCY>_ACCOUNT`, `SWIFT_ACCOUNT`) variants of `accountInfo`, as data: fields
 * with the live API's patterns and lengths, which are required, the payment rails the variant
 * offers and which fields each rail needs, the beneficiary rules, and which field is the primary
 * identifier (the one whose last 3 digits steer the sandbox).
 *
 * Names: the spec's canonical `US_ACCOUNT` is emitted; the live API's `USD_ACCOUNT` is accepted.
 * Only variants whose currency is in Corridor's currency catalogue are offered (see ENABLED in
 * account-info.ts); the others are kept here so that adding a currency enables its variant.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import type { BeneficiaryFlavor } from './beneficiary.ts';
import { CountryCode, PhoneNumber } from './beneficiary.ts';

const str = (o: { pattern?: string; min?: number; max?: number; description?: string; examples?: string[] }) =>
  Type.String({
    ...(o.pattern ? { pattern: o.pattern } : {}),
    minLength: o.min ?? 1,
    maxLength: o.max ?? 255,
    ...(o.description ? { description: o.description } : {}),
    ...(o.examples ? { examples: o.examples } : {}),
  });

const BIC = str({
  pattern: '^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$',
  min: 8,
  max: 11,
  description: 'SWIFT/BIC code',
  examples: ['DEUTDEFF'],
});
const BANK_NAME = str({ description: 'Name of the bank' });
const ACCOUNT_NUMBER = str({ max: 34, description: 'Bank account number' });
const BANK_ACCOUNT_TYPE = Type.Union([Type.Literal('CHECKING'), Type.Literal('SAVINGS')], { description: 'CHECKING or SAVINGS' });
const PROVIDER = str({ description: 'Mobile-money provider' });
const digits = (min: number, max: number, description: string) =>
  str({ pattern: min === max ? `^[0-9]{${min}}$` : `^[0-9]{${min},${max}}$`, min, max, description });
const phone = (prefix: string) =>
  str({ pattern: `^\\+${prefix}[0-9]{9}$`, min: 7, max: 15, description: `E.164 phone number (+${prefix}…)` });
const iban = (pattern: string, min: number, max = min) => str({ pattern, min, max, description: 'IBAN (no spaces, mod-97 checked)' });

export interface FiatVariant {
  /** The accountType Corridor emits. */
  accountType: string;
  /** Other names accepted on input. */
  aliases?: string[];
  /** The currency this variant is denominated in; undefined: any fiat currency (SWIFT). */
  currency?: string;
  title: string;
  fields: Record<string, TSchema>;
  required: string[];
  /** The rails the variant offers, in the live API's order. */
  rails: string[];
  /** Rails the live clients may name in a create request besides `rails` (accepted there, not offered). */
  requestRails?: string[];
  /**
   * Fields each rail needs. The account is offered every rail whose fields are all present; a rail
   * with only some of them present is a 400 naming the missing ones, and so is an account that
   * satisfies no rail. Absent: every rail, no extra requirement.
   */
  railFields?: Record<string, string[]>;
  /** The primary identifier: the first of these fields that is present. */
  identifier: string[];
  /** Fields that together identify the account for duplicate detection (default: identifier). */
  identity?: string[];
  beneficiary?: BeneficiaryFlavor;
}

const bankOrMobile = (bankFields: string[]) => ({
  rails: ['BANK_TRANSFER', 'MOBILE_MONEY'],
  railFields: { BANK_TRANSFER: bankFields, MOBILE_MONEY: ['phoneNumber'] },
});

const mobileMoney = (ccy: string, phoneSchema: TSchema = PhoneNumber, extra: Record<string, TSchema> = {}): FiatVariant => ({
  accountType: `${ccy}_ACCOUNT`,
  currency: ccy,
  title: `${ccy} Account`,
  fields: { phoneNumber: phoneSchema, provider: PROVIDER, ...extra },
  required: ['phoneNumber', 'provider', ...Object.keys(extra)],
  rails: ['MOBILE_MONEY'],
  identifier: ['phoneNumber'],
});

const swiftBank = (ccy: string, extra: Record<string, TSchema> = {}): FiatVariant => ({
  accountType: `${ccy}_ACCOUNT`,
  currency: ccy,
  title: `${ccy} Account`,
  fields: { bankName: BANK_NAME, accountNumber: ACCOUNT_NUMBER, swiftCode: BIC, ...extra },
  required: ['bankName', 'accountNumber', 'swiftCode', ...Object.keys(extra)],
  rails: ['BANK_TRANSFER'],
  identifier: ['accountNumber'],
  identity: ['swiftCode', 'accountNumber'],
});

export const FIAT_VARIANTS: FiatVariant[] = [
  {
    accountType: 'US_ACCOUNT',
    aliases: ['USD_ACCOUNT'],
    currency: 'USD',
    title: 'US Bank Account',
    fields: {
      accountNumber: str({ max: 34, description: 'Bank account number', examples: ['12345678901'] }),
      routingNumber: digits(9, 9, 'ABA routing number'),
      bankName: str({ max: 140, description: 'Name of the bank' }),
      bankAccountType: BANK_ACCOUNT_TYPE,
      intermediaryBankName: str({ max: 140, description: 'WIRE only' }),
      intermediaryRoutingNumber: digits(9, 9, 'WIRE only'),
      fiToFiInformation: Type.String({ maxLength: 210, description: 'WIRE only' }),
    },
    required: ['accountNumber', 'routingNumber'],
    rails: ['ACH', 'WIRE', 'RTP', 'FEDNOW'],
    identifier: ['accountNumber'],
    identity: ['routingNumber', 'accountNumber'],
  },
  {
    accountType: 'EUR_ACCOUNT',
    currency: 'EUR',
    title: 'EUR Account',
    fields: { iban: iban('^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$', 15, 34), swiftCode: BIC },
    required: ['iban'],
    rails: ['SEPA', 'SEPA_INSTANT'],
    identifier: ['iban'],
    beneficiary: { required: ['countryOfResidence'] },
  },
  {
    accountType: 'GBP_ACCOUNT',
    currency: 'GBP',
    title: 'GBP Account',
    fields: { sortCode: digits(6, 6, 'UK sort code'), accountNumber: digits(8, 8, 'UK account number') },
    required: ['sortCode', 'accountNumber'],
    rails: ['FASTER_PAYMENTS'],
    identifier: ['accountNumber'],
    identity: ['sortCode', 'accountNumber'],
  },
  {
    accountType: 'MXN_ACCOUNT',
    currency: 'MXN',
    title: 'MXN Account',
    fields: { clabeNumber: digits(18, 18, 'CLABE (18 digits, the last a check digit)') },
    required: ['clabeNumber'],
    rails: ['SPEI'],
    identifier: ['clabeNumber'],
  },
  {
    accountType: 'BRL_ACCOUNT',
    currency: 'BRL',
    title: 'BRL Account',
    fields: {
      pixKey: str({ max: 77, description: 'PIX key: CPF or CNPJ digits, e-mail, +55 phone, or random (UUID) key' }),
      pixKeyType: Type.Union(['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'].map((v) => Type.Literal(v))),
      taxId: digits(11, 14, 'CPF (11 digits) or CNPJ (14 digits) of the account holder'),
    },
    required: ['pixKey', 'pixKeyType', 'taxId'],
    rails: ['PIX'],
    identifier: ['pixKey'],
  },
  {
    accountType: 'INR_ACCOUNT',
    currency: 'INR',
    title: 'INR Account',
    fields: {
      vpa: str({ pattern: '^[a-zA-Z0-9.\\-_]+@[a-zA-Z0-9]+$', min: 3, description: 'UPI virtual payment address (UPI rail)' }),
      accountNumber: digits(9, 18, 'Indian bank account number (NEFT/RTGS)'),
      ifsc: str({ pattern: '^[A-Z]{4}0[A-Z0-9]{6}$', min: 11, max: 11, description: 'IFSC of the branch (NEFT/RTGS)' }),
      // A string as in the live schema (1–32 characters); the value must name NEFT or RTGS (account-info.ts, railsFor).
      rail: str({ min: 1, max: 32, description: 'The rail to route payouts over with accountNumber + ifsc: NEFT or RTGS' }),
      bankName: BANK_NAME,
    },
    required: [],
    rails: ['UPI', 'NEFT', 'RTGS'],
    // The live TypeScript SDK's types name IMPS.
    requestRails: ['IMPS'],
    // NEFT and RTGS share fields; `rail` says which one (see railsFor in account-info.ts).
    railFields: { UPI: ['vpa'], NEFT: ['accountNumber', 'ifsc', 'rail'] },
    identifier: ['vpa', 'accountNumber'],
    identity: ['vpa', 'ifsc', 'accountNumber'],
  },
  {
    accountType: 'CAD_ACCOUNT',
    currency: 'CAD',
    title: 'CAD Account',
    fields: {
      bankCode: digits(3, 3, 'Institution number'),
      branchCode: digits(5, 5, 'Transit number'),
      accountNumber: digits(7, 12, 'Account number'),
    },
    required: ['bankCode', 'branchCode', 'accountNumber'],
    rails: ['BANK_TRANSFER'],
    identifier: ['accountNumber'],
    identity: ['bankCode', 'branchCode', 'accountNumber'],
    beneficiary: { extra: { registrationNumber: str({ description: 'Registration number of the beneficiary' }) } },
  },
  {
    accountType: 'DKK_ACCOUNT',
    currency: 'DKK',
    title: 'DKK Account',
    fields: { iban: iban('^DK[0-9]{16}$', 18), swiftCode: BIC },
    required: ['iban'],
    rails: ['SEPA', 'SEPA_INSTANT'],
    identifier: ['iban'],
  },
  {
    accountType: 'AED_ACCOUNT',
    currency: 'AED',
    title: 'AED Account',
    fields: { iban: iban('^AE[0-9]{21}$', 23), swiftCode: BIC },
    required: ['iban'],
    rails: ['BANK_TRANSFER'],
    identifier: ['iban'],
    beneficiary: { required: ['address'] },
  },
  {
    accountType: 'NGN_ACCOUNT',
    currency: 'NGN',
    title: 'NGN Account',
    fields: { accountNumber: digits(10, 10, 'NUBAN account number'), bankName: BANK_NAME },
    required: ['accountNumber', 'bankName'],
    rails: ['BANK_TRANSFER'],
    identifier: ['accountNumber'],
    identity: ['bankName', 'accountNumber'],
  },
  {
    accountType: 'PHP_ACCOUNT',
    currency: 'PHP',
    title: 'PHP Account',
    fields: { bankName: BANK_NAME, accountNumber: digits(8, 16, 'Account number') },
    required: ['bankName', 'accountNumber'],
    rails: ['BANK_TRANSFER'],
    identifier: ['accountNumber'],
    identity: ['bankName', 'accountNumber'],
  },
  {
    accountType: 'SGD_ACCOUNT',
    currency: 'SGD',
    title: 'SGD Account',
    fields: { bankName: BANK_NAME, accountNumber: ACCOUNT_NUMBER, swiftCode: BIC },
    required: ['accountNumber', 'swiftCode'],
    // PAYNOW pays a proxy (phone, UEN), which this variant does not carry.
    rails: ['FAST', 'BANK_TRANSFER'],
    requestRails: ['PAYNOW'],
    identifier: ['accountNumber'],
    identity: ['swiftCode', 'accountNumber'],
  },
  swiftBank('HKD'),
  swiftBank('IDR', { phoneNumber: str({ pattern: '^\\+62[0-9]{9,12}$', min: 7, max: 15, description: 'E.164 phone number (+62…)' }) }),
  swiftBank('MYR'),
  swiftBank('THB'),
  swiftBank('VND'),
  {
    accountType: 'ZAR_ACCOUNT',
    currency: 'ZAR',
    title: 'ZAR Account',
    fields: { accountNumber: digits(9, 13, 'Account number'), bankName: BANK_NAME },
    required: ['accountNumber', 'bankName'],
    rails: ['BANK_TRANSFER'],
    identifier: ['accountNumber'],
    identity: ['bankName', 'accountNumber'],
  },
  {
    accountType: 'GTQ_ACCOUNT',
    currency: 'GTQ',
    title: 'GTQ Account',
    fields: { accountNumber: ACCOUNT_NUMBER, bankAccountType: BANK_ACCOUNT_TYPE, bankName: BANK_NAME },
    required: ['accountNumber', 'bankAccountType', 'bankName'],
    rails: ['BANK_TRANSFER'],
    identifier: ['accountNumber'],
    identity: ['bankName', 'accountNumber'],
    beneficiary: { required: ['countryOfResidence', 'phoneNumber'] },
  },
  {
    accountType: 'JMD_ACCOUNT',
    currency: 'JMD',
    title: 'JMD Account',
    fields: {
      accountNumber: ACCOUNT_NUMBER,
      branchCode: digits(5, 5, 'Branch code'),
      bankAccountType: BANK_ACCOUNT_TYPE,
      bankName: BANK_NAME,
    },
    required: ['accountNumber', 'branchCode', 'bankAccountType', 'bankName'],
    rails: ['BANK_TRANSFER'],
    identifier: ['accountNumber'],
    identity: ['bankName', 'branchCode', 'accountNumber'],
    beneficiary: { required: ['address', 'phoneNumber'] },
  },
  {
    accountType: 'COP_ACCOUNT',
    currency: 'COP',
    title: 'COP Account',
    fields: { bankName: BANK_NAME, accountNumber: ACCOUNT_NUMBER, bankAccountType: BANK_ACCOUNT_TYPE, phoneNumber: PhoneNumber },
    required: ['bankName'],
    ...bankOrMobile(['accountNumber', 'bankAccountType']),
    identifier: ['accountNumber', 'phoneNumber'],
    identity: ['bankName', 'accountNumber', 'phoneNumber'],
    beneficiary: {
      extra: {
        documentType: Type.Union(
          ['CC', 'CE', 'TI', 'NIT', 'PP'].map((v) => Type.Literal(v)),
          { description: 'Identity document type' },
        ),
        documentNumber: str({ max: 50, description: 'Identity document number' }),
      },
    },
  },
  ...['BDT', 'GHS', 'CNY'].map(
    (ccy): FiatVariant => ({
      accountType: `${ccy}_ACCOUNT`,
      currency: ccy,
      title: `${ccy} Account`,
      fields: {
        bankName: BANK_NAME,
        accountNumber: ACCOUNT_NUMBER,
        ...(ccy === 'BDT' ? { branchCode: digits(5, 5, 'Branch code'), swiftCode: BIC } : {}),
        phoneNumber: PhoneNumber,
      },
      required: ['bankName'],
      ...bankOrMobile(['accountNumber']),
      identifier: ['accountNumber', 'phoneNumber'],
      identity: ['bankName', 'accountNumber', 'phoneNumber'],
    }),
  ),
  {
    accountType: 'EGP_ACCOUNT',
    currency: 'EGP',
    title: 'EGP Account',
    fields: { bankName: BANK_NAME, iban: iban('^EG[0-9]{27}$', 29), phoneNumber: PhoneNumber },
    required: ['bankName'],
    ...bankOrMobile(['iban']),
    identifier: ['iban', 'phoneNumber'],
  },
  {
    accountType: 'PKR_ACCOUNT',
    currency: 'PKR',
    title: 'PKR Account',
    fields: {
      bankName: BANK_NAME,
      accountNumber: ACCOUNT_NUMBER,
      iban: iban('^PK[0-9]{2}[A-Z]{4}[0-9]{16}$', 24),
      phoneNumber: PhoneNumber,
    },
    required: ['bankName'],
    ...bankOrMobile(['accountNumber']),
    identifier: ['accountNumber', 'iban', 'phoneNumber'],
    identity: ['bankName', 'accountNumber', 'phoneNumber'],
  },
  {
    // El Salvador's legal tender is the US dollar; the live API names no SLV currency.
    accountType: 'SLV_ACCOUNT',
    currency: 'USD',
    title: 'SLV Account',
    fields: { bankName: BANK_NAME, accountNumber: ACCOUNT_NUMBER, bankAccountType: BANK_ACCOUNT_TYPE, phoneNumber: PhoneNumber },
    required: [],
    ...bankOrMobile(['accountNumber', 'bankAccountType']),
    identifier: ['accountNumber', 'phoneNumber'],
    identity: ['bankName', 'accountNumber', 'phoneNumber'],
  },
  mobileMoney('KES', phone('254')),
  mobileMoney('TZS', phone('255')),
  mobileMoney('RWF', phone('250')),
  mobileMoney('ZMW', phone('260')),
  mobileMoney('UGX'),
  mobileMoney('MWK'),
  mobileMoney('BWP'),
  {
    accountType: 'HTG_ACCOUNT',
    currency: 'HTG',
    title: 'HTG Account',
    fields: { phoneNumber: PhoneNumber },
    required: ['phoneNumber'],
    rails: ['MOBILE_MONEY'],
    identifier: ['phoneNumber'],
  },
  mobileMoney('XOF', PhoneNumber, { region: Type.Union(['BJ', 'CI', 'SN', 'TG'].map((v) => Type.Literal(v))) }),
  mobileMoney('XAF', PhoneNumber, { region: Type.Union(['CM', 'CG'].map((v) => Type.Literal(v))) }),
  {
    accountType: 'SWIFT_ACCOUNT',
    title: 'SWIFT Account',
    fields: {
      country: CountryCode,
      swiftCode: BIC,
      bankName: BANK_NAME,
      accountNumber: ACCOUNT_NUMBER,
      iban: iban('^[A-Z]{2}[0-9]{2}[A-Za-z0-9]{11,30}$', 15, 34),
    },
    required: ['country', 'swiftCode', 'bankName'],
    rails: ['SWIFT'],
    // At least one of accountNumber or iban (checked in account-info.ts).
    identifier: ['accountNumber', 'iban'],
    identity: ['swiftCode', 'accountNumber', 'iban'],
  },
];
