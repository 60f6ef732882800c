/**
 * Embedded-wallet authentication: credentials on EMBEDDED_WALLET accounts, the sessions they issue,
 * pending signed-retry requests (and OTP / passkey challenges), attempts for rate limiting, and a
 * per-platform key that signs OTP target bundles and verification tokens.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0008WalletAuth: Migration = {
  name: '0008_wallet_auth',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema
      .createTable('auth_credentials')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('nickname', 'text', (c) => c.notNull())
      // What makes a credential unique on its account: the type for OTP, the WebAuthn id for a
      // passkey, the (iss, aud, sub) identity for OAUTH.
      .addColumn('unique_key', 'text', (c) => c.notNull())
      .addColumn('webauthn_id', 'text')
      .addColumn('webauthn_public_key', 'text')
      .addColumn('webauthn_counter', 'bigint')
      .addColumn('webauthn_transports', 'text')
      .addColumn('webauthn_origin', 'text')
      .addColumn('webauthn_rp_id', 'text')
      .addColumn('oidc_identity', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('auth_credentials_unique').on('auth_credentials').columns(['account_id', 'unique_key']).unique().execute();
    await db.schema.createIndex('auth_credentials_platform').on('auth_credentials').columns(['platform_id', 'account_id']).execute();

    await db.schema
      .createTable('auth_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('credential_id', 'text', (c) => c.notNull())
      // Compressed SEC1 hex of the session's API key: stamps are matched against it.
      .addColumn('public_key', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('auth_sessions_account').on('auth_sessions').columns(['account_id', 'revoked_at']).execute();
    await db.schema.createIndex('auth_sessions_credential').on('auth_sessions').columns(['credential_id']).execute();

    await db.schema
      .createTable('auth_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('account_id', 'text', (c) => c.notNull())
      .addColumn('operation', 'text', (c) => c.notNull())
      .addColumn('target_id', 'text', (c) => c.notNull())
      .addColumn('body_hash', 'text', (c) => c.notNull())
      .addColumn('payload_to_sign', 'text', (c) => c.notNull())
      // Who may stamp the retry (JSON), and operation data such as an OTP target key (JSON).
      .addColumn('signer', 'text', (c) => c.notNull())
      .addColumn('data', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'text', (c) => c.notNull())
      .addColumn('consumed_at', 'text')
      .execute();
    await db.schema.createIndex('auth_requests_target').on('auth_requests').columns(['target_id', 'operation']).execute();

    await db.schema
      .createTable('auth_attempts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('credential_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('at_ms', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('auth_attempts_credential').on('auth_attempts').columns(['credential_id', 'kind', 'at_ms']).execute();

    await db.schema
      .createTable('wallet_keys')
      .addColumn('platform_id', 'text', (c) => c.primaryKey())
      .addColumn('private_key_pem', 'text', (c) => c.notNull())
      .addColumn('public_key_hex', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    // The recovery phrase an export hands over, made on the wallet's first export.
    await db.schema
      .createTable('wallet_secrets')
      .addColumn('account_id', 'text', (c) => c.primaryKey())
      .addColumn('platform_id', 'text', (c) => c.notNull())
      .addColumn('mnemonic', 'text', (c) => c.notNull())
      .execute();
  },
};
