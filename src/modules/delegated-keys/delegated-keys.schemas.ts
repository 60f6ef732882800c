/** Wire schemas of delegated signing keys (the live `DelegatedKey*` schemas). */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, IdString, Obj } from '../../http/schemas.ts';
import { SignedRequestChallengeSchema } from '../auth/auth.schemas.ts';

const KEY_ID_EXAMPLE = 'DelegatedKey:019542f5-b3e7-7d02-8000-000000000021';
const CARD_ID_EXAMPLE = 'Card:019542f5-b3e7-7d02-8000-000000000010';
const FUNDING_SOURCE_ID_EXAMPLE = 'CardFundingSource:019542f5-b3e7-7d02-8000-000000000011';
const ACCOUNT_ID_EXAMPLE = 'InternalAccount:019542f5-b3e7-7d02-8000-000000000002';

export const DelegatedKeyStatusSchema = Type.Union([Type.Literal('PENDING'), Type.Literal('ACTIVE'), Type.Literal('REVOKED')], {
  title: 'DelegatedKeyStatus',
  description:
    'PENDING: its identity exists but the second signed leg never completed; it cannot sign. ACTIVE: it may stamp quote ' +
    'executions from its wallet. REVOKED: its key material is destroyed; it can no longer sign.',
});

export const DelegatedKeySchema = Obj(
  {
    id: IdString(KEY_ID_EXAMPLE),
    cardId: IdString(CARD_ID_EXAMPLE),
    fundingSourceId: IdString(FUNDING_SOURCE_ID_EXAMPLE),
    accountId: IdString(ACCOUNT_ID_EXAMPLE),
    publicKey: Type.String({ description: 'Compressed P-256 public key (66 hex) of the custodied key: what its stamps carry' }),
    nickname: Type.String(),
    status: DelegatedKeyStatusSchema,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  {
    title: 'DelegatedKey',
    description:
      'A P-256 key Corridor generates and keeps for a card funding source whose funding account is an embedded wallet; ' +
      'the private key is never returned.',
  },
);
export type DelegatedKeyWire = Static<typeof DelegatedKeySchema>;

export const DelegatedKeyCreateSchema = Obj(
  {
    cardId: IdString(CARD_ID_EXAMPLE),
    internalAccountId: IdString(ACCOUNT_ID_EXAMPLE),
    nickname: Type.String({ minLength: 1, maxLength: 256, description: 'A label for the key' }),
  },
  { title: 'DelegatedKeyCreateRequest' },
);
export type DelegatedKeyCreate = Static<typeof DelegatedKeyCreateSchema>;

export const DelegatedKeySignedRequestChallengeSchema = Obj(SignedRequestChallengeSchema.properties, {
  title: 'DelegatedKeySignedRequestChallenge',
  description: 'Stamp payloadToSign with a session key of the wallet and repeat the same request with both signature headers.',
});

export const DelegatedKeyListQuery = Obj({
  accountId: Type.Optional(IdString(ACCOUNT_ID_EXAMPLE)),
  fundingSourceId: Type.Optional(IdString(FUNDING_SOURCE_ID_EXAMPLE)),
});
export type DelegatedKeyListFilter = Static<typeof DelegatedKeyListQuery>;

export const DelegatedKeyListSchema = Obj({ data: Type.Array(DelegatedKeySchema) }, { title: 'DelegatedKeyListResponse' });

export const DelegatedKeyIdParams = Obj({ id: IdString(KEY_ID_EXAMPLE) });
