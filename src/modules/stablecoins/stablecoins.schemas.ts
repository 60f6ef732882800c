/**
 * Wire schemas of stablecoin issuance: provider account links and registered stablecoins, their
 * requests, lists and parameters (the live API's StablecoinProviderAccount*, Stablecoin*). The
 * operations' schemas are in operations.schemas.ts.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';

const LINK_EXAMPLE = 'StablecoinProviderAccount:019542f5-b3e7-1d02-0000-000000000001';
const COIN_EXAMPLE = 'Stablecoin:019542f5-b3e7-1d02-0000-000000000002';

export const StablecoinProviderSchema = Type.Union([Type.Literal('BRALE')], {
  title: 'StablecoinProvider',
  description: 'Stablecoin provider backing the linked account, stablecoin, or operation',
});
export const StablecoinProviderEnvironmentSchema = Type.Union([Type.Literal('SANDBOX'), Type.Literal('PRODUCTION')], {
  title: 'StablecoinProviderEnvironment',
  description: "The platform's environment (a sandbox platform's links, stablecoins and operations are SANDBOX)",
});
export const StablecoinNetworkSchema = Type.Union([Type.Literal('SPARK')], {
  title: 'StablecoinNetwork',
  description: 'Network family of the token identifier; the concrete Spark network follows the platform mode (regtest on sandbox)',
});
export const StablecoinProviderAccountStatusSchema = Type.Union(
  [Type.Literal('ACTIVE'), Type.Literal('INVALID'), Type.Literal('REVOKED')],
  {
    title: 'StablecoinProviderAccountStatus',
    description: 'ACTIVE: usable; INVALID: the provider no longer accepts the credentials; REVOKED: the provider revoked the access',
  },
);
export const StablecoinIssuanceStatusSchema = Type.Union(
  [
    Type.Literal('PENDING_REVIEW'),
    Type.Literal('PROVISIONING'),
    Type.Literal('PROVISIONED'),
    Type.Literal('REJECTED'),
    Type.Literal('FAILED'),
  ],
  { title: 'StablecoinIssuanceStatus', description: 'Provider issuance status; mints and burns need PROVISIONED' },
);
export const StablecoinGridOperationsStatusSchema = Type.Union(
  [
    Type.Literal('NOT_ENABLED'),
    Type.Literal('PENDING_APPROVAL'),
    Type.Literal('ENABLING'),
    Type.Literal('ENABLED'),
    Type.Literal('DISABLED'),
  ],
  {
    title: 'StablecoinGridOperationsStatus',
    description: 'Whether the stablecoin is enabled for the service’s other operations (always NOT_ENABLED)',
  },
);

// ── provider account links ───────────────────────────────────────────────────────────────────

export const StablecoinProviderAccountSchema = Obj(
  {
    id: Type.String({ description: 'System-generated link identifier', examples: [LINK_EXAMPLE] }),
    provider: StablecoinProviderSchema,
    providerAccountId: Type.String({ description: 'Provider account id', examples: ['2VcUIonJeVQzFoBuC7LdFT0dRe4'] }),
    providerEnvironment: StablecoinProviderEnvironmentSchema,
    status: StablecoinProviderAccountStatusSchema,
    lastVerifiedAt: Type.Optional(Type.String({ format: 'date-time', description: 'Last successful credential verification' })),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'StablecoinProviderAccount' },
);
export type StablecoinProviderAccountWire = Static<typeof StablecoinProviderAccountSchema>;

export const StablecoinProviderAccountLinkSchema = Obj(
  {
    provider: StablecoinProviderSchema,
    apiClientId: Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'Provider API client id. Sandbox: ending in 002 the provider refuses the credentials (400), 003 revokes and 004 invalidates the link 60 s after it is made, 007 exposes several provider accounts',
      examples: ['provider_client_123'],
    }),
    apiClientSecret: Type.String({
      minLength: 1,
      maxLength: 1024,
      writeOnly: true,
      description: 'Provider API client secret: verified, stored encrypted, never returned',
      examples: ['provider_secret_456'],
    }),
    providerAccountId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        pattern: '^[A-Za-z0-9_-]+$',
        description: 'Provider account id; optional when the credentials expose exactly one account',
        examples: ['2VcUIonJeVQzFoBuC7LdFT0dRe4'],
      }),
    ),
  },
  { title: 'StablecoinProviderAccountLinkRequest' },
);
export type StablecoinProviderAccountLink = Static<typeof StablecoinProviderAccountLinkSchema>;

export const StablecoinProviderAccountListSchema = Page(StablecoinProviderAccountSchema, 'StablecoinProviderAccountListResponse');

export const StablecoinProviderAccountListQuery = Obj({
  provider: Type.Optional(StablecoinProviderSchema),
  status: Type.Optional(StablecoinProviderAccountStatusSchema),
  ...PageQueryFields,
});
export type StablecoinProviderAccountFilter = Static<typeof StablecoinProviderAccountListQuery>;

export const StablecoinProviderAccountIdParams = Obj({ stablecoinProviderAccountId: IdString(LINK_EXAMPLE) });

// ── stablecoins ──────────────────────────────────────────────────────────────────────────────

export const StablecoinSchema = Obj(
  {
    id: Type.String({ description: 'System-generated stablecoin identifier', examples: [COIN_EXAMPLE] }),
    name: Type.String({ description: 'Display name', examples: ['ACME Stablecoin'] }),
    symbol: Type.String({ description: 'Symbol (the provider token identifier)', examples: ['ACME'] }),
    baseCurrency: Type.String({ description: 'Fiat currency the stablecoin is denominated against', examples: ['USD'] }),
    network: StablecoinNetworkSchema,
    decimals: Type.Integer({ description: 'Decimal places of the token', examples: [6] }),
    issuanceStatus: StablecoinIssuanceStatusSchema,
    gridOperationsStatus: StablecoinGridOperationsStatusSchema,
    networkTokenIdentifier: Type.String({ examples: ['btkn1qw508d6qejxtdg4y5r3zarvary0c5xw7k'] }),
    currency: Type.Optional(Type.String({ description: 'The service’s currency code once enabled for its operations (never, here)' })),
    provider: StablecoinProviderSchema,
    stablecoinProviderAccountId: Type.String({ examples: [LINK_EXAMPLE] }),
    providerEnvironment: StablecoinProviderEnvironmentSchema,
    providerTokenIdentifier: Type.String({ description: 'Brale’s value_type', examples: ['ACME'] }),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'Stablecoin' },
);
export type StablecoinWire = Static<typeof StablecoinSchema>;

export const StablecoinRegisterSchema = Obj(
  {
    providerTokenIdentifier: Type.String({
      minLength: 1,
      maxLength: 32,
      pattern: '^[A-Za-z0-9_-]+$',
      description:
        'Provider identifier of the token (Brale value_type); it becomes the symbol. Not a currency code Corridor already moves. ' +
        'Sandbox: ending in 001 it is reviewed (60 s) before provisioning, 002 is rejected in review, 003 fails to provision',
      examples: ['ACME'],
    }),
    networkTokenIdentifier: Type.String({
      minLength: 1,
      maxLength: 256,
      pattern: '^\\S+$',
      description: 'Token identifier in the namespace of `network`',
      examples: ['btkn1qw508d6qejxtdg4y5r3zarvary0c5xw7k'],
    }),
    network: StablecoinNetworkSchema,
    stablecoinProviderAccountId: Type.Optional(IdString(LINK_EXAMPLE)),
  },
  { title: 'StablecoinRegisterRequest' },
);
export type StablecoinRegister = Static<typeof StablecoinRegisterSchema>;

export const StablecoinListSchema = Page(StablecoinSchema, 'StablecoinListResponse');

export const StablecoinListQuery = Obj({
  issuanceStatus: Type.Optional(StablecoinIssuanceStatusSchema),
  gridOperationsStatus: Type.Optional(StablecoinGridOperationsStatusSchema),
  provider: Type.Optional(StablecoinProviderSchema),
  ...PageQueryFields,
});
export type StablecoinFilter = Static<typeof StablecoinListQuery>;

export const StablecoinIdParams = Obj({ stablecoinId: IdString(COIN_EXAMPLE) });

/** The required `Idempotency-Key` of the four writes (the live API requires it on each). */
export const RequiredIdempotencyHeaders = Type.Object({
  'idempotency-key': Type.String({ minLength: 1, maxLength: 255, description: 'Required: a replay returns the first response' }),
});
