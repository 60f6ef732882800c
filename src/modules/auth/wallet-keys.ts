/**
 * The per-platform wallet key: P-256, made on first use. It signs OTP target bundles
 * (`dataSignature`, published as `enclaveQuorumPublic`) and OTP verification tokens. The private
 * key is only read to sign; it is never logged or returned. It is stored sealed by the store's
 * SecretBox (clear only without CORRIDOR_SECRET_KEY).
 */
import { createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SECRET_COLUMNS, secretRef } from '../../store/secret-box.ts';
import type { Unit } from '../../unit.ts';
import { findWalletKey, insertWalletKey } from './auth.repo.ts';

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

/** The unit's platform's key, made (in the unit) on first use. */
export async function walletKey(u: Unit): Promise<WalletKey> {
  const platformId = u.platform.id;
  const hit = cache.get(platformId);
  if (hit) return hit;
  const { secrets } = u.app;
  const ref = secretRef(SECRET_COLUMNS.walletKey, platformId);
  let row = await findWalletKey(u.trx, platformId);
  const existed = row !== undefined;
  if (!row) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await insertWalletKey(u.trx, {
      platform_id: platformId,
      private_key_pem: secrets.seal(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), ref),
      public_key_hex: uncompressedHex(publicKey),
      created_at: u.at,
    });
    // Two racing callers: both read the row that won.
    row = await findWalletKey(u.trx, platformId);
    if (!row) throw new Error(`wallet key of ${platformId} missing after its insert`);
  }
  const key = { privateKey: createPrivateKey(secrets.open(row.private_key_pem, ref)), publicKeyHex: row.public_key_hex };
  // A key inserted in a unit that may still roll back is not cached: the next call re-reads.
  if (existed) cache.set(platformId, key);
  return key;
}
