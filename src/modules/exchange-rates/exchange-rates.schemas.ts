/** Wire schemas for `GET /exchange-rates`. */
import { Type, type Static } from '@sinclair/typebox';
import { CurrencySchema, MAX_AMOUNT, Obj } from '../../http/schemas.ts';

export const PAYMENT_RAILS = [
  'ACH',
  'ACH_COLOMBIA',
  'BANK_TRANSFER',
  'BRE_B',
  'CIPS',
  'FAST',
  'FASTER_PAYMENTS',
  'FEDNOW',
  'INSTAPAY',
  'MOBILE_MONEY',
  'NEFT',
  'PAYNOW',
  'PESONET',
  'PIX',
  'RTGS',
  'RTP',
  'SEPA',
  'SEPA_INSTANT',
  'SPEI',
  'SWIFT',
  'UNIONPAY',
  'UPI',
  'WIRE',
] as const;
export type PaymentRail = (typeof PAYMENT_RAILS)[number];

export const PaymentRailSchema = Type.Union(
  PAYMENT_RAILS.map((r) => Type.Literal(r)),
  { title: 'PaymentRail', description: 'The payment network that moves the money to the destination' },
);

/** The default page of the live API: 10000 smallest units of the source currency. */
export const DEFAULT_SENDING_AMOUNT = 10_000;

export const ExchangeRateQuery = Obj({
  sourceCurrency: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 16,
      description: 'Source currency code; defaults to the platform fiat currency',
      examples: ['USD'],
    }),
  ),
  destinationCurrency: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 850 }), {
      maxItems: 50,
      description:
        'Destination currency code; repeat the key (`&destinationCurrency=INR&destinationCurrency=GBP`) or separate codes with commas (`destinationCurrency=INR,GBP`, as the live SDK sends them) for several. Omitted: every other currency with a payout rail',
      examples: [['INR']],
    }),
  ),
  sendingAmount: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_AMOUNT,
      default: DEFAULT_SENDING_AMOUNT,
      description: 'Amount to price, in the smallest unit of the source currency',
      examples: [10000],
    }),
  ),
});
export type ExchangeRateQueryT = Static<typeof ExchangeRateQuery>;

export const ExchangeRateFeesSchema = Obj(
  {
    fixed: Type.Integer({ minimum: 0, description: 'Fixed fee, in the smallest unit of the source currency' }),
    total: Type.Integer({
      minimum: 0,
      description: 'Fixed plus variable fee on sendingAmount, in the smallest unit of the source currency',
    }),
  },
  { title: 'ExchangeRateFees' },
);

export const ExchangeRateSchema = Obj(
  {
    sourceCurrency: CurrencySchema,
    destinationCurrency: CurrencySchema,
    destinationPaymentRail: PaymentRailSchema,
    minSendingAmount: Type.Integer({
      minimum: 0,
      description: 'Smallest sending amount accepted, in the smallest unit of the source currency',
    }),
    maxSendingAmount: Type.Integer({
      minimum: 0,
      description: 'Largest sending amount accepted, in the smallest unit of the source currency',
    }),
    sendingAmount: Type.Integer({ minimum: 0, description: 'The priced amount (the request value or its default)' }),
    receivingAmount: Type.Integer({
      minimum: 0,
      description: 'What arrives, in the smallest unit of the destination currency: floor((sendingAmount − fees.total) × exchangeRate)',
    }),
    exchangeRate: Type.Number({
      exclusiveMinimum: 0,
      description: 'Destination smallest units per source smallest unit, before fees (exact decimal of at most 10 significant digits)',
      examples: [83.12908517],
    }),
    fees: ExchangeRateFeesSchema,
    updatedAt: Type.String({ format: 'date-time', description: 'Start of the rate window; rates stay fixed for about 5 minutes' }),
  },
  { title: 'ExchangeRate' },
);
export type ExchangeRateWire = Static<typeof ExchangeRateSchema>;

export const ExchangeRateListSchema = Obj({ data: Type.Array(ExchangeRateSchema) }, { title: 'ExchangeRateListResponse' });
