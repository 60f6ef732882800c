/**
 * Secrets sealed to a client key with the §3.3 HPKE profile.
 *
 * Credential bundle (`encryptedSessionSigningKey`, crypto-formats.md §4):
 *   bs58check( compressed enc (33 B) ‖ AES-256-GCM ciphertext ‖ tag (16 B) ), no version byte —
 *   what `@turnkey/crypto` `decryptCredentialBundle(bundle, clientPrivHex)` opens; it returns the
 *   plaintext as hex, so a session key is sealed as its raw 32-byte scalar.
 *
 * Export bundle (`encryptedWalletCredentials`, facts-auth.md §4.3): a signed bundle whose `data` is
 *   `{"encappedPublic":"04…","ciphertext":"…","organizationId":"…"}` — what `decryptExportBundle` opens.
 */
import { bs58checkDecode, bs58checkEncode } from './base58.ts';
import { hpkeOpen, hpkeSeal } from './hpke.ts';
import { compressPoint } from './keys.ts';
import { createSignedBundle, parseSignedBundle, verifySignedBundle, type BundleSigner } from './signed-bundle.ts';

/**
 * Seals `secret` (normally a 32-byte P-256 scalar) to the client's public key (uncompressed, the
 * legacy-flow `clientPublicKey`; a compressed key is decompressed). `ephemeralPrivateKeyHex` is for
 * test vectors only.
 */
export function sealCredentialBundle(
  recipientPublicKey: string | Uint8Array,
  secret: Uint8Array,
  opts: { ephemeralPrivateKeyHex?: string } = {},
): string {
  const sealed = hpkeSeal(
    recipientPublicKey,
    secret,
    opts.ephemeralPrivateKeyHex === undefined ? {} : { ephemeralPrivateKeyHex: opts.ephemeralPrivateKeyHex },
  );
  return bs58checkEncode(Buffer.concat([compressPoint(sealed.enc), sealed.ciphertext]));
}

/**
 * Opens a credential bundle with the recipient's private scalar (64 hex): the inverse of
 * {@link sealCredentialBundle}. Throws on a bad encoding, checksum or ciphertext.
 */
export function openCredentialBundle(bundle: string, recipientPrivateKeyHex: string): Buffer {
  const raw = bs58checkDecode(bundle.trim());
  if (raw.length <= 33 + 16) throw new Error('the credential bundle is too short');
  return hpkeOpen(recipientPrivateKeyHex, raw.subarray(0, 33), raw.subarray(33));
}

/**
 * Seals `plaintext` (an exported mnemonic as UTF-8, or key bytes) into an export bundle.
 * `signer` null leaves `dataSignature` and `enclaveQuorumPublic` empty, as the sandbox does.
 */
export function sealExportBundle(
  recipientPublicKey: string | Uint8Array,
  plaintext: string | Uint8Array,
  opts: { organizationId: string; signer: BundleSigner | null },
): string {
  const bytes = typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext;
  const sealed = hpkeSeal(recipientPublicKey, bytes);
  return createSignedBundle(
    { encappedPublic: sealed.enc.toString('hex'), ciphertext: sealed.ciphertext.toString('hex'), organizationId: opts.organizationId },
    opts.signer,
  );
}

/**
 * Opens an export bundle with the recipient's private scalar. With `expectedSignerPublicKeyHex`
 * the signature must verify under that key; without it nothing is verified (sandbox bundles carry
 * empty signature fields).
 */
export function openExportBundle(
  bundle: string,
  recipientPrivateKeyHex: string,
  opts: { expectedSignerPublicKeyHex?: string } = {},
): Buffer {
  const { bundle: parsed, data } = parseSignedBundle(bundle);
  if (opts.expectedSignerPublicKeyHex !== undefined && !verifySignedBundle(parsed, opts.expectedSignerPublicKeyHex)) {
    throw new Error('the export bundle signature does not verify under the expected signer key');
  }
  if (typeof data.encappedPublic !== 'string' || typeof data.ciphertext !== 'string' || !/^(?:[0-9a-fA-F]{2})+$/.test(data.ciphertext)) {
    throw new Error('the export bundle data has no "encappedPublic"/"ciphertext"');
  }
  return hpkeOpen(recipientPrivateKeyHex, data.encappedPublic, Buffer.from(data.ciphertext, 'hex'));
}
