/**
 * Turnkey-style signed bundles: a JSON string
 * `{"version":"v1.0.0","data":"<hex of UTF-8 JSON>","dataSignature":"<DER hex>","enclaveQuorumPublic":"<04… hex>"}`
 * where `dataSignature` is ECDSA-P256-SHA256 over the hex-decoded `data` bytes, made by the key in
 * `enclaveQuorumPublic` (crypto-formats.md §3.1, §4 "Bonus"). Used for `otpEncryptionTargetBundle`
 * and `encryptedWalletCredentials`.
 */
import { sign, verify, type KeyObject } from 'node:crypto';
import { parseDerSignature } from './der.ts';
import { publicKeyObject, uncompressPublicKeyHex } from './keys.ts';

export const SIGNED_BUNDLE_VERSION = 'v1.0.0';

/**
 * The stable server key that signs bundles. Its public key is published (as `enclaveQuorumPublic`)
 * so verifying clients can pin it — e.g. `@turnkey/crypto`'s `dangerouslyOverrideSignerPublicKey`.
 * Same shape as the per-platform wallet key the auth module persists.
 */
export interface BundleSigner {
  privateKey: KeyObject;
  /** SEC1 hex of the matching public key (either encoding; published uncompressed, lowercase). */
  publicKeyHex: string;
}

export interface SignedBundle {
  version: string;
  data: string;
  dataSignature: string;
  enclaveQuorumPublic: string;
}

/**
 * Serialises `data` into a signed bundle. With `signer` null the signature fields are empty strings,
 * which is what the sandbox sends for export bundles (facts-auth.md §4.3).
 */
export function createSignedBundle(data: Record<string, unknown>, signer: BundleSigner | null): string {
  const dataBytes = Buffer.from(JSON.stringify(data), 'utf8');
  const bundle: SignedBundle = {
    version: SIGNED_BUNDLE_VERSION,
    data: dataBytes.toString('hex'),
    dataSignature: signer ? sign('sha256', dataBytes, signer.privateKey).toString('hex') : '',
    enclaveQuorumPublic: signer ? uncompressPublicKeyHex(signer.publicKeyHex) : '',
  };
  return JSON.stringify(bundle);
}

/**
 * Parses a signed bundle and its `data` JSON object. Tolerates an already-parsed object and the
 * stray `'` quoting of the published examples (`'''{…}'''`), as grid-wallet-prod does. Throws an
 * Error naming the defect.
 */
export function parseSignedBundle(input: unknown): { bundle: SignedBundle; data: Record<string, unknown> } {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value.trim().replace(/^'+|'+$/g, ''));
    } catch {
      throw new Error('the bundle is not JSON');
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('the bundle is not a JSON object');
  const { version, data, dataSignature, enclaveQuorumPublic } = value as Record<string, unknown>;
  if (typeof data !== 'string' || !/^(?:[0-9a-fA-F]{2})+$/.test(data)) throw new Error('the bundle "data" is not hex');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(data, 'hex').toString('utf8'));
  } catch {
    throw new Error('the bundle "data" is not hex of JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the bundle "data" is not a JSON object');
  return {
    bundle: {
      version: typeof version === 'string' ? version : '',
      data,
      dataSignature: typeof dataSignature === 'string' ? dataSignature : '',
      enclaveQuorumPublic: typeof enclaveQuorumPublic === 'string' ? enclaveQuorumPublic : '',
    },
    data: parsed as Record<string, unknown>,
  };
}

/**
 * True when `dataSignature` verifies over `data` under `enclaveQuorumPublic` and, when
 * `expectedSignerPublicKeyHex` is given, that key is the expected one (any encoding).
 */
export function verifySignedBundle(bundle: SignedBundle, expectedSignerPublicKeyHex?: string): boolean {
  try {
    const signer = uncompressPublicKeyHex(bundle.enclaveQuorumPublic);
    if (expectedSignerPublicKeyHex !== undefined && signer !== uncompressPublicKeyHex(expectedSignerPublicKeyHex)) return false;
    const der = Buffer.from(bundle.dataSignature, 'hex');
    parseDerSignature(der);
    return verify('sha256', Buffer.from(bundle.data, 'hex'), publicKeyObject(signer), der);
  } catch {
    return false;
  }
}
