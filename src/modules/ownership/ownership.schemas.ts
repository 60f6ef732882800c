/** Wire schemas of ownership verification: the challenge request and its two shapes, the verify request. */
import { Type, type Static } from '@sinclair/typebox';
import { IdString, Obj, OneOf } from '../../http/schemas.ts';
import { StrEnum } from '../external-accounts/account-info.ts';
import { OWNERSHIP_METHODS } from './ownership.rules.ts';

export const OwnershipChallengeRequestSchema = Obj(
  {
    method: StrEnum(OWNERSHIP_METHODS, {
      title: 'OwnershipVerificationMethod',
      description: 'WALLET_SIGNATURE: sign a message with the wallet key; LIVENESS: a hosted biometric identity check',
    }),
  },
  { title: 'OwnershipChallengeRequest' },
);
export type OwnershipChallengeRequest = Static<typeof OwnershipChallengeRequestSchema>;

const ExpiresAt = Type.String({ format: 'date-time', description: 'After this, start a new challenge' });

export const WalletSignatureChallengeSchema = Obj(
  {
    method: Type.Literal('WALLET_SIGNATURE'),
    messageToSign: Type.String({
      description: 'Sign exactly this text with the wallet key, then send the signature to …/verify',
      examples: ['I verify that I control the wallet 0x2c7536E3605D9C16a7a3D7b1898e529396a65c23. Nonce: 9f0c2a7d5e3b41c8a6f2d0e4b7c9a1f3'],
    }),
    expiresAt: ExpiresAt,
  },
  { title: 'WalletSignatureChallenge' },
);

export const LivenessChallengeSchema = Obj(
  {
    method: Type.Literal('LIVENESS'),
    verificationLink: Type.String({ format: 'uri', description: 'The hosted identity check to send the wallet owner to' }),
    token: Type.Optional(Type.String({ description: "The provider's SDK token, for providers that can be embedded" })),
    expiresAt: ExpiresAt,
  },
  { title: 'LivenessChallenge' },
);

export const OwnershipChallengeSchema = OneOf([WalletSignatureChallengeSchema, LivenessChallengeSchema], 'method', {
  title: 'OwnershipChallenge',
  description: 'The challenge material of the requested method',
});
export type OwnershipChallengeWire = Static<typeof OwnershipChallengeSchema>;

export const OwnershipVerifyRequestSchema = Obj(
  {
    signature: Type.String({
      minLength: 1,
      maxLength: 1024,
      description:
        'The wallet signature over messageToSign: hex r‖s‖v (EIP-191) for Ethereum, Base, Polygon and Plasma wallets and ' +
        '(TIP-191) for Tron; base58 Ed25519 for Solana (CHAIN2) wallets; for Spark (LAYER2) wallets the identity-key ' +
        'signature in hex (DER or compact), or a base64 Bitcoin message signature',
    }),
    signatureScheme: Type.Optional(
      StrEnum(['bip137', 'electrum'] as const, {
        default: 'bip137',
        description: 'Bitcoin message-signing format of a base64 signature (Spark wallets); ignored otherwise',
      }),
    ),
  },
  { title: 'OwnershipVerifyRequest' },
);
export type OwnershipVerifyRequest = Static<typeof OwnershipVerifyRequestSchema>;

export const OwnershipAccountParams = Obj({
  externalAccountId: IdString('ExternalAccount:019542f5-b3e7-7d02-8000-000000000001'),
});
