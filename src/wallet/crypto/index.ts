/**
 * The embedded-wallet cryptographic core (no routes, no storage). See each module:
 *   keys — P-256 keys and encodings · stamp — wallet stamp verification · hpke — RFC 9180 (Turnkey profile)
 *   otp — OTP target / encrypted bundles · bundle — session-key and export bundles · signed-bundle — signed bundle format
 *   passkey — WebAuthn via @simplewebauthn/server · oidc — sandbox OIDC claim checks · base58, der — encodings.
 */
export * from './base58.ts';
export * from './bundle.ts';
export * from './der.ts';
export * from './hpke.ts';
export * from './keys.ts';
export * from './oidc.ts';
export * from './otp.ts';
export * from './passkey.ts';
export * from './signed-bundle.ts';
export * from './stamp.ts';
