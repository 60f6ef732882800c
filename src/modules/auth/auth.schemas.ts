/** Wire schemas of embedded-wallet authentication (credentials, sessions, signed-retry challenges). */
import { Type, type Static } from '@sinclair/typebox';
import { DateTime, IdString, Obj, OneOf } from '../../http/schemas.ts';

export const AUTH_METHOD_TYPES = ['OAUTH', 'EMAIL_OTP', 'SMS_OTP', 'PASSKEY'] as const;
export type AuthMethodType = (typeof AUTH_METHOD_TYPES)[number];
export const AuthMethodTypeSchema = Type.Union(
  AUTH_METHOD_TYPES.map((t) => Type.Literal(t)),
  { title: 'AuthMethodType' },
);

const AccountId = IdString('InternalAccount:019542f5-b3e7-7d02-8000-000000000001');
const B64Url = (description: string) => Type.String({ minLength: 1, maxLength: 16_384, pattern: '^[A-Za-z0-9_-]+={0,2}$', description });
/** Compressed (66 hex) selects the client-held session key; uncompressed (130 hex) the sealed legacy key. */
export const ClientPublicKey = Type.String({
  pattern: '^(0[23][0-9a-fA-F]{64}|04[0-9a-fA-F]{128})$',
  minLength: 66,
  maxLength: 130,
  description:
    'P-256 public key, SEC1 hex: compressed (client-held session key) or uncompressed (legacy: the session key comes back sealed to it)',
});

const authMethodFields = {
  id: IdString('AuthMethod:019542f5-b3e7-7d02-8000-000000000001'),
  accountId: AccountId,
  type: AuthMethodTypeSchema,
  credentialId: Type.Optional(Type.String({ description: 'PASSKEY only: base64url WebAuthn credential id' })),
  nickname: Type.String(),
  createdAt: DateTime,
  updatedAt: DateTime,
};

export const AuthMethodSchema = Obj(authMethodFields, { title: 'AuthMethod' });
export type AuthMethodWire = Static<typeof AuthMethodSchema>;

export const AuthMethodResponseSchema = Obj(
  {
    ...authMethodFields,
    otpEncryptionTargetBundle: Type.Optional(
      Type.String({ description: 'EMAIL_OTP / SMS_OTP: the HPKE target to encrypt the OTP to (JSON string)' }),
    ),
  },
  { title: 'AuthMethodResponse' },
);
export type AuthMethodResponseWire = Static<typeof AuthMethodResponseSchema>;

export const PasskeyAuthChallengeSchema = Obj(
  {
    ...authMethodFields,
    type: Type.Literal('PASSKEY'),
    credentialId: Type.String(),
    challenge: Type.String({ description: 'Lowercase hex SHA-256; pass its UTF-8 bytes as the WebAuthn challenge' }),
    requestId: IdString('Request:019542f5-b3e7-7d02-8000-000000000001'),
    expiresAt: DateTime,
  },
  { title: 'PasskeyAuthChallenge' },
);

export const ChallengeResponseSchema = Type.Union([AuthMethodResponseSchema, PasskeyAuthChallengeSchema], {
  title: 'AuthCredentialResponseOneOf',
});
export type ChallengeResponseWire = Static<typeof ChallengeResponseSchema>;

export const AuthSessionSchema = Obj(
  {
    ...authMethodFields,
    id: IdString('Session:019542f5-b3e7-7d02-8000-000000000001'),
    expiresAt: DateTime,
    encryptedSessionSigningKey: Type.Optional(
      Type.String({
        deprecated: true,
        description: 'Legacy flow only (uncompressed clientPublicKey): the session key, sealed to it (base58check)',
      }),
    ),
  },
  { title: 'AuthSession' },
);
export type AuthSessionWire = Static<typeof AuthSessionSchema>;

const challengeFields = {
  payloadToSign: Type.String({ description: 'Stamp exactly these bytes' }),
  requestId: IdString('Request:019542f5-b3e7-7d02-8000-000000000001'),
  expiresAt: DateTime,
};
export const SignedRequestChallengeSchema = Obj(challengeFields, { title: 'SignedRequestChallenge' });
export const AuthSignedRequestChallengeSchema = Obj(
  { ...challengeFields, type: AuthMethodTypeSchema },
  { title: 'AuthSignedRequestChallenge' },
);

const Nickname = Type.String({ minLength: 1, maxLength: 200 });
export const PasskeyAttestationSchema = Obj(
  {
    credentialId: B64Url('rawId'),
    clientDataJson: B64Url('clientDataJSON'),
    attestationObject: B64Url('CBOR attestationObject'),
    transports: Type.Optional(
      Type.Array(Type.Union(['usb', 'nfc', 'ble', 'internal', 'hybrid'].map((t) => Type.Literal(t))), { maxItems: 5 }),
    ),
  },
  { title: 'PasskeyAttestation' },
);

export const CredentialCreateSchema = OneOf(
  [
    Obj({ type: Type.Literal('EMAIL_OTP'), accountId: AccountId }, { title: 'EmailOtpCredentialCreateRequest' }),
    Obj({ type: Type.Literal('SMS_OTP'), accountId: AccountId }, { title: 'SmsOtpCredentialCreateRequest' }),
    Obj(
      { type: Type.Literal('OAUTH'), accountId: AccountId, oidcToken: Type.String({ minLength: 1, maxLength: 8192 }) },
      { title: 'OauthCredentialCreateRequest' },
    ),
    Obj(
      {
        type: Type.Literal('PASSKEY'),
        accountId: AccountId,
        nickname: Nickname,
        challenge: Type.String({
          minLength: 16,
          maxLength: 512,
          description: 'The base64url registration challenge your backend issued (single use)',
        }),
        attestation: PasskeyAttestationSchema,
      },
      { title: 'PasskeyCredentialCreateRequest' },
    ),
  ],
  'type',
  { title: 'AuthCredentialCreateRequestOneOf' },
);
export type CredentialCreate = Static<typeof CredentialCreateSchema>;

export const PasskeyAssertionSchema = Obj(
  {
    credentialId: B64Url('rawId'),
    clientDataJson: B64Url('clientDataJSON'),
    authenticatorData: B64Url('authenticatorData'),
    signature: Type.String({ minLength: 1, maxLength: 1024, description: 'base64url assertion signature' }),
    userHandle: Type.Optional(B64Url('userHandle')),
  },
  { title: 'PasskeyAssertion' },
);

export const CredentialVerifySchema = OneOf(
  [
    Obj(
      { type: Type.Literal('EMAIL_OTP'), encryptedOtpBundle: Type.String({ minLength: 1, maxLength: 4096 }) },
      { title: 'EmailOtpCredentialVerifyRequest' },
    ),
    Obj(
      { type: Type.Literal('SMS_OTP'), encryptedOtpBundle: Type.String({ minLength: 1, maxLength: 4096 }) },
      { title: 'SmsOtpCredentialVerifyRequest' },
    ),
    Obj(
      { type: Type.Literal('OAUTH'), oidcToken: Type.String({ minLength: 1, maxLength: 8192 }), clientPublicKey: ClientPublicKey },
      { title: 'OauthCredentialVerifyRequest' },
    ),
    Obj({ type: Type.Literal('PASSKEY'), assertion: PasskeyAssertionSchema }, { title: 'PasskeyCredentialVerifyRequest' }),
  ],
  'type',
  { title: 'AuthCredentialVerifyRequestOneOf' },
);
export type CredentialVerify = Static<typeof CredentialVerifySchema>;

export const ChallengeRequestSchema = Obj({ clientPublicKey: Type.Optional(ClientPublicKey) }, { title: 'AuthCredentialChallengeRequest' });
export const RefreshRequestSchema = Obj({ clientPublicKey: ClientPublicKey }, { title: 'AuthSessionRefreshRequest' });
export const ExportRequestSchema = Obj(
  {
    clientPublicKey: Type.String({
      pattern: '^04[0-9a-fA-F]{128}$',
      description: 'Fresh uncompressed P-256 key (130 hex) the wallet credentials are sealed to',
    }),
  },
  { title: 'InternalAccountExportRequest' },
);
export const ExportResponseSchema = Obj(
  {
    id: AccountId,
    encryptedWalletCredentials: Type.String({
      description: 'JSON string {version, data, dataSignature, enclaveQuorumPublic}; data holds the HPKE-sealed mnemonic',
    }),
  },
  { title: 'InternalAccountExportResponse' },
);
export const AccountUpdateSchema = Obj({ privateEnabled: Type.Optional(Type.Boolean()) }, { title: 'InternalAccountUpdateRequest' });
export type AccountUpdate = Static<typeof AccountUpdateSchema>;

export const AccountIdQuery = Obj({
  accountId: Type.String({ pattern: '^InternalAccount:[0-9a-fA-F-]{36}$', description: 'InternalAccount:<uuid>' }),
});
export const CredentialListSchema = Obj({ data: Type.Array(AuthMethodSchema) }, { title: 'AuthCredentialListResponse' });
export const SessionListSchema = Obj({ data: Type.Array(AuthSessionSchema) }, { title: 'SessionListResponse' });

export const SignatureHeaders = Type.Object({
  'service-wallet-signature': Type.Optional(
    Type.String({
      maxLength: 4096,
      description: 'The full stamp over payloadToSign (signed retry); Grid-Wallet-Signature is accepted too',
    }),
  ),
  'grid-wallet-signature': Type.Optional(Type.String({ maxLength: 4096 })),
  'request-id': Type.Optional(Type.String({ maxLength: 200, description: 'The requestId of the 202 challenge (signed retry)' })),
});
