/** Wire schemas for `GET /discoveries`. */
import { Type, type Static } from '@sinclair/typebox';
import { Obj } from '../../http/schemas.ts';

export const DiscoveryQuery = Obj({
  country: Type.Optional(Type.String({ pattern: '^[A-Z]{2}$', description: 'ISO 3166-1 alpha-2 country code', examples: ['PH'] })),
  currency: Type.Optional(Type.String({ minLength: 1, maxLength: 16, description: 'ISO 4217 currency code', examples: ['PHP'] })),
});
export type DiscoveryQueryT = Static<typeof DiscoveryQuery>;

export const DiscoverySchema = Obj(
  {
    bankName: Type.String({ description: 'Canonical institution name: send it as accountInfo.bankName when creating an external account' }),
    displayName: Type.String({ description: 'Name to show to people' }),
    country: Type.String({ description: 'ISO 3166-1 alpha-2 country code' }),
    currency: Type.String({ description: 'ISO 4217 currency code' }),
  },
  { title: 'Discovery' },
);
export type DiscoveryWire = Static<typeof DiscoverySchema>;

export const DiscoveryListSchema = Obj({ data: Type.Array(DiscoverySchema) }, { title: 'DiscoveryListResponse' });
