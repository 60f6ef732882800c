/** Wire schemas of cards: the live Card* schemas, and the CardTransaction that GET /transactions lists. */
import { Type, type Static } from '@sinclair/typebox';
import { CurrencyAmountSchema, DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';

const StrEnum = <T extends string>(values: readonly T[], options: Record<string, unknown> = {}) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  );

const CARD_ID = 'Card:019542f5-b3e7-7d02-8000-000000000010';
const CUSTOMER_ID = 'Customer:019542f5-b3e7-7d02-8000-000000000001';
const ACCOUNT_ID = 'InternalAccount:019542f5-b3e7-7d02-8000-000000000002';
const CARD_TRANSACTION_ID = 'CardTransaction:019542f5-b3e7-7d02-8000-000000000100';

/** A positive int64 amount as JSON carries it exactly. */
const PositiveAmount = (description: string) => Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description });

export const CardStateSchema = StrEnum(['PENDING_KYC', 'PROCESSING', 'ACTIVE', 'FROZEN', 'CLOSED'], {
  title: 'CardState',
  description:
    'PROCESSING while the issuer provisions the card; ACTIVE: it can authorize; FROZEN: new authorizations are declined ' +
    '(CARD_PAUSED), earlier ones still reconcile; CLOSED: terminal. PENDING_KYC is never used (issuance needs an APPROVED cardholder).',
});
export const CardStateReasonSchema = StrEnum(['ISSUER_REJECTED', 'CLOSED_BY_PLATFORM', 'CLOSED_BY_GRID'], { title: 'CardStateReason' });
export const CardBrandSchema = StrEnum(['VISA', 'MASTERCARD'], { title: 'CardBrand' });
export const CardFormSchema = StrEnum(['VIRTUAL'], { title: 'CardForm', description: 'Only VIRTUAL cards exist' });

const FundingSources = (description: string) =>
  Type.Array(IdString(ACCOUNT_ID), { minItems: 1, maxItems: 10, description, examples: [[ACCOUNT_ID]] });

export const CardSchema = Obj(
  {
    id: IdString(CARD_ID),
    cardholderId: IdString(CUSTOMER_ID),
    platformCardId: Type.String({ examples: ['card-emp-aary-001'] }),
    state: CardStateSchema,
    stateReason: Type.Union([CardStateReasonSchema, Type.Null()], {
      description: 'Set when the card is CLOSED (or its provisioning was rejected); otherwise null',
    }),
    brand: Type.Optional(CardBrandSchema),
    form: CardFormSchema,
    last4: Type.Optional(Type.String({ pattern: '^[0-9]{4}$', description: 'Filled on activation', examples: ['4242'] })),
    expMonth: Type.Optional(Type.Integer({ minimum: 1, maximum: 12, description: 'Filled on activation' })),
    expYear: Type.Optional(Type.Integer({ minimum: 1000, maximum: 9999, description: 'Filled on activation' })),
    fundingSources: FundingSources('Internal account ids in priority order: authorizations hold on the first that covers them'),
    maxSpendPerTransaction: Type.Union([PositiveAmount('Largest amount one authorization may take'), Type.Null()], {
      description: 'In the smallest unit of the card currency; null = no limit. An authorization of exactly this amount is allowed.',
    }),
    currency: Type.String({ description: 'The funding sources’ currency, fixed at issue', examples: ['USD'] }),
    processorRef: Type.String({ examples: ['card_b81c2a4f'] }),
    issuerRef: Type.String({ examples: ['corridor_card_7a1b9c3d'] }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  {
    title: 'Card',
    description: 'Never carries the card number, CVV or a reveal URL: POST /cards/{id}/reveal shows them to the cardholder.',
  },
);
export type CardWire = Static<typeof CardSchema>;

export const CardCreateSchema = Obj(
  {
    cardholderId: IdString(CUSTOMER_ID),
    platformCardId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    threeDSecurePassword: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: 'Only for card programs whose issuer takes a static 3-D Secure password; Corridor’s sandbox program does not (400)',
      }),
    ),
    form: CardFormSchema,
    fundingSources: FundingSources('The cardholder’s own internal accounts, all in one card-eligible currency (USD or USDB)'),
    maxSpendPerTransaction: Type.Optional(PositiveAmount('Largest amount one authorization may take; omit for no limit')),
  },
  { title: 'CardCreateRequest' },
);
export type CardCreate = Static<typeof CardCreateSchema>;

export const CardUpdateSchema = Obj(
  {
    state: Type.Optional(StrEnum(['ACTIVE', 'FROZEN', 'CLOSED'])),
    fundingSources: Type.Optional(FundingSources('Replaces the whole list; order = priority')),
    maxSpendPerTransaction: Type.Optional(
      Type.Union([PositiveAmount('The new limit'), Type.Null()], { description: 'null clears the limit; omit to leave it' }),
    ),
  },
  { title: 'CardUpdateRequest', description: 'At least one field. state CLOSED cannot be combined with the others.' },
);
export type CardUpdate = Static<typeof CardUpdateSchema>;

export const CardListQuery = Obj({
  cardholderId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  accountId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Cards whose fundingSources contain it' })),
  platformCardId: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  state: Type.Optional(CardStateSchema),
  sortOrder: Type.Optional(StrEnum(['asc', 'desc'])),
  ...PageQueryFields,
});
export type CardListQueryT = Static<typeof CardListQuery>;

export const CardListSchema = Page(CardSchema, 'CardListResponse');

export const CardRevealSchema = Obj(
  {
    panEmbedUrl: Type.String({
      format: 'uri',
      description:
        'A page Corridor serves that shows the PAN, CVV and expiry once; a bearer secret: render it at once, never store or log it',
    }),
    expiresAt: DateTime,
  },
  { title: 'CardRevealResponse' },
);

export const CardIdParams = Obj({ id: IdString(CARD_ID) });

// ── Card transactions ─────────────────────────────────────────────────────────────────────────

export const CardTransactionStatusSchema = StrEnum(['AUTHORIZED', 'PARTIALLY_SETTLED', 'SETTLED', 'REFUNDED', 'EXCEPTION'], {
  title: 'CardTransactionStatus',
});

export const CardMerchantSchema = Obj(
  {
    descriptor: Type.String({ minLength: 1, maxLength: 255, examples: ['BLUE BOTTLE COFFEE SF'] }),
    mcc: Type.Optional(Type.String({ pattern: '^[0-9]{4}$', examples: ['5814'] })),
    country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', examples: ['US'] })),
  },
  { title: 'CardMerchant' },
);
export type CardMerchantWire = Static<typeof CardMerchantSchema>;

const Count = Type.Integer({ minimum: 0 });
const Total = Type.Integer({ description: 'In the smallest unit of the funding source’s currency' });
export const CardPullSummarySchema = Obj(
  { count: Count, totalAmount: Total, pendingCount: Type.Integer({ minimum: 0, description: 'Pulls still PENDING' }) },
  {
    title: 'CardPullSummary',
    description:
      'Debits of the funding source: the hold (or single-message pull) and any post-hoc pulls; totalAmount is what it gave or still holds',
  },
);
export const CardRefundSummarySchema = Obj({ count: Count, totalAmount: Total }, { title: 'CardRefundSummary' });
export const CardSettlementSummarySchema = Obj({ count: Count, totalAmount: Total }, { title: 'CardSettlementSummary' });

export const CardTransactionSchema = Obj(
  {
    type: Type.Literal('CARD'),
    id: IdString(CARD_TRANSACTION_ID),
    cardId: IdString(CARD_ID),
    customerId: Type.String(),
    platformCustomerId: Type.String(),
    issuerTransactionToken: Type.String({ description: 'The token the sandbox simulation answered with' }),
    status: CardTransactionStatusSchema,
    direction: StrEnum(['CREDIT', 'DEBIT']),
    merchant: CardMerchantSchema,
    authorizedAmount: CurrencyAmountSchema,
    settledAmount: CurrencyAmountSchema,
    refundedAmount: CurrencyAmountSchema,
    accountId: IdString(ACCOUNT_ID),
    pullSummary: CardPullSummarySchema,
    refundSummary: CardRefundSummarySchema,
    settlementSummary: CardSettlementSummarySchema,
    authorizedAt: DateTime,
    lastEventAt: DateTime,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  {
    title: 'CardTransaction',
    description: 'One approved authorization and what reconciled against it (clearings, post-hoc pulls, returns) as roll-ups.',
  },
);
export type CardTransactionWire = Static<typeof CardTransactionSchema>;

// ── Sandbox simulations ───────────────────────────────────────────────────────────────────────

export const SandboxCurrencySchema = Obj(
  {
    code: Type.String({ pattern: '^[A-Z0-9]{3,5}$', examples: ['USD'] }),
    name: Type.Optional(Type.String()),
    symbol: Type.Optional(Type.String()),
    decimals: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { description: 'The currency of the amount: its code must be the card’s currency (the other fields are not read)' },
);

export const SandboxCardAuthorizationSchema = Obj(
  {
    amount: PositiveAmount('In the smallest unit of currency'),
    currency: SandboxCurrencySchema,
    merchant: CardMerchantSchema,
  },
  {
    title: 'SandboxCardAuthorizationRequest',
    description: 'The last three characters of merchant.descriptor steer the outcome: 002, 003, 005, 006 (docs/cards.md)',
  },
);
export type SandboxCardAuthorization = Static<typeof SandboxCardAuthorizationSchema>;

const CardTransactionRef = IdString(CARD_TRANSACTION_ID);

export const SandboxCardClearingSchema = Obj(
  {
    cardTransactionId: CardTransactionRef,
    amount: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: '0 = the authorization expires' }),
  },
  { title: 'SandboxCardClearingRequest' },
);
export const SandboxCardReturnSchema = Obj(
  { cardTransactionId: CardTransactionRef, amount: PositiveAmount('At most settled − refunded') },
  { title: 'SandboxCardReturnRequest' },
);
export const SandboxCardAdviceSchema = Obj(
  { cardTransactionId: CardTransactionRef, amount: PositiveAmount('The new total authorized amount') },
  { title: 'SandboxCardAuthorizationAdviceRequest' },
);
export const SandboxCardBalanceInquirySchema = Obj({ merchant: CardMerchantSchema }, { title: 'SandboxCardBalanceInquiryRequest' });
export const SandboxCardTransactionRefSchema = Obj(
  { cardTransactionId: CardTransactionRef },
  { title: 'SandboxCardTransactionRefRequest' },
);

export const SandboxCardSimulationResponseSchema = Obj(
  {
    issuerTransactionToken: Type.String({
      description: 'The issuer token of the simulated message; an approved one is the issuerTransactionToken of its CardTransaction',
      examples: ['f3a1c2d4-5b6e-7890-abcd-ef0123456789'],
    }),
  },
  { title: 'SandboxCardSimulationResponse' },
);
