/** Wire schemas of `POST /customers/{customerId}/kyc-link`. */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, IdString, Obj } from '../../http/schemas.ts';
import { StringEnum } from '../kyc/beneficial-owners.schemas.ts';

/** The longest `redirectUri` accepted (a common URL limit of browsers and proxies). */
export const REDIRECT_URI_MAX_LENGTH = 2048;

export const KycLinkParams = Obj({ customerId: IdString('Customer:019542f5-b3e7-7d02-8000-000000000001') });

/** Optional, as on the live API's other creates: a replay returns the first response (the same link). */
export const KycLinkHeaders = Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 255 })) });

export const KycLinkCreateSchema = Obj(
  {
    redirectUri: Type.Optional(
      Type.String({
        format: 'uri',
        maxLength: REDIRECT_URI_MAX_LENGTH,
        description:
          'Where the hosted page sends the customer once they complete it: https://, or http:// for local development ' +
          '(on a PRODUCTION platform only to localhost, 127.0.0.1 or [::1]). Reaching it means the flow was completed, not that ' +
          'the customer was approved: the outcome arrives as CUSTOMER.KYC_* / CUSTOMER.KYB_* webhooks or on the customer.',
        examples: ['https://app.example.com/onboarding/completed'],
      }),
    ),
  },
  { title: 'KycLinkCreateRequest' },
);
export type KycLinkCreate = Static<typeof KycLinkCreateSchema>;

export const KycProviderSchema = StringEnum(['SUMSUB'], {
  title: 'KycProvider',
  description: 'The provider the live API names; Corridor serves the hosted page itself and always reports SUMSUB',
});

export const KycLinkResponseSchema = Obj(
  {
    kycUrl: Type.String({
      description:
        "The hosted verification page for the customer: a KYC flow for an INDIVIDUAL, KYB for a BUSINESS. Single-use; it opens nothing after expiresAt. The URL's last segment is the link's secret: send it to the customer only.",
      examples: ['http://127.0.0.1:8080/2025-10-13/hosted/kyc/3q2-7wVfH5bW0s8dJm1ZrA9Kx4uNcEoTgYiLpQvBaC0'],
    }),
    expiresAt: { ...DateTime, description: 'When the link stops working (24 hours after it was made, on the platform clock)' },
    provider: KycProviderSchema,
    token: Type.Optional(
      Type.String({ description: 'A provider SDK token; Corridor has no embeddable SDK, so it never returns one: use kycUrl' }),
    ),
  },
  { title: 'KycLinkResponse' },
);
export type KycLinkWire = Static<typeof KycLinkResponseSchema>;
