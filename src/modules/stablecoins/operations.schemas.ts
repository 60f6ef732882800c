/** Wire schemas of stablecoin mint and burn operations (the live API's StablecoinOperation, its requests and list). */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, IdString, Obj, OneOf, Page, PageQueryFields } from '../../http/schemas.ts';
import { StablecoinProviderEnvironmentSchema, StablecoinProviderSchema } from './stablecoins.schemas.ts';

const OP_EXAMPLE = 'StablecoinOperation:019542f5-b3e7-1d02-0000-000000000301';
const EXTERNAL_EXAMPLE = 'ExternalAccount:019542f5-b3e7-1d02-0000-000000000101';
const INTERNAL_EXAMPLE = 'InternalAccount:019542f5-b3e7-1d02-0000-000000000102';

const AmountInput = (what: string) =>
  Type.String({
    minLength: 1,
    maxLength: 40,
    pattern: '^[0-9]+$',
    description:
      `Amount to ${what} in the stablecoin’s smallest unit: > 0, at most 2^53−1, and a whole number of cents of its base ` +
      'currency (with 6 decimals, a multiple of 10000). Sandbox, by the cents’ last two digits: 02 fails ' +
      '(PROVIDER_TRANSFER_FAILED), 03 is never funded (EXPIRED at expiresAt), 05 is a 503 with nothing created',
    examples: ['1000000'],
  });

const Description = Type.Optional(Type.String({ maxLength: 1024, description: 'Platform-provided operation description' }));

const Lit = <T extends string>(v: T, description?: string) => Type.Literal(v, description ? { description } : {});

// ── requests ─────────────────────────────────────────────────────────────────────────────────

export const StablecoinMintFundingSourceSchema = OneOf(
  [
    Obj({ type: Lit('WIRE', 'The issuer wires fiat following the operation’s fundingInstructions') }, { title: 'Wire' }),
    Obj(
      { type: Lit('ACH_DEBIT'), externalAccountId: IdString(EXTERNAL_EXAMPLE) },
      { title: 'ACH Debit', description: 'The provider debits this active US_ACCOUNT external account (the platform’s or a customer’s)' },
    ),
    Obj(
      { type: Lit('SAME_DAY_ACH_DEBIT'), externalAccountId: IdString(EXTERNAL_EXAMPLE) },
      { title: 'Same-Day ACH Debit', description: 'As ACH_DEBIT, same day' },
    ),
    Obj(
      { type: Lit('GRID_INTERNAL_ACCOUNT'), accountId: IdString(INTERNAL_EXAMPLE) },
      { title: 'Grid Internal Account', description: 'Reserved: refused with 400 on fundingSource.type' },
    ),
    Obj(
      {
        type: Lit('PROVIDER_INTERNAL_BALANCE'),
        sourceTokenIdentifier: Type.String({ minLength: 1, maxLength: 64, examples: ['USDC'] }),
        cryptoNetwork: Type.String({ minLength: 1, maxLength: 64, examples: ['SOLANA'] }),
      },
      { title: 'Provider Internal Balance', description: 'Reserved for mints: refused with 400 on fundingSource.type' },
    ),
  ],
  'type',
  { title: 'StablecoinMintFundingSource' },
);

export const StablecoinMintRequestSchema = Obj(
  {
    amount: AmountInput('mint'),
    fundingSource: StablecoinMintFundingSourceSchema,
    destination: Obj(
      {
        accountId: IdString('ExternalAccount:019542f5-b3e7-1d02-0000-000000000201'),
      },
      {
        title: 'StablecoinMintDestination',
        description:
          'An active LAYER2_WALLET external account of the platform or one of its customers. An InternalAccount: id is ' +
          'refused (400): it would have to hold the stablecoin’s currency, which no internal account does while ' +
          'gridOperationsStatus is NOT_ENABLED',
      },
    ),
    description: Description,
  },
  { title: 'StablecoinMintRequest' },
);
export type StablecoinMintRequest = Static<typeof StablecoinMintRequestSchema>;

const RailSchema = Type.Union([Lit('WIRE'), Lit('ACH_CREDIT'), Lit('SAME_DAY_ACH_CREDIT'), Lit('RTP_CREDIT')], {
  description: 'Fiat payout rail',
});

export const StablecoinBurnSourceSchema = OneOf(
  [
    Obj(
      { type: Lit('EXTERNAL_ACCOUNT') },
      {
        title: 'External Account',
        description: 'The issuer sends the tokens to the deposit address of fundingInstructions, from any wallet',
      },
    ),
    Obj(
      { type: Lit('GRID_INTERNAL_ACCOUNT'), accountId: IdString(INTERNAL_EXAMPLE) },
      { title: 'Grid Internal Account', description: 'Reserved: refused with 400 on source.type' },
    ),
    Obj(
      { type: Lit('PROVIDER_INTERNAL_BALANCE') },
      { title: 'Provider Internal Balance', description: 'Tokens already held at the provider' },
    ),
  ],
  'type',
  { title: 'StablecoinBurnSource' },
);

export const StablecoinBurnRequestSchema = Obj(
  {
    amount: AmountInput('burn'),
    source: StablecoinBurnSourceSchema,
    destination: Obj(
      {
        type: Lit('EXTERNAL_ACCOUNT'),
        externalAccountId: IdString('ExternalAccount:019542f5-b3e7-1d02-0000-000000000205'),
        rail: RailSchema,
      },
      {
        title: 'StablecoinBurnDestination',
        description:
          'An active bank external account in the base currency of the platform or one of its customers (US_ACCOUNT for the ACH and RTP rails)',
      },
    ),
    description: Description,
  },
  { title: 'StablecoinBurnRequest' },
);
export type StablecoinBurnRequest = Static<typeof StablecoinBurnRequestSchema>;

// ── the operation ────────────────────────────────────────────────────────────────────────────

export const StablecoinOperationTypeSchema = Type.Union([Lit('MINT'), Lit('BURN')], { title: 'StablecoinOperationType' });

export const StablecoinOperationStatusSchema = Type.Union(
  [Lit('CREATED'), Lit('PENDING_FUNDING'), Lit('PENDING_PROVIDER'), Lit('PROCESSING'), Lit('COMPLETED'), Lit('FAILED'), Lit('EXPIRED')],
  { title: 'StablecoinOperationStatus', description: 'COMPLETED, FAILED and EXPIRED are final' },
);

const FundingInstructionsSchema = Obj(
  {
    rail: Type.String({ examples: ['SPARK'] }),
    network: Type.Optional(Type.String({ examples: ['SPARK'] })),
    address: Type.Optional(Type.String({ description: 'Deposit address (Spark)' })),
    valueType: Type.Optional(Type.String({ description: 'Provider token the address expects' })),
    bankName: Type.Optional(Type.String()),
    routingNumber: Type.Optional(Type.String()),
    accountNumber: Type.Optional(Type.String()),
    beneficiaryName: Type.Optional(Type.String()),
    reference: Type.Optional(Type.String({ description: 'Put in the wire’s memo: it names the mint' })),
    amount: Type.Optional(Type.String({ description: 'Amount to wire, in cents of currency' })),
    currency: Type.Optional(Type.String()),
  },
  {
    title: 'StablecoinFundingInstructions',
    description: 'WIRE mints: the provider’s bank coordinates; EXTERNAL_ACCOUNT burns: a Spark deposit address',
  },
);

export const StablecoinOperationSchema = Obj(
  {
    id: Type.String({ examples: [OP_EXAMPLE] }),
    stablecoinId: Type.String(),
    operationType: StablecoinOperationTypeSchema,
    status: StablecoinOperationStatusSchema,
    amount: Type.String({ description: 'In the stablecoin’s smallest unit', examples: ['1000000'] }),
    provider: StablecoinProviderSchema,
    providerEnvironment: StablecoinProviderEnvironmentSchema,
    stablecoinProviderAccountId: Type.String(),
    source: Type.Optional(
      Obj(
        {
          type: Type.Union([
            Lit('WIRE'),
            Lit('ACH_DEBIT'),
            Lit('SAME_DAY_ACH_DEBIT'),
            Lit('EXTERNAL_ACCOUNT'),
            Lit('GRID_INTERNAL_ACCOUNT'),
            Lit('PROVIDER_INTERNAL_BALANCE'),
          ]),
          externalAccountId: Type.Optional(Type.String()),
          accountId: Type.Optional(Type.String()),
          sourceTokenIdentifier: Type.Optional(Type.String()),
          cryptoNetwork: Type.Optional(Type.String()),
        },
        { title: 'StablecoinOperationSource' },
      ),
    ),
    fundingInstructions: Type.Optional(FundingInstructionsSchema),
    destination: Type.Optional(
      Obj({ accountId: Type.String(), rail: Type.Optional(RailSchema) }, { title: 'StablecoinOperationDestination' }),
    ),
    estimatedDelivery: Type.Optional(
      Obj(
        { rail: Type.String(), amount: Type.String(), currency: Type.String(), timing: Type.String() },
        { title: 'StablecoinEstimatedDelivery', description: 'Static guidance for the fiat payout, not a guarantee' },
      ),
    ),
    expiresAt: Type.Optional(Type.String({ format: 'date-time', description: 'Awaiting funds until then' })),
    providerStatus: Type.Optional(Type.String({ examples: ['pending'] })),
    failureReason: Type.Optional(Type.String({ examples: ['PROVIDER_TRANSFER_FAILED'] })),
    description: Type.Optional(Type.String()),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'StablecoinOperation' },
);
export type StablecoinOperationWire = Static<typeof StablecoinOperationSchema>;

export const StablecoinOperationListSchema = Page(StablecoinOperationSchema, 'StablecoinOperationListResponse');

export const StablecoinOperationListQuery = Obj({
  operationType: Type.Optional(StablecoinOperationTypeSchema),
  ...PageQueryFields,
});
export type StablecoinOperationFilter = Static<typeof StablecoinOperationListQuery>;

export const StablecoinOperationIdParams = Obj({ stablecoinOperationId: IdString(OP_EXAMPLE) });
