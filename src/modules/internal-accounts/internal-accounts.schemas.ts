/** Wire schemas for internal accounts. */
import { Type } from '@sinclair/typebox';
import { CurrencyAmountSchema, CurrencyCode, DateTime, Obj } from '../../http/schemas.ts';

export const InternalAccountType = Type.Union(
  [Type.Literal('INTERNAL_FIAT'), Type.Literal('INTERNAL_CRYPTO'), Type.Literal('EMBEDDED_WALLET')],
  {
    description:
      'INTERNAL_FIAT: fiat holding account; INTERNAL_CRYPTO: stablecoin/asset holding account; EMBEDDED_WALLET: self-custodial wallet',
  },
);

export const InternalAccountStatus = Type.Union([
  Type.Literal('PENDING'),
  Type.Literal('ACTIVE'),
  Type.Literal('CLOSED'),
  Type.Literal('FROZEN'),
  Type.Literal('FAILED'),
]);

export const FundingInstructionSchema = Obj(
  {
    instructionsNotes: Type.Optional(Type.String()),
    isPlatformAccount: Type.Optional(Type.Boolean({ description: "Whether the account paid into is the platform's own or a customer's" })),
    accountOrWalletInfo: Type.Object(
      { accountType: Type.String({ description: 'US_ACCOUNT, <CCY>_ACCOUNT, LAYER2_WALLET or CHAIN2_WALLET' }) },
      { additionalProperties: true, description: 'Deposit coordinates; fields depend on accountType' },
    ),
  },
  { title: 'FundingInstruction' },
);

export const InternalAccountSchema = Obj(
  {
    id: Type.String({ examples: ['InternalAccount:019542f5-b3e7-7d02-8000-000000000001'] }),
    customerId: Type.Optional(Type.String({ description: 'Absent for platform accounts' })),
    type: InternalAccountType,
    status: InternalAccountStatus,
    balance: CurrencyAmountSchema,
    totalBalance: CurrencyAmountSchema,
    fundingPaymentInstructions: Type.Array(FundingInstructionSchema),
    privateEnabled: Type.Optional(Type.Boolean()),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'InternalAccount' },
);

export const PlatformInternalAccountsQuery = Obj({
  currency: Type.Optional(CurrencyCode),
  type: Type.Optional(InternalAccountType),
});
