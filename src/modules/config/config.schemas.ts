/** Wire schemas for the platform configuration (`GET`/`PATCH /config`). */
import { Type, type Static } from '@sinclair/typebox';
import { Amount, CurrencyCode, DateTime, Obj } from '../../http/schemas.ts';

export const CustomerInfoFieldName = Type.Union(
  [
    'FULL_NAME',
    'BIRTH_DATE',
    'NATIONALITY',
    'PHONE_NUMBER',
    'EMAIL',
    'POSTAL_ADDRESS',
    'TAX_ID',
    'REGISTRATION_NUMBER',
    'USER_TYPE',
    'COUNTRY_OF_RESIDENCE',
    'ACCOUNT_IDENTIFIER',
    'FI_LEGAL_ENTITY_NAME',
    'FI_ADDRESS',
    'PURPOSE_OF_PAYMENT',
    'ULTIMATE_INSTITUTION_COUNTRY',
    'IDENTIFIER',
    'BUSINESS_TYPE',
    'COMPANY_LEGAL_NAME',
    'ID_TYPE',
    'ID_NUMBER',
  ].map((v) => Type.Literal(v)),
);

export const TransactionType = Type.Union([Type.Literal('INCOMING'), Type.Literal('OUTGOING')]);

export const PlatformCurrencyConfigSchema = Obj(
  {
    currencyCode: CurrencyCode,
    minAmount: Amount('Smallest amount per transaction, in the smallest unit'),
    maxAmount: Amount('Largest amount per transaction, in the smallest unit'),
    requiredCounterpartyFields: Type.Array(Obj({ name: CustomerInfoFieldName, mandatory: Type.Boolean() }), { maxItems: 50 }),
    providerRequiredCustomerFields: Type.Optional(Type.Array(CustomerInfoFieldName, { readOnly: true })),
    providerRequiredCounterpartyCustomerFields: Type.Optional(Type.Array(CustomerInfoFieldName, { readOnly: true })),
    enabledTransactionTypes: Type.Array(TransactionType, { maxItems: 2 }),
  },
  { title: 'PlatformCurrencyConfig' },
);
export type PlatformCurrencyConfig = Static<typeof PlatformCurrencyConfigSchema>;

const Email = Type.String({ format: 'email', maxLength: 255 });

export const EmbeddedWalletConfigSchema = Obj(
  {
    appName: Type.Optional(Type.String({ maxLength: 255 })),
    otpLength: Type.Optional(Type.Integer({ minimum: 4, maximum: 12 })),
    alphanumeric: Type.Optional(Type.Boolean()),
    expirationSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86400 })),
    sendFromEmailAddress: Type.Optional(Email),
    sendFromEmailSenderName: Type.Optional(Type.String({ maxLength: 255 })),
    replyToEmailAddress: Type.Optional(Email),
    logoUrl: Type.Optional(Type.String({ format: 'uri', maxLength: 512 })),
  },
  { title: 'EmbeddedWalletConfig' },
);
export type EmbeddedWalletConfig = Static<typeof EmbeddedWalletConfigSchema>;

const Short = Type.String({ maxLength: 255 });
export const CardTokenization2faConfigSchema = Obj(
  {
    displayName: Type.Optional(Short),
    logoUrl: Type.Optional(Type.String({ format: 'uri', pattern: '^https://', maxLength: 512 })),
    email: Type.Optional(
      Obj({
        fromAddress: Type.Optional(Short),
        fromName: Type.Optional(Short),
        replyToAddress: Type.Optional(Short),
        subject: Type.Optional(Short),
        bodyText: Type.Optional(Type.String({ maxLength: 2000 })),
      }),
    ),
    sms: Type.Optional(
      Obj({ templateSid: Type.Optional(Type.String({ maxLength: 64 })), bodyText: Type.Optional(Type.String({ maxLength: 480 })) }),
    ),
  },
  { title: 'CardTokenization2FAConfig' },
);
export type CardTokenization2faConfig = Static<typeof CardTokenization2faConfigSchema>;

export const FeeConfigSchema = Obj(
  {
    feeType: Type.Union([Type.Literal('CROSS_CURRENCY_TRANSACTION')]),
    sourceCurrency: CurrencyCode,
    variableFeeBps: Type.Integer({ minimum: 0, maximum: 10000 }),
    fixedFee: Obj({ amount: Amount('Fixed fee in the smallest unit'), currency: CurrencyCode }),
  },
  { title: 'FeeConfig' },
);
export type FeeConfig = Static<typeof FeeConfigSchema>;

const WebhookUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048 });
const UmaDomain = Type.String({ pattern: '^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,63}$' });

export const PlatformConfigSchema = Obj(
  {
    id: Type.String({ examples: ['PlatformConfig:019542f5-b3e7-7d02-8000-000000000001'] }),
    umaDomain: Type.String(),
    proxyUmaSubdomain: Type.String(),
    webhookEndpoint: Type.Optional(Type.String()),
    supportedCurrencies: Type.Array(PlatformCurrencyConfigSchema),
    isRegulatedFinancialInstitution: Type.Boolean(),
    embeddedWalletConfig: Type.Optional(EmbeddedWalletConfigSchema),
    cardTokenization2faConfig: Type.Optional(CardTokenization2faConfigSchema),
    feeConfigs: Type.Array(FeeConfigSchema),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'PlatformConfig' },
);

export const PlatformConfigUpdateSchema = Obj(
  {
    umaDomain: Type.Optional(UmaDomain),
    webhookEndpoint: Type.Optional(WebhookUrl),
    supportedCurrencies: Type.Optional(Type.Array(PlatformCurrencyConfigSchema, { minItems: 1, maxItems: 50 })),
    embeddedWalletConfig: Type.Optional(EmbeddedWalletConfigSchema),
    cardTokenization2faConfig: Type.Optional(CardTokenization2faConfigSchema),
    feeConfigs: Type.Optional(Type.Array(FeeConfigSchema, { maxItems: 20 })),
  },
  { title: 'PlatformConfigUpdateRequest' },
);
export type PlatformConfigUpdate = Static<typeof PlatformConfigUpdateSchema>;
