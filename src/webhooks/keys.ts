/**
 * Per-platform webhook signing keys: ECDSA P-256, made when a platform is created (and lazily for
 * platforms made before keys existed). The private key is only read to sign; it is never logged or
 * returned.
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';

export const WEBHOOK_SIGNATURE_ALGORITHM = 'ECDSA_P256_SHA256' as const;

export function newWebhookKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/** Gives a platform a key (inside the platform-creating transaction). */
export async function createWebhookKey(db: Kysely<Database>, platformId: string, at: string): Promise<void> {
  const k = newWebhookKeyPair();
  await db
    .insertInto('webhook_keys')
    .values({ platform_id: platformId, private_key_pem: k.privateKeyPem, public_key_pem: k.publicKeyPem, created_at: at })
    .onConflict((oc) => oc.column('platform_id').doNothing())
    .execute();
}

/** The platform's key row, made now if it has none (two racing callers end up with the same key). */
async function ensureKeyRow(db: Kysely<Database>, platformId: string) {
  const row = await db.selectFrom('webhook_keys').selectAll().where('platform_id', '=', platformId).executeTakeFirst();
  if (row) return row;
  await createWebhookKey(db, platformId, new Date().toISOString());
  return db.selectFrom('webhook_keys').selectAll().where('platform_id', '=', platformId).executeTakeFirstOrThrow();
}

/** The platform's SPKI PEM public key. */
export async function webhookPublicKey(db: Kysely<Database>, platformId: string): Promise<string> {
  return (await ensureKeyRow(db, platformId)).public_key_pem;
}

/** Private keys by platform, parsed once (keys never change). */
const signingKeys = new Map<string, KeyObject>();

export async function webhookSigningKey(db: Kysely<Database>, platformId: string): Promise<KeyObject> {
  let key = signingKeys.get(platformId);
  if (!key) {
    key = createPrivateKey((await ensureKeyRow(db, platformId)).private_key_pem);
    signingKeys.set(platformId, key);
  }
  return key;
}

/** The `X-Grid-Signature` / `X-Service-Signature` value: `{"v":"1","s":"<base64 DER ECDSA-P256-SHA256>"}`. */
export function signatureHeader(body: Buffer, key: KeyObject): string {
  return JSON.stringify({ v: '1', s: sign('sha256', body, key).toString('base64') });
}
