/**
 * Table types of Strong Customer Authentication (migration 0022), declared into the store's
 * `Database` by module augmentation. Every time is on the platform's clock (its sandbox offset
 * included), so a sandbox clock advance expires challenges, locks, sessions and reset windows.
 */
import type { Selectable } from 'kysely';

/** The live ScaFactor values. */
export type ScaFactorValue = 'SMS_OTP' | 'TOTP' | 'PASSKEY';

/**
 * A TOTP or PASSKEY factor of a customer: PENDING between enrollment start and confirm (then it
 * holds the material the confirm checks and expires), ACTIVE once confirmed. SMS_OTP has no row: it
 * is the customer's phone number. At most one row per customer and factor.
 */
export interface ScaFactorsTable {
  /** `ScaFactor:<uuid>`. */
  id: string;
  platform_id: string;
  customer_id: string;
  factor: 'TOTP' | 'PASSKEY';
  status: 'PENDING' | 'ACTIVE';
  /** TOTP: the shared secret (base32), sealed with the store's SecretBox (SECRET_COLUMNS.scaTotpSecret). */
  totp_secret: string | null;
  /** TOTP: JSON array of the unused recovery codes' keyed digests (never the codes). */
  recovery_codes: string | null;
  /** The last TOTP time step accepted (a code is not accepted twice). */
  totp_last_step: number | null;
  /** PASSKEY, PENDING: the registration challenge (base64url) the credential must sign. */
  registration_challenge: string | null;
  /** PASSKEY, ACTIVE: canonical base64url credential id (the wire `credentialId`). */
  credential_id: string | null;
  /** PASSKEY: base64url COSE public key. */
  public_key: string | null;
  sign_count: number;
  /** PASSKEY: the origin and RP ID the credential registered with (assertions must match them). */
  origin: string | null;
  rp_id: string | null;
  /** PASSKEY: JSON array of transports. */
  transports: string | null;
  /** PENDING rows: when the enrollment can no longer be confirmed. */
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}
export type ScaFactorRow = Selectable<ScaFactorsTable>;

/** What a challenge authorises. */
export type ScaChallengeKind = 'TRANSACTION' | 'LOGIN' | 'TRUST' | 'UNTRUST';
export type ScaChallengeStatus = 'PENDING' | 'SATISFIED' | 'INVALIDATED' | 'CLOSED' | 'REPLACED';

/**
 * One challenge: per-transaction (its subject is a quote), a login (subject: the customer), or a
 * beneficiary trust change (subject: the external account). One PENDING challenge per subject.
 */
export interface ScaChallengesTable {
  /** `ScaChallenge:<uuid>`. */
  id: string;
  platform_id: string;
  customer_id: string;
  kind: ScaChallengeKind;
  subject_id: string;
  purpose: string | null;
  factor: ScaFactorValue;
  /** JSON array of ScaFactor. */
  available_factors: string;
  /** SMS_OTP: the code's keyed digest (`v1$salt$mac`), never the code. */
  code_digest: string | null;
  /** PASSKEY: the service challenge H (hex) the assertion signs as UTF-8(H). */
  passkey_challenge: string | null;
  status: ScaChallengeStatus;
  failed_attempts: number;
  /** SMS codes sent for it: 1 at issue, +1 per resend. */
  sends: number;
  last_sent_at: string;
  expires_at: string;
  /** The end user's IP recorded with the satisfying proof, when given. */
  end_user_ip: string | null;
  created_at: string;
  updated_at: string;
}
export type ScaChallengeRow = Selectable<ScaChallengesTable>;

/** A customer's login security: the failed-login counter, its lock, the SCA session, the SMS number. */
export interface ScaCustomerStatesTable {
  platform_id: string;
  customer_id: string;
  failed_attempts: number;
  locked_until: string | null;
  /** 0/1: locked with no automatic expiry (only RESET_PASSWORD_COMPLETED clears it). */
  suspended: number;
  /** The end of the customer's SCA login session, or null when it has none (never logged in, or revoked). */
  session_expires_at: string | null;
  /** The E.164 number an SMS_OTP reset enrolled; null: the customer's phoneNumber. */
  sms_number: string | null;
  created_at: string;
  updated_at: string;
}
export type ScaCustomerStateRow = Selectable<ScaCustomerStatesTable>;

export type TwoFactorResetStatusValue = 'INITIATED' | 'PENDING_REVIEW' | 'LIVENESS_PASSED' | 'COMPLETED' | 'REJECTED' | 'EXPIRED';

/** A liveness-gated 2FA reset. */
export interface ScaResetsTable {
  /** `TwoFactorReset:<uuid>`. */
  id: string;
  platform_id: string;
  customer_id: string;
  factor: ScaFactorValue;
  status: TwoFactorResetStatusValue;
  /** PENDING / COMPLETED for TOTP and PASSKEY resets once completed; null otherwise. */
  enrollment_status: 'PENDING' | 'COMPLETED' | null;
  /** SHA-256 (hex) of the hosted liveness page's token (the token is only in the link). */
  link_token_hash: string;
  /** PASS or FAIL once the page was submitted. */
  liveness_outcome: 'PASS' | 'FAIL' | null;
  expires_at: string;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}
export type ScaResetRow = Selectable<ScaResetsTable>;

/** A trusted beneficiary: a customer external account whose trust was confirmed (a row while trusted). */
export interface ScaTrustedBeneficiariesTable {
  platform_id: string;
  external_account_id: string;
  customer_id: string;
  trusted_at: string;
}

declare module '../../store/schema.ts' {
  interface Database {
    sca_factors: ScaFactorsTable;
    sca_challenges: ScaChallengesTable;
    sca_customer_states: ScaCustomerStatesTable;
    sca_resets: ScaResetsTable;
    sca_trusted_beneficiaries: ScaTrustedBeneficiariesTable;
  }
}
