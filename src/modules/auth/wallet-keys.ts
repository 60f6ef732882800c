/**
 * The per-platform wallet key: P-256, made on first use. It signs OTP target bundles
 * (`dataSignature`, published as `enclaveQuorumPublic`) and OTP verification tokens. The private
 * key is only read to sign; it is never logged or returned.
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';

export interface WalletKey {
  privateKey: KeyObject;
  /** Uncompressed SEC1 hex. */
  publicKeyHex: string;
}

const cache = new Map<string, WalletKey>();

function uncompressedHex(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  return `04${Buffer.from(jwk.x!, 'base64url').toString('hex')}${Buffer.from(jwk.y!, 'base64url').toString('hex')}`;
}

/** The platform's key; `db` may be the caller's transaction (SQLite has one connection). */
export async function walletKey(db: Kysely<Database>, platformId: string): Promise<WalletKey> {
  const hit = cache.get(platformId);
  if (hit) return hit;
  let row = await db.selectFrom('wallet_keys').selectAll().where('platform_id', '=', platformId).executeTakeFirst();
  const existed = row !== undefined;
  if (!row) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await db
      .insertInto('wallet_keys')
      .values({ platform_id: platformId, private_key_pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), public_key_hex: uncompressedHex(publicKey), created_at: new Date().toISOString() })
      .onConflict((oc) => oc.column('platform_id').doNothing())
      .execute();
    // Two racing callers: both read the row that won.
    row = await db.selectFrom('wallet_keys').selectAll().where('platform_id', '=', platformId).executeTakeFirstOrThrow();
  }
  const key = { privateKey: createPrivateKey(row.private_key_pem), publicKeyHex: row.public_key_hex };
  // A key inserted in a transaction that may still roll back is not cached: the next call re-reads.
  if (existed) cache.set(platformId, key);
  return key;
}
