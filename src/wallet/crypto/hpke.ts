/**
 * RFC 9180 HPKE, base mode, single shot: DHKEM(P-256, HKDF-SHA256) / HKDF-SHA256 / AES-256-GCM,
 * with the Turnkey profile every wallet bundle uses (crypto-formats.md §3.3):
 *   - info = ASCII "turnkey_hpke" (Turnkey ships only the derived constants, not the string);
 *   - AAD  = enc (65 B uncompressed) ‖ pkR (65 B uncompressed) — not part of HPKE, and required.
 * node:crypto only. Each LabeledExtract+LabeledExpand pair is one `hkdfSync` call.
 */
import { createCipheriv, createDecipheriv, createECDH, createHmac, hkdfSync } from 'node:crypto';
import { InvalidKeyError, parsePrivateKeyHex, parsePublicKey } from './keys.ts';

export const HPKE_INFO = Buffer.from('turnkey_hpke', 'ascii');

const VERSION = Buffer.from('HPKE-v1', 'ascii');
const KEM_ID = Buffer.from([0x00, 0x10]);
const KEM_SUITE = Buffer.concat([Buffer.from('KEM', 'ascii'), KEM_ID]);
const HPKE_SUITE = Buffer.concat([Buffer.from('HPKE', 'ascii'), KEM_ID, Buffer.from([0x00, 0x01, 0x00, 0x02])]);
const MODE_BASE = Buffer.from([0x00]);
const TAG_LENGTH = 16;

/** A failure to open a sealed message: wrong key, tampered ciphertext/enc/AAD, or a bad encapsulated key. */
export class HpkeOpenError extends Error {
  override name = 'HpkeOpenError';
}

function i2osp2(n: number): Buffer {
  return Buffer.from([(n >> 8) & 0xff, n & 0xff]);
}

function ascii(s: string): Buffer {
  return Buffer.from(s, 'ascii');
}

/** LabeledExtract with the empty salt (HMAC with an empty key equals HMAC with Nh zero bytes). */
function labeledExtract(suite: Buffer, label: string, ikm: Buffer): Buffer {
  return createHmac('sha256', Buffer.alloc(0))
    .update(Buffer.concat([VERSION, suite, ascii(label), ikm]))
    .digest();
}

/** HKDF(salt, ikm = "HPKE-v1"‖suite‖ikmLabel‖ikm, info = I2OSP(L,2)‖"HPKE-v1"‖suite‖infoLabel‖info, L). */
function labeledHkdf(suite: Buffer, salt: Buffer, ikmLabel: string, ikm: Buffer, infoLabel: string, info: Buffer, length: number): Buffer {
  const labeledIkm = Buffer.concat([VERSION, suite, ascii(ikmLabel), ikm]);
  const labeledInfo = Buffer.concat([i2osp2(length), VERSION, suite, ascii(infoLabel), info]);
  return Buffer.from(hkdfSync('sha256', labeledIkm, salt, labeledInfo, length));
}

interface KeySchedule {
  key: Buffer;
  nonce: Buffer;
}

/** Shared secret → AEAD key and base nonce (mode_base, no PSK). */
function keySchedule(dh: Buffer, enc: Buffer, pkR: Buffer, info: Buffer): KeySchedule {
  const sharedSecret = labeledHkdf(KEM_SUITE, Buffer.alloc(0), 'eae_prk', dh, 'shared_secret', Buffer.concat([enc, pkR]), 32);
  const ksc = Buffer.concat([
    MODE_BASE,
    labeledExtract(HPKE_SUITE, 'psk_id_hash', Buffer.alloc(0)),
    labeledExtract(HPKE_SUITE, 'info_hash', info),
  ]);
  return {
    key: labeledHkdf(HPKE_SUITE, sharedSecret, 'secret', Buffer.alloc(0), 'key', ksc, 32),
    nonce: labeledHkdf(HPKE_SUITE, sharedSecret, 'secret', Buffer.alloc(0), 'base_nonce', ksc, 12),
  };
}

export interface HpkeSealed {
  /** The encapsulated (ephemeral) public key, 65 bytes uncompressed. */
  enc: Buffer;
  /** AES-256-GCM ciphertext followed by its 16-byte tag. */
  ciphertext: Buffer;
}

export interface HpkeOptions {
  /** Defaults to "turnkey_hpke". */
  info?: Uint8Array;
  /** Defaults to enc ‖ pkR (both uncompressed), as every Turnkey client expects. */
  aad?: Uint8Array;
}

/**
 * Seals `plaintext` to a P-256 public key (compressed keys are decompressed first; the KEM context
 * and AAD always use the uncompressed point). `ephemeralPrivateKeyHex` exists only to reproduce
 * test vectors — leave it out so a fresh ephemeral key is drawn.
 */
export function hpkeSeal(
  recipientPublicKey: string | Uint8Array,
  plaintext: Uint8Array,
  opts: HpkeOptions & { ephemeralPrivateKeyHex?: string } = {},
): HpkeSealed {
  const pkR = parsePublicKey(recipientPublicKey);
  const ecdh = createECDH('prime256v1');
  if (opts.ephemeralPrivateKeyHex !== undefined) ecdh.setPrivateKey(parsePrivateKeyHex(opts.ephemeralPrivateKeyHex));
  else ecdh.generateKeys();
  const enc = ecdh.getPublicKey(null, 'uncompressed');
  const dh = ecdh.computeSecret(pkR);
  const { key, nonce } = keySchedule(dh, enc, pkR, Buffer.from(opts.info ?? HPKE_INFO));
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_LENGTH });
  cipher.setAAD(Buffer.from(opts.aad ?? Buffer.concat([enc, pkR])));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  return { enc, ciphertext };
}

/**
 * Opens a sealed message with the recipient's private scalar (64 hex). `enc` may be compressed or
 * uncompressed; it is used uncompressed. Throws {@link HpkeOpenError} on any failure.
 */
export function hpkeOpen(recipientPrivateKeyHex: string, enc: string | Uint8Array, ciphertext: Uint8Array, opts: HpkeOptions = {}): Buffer {
  let encPoint: Buffer;
  let skR: Buffer;
  try {
    encPoint = parsePublicKey(enc);
    skR = parsePrivateKeyHex(recipientPrivateKeyHex);
  } catch (err) {
    throw new HpkeOpenError(err instanceof InvalidKeyError ? err.message : 'bad key');
  }
  if (ciphertext.length < TAG_LENGTH) throw new HpkeOpenError('the ciphertext is shorter than its tag');
  const ecdh = createECDH('prime256v1');
  ecdh.setPrivateKey(skR);
  const pkR = ecdh.getPublicKey(null, 'uncompressed');
  const dh = ecdh.computeSecret(encPoint);
  const { key, nonce } = keySchedule(dh, encPoint, pkR, Buffer.from(opts.info ?? HPKE_INFO));
  const body = Buffer.from(ciphertext.subarray(0, ciphertext.length - TAG_LENGTH));
  const tag = Buffer.from(ciphertext.subarray(ciphertext.length - TAG_LENGTH));
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_LENGTH });
    decipher.setAAD(Buffer.from(opts.aad ?? Buffer.concat([encPoint, pkR])));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch {
    throw new HpkeOpenError('the ciphertext does not authenticate (wrong key or tampered data)');
  }
}
