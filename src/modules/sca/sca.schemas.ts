/**
 * Wire schemas of Strong Customer Authentication, as the live API names and shapes them
 * (components/schemas Sca*, TwoFactorReset*, BeneficiaryTrust*, RecordSecurityEvent*).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { DateTime, IdString, Obj, OneOf } from '../../http/schemas.ts';

export const SCA_TAG = 'Strong Customer Authentication';
/** What every SCA operation says about who it applies to. */
export const SCA_ONLY = 'Only for SCA customers (an address in the EEA); 409 CONFLICT for any other customer.';

const Nullable = <T extends TSchema>(t: T, description?: string) => Type.Union([t, Type.Null()], description ? { description } : {});
const OpaqueObject = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const ScaFactorSchema = Type.Union([Type.Literal('SMS_OTP'), Type.Literal('TOTP'), Type.Literal('PASSKEY')], {
  title: 'ScaFactor',
  description:
    'SMS_OTP: a code by SMS to the verified phone (no enrollment); TOTP: an authenticator-app code (enrolled; not valid for ' +
    'per-transaction challenges); PASSKEY: a WebAuthn assertion (enrolled).',
});

/** The live ScaChallenge. */
export const ScaChallengeSchema = Obj(
  {
    id: Type.String({ examples: ['ScaChallenge:019542f5-b3e7-1d02-0000-000000000007'] }),
    expiresAt: DateTime,
    factor: ScaFactorSchema,
    availableFactors: Type.Array(ScaFactorSchema),
    purpose: Type.Optional(Nullable(Type.String(), 'Informational step label (CURRENCY_CONVERSION, PAYOUT, TRANSFER …)')),
    passkeyAssertionOptions: Type.Optional(
      Type.Union([OpaqueObject('WebAuthn assertion request options (rpId, challenge, allowCredentials); only for PASSKEY'), Type.Null()]),
    ),
    passkeyAllowedOrigins: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
  },
  {
    title: 'ScaChallenge',
    description: 'A Strong Customer Authentication challenge; only present for customers SCA applies to (EEA address).',
  },
);

const CodeField = Type.String({
  minLength: 1,
  maxLength: 64,
  description: 'The SMS or TOTP code; on sandbox platforms the SMS code is always 123456',
  examples: ['123456'],
});
const OriginField = Type.String({ minLength: 1, maxLength: 512, description: 'The WebAuthn origin the assertion was produced against' });
const IpField = Type.String({ minLength: 1, maxLength: 64, description: "The end user's device IP address" });
const AssertionField = OpaqueObject('The WebAuthn assertion: {credentialId, clientDataJson, authenticatorData, signature, userHandle?}');

/** The proof fields of ScaAuthorization, BeneficiaryTrustConfirmRequest and ScaLoginCompleteRequest. */
const ProofFields = {
  code: Type.Optional(Type.Union([CodeField, Type.Null()])),
  passkeyAssertion: Type.Optional(Type.Union([AssertionField, Type.Null()])),
  origin: Type.Optional(Type.Union([OriginField, Type.Null()])),
};

/** The live ScaAuthorization: exactly one of code / passkeyAssertion (origin with the assertion), checked by the service. */
export const ScaAuthorizationSchema = Obj(
  { ...ProofFields, endUserIpAddress: Type.Optional(Type.Union([IpField, Type.Null()])) },
  {
    title: 'ScaAuthorization',
    description:
      'Proof that satisfies an ScaChallenge: exactly one of `code` or `passkeyAssertion`; `origin` is required with `passkeyAssertion`.',
  },
);
export type ScaAuthorization = Static<typeof ScaAuthorizationSchema>;

// ── Factors ──────────────────────────────────────────────────────────────────────────────────

export const ScaFactorViewSchema = Obj(
  {
    factor: ScaFactorSchema,
    credentialId: Type.Optional(Type.String({ description: 'PASSKEY only: the id to delete it by' })),
    name: Type.Optional(Type.String()),
  },
  { title: 'ScaFactorView' },
);
export type ScaFactorView = Static<typeof ScaFactorViewSchema>;

export const ScaFactorListSchema = Obj({ factors: Type.Array(ScaFactorViewSchema) }, { title: 'ScaFactorList' });

export const ScaFactorEnrollRequestSchema = OneOf(
  [
    Obj({ type: Type.Literal('TOTP') }, { title: 'TotpFactorEnrollRequest' }),
    Obj({ type: Type.Literal('PASSKEY') }, { title: 'PasskeyFactorEnrollRequest' }),
  ],
  'type',
  { title: 'ScaFactorEnrollRequestOneOf' },
);

export const TotpEnrollmentStartSchema = Obj(
  {
    type: Type.Literal('TOTP'),
    secret: Type.String({ description: 'The raw shared secret, hex-encoded' }),
    secretBase32Encoded: Type.String(),
    totpUri: Type.String({ description: 'otpauth:// provisioning URI (SHA1, 6 digits, 30 s)' }),
  },
  { title: 'TotpEnrollmentStart' },
);
export const PasskeyEnrollmentStartSchema = Obj(
  {
    type: Type.Literal('PASSKEY'),
    options: OpaqueObject('WebAuthn PublicKeyCredentialCreationOptions (JSON form)'),
    allowedOrigins: Type.Array(Type.String()),
    relyingPartyId: Type.String(),
  },
  { title: 'PasskeyEnrollmentStart' },
);
export const ScaFactorEnrollStartSchema = OneOf([TotpEnrollmentStartSchema, PasskeyEnrollmentStartSchema], 'type', {
  title: 'ScaFactorEnrollStartOneOf',
});
export type ScaFactorEnrollStart = Static<typeof ScaFactorEnrollStartSchema>;

export const ScaFactorConfirmRequestSchema = OneOf(
  [
    Obj(
      {
        type: Type.Literal('TOTP'),
        secret: Type.String({ minLength: 1, maxLength: 256, description: 'The secret from the start (hex or base32)' }),
        code: CodeField,
      },
      { title: 'TotpEnrollmentConfirmRequest' },
    ),
    Obj(
      {
        type: Type.Literal('PASSKEY'),
        origin: OriginField,
        credential: OpaqueObject('The WebAuthn credential: {credentialId, clientDataJson, attestationObject, transports?}'),
      },
      { title: 'PasskeyEnrollmentConfirmRequest' },
    ),
  ],
  'type',
  { title: 'ScaFactorConfirmRequestOneOf' },
);
export type ScaFactorConfirmRequest = Static<typeof ScaFactorConfirmRequestSchema>;

export const ScaFactorConfirmResponseSchema = OneOf(
  [
    Obj({ type: Type.Literal('TOTP'), recoveryCodes: Type.Array(Type.String()) }, { title: 'TotpEnrollmentConfirmResponse' }),
    Obj({ type: Type.Literal('PASSKEY'), factor: ScaFactorViewSchema }, { title: 'PasskeyEnrollmentConfirmResponse' }),
  ],
  'type',
  { title: 'ScaFactorConfirmResponseOneOf' },
);
export type ScaFactorConfirmResponse = Static<typeof ScaFactorConfirmResponseSchema>;

// ── Login and security events ────────────────────────────────────────────────────────────────

export const ScaLoginStartRequestSchema = Obj({ factor: ScaFactorSchema }, { title: 'ScaLoginStartRequest' });

export const ScaLoginStartSchema = Obj(
  {
    factor: ScaFactorSchema,
    challengeId: Type.Optional(Nullable(Type.String())),
    expiresAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
    passkeyOptions: Type.Optional(Type.Union([OpaqueObject('WebAuthn assertion request options'), Type.Null()])),
    allowedOrigins: Type.Optional(Type.Union([Type.Array(Type.String()), Type.Null()])),
    relyingPartyId: Type.Optional(Nullable(Type.String())),
  },
  { title: 'ScaLoginStart' },
);
export type ScaLoginStart = Static<typeof ScaLoginStartSchema>;

export const ScaLoginCompleteRequestSchema = Obj(
  {
    factor: ScaFactorSchema,
    endUserIpAddress: IpField,
    challengeId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])),
    ...ProofFields,
  },
  { title: 'ScaLoginCompleteRequest' },
);
export type ScaLoginCompleteRequest = Static<typeof ScaLoginCompleteRequestSchema>;

export const ScaLoginCompleteSchema = Obj(
  { status: Type.String({ examples: ['SUCCESS'] }), sessionExpiresAt: Type.Optional(Type.Union([DateTime, Type.Null()])) },
  { title: 'ScaLoginComplete' },
);

const SecurityEventType = Type.Union([Type.Literal('RESET_PASSWORD_COMPLETED'), Type.Literal('FAILED_LOGIN_ATTEMPT')]);
export const RecordSecurityEventRequestSchema = Obj({ eventType: SecurityEventType }, { title: 'RecordSecurityEventRequest' });
export const RecordSecurityEventResponseSchema = Obj(
  {
    eventType: SecurityEventType,
    suspended: Type.Boolean(),
    lockedUntil: Type.Optional(Type.Union([DateTime, Type.Null()])),
    failedAttempts: Type.Integer({ minimum: 0 }),
  },
  { title: 'RecordSecurityEventResponse' },
);
export type RecordSecurityEventResponse = Static<typeof RecordSecurityEventResponseSchema>;

// ── 2FA reset ────────────────────────────────────────────────────────────────────────────────

export const TwoFactorResetStartRequestSchema = Obj({ factor: ScaFactorSchema }, { title: 'TwoFactorResetStartRequest' });
export const TwoFactorResetStartSchema = Obj(
  {
    resetId: Type.String(),
    livenessAccessToken: Type.Optional(Nullable(Type.String())),
    verificationLink: Type.Optional(Nullable(Type.String())),
    expiresAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
  },
  { title: 'TwoFactorResetStart' },
);
export type TwoFactorResetStart = Static<typeof TwoFactorResetStartSchema>;

export const TwoFactorResetStatusSchema = Obj(
  {
    status: Type.Union(
      ['INITIATED', 'PENDING_REVIEW', 'LIVENESS_PASSED', 'COMPLETED', 'REJECTED', 'EXPIRED'].map((s) => Type.Literal(s)),
      { description: 'COMPLETED, REJECTED and EXPIRED are terminal' },
    ),
    factor: ScaFactorSchema,
    enrollmentStatus: Type.Optional(Type.Union([Type.Literal('PENDING'), Type.Literal('COMPLETED'), Type.Null()])),
    expiresAt: DateTime,
    completedAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
  },
  { title: 'TwoFactorResetStatus' },
);
export type TwoFactorResetStatus = Static<typeof TwoFactorResetStatusSchema>;

export const TwoFactorResetCompleteRequestSchema = Obj(
  {
    mobile: Type.Optional(
      Obj({
        countryCode: Type.String({ pattern: '^\\+[1-9]\\d{0,3}$', description: 'Dialing code with its leading +', examples: ['+1'] }),
        number: Type.String({ pattern: '^\\d{4,14}$', description: 'National number', examples: ['4155550123'] }),
      }),
    ),
  },
  { title: 'TwoFactorResetCompleteRequest' },
);
export type TwoFactorResetCompleteRequest = Static<typeof TwoFactorResetCompleteRequestSchema>;

// ── Beneficiary trust ────────────────────────────────────────────────────────────────────────

export const BeneficiaryTrustStartSchema = Obj({ scaChallenge: Type.Optional(ScaChallengeSchema) }, { title: 'BeneficiaryTrustStart' });
export const BeneficiaryTrustConfirmRequestSchema = Obj(
  { challengeId: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()])), ...ProofFields },
  { title: 'BeneficiaryTrustConfirmRequest' },
);
export type BeneficiaryTrustConfirmRequest = Static<typeof BeneficiaryTrustConfirmRequestSchema>;
export const BeneficiaryTrustConfirmSchema = Obj({ trusted: Type.Boolean() }, { title: 'BeneficiaryTrustConfirm' });

// ── Parameters ───────────────────────────────────────────────────────────────────────────────

const CustomerIdField = IdString('Customer:019542f5-b3e7-1d02-0000-000000000001');
export const CustomerIdQuery = Obj({ customerId: CustomerIdField });
export const CredentialIdParams = Obj({ credentialId: Type.String({ minLength: 1, maxLength: 512 }) });
export const ResetIdParams = Obj({ resetId: IdString('TwoFactorReset:019542f5-b3e7-1d02-0000-000000000001') });
export const ExternalAccountIdParams = Obj({ externalAccountId: IdString('ExternalAccount:019542f5-b3e7-1d02-0000-000000000001') });
