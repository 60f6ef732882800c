/** Wire schemas for quotes, transactions and same-currency transfers. */
import { Type, type Static } from '@sinclair/typebox';
import { ScaChallengeSchema, ScaFactorSchema } from '../sca/sca.schemas.ts';
import {
  Amount,
  CurrencyAmountSchema,
  CurrencyCode,
  CurrencySchema,
  DateTime,
  IdString,
  Obj,
  OneOf,
  Page,
  PageQueryFields,
} from '../../http/schemas.ts';
import { CardTransactionSchema } from '../cards/cards.schemas.ts';
import { PaymentRailSchema } from '../exchange-rates/exchange-rates.schemas.ts';
import { FundingInstructionSchema } from '../internal-accounts/internal-accounts.schemas.ts';

const StrEnum = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description ? { description } : {},
  );

/** Largest locked amount the live API accepts. */
export const MAX_LOCKED_AMOUNT = 9_000_000_000_000_000;

export const PurposeOfPayment = StrEnum([
  'GIFT',
  'SELF',
  'GOODS_OR_SERVICES',
  'EDUCATION',
  'HEALTH_OR_MEDICAL',
  'REAL_ESTATE_PURCHASE',
  'TAX_PAYMENT',
  'LOAN_PAYMENT',
  'UTILITY_BILL',
  'DONATION',
  'TRAVEL',
  'FAMILY_SUPPORT',
  'SALARY_PAYMENT',
  'OTHER',
]);

const AccountId = IdString('InternalAccount:019542f5-b3e7-7d02-8000-000000000001');

export const QuoteSourceSchema = OneOf(
  [
    Obj({
      sourceType: Type.Literal('ACCOUNT'),
      accountId: AccountId,
      customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
    }),
    Obj({
      sourceType: Type.Literal('REALTIME_FUNDING'),
      currency: CurrencyCode,
      customerId: Type.Optional(IdString('Customer:019542f5-b3e7-7d02-8000-000000000001')),
      cryptoNetwork: Type.Optional(Type.String({ maxLength: 32 })),
    }),
  ],
  'sourceType',
  { title: 'QuoteSource' },
);

export const QuoteDestinationSchema = OneOf(
  [
    Obj({ destinationType: Type.Literal('ACCOUNT'), accountId: AccountId, paymentRail: Type.Optional(PaymentRailSchema) }),
    Obj({
      destinationType: Type.Literal('UMA_ADDRESS'),
      umaAddress: Type.String({ minLength: 3, maxLength: 255, examples: ['$success.usd@sandbox.uma.money'] }),
      currency: Type.Optional(CurrencyCode),
    }),
  ],
  'destinationType',
  { title: 'QuoteDestination' },
);

/** The preferred factor of a per-transaction SCA challenge (TOTP is refused: sca-gate.ts). */
export { ScaFactorSchema };

/** This quote's platform fee instead of the configured ones (USD sources; the fixed fee in USD). */
export const PlatformFeeOverrideSchema = Obj(
  {
    platformFixedFee: Obj({ amount: Amount('Fixed fee in the smallest unit of the source currency'), currency: CurrencyCode }),
    platformVariableFeeBps: Type.Integer({ minimum: 0, maximum: 10000, description: 'Variable fee in basis points of the sending amount' }),
  },
  { title: 'PlatformFeeOverride' },
);

export const QuoteCreateSchema = Obj(
  {
    lookupId: Type.Optional(Type.String({ maxLength: 200 })),
    source: QuoteSourceSchema,
    destination: QuoteDestinationSchema,
    lockedCurrencySide: StrEnum(['SENDING', 'RECEIVING']),
    lockedCurrencyAmount: Type.Integer({ minimum: 1, maximum: MAX_LOCKED_AMOUNT }),
    immediatelyExecute: Type.Optional(Type.Boolean({ default: false })),
    description: Type.Optional(Type.String({ maxLength: 1024 })),
    remittanceInformation: Type.Optional(Type.String({ maxLength: 80 })),
    purposeOfPayment: Type.Optional(PurposeOfPayment),
    senderCustomerInfo: Type.Optional(Type.Object({}, { additionalProperties: Type.String({ maxLength: 1024 }), maxProperties: 30 })),
    platformFeeOverride: Type.Optional(PlatformFeeOverrideSchema),
    scaFactor: Type.Optional(ScaFactorSchema),
  },
  { title: 'QuoteRequest' },
);
export type QuoteCreate = Static<typeof QuoteCreateSchema>;

/**
 * How a quote's amounts were priced, in the live API's terms (docs/decisions.md, "Wire fidelity"):
 * Corridor has no mSATs leg, so the intermediate unit is the sending currency's smallest unit.
 */
export const OutgoingRateDetailsSchema = Obj(
  {
    counterpartyMultiplier: Type.Number({
      exclusiveMinimum: 0,
      description: "Receiving smallest units per sending smallest unit: the quote's exchange rate",
    }),
    counterpartyFixedFee: Type.Integer({
      minimum: 0,
      description: 'Fixed fee on the receiving side (smallest unit of the receiving currency); Corridor charges none',
    }),
    gridApiMultiplier: Type.Number({
      exclusiveMinimum: 0,
      description: 'Sending smallest units kept per sending smallest unit after the variable fee: 1 − gridApiVariableFeeRate',
    }),
    gridApiFixedFee: Type.Integer({ minimum: 0, description: 'Fixed fee, in the smallest unit of the sending currency' }),
    gridApiVariableFeeRate: Type.Number({ minimum: 0, description: 'Variable fee as a fraction of the sending amount (30 bps is 0.003)' }),
    gridApiVariableFeeAmount: Type.Integer({
      minimum: 0,
      description: 'Variable fee, in the smallest unit of the sending currency: the sending amount times the rate, rounded half up',
    }),
  },
  { title: 'OutgoingRateDetails' },
);
export type RateDetailsWire = Static<typeof OutgoingRateDetailsSchema>;

/** How the payment rail was chosen: MANUAL when the request named `paymentRail`, AUTO when Corridor picked it. */
export const RailSelectionModeSchema = StrEnum(['AUTO', 'MANUAL'], 'How the payment rail was chosen');
export type RailSelectionMode = Static<typeof RailSelectionModeSchema>;

export const QuoteStatus = StrEnum(['PENDING', 'PENDING_AUTHORIZATION', 'PROCESSING', 'COMPLETED', 'FAILED', 'EXPIRED']);

export const QuoteSchema = Obj(
  {
    id: Type.String({ examples: ['Quote:019542f5-b3e7-7d02-8000-000000000001'] }),
    status: QuoteStatus,
    createdAt: DateTime,
    expiresAt: DateTime,
    source: Type.Object({ sourceType: Type.String() }, { additionalProperties: true }),
    destination: Type.Object({ destinationType: Type.String() }, { additionalProperties: true }),
    sendingCurrency: CurrencySchema,
    receivingCurrency: CurrencySchema,
    totalSendingAmount: Type.Integer(),
    totalReceivingAmount: Type.Integer(),
    exchangeRate: Type.Number({ description: 'Receiving smallest units per sending smallest unit (before fees)' }),
    feesIncluded: Type.Integer({ description: 'In the sending currency; included in totalSendingAmount' }),
    platformFeesIncluded: Type.Integer(),
    paymentInstructions: Type.Optional(Type.Array(FundingInstructionSchema)),
    transactionId: Type.String(),
    description: Type.Optional(Type.String()),
    rateDetails: Type.Optional(OutgoingRateDetailsSchema),
    scaChallenge: Type.Optional(ScaChallengeSchema),
  },
  { title: 'Quote' },
);
export type QuoteWire = Static<typeof QuoteSchema>;

export const TransactionStatus = StrEnum([
  'CREATED',
  'PENDING',
  'PENDING_AUTHORIZATION',
  'PROCESSING',
  'COMPLETED',
  'REJECTED',
  'FAILED',
  'REFUNDED',
  'EXPIRED',
]);

export const RefundSchema = Obj(
  {
    reference: Type.String(),
    initiatedAt: DateTime,
    settledAt: Type.Optional(DateTime),
    status: StrEnum(['PENDING', 'COMPLETED', 'FAILED']),
    reason: Type.Optional(StrEnum(['TRANSACTION_FAILED', 'USER_CANCELLATION', 'TIMEOUT'])),
  },
  { title: 'Refund' },
);
export type RefundWire = Static<typeof RefundSchema>;

export const TransactionSchema = Obj(
  {
    id: Type.String({ examples: ['Transaction:019542f5-b3e7-7d02-8000-000000000001'] }),
    status: TransactionStatus,
    type: StrEnum(['INCOMING', 'OUTGOING']),
    direction: StrEnum(['CREDIT', 'DEBIT']),
    source: Type.Object({ sourceType: Type.String() }, { additionalProperties: true }),
    destination: Type.Object({ destinationType: Type.String() }, { additionalProperties: true }),
    customerId: Type.String(),
    platformCustomerId: Type.String(),
    sentAmount: CurrencyAmountSchema,
    receivedAmount: CurrencyAmountSchema,
    fees: Type.Integer(),
    platformFees: Type.Optional(Type.Integer()),
    exchangeRate: Type.Number(),
    quoteId: Type.Optional(Type.String()),
    agentId: Type.Optional(Type.String({ description: 'The agent that started this payment; absent when the platform did' })),
    description: Type.Optional(Type.String()),
    rateDetails: Type.Optional(OutgoingRateDetailsSchema),
    paymentRail: Type.Optional(Type.Union([PaymentRailSchema, Type.Null()])),
    railSelectionMode: Type.Optional(Type.Union([RailSelectionModeSchema, Type.Null()], { description: 'Outgoing: null without a rail' })),
    expectedSettlementAt: Type.Optional(
      Type.Union([DateTime, Type.Null()], {
        description: 'Outgoing: when the payment is expected to settle; null when it settles at once or has not started',
      }),
    ),
    settlementTimelineSeconds: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
        description: 'Outgoing: seconds from creation (of the quote, for a quote payment) to expectedSettlementAt; null when that is null',
      }),
    ),
    reconciliationInstructions: Obj({ reference: Type.String() }),
    failureReason: Type.Optional(Type.String()),
    refund: Type.Optional(RefundSchema),
    remittanceInformation: Type.Optional(Type.String()),
    purposeOfPayment: Type.Optional(Type.String()),
    settledAt: Type.Optional(DateTime),
    receiptDeliveryConfirmedAt: Type.Optional(DateTime),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Transaction' },
);
export type TransactionWire = Static<typeof TransactionSchema>;

/**
 * What GET /transactions and GET /transactions/{transactionId} return: a payment (type INCOMING or
 * OUTGOING) or a card transaction (type CARD, src/modules/cards), as the live TransactionOneOf.
 */
export const TransactionOneOfSchema = OneOf([TransactionSchema, CardTransactionSchema], 'type', { title: 'TransactionOneOf' });
export type TransactionOneOfWire = Static<typeof TransactionOneOfSchema>;

export const TransactionListSchema = Page(TransactionOneOfSchema, 'TransactionListResponse');

export const TransactionListQuery = Obj({
  customerId: Type.Optional(Type.String({ maxLength: 200 })),
  platformCustomerId: Type.Optional(Type.String({ maxLength: 255 })),
  accountIdentifier: Type.Optional(Type.String({ maxLength: 200 })),
  senderAccountIdentifier: Type.Optional(Type.String({ maxLength: 200 })),
  receiverAccountIdentifier: Type.Optional(Type.String({ maxLength: 200 })),
  status: Type.Optional(TransactionStatus),
  type: Type.Optional(StrEnum(['INCOMING', 'OUTGOING'])),
  reference: Type.Optional(Type.String({ maxLength: 255 })),
  startDate: Type.Optional(DateTime),
  endDate: Type.Optional(DateTime),
  sortOrder: Type.Optional(StrEnum(['asc', 'desc'])),
  ...PageQueryFields,
});
export type TransactionListQueryT = Static<typeof TransactionListQuery>;

const AccountRef = Obj({ accountId: AccountId });

export const TransferInSchema = Obj(
  {
    source: AccountRef,
    destination: AccountRef,
    amount: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { title: 'TransferInRequest' },
);
export type TransferIn = Static<typeof TransferInSchema>;

export const TransferOutSchema = Obj(
  {
    source: AccountRef,
    destination: Obj({ accountId: AccountId, paymentRail: Type.Optional(PaymentRailSchema) }),
    amount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          "Amount to send, in the smallest unit of the source account's currency (cents for USD). " +
          'Optional, as in the live API: when it is left out, the WHOLE spendable balance of the source account ' +
          '(its `balance`) is sent; a source with nothing spendable is a 400. Send an amount unless you mean to empty the account.',
      }),
    ),
    remittanceInformation: Type.Optional(Type.String({ maxLength: 80 })),
    purposeOfPayment: Type.Optional(PurposeOfPayment),
  },
  {
    title: 'TransferOutRequest',
    description:
      "A same-currency push from an internal account to an external account. Without `amount`, the source account's whole spendable balance is sent.",
  },
);
export type TransferOut = Static<typeof TransferOutSchema>;

export const TransactionIdParams = Obj({ transactionId: IdString('Transaction:019542f5-b3e7-7d02-8000-000000000001') });
export const QuoteIdParams = Obj({ quoteId: IdString('Quote:019542f5-b3e7-7d02-8000-000000000001') });

export const CancelSchema = Obj({ reason: Type.Optional(Type.String({ maxLength: 255 })) }, { title: 'CancelTransactionRequest' });
export const ConfirmSchema = Obj({ receiptDeliveryConfirmedAt: Type.Optional(DateTime) }, { title: 'ConfirmReceiptDeliveryRequest' });
export const ApproveSchema = Obj(
  { receiverCustomerInfo: Type.Optional(Type.Object({}, { additionalProperties: Type.String({ maxLength: 1024 }), maxProperties: 30 })) },
  { title: 'ApprovePaymentRequest' },
);
export const RejectSchema = Obj({ reason: Type.Optional(Type.String({ maxLength: 255 })) }, { title: 'RejectPaymentRequest' });
