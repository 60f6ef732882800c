/** Table types of embedded-wallet authentication (migration 0008). */
import type { Selectable } from 'kysely';

export interface AuthCredentialsTable {
  /** `AuthMethod:<uuid>`. */
  id: string;
  platform_id: string;
  /** The EMBEDDED_WALLET internal account. */
  account_id: string;
  /** EMAIL_OTP, SMS_OTP, OAUTH or PASSKEY. */
  type: string;
  nickname: string;
  /** One credential per key on an account: `EMAIL_OTP`, `SMS_OTP`, `PASSKEY:<id>`, `OAUTH:<identity>`. */
  unique_key: string;
  /** PASSKEY: base64url credential id, base64url COSE public key, signature counter, transports JSON. */
  webauthn_id: string | null;
  webauthn_public_key: string | null;
  webauthn_counter: number | null;
  webauthn_transports: string | null;
  /** PASSKEY: the origin and RP ID it registered with; assertions must match them. */
  webauthn_origin: string | null;
  webauthn_rp_id: string | null;
  /** OAUTH: `{iss, aud, sub}` JSON. */
  oidc_identity: string | null;
  created_at: string;
  updated_at: string;
}

export interface AuthSessionsTable {
  /** `Session:<uuid>`. */
  id: string;
  platform_id: string;
  account_id: string;
  /** The AuthMethod that issued it. */
  credential_id: string;
  /** Compressed SEC1 hex of the session API key. */
  public_key: string;
  /**
   * Compressed SEC1 hex of the client's own key when the session was opened with a compressed
   * `clientPublicKey` (PASSKEY, OAUTH): it signs for the session too (the client-held key mode).
   */
  client_public_key: string | null;
  created_at: string;
  updated_at: string;
  /** Platform clock. */
  expires_at: string;
  revoked_at: string | null;
}

/** A pending signed retry, OTP issuance or passkey challenge; `id` is the `Request:<uuid>`. */
export interface AuthRequestsTable {
  id: string;
  platform_id: string;
  account_id: string;
  /** What the request authorises, e.g. `credential.revoke`; see src/modules/auth/signed-retry.ts. */
  operation: string;
  /** The credential, session, account or quote it acts on. */
  target_id: string;
  /** SHA-256 hex of the canonical request content the retry must repeat. */
  body_hash: string;
  payload_to_sign: string;
  /** Signer JSON: who may stamp the retry. */
  signer: string;
  /** Operation data JSON (e.g. an OTP target private key); never returned. */
  data: string | null;
  created_at: string;
  /** Platform clock. */
  expires_at: string;
  consumed_at: string | null;
}

/** Challenge issues and failed verifies per credential, for rate limiting. */
export interface AuthAttemptsTable {
  id: string;
  platform_id: string;
  credential_id: string;
  /** CHALLENGE or VERIFY_FAILED. */
  kind: string;
  /** System clock. */
  at_ms: number;
}

/** The per-platform P-256 key that signs OTP target bundles and OTP verification tokens. */
export interface WalletKeysTable {
  platform_id: string;
  private_key_pem: string;
  /** Uncompressed SEC1 hex, published as `enclaveQuorumPublic`. */
  public_key_hex: string;
  created_at: string;
}

/** An embedded wallet's recovery phrase (exported sealed to the client; never logged). */
export interface WalletSecretsTable {
  account_id: string;
  platform_id: string;
  mnemonic: string;
}

export type AuthCredentialRow = Selectable<AuthCredentialsTable>;
export type AuthSessionRow = Selectable<AuthSessionsTable>;
export type AuthRequestRow = Selectable<AuthRequestsTable>;
