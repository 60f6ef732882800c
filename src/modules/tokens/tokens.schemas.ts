/** Wire schemas for API tokens. */
import { Type } from '@sinclair/typebox';
import { DateTime, IdString, Obj, Page, PageQueryFields } from '../../http/schemas.ts';

export const PermissionSchema = Type.Union([Type.Literal('VIEW'), Type.Literal('TRANSACT'), Type.Literal('MANAGE')], {
  description: 'VIEW: read everything; TRANSACT: move money; MANAGE: configuration, tokens, customers',
});

export const ApiTokenSchema = Obj(
  {
    id: Type.String({ examples: ['Token:019542f5-b3e7-7d02-8000-000000000001'] }),
    name: Type.String(),
    permissions: Type.Array(PermissionSchema),
    clientId: Type.String({ description: 'The Basic-auth username' }),
    clientSecret: Type.Optional(Type.String({ description: 'Only in the create response; never retrievable again' })),
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'ApiToken' },
);

export const ApiTokenCreateSchema = Obj(
  {
    name: Type.String({ minLength: 1, maxLength: 255 }),
    permissions: Type.Array(PermissionSchema, { minItems: 1, maxItems: 3, uniqueItems: true }),
  },
  { title: 'ApiTokenCreateRequest' },
);

export const TokenListQuery = Obj({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  createdAfter: Type.Optional(DateTime),
  createdBefore: Type.Optional(DateTime),
  updatedAfter: Type.Optional(DateTime),
  updatedBefore: Type.Optional(DateTime),
  ...PageQueryFields,
});

export const TokenIdParams = Obj({ tokenId: IdString('Token:019542f5-b3e7-7d02-8000-000000000001') });

export const TokenListSchema = Page(ApiTokenSchema, 'TokenListResponse');
