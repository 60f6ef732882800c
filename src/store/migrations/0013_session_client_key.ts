/**
 * A wallet session opened by PASSKEY or OAUTH with a compressed `clientPublicKey` now gets a session
 * key of its own, sealed to that key as `encryptedSessionSigningKey` (spec §2, §4.2), and keeps
 * accepting stamps by the client's key as before (the live API's client-held key mode). The
 * client's key is kept beside the session key; either one signs for the session.
 */
import type { Kysely } from 'kysely';
import type { Migration } from './index.ts';

export const m0013SessionClientKey: Migration = {
  name: '0013_session_client_key',
  // biome-ignore lint/suspicious/noExplicitAny: `any`: see Migration.
  async up(db: Kysely<any>) {
    await db.schema.alterTable('auth_sessions').addColumn('client_public_key', 'text').execute();
  },
};
