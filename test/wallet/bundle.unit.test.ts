/**
 * Sealed bundles: `encryptedSessionSigningKey` (the §4 vector, `decryptCredentialBundle` interop,
 * tamper detection) and `encryptedWalletCredentials` (`decryptExportBundle` interop, sandbox form).
 */
import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { decryptCredentialBundle, decryptExportBundle } from '@turnkey/crypto';
import { describe, expect, it } from 'vitest';
import { bs58checkDecode } from '../../src/wallet/crypto/base58.ts';
import { openCredentialBundle, openExportBundle, sealCredentialBundle, sealExportBundle } from '../../src/wallet/crypto/bundle.ts';
import { generateP256KeyPair, keyObjectToPublicKeyHex, publicKeyFromPrivateKeyHex } from '../../src/wallet/crypto/keys.ts';
import type { BundleSigner } from '../../src/wallet/crypto/signed-bundle.ts';
import { SESSION_KEY_VECTOR as V } from './vectors.ts';

describe('encryptedSessionSigningKey vector (crypto-formats §4)', () => {
  it('the vector keys are consistent', () => {
    expect(publicKeyFromPrivateKeyHex(V.clientPrivHex, false)).toBe(V.clientPublicKey);
    expect(publicKeyFromPrivateKeyHex(V.sessionPrivHex)).toBe(V.sessionPubCompressed);
  });

  it('sealing with the vector ephemeral key reproduces the bundle', () => {
    const bundle = sealCredentialBundle(V.clientPublicKey, Buffer.from(V.sessionPrivHex, 'hex'), {
      ephemeralPrivateKeyHex: V.ephemeralPrivHex,
    });
    expect(bundle).toBe(V.encryptedSessionSigningKey);
    expect(bundle).toHaveLength(115);
  });

  it('opens with decryptCredentialBundle and with openCredentialBundle', () => {
    expect(decryptCredentialBundle(V.encryptedSessionSigningKey, V.clientPrivHex)).toBe(V.sessionPrivHex);
    expect(openCredentialBundle(V.encryptedSessionSigningKey, V.clientPrivHex).toString('hex')).toBe(V.sessionPrivHex);
  });

  it('the OpenAPI example decodes to 81 bytes starting with a compressed point', () => {
    const raw = bs58checkDecode(V.openApiExample);
    expect(raw).toHaveLength(81);
    expect(raw[0]).toBe(0x02);
    expect(bs58checkDecode(V.encryptedSessionSigningKey)).toHaveLength(81);
  });
});

describe('credential bundles', () => {
  it('random session keys sealed to random clients open with decryptCredentialBundle', () => {
    for (let i = 0; i < 10; i++) {
      const client = generateP256KeyPair();
      const session = generateP256KeyPair();
      const recipient = i % 2 ? client.publicKeyUncompressedHex : client.publicKeyHex; // a compressed key is decompressed first
      const bundle = sealCredentialBundle(recipient, Buffer.from(session.privateKeyHex, 'hex'));
      expect(decryptCredentialBundle(bundle, client.privateKeyHex)).toBe(session.privateKeyHex);
      expect(openCredentialBundle(bundle, client.privateKeyHex).toString('hex')).toBe(session.privateKeyHex);
    }
  });

  it('a changed character, a wrong key or a truncated bundle does not open', () => {
    const client = generateP256KeyPair();
    const bundle = sealCredentialBundle(client.publicKeyUncompressedHex, randomBytes(32));
    const changed = bundle.slice(0, 50) + (bundle[50] === 'a' ? 'b' : 'a') + bundle.slice(51);
    expect(() => openCredentialBundle(changed, client.privateKeyHex)).toThrow();
    expect(() => decryptCredentialBundle(changed, client.privateKeyHex)).toThrow();
    expect(() => openCredentialBundle(bundle, generateP256KeyPair().privateKeyHex)).toThrow();
    expect(() => openCredentialBundle(bundle.slice(0, 40), client.privateKeyHex)).toThrow();
    expect(() => openCredentialBundle('0OIl', client.privateKeyHex)).toThrow();
  });
});

describe('export bundles (encryptedWalletCredentials)', () => {
  const mnemonic = 'abandon ability able about above absent absorb abstract absurd abuse access accident';
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signer: BundleSigner = { privateKey, publicKeyHex: keyObjectToPublicKeyHex(createPublicKey(privateKey)) };

  it('a signed export bundle opens with decryptExportBundle (our signer pinned, organizationId matching)', async () => {
    const client = generateP256KeyPair();
    const bundle = sealExportBundle(client.publicKeyUncompressedHex, mnemonic, { organizationId: 'InternalAccount:1', signer });
    const parsed = JSON.parse(bundle) as Record<string, string>;
    expect(parsed.version).toBe('v1.0.0');
    expect(Object.keys(JSON.parse(Buffer.from(parsed.data!, 'hex').toString()) as object)).toEqual([
      'encappedPublic',
      'ciphertext',
      'organizationId',
    ]);
    await expect(
      decryptExportBundle({
        exportBundle: bundle,
        embeddedKey: client.privateKeyHex,
        organizationId: 'InternalAccount:1',
        dangerouslyOverrideSignerPublicKey: signer.publicKeyHex,
        returnMnemonic: true,
      }),
    ).resolves.toBe(mnemonic);
    await expect(
      decryptExportBundle({
        exportBundle: bundle,
        embeddedKey: client.privateKeyHex,
        organizationId: 'other',
        dangerouslyOverrideSignerPublicKey: signer.publicKeyHex,
        returnMnemonic: true,
      }),
    ).rejects.toThrow(/organization/);
    expect(openExportBundle(bundle, client.privateKeyHex, { expectedSignerPublicKeyHex: signer.publicKeyHex }).toString()).toBe(mnemonic);
  });

  it('the sandbox form has empty signature fields and opens only without verification', async () => {
    const client = generateP256KeyPair();
    const bundle = sealExportBundle(client.publicKeyUncompressedHex, mnemonic, { organizationId: 'org', signer: null });
    const parsed = JSON.parse(bundle) as Record<string, string>;
    expect(parsed.dataSignature).toBe('');
    expect(parsed.enclaveQuorumPublic).toBe('');
    expect(openExportBundle(bundle, client.privateKeyHex).toString()).toBe(mnemonic);
    expect(() => openExportBundle(bundle, client.privateKeyHex, { expectedSignerPublicKeyHex: signer.publicKeyHex })).toThrow(/signature/);
    await expect(
      decryptExportBundle({ exportBundle: bundle, embeddedKey: client.privateKeyHex, organizationId: 'org', returnMnemonic: true }),
    ).rejects.toThrow();
  });
});
