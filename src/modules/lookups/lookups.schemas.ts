/**
 * Wire schemas of the lookups and catalogues: receiver lookups (UMA address, external account), the
 * UMA-provider and VASP directories, and the crypto withdrawal fee estimate. Names, fields and
 * enums are the live API's (`ReceiverUmaLookupResponse`, `UmaProviderListResponse`, …).
 */
import { Type, type Static } from '@sinclair/typebox';
import { CurrencyCode, CurrencySchema, IdString, MAX_AMOUNT, Obj, PageQueryFields } from '../../http/schemas.ts';
import { CustomerInfoFieldName } from '../config/config.schemas.ts';

// ---------------------------------------------------------------------------------------------
// Receiver lookups

/** The sender of a lookup: one of the two is needed (both may be given when they agree). */
export const LookupQuery = Obj({
  senderUmaAddress: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: "UMA address of the sender: one of the platform's customers (needed unless customerId is given)",
      examples: ['$jane@p0123456789abcdef.corridor.localhost'],
    }),
  ),
  customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
});
export type LookupQueryT = Static<typeof LookupQuery>;

export const UmaLookupParams = Obj({
  receiverUmaAddress: Type.String({
    minLength: 1,
    maxLength: 320,
    description: 'UMA address of the receiver ($name@domain); it may arrive percent-encoded',
    examples: ['$success.usd@sandbox.uma.money'],
  }),
});

export const ExternalAccountLookupParams = Obj({ accountId: IdString('ExternalAccount:019542f5-b3e7-7d02-8000-000000000001') });

export const CurrencyPreferenceSchema = Obj(
  {
    currency: CurrencySchema,
    estimatedExchangeRate: Type.Number({
      exclusiveMinimum: 0,
      description: "Receiving smallest units per sending smallest unit, from the sender's currency; an estimate, not locked",
    }),
    min: Type.Integer({ exclusiveMinimum: 0, description: 'Smallest amount that can be received in this currency (smallest unit)' }),
    max: Type.Integer({ exclusiveMinimum: 0, description: 'Largest amount that can be received in this currency (smallest unit)' }),
  },
  { title: 'CurrencyPreference' },
);
export type CurrencyPreferenceWire = Static<typeof CurrencyPreferenceSchema>;

export const CounterpartyFieldDefinitionSchema = Obj(
  {
    name: CustomerInfoFieldName,
    mandatory: Type.Boolean({ description: 'A mandatory field must be sent in the quote request’s senderCustomerInfo' }),
  },
  { title: 'CounterpartyFieldDefinition' },
);
export type CounterpartyFieldWire = Static<typeof CounterpartyFieldDefinitionSchema>;

const lookupFields = {
  supportedCurrencies: Type.Array(CurrencyPreferenceSchema, { description: 'Currencies the receiver accepts' }),
  requiredPayerDataFields: Type.Array(CounterpartyFieldDefinitionSchema, {
    description: 'What the receiver needs to know about the payer: send the mandatory ones in POST /quotes senderCustomerInfo',
  }),
  lookupId: Type.String({
    description: 'Pass as lookupId to POST /quotes (with the same receiver and sender) until it expires',
    examples: ['Lookup:019542f5-b3e7-7d02-8000-000000000009'],
  }),
};

export const ReceiverUmaLookupSchema = Obj(
  { receiverUmaAddress: Type.String({ description: 'The UMA address looked up' }), ...lookupFields },
  { title: 'ReceiverUmaLookupResponse' },
);
export type ReceiverUmaLookupWire = Static<typeof ReceiverUmaLookupSchema>;

export const ReceiverExternalAccountLookupSchema = Obj(
  { accountId: Type.String({ description: 'The external account looked up' }), ...lookupFields },
  { title: 'ReceiverExternalAccountLookupResponse' },
);
export type ReceiverExternalAccountLookupWire = Static<typeof ReceiverExternalAccountLookupSchema>;

// ---------------------------------------------------------------------------------------------
// Directories

export const UmaProviderQuery = Obj({
  countryCode: Type.Optional(
    Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2: providers operating in this country', examples: ['US'] }),
  ),
  currencyCode: Type.Optional(
    Type.String({ pattern: '^[A-Z0-9]{3,5}$', description: 'Providers supporting this currency code', examples: ['USD'] }),
  ),
  hasBlockedProviders: Type.Optional(
    Type.Boolean({ description: "Include providers not on the platform's allow list (allowListStatus false); default true" }),
  ),
  sortOrder: Type.Optional(
    Type.Union([Type.Literal('asc'), Type.Literal('desc')], { default: 'desc', description: 'Order of `domain`; default desc' }),
  ),
  ...PageQueryFields,
});
export type UmaProviderQueryT = Static<typeof UmaProviderQuery>;

export const UmaProviderSchema = Obj(
  {
    name: Type.String(),
    supportedRegions: Type.Array(Type.String(), { description: 'ISO 3166-1 alpha-2 countries the provider operates in' }),
    domain: Type.String({ description: 'The domain of its UMA addresses ($name@domain)' }),
    logoUrl: Type.Optional(Type.String({ format: 'uri' })),
    supportedCurrencies: Type.Array(CurrencySchema),
    lei: Type.Optional(Type.String({ description: 'Legal Entity Identifier, when it has one' })),
    allowListStatus: Type.Boolean({ description: 'Whether the platform may pay this provider’s addresses' }),
  },
  { title: 'UmaProvider' },
);
export type UmaProviderWire = Static<typeof UmaProviderSchema>;

export const UmaProviderListSchema = Obj(
  {
    data: Type.Array(UmaProviderSchema),
    hasMore: Type.Boolean(),
    nextCursor: Type.Optional(Type.String()),
    totalCount: Type.Integer({ minimum: 0, description: 'Providers matching the filters, across all pages' }),
  },
  { title: 'UmaProviderListResponse' },
);
export type UmaProviderListWire = Static<typeof UmaProviderListSchema>;

export const VaspQuery = Obj({ ...PageQueryFields });
export type VaspQueryT = Static<typeof VaspQuery>;

export const VaspSchema = Obj(
  {
    vaspName: Type.String({ description: 'Send exactly this as accountInfo.vaspName for a wallet held at this VASP' }),
    url: Type.Optional(Type.String({ format: 'uri' })),
  },
  { title: 'Vasp' },
);
export type VaspWire = Static<typeof VaspSchema>;

/** As the live `VaspListResponse`: no `totalCount`. */
export const VaspListSchema = Obj(
  { data: Type.Array(VaspSchema), hasMore: Type.Boolean(), nextCursor: Type.Optional(Type.String()) },
  { title: 'VaspListResponse' },
);
export type VaspListWire = Static<typeof VaspListSchema>;

// ---------------------------------------------------------------------------------------------
// Crypto withdrawal fee

/** The networks a withdrawal can take: those of Corridor's wallet external accounts, and Lightning. */
export const CRYPTO_NETWORKS = ['SPARK', 'LIGHTNING', 'SOLANA', 'ETHEREUM', 'BASE', 'POLYGON', 'TRON', 'PLASMA'] as const;
export type CryptoNetwork = (typeof CRYPTO_NETWORKS)[number];

export const EstimateWithdrawalFeeSchema = Obj(
  {
    internalAccountId: IdString('InternalAccount:019542f5-b3e7-7d02-8000-000000000001'),
    currency: CurrencyCode,
    cryptoNetwork: Type.Union(
      CRYPTO_NETWORKS.map((n) => Type.Literal(n)),
      { description: 'The network to withdraw on' },
    ),
    amount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT, description: 'Amount to withdraw, in the smallest unit of currency' }),
    destinationAddress: Type.String({ minLength: 1, maxLength: 2048, description: 'Address (or Lightning invoice) to withdraw to' }),
  },
  { title: 'EstimateCryptoWithdrawalFeeRequest' },
);
export type EstimateWithdrawalFee = Static<typeof EstimateWithdrawalFeeSchema>;

export const EstimateWithdrawalFeeResponseSchema = Obj(
  {
    networkFee: Type.Integer({ minimum: 0, description: 'Network fee in the smallest unit of networkFeeAsset (informational)' }),
    networkFeeAsset: Type.String({ description: 'The asset the network fee is paid in (SOL, ETH, POL, TRX, XPL, BTC)' }),
    applicationFee: Type.Integer({ minimum: 0, description: 'Platform fee, in the smallest unit of the withdrawal currency' }),
    totalFee: Type.Integer({
      minimum: 0,
      description: 'applicationFee plus the network fee in the withdrawal currency; taken from amount',
    }),
    netAmount: Type.Integer({ minimum: 1, description: 'What arrives: amount − totalFee' }),
  },
  { title: 'EstimateCryptoWithdrawalFeeResponse' },
);
export type EstimateWithdrawalFeeWire = Static<typeof EstimateWithdrawalFeeResponseSchema>;
