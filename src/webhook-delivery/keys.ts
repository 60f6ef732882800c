/**
 * Per-platform webhook signing keys: ECDSA P-256, made when a platform is created (and lazily for
 * platforms made before keys existed). The private key is only read to sign; it is never logged or
 * returned. It is stored sealed by the store's SecretBox (clear only without CORRIDOR_SECRET_KEY).
 */
import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import { SECRET_COLUMNS, secretRef, type SecretBox } from '../store/secret-box.ts';

export const WEBHOOK_SIGNATURE_ALGORITHM = 'ECDSA_P256_SHA256' as const;

export function newWebhookKeyPair(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

const ref = (platformId: string) => secretRef(SECRET_COLUMNS.webhookKey, platformId);

/** Gives a platform a key (inside the platform-creating transaction), its private half sealed by `secrets`. */
export async function createWebhookKey(db: Kysely<Database>, platformId: string, at: string, secrets: SecretBox): Promise<void> {
  const k = newWebhookKeyPair();
  await db
    .insertInto('webhook_keys')
    .values({
      platform_id: platformId,
      private_key_pem: secrets.seal(k.privateKeyPem, ref(platformId)),
      public_key_pem: k.publicKeyPem,
      created_at: at,
    })
    .onConflict((oc) => oc.column('platform_id').doNothing())
    .execute();
}

/** The platform's key row, made now if it has none (two racing callers end up with the same key). */
async function ensureKeyRow(db: Kysely<Database>, platformId: string, secrets: SecretBox) {
  const row = await db.selectFrom('webhook_keys').selectAll().where('platform_id', '=', platformId).executeTakeFirst();
  if (row) return row;
  await createWebhookKey(db, platformId, new Date().toISOString(), secrets);
  return db.selectFrom('webhook_keys').selectAll().where('platform_id', '=', platformId).executeTakeFirstOrThrow();
}

/** The platform's SPKI PEM public key. */
export async function webhookPublicKey(db: Kysely<Database>, platformId: string, secrets: SecretBox): Promise<string> {
  return (await ensureKeyRow(db, platformId, secrets)).public_key_pem;
}

/** Private keys by platform, opened and parsed once (keys never change; re-sealing does not change them). */
const signingKeys = new Map<string, KeyObject>();

export async function webhookSigningKey(db: Kysely<Database>, platformId: string, secrets: SecretBox): Promise<KeyObject> {
  let key = signingKeys.get(platformId);
  if (!key) {
    key = createPrivateKey(secrets.open((await ensureKeyRow(db, platformId, secrets)).private_key_pem, ref(platformId)));
    signingKeys.set(platformId, key);
  }
  return key;
}

/** The `X-Grid-Signature` / `X-Service-Signature` value: `{"v":"1","s":"<base64 DER ECDSA-P256-SHA256>"}`. */
export function signatureHeader(body: Buffer, key: KeyObject): string {
  return JSON.stringify({ v: '1', s: sign('sha256', body, key).toString('base64') });
}
