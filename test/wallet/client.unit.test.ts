/**
 * The client helpers (src/wallet/client.ts): an OTP login and a legacy session-key flow end to end
 * against the server primitives, format parity with the Turnkey client libraries, and a check that
 * the module (with everything it imports) depends on node built-ins only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { decryptCredentialBundle, encryptOtpCodeToBundle } from '@turnkey/crypto';
import { describe, expect, it } from 'vitest';
import { decryptBundle, decryptExportBundleText, encryptOtp, generateKeyPair, stamp } from '../../src/wallet/client.ts';
import { sealCredentialBundle, sealExportBundle } from '../../src/wallet/crypto/bundle.ts';
import { compressPublicKeyHex, keyObjectToPublicKeyHex, publicKeyFromPrivateKeyHex } from '../../src/wallet/crypto/keys.ts';
import { createOtpEncryptionTargetBundle, openEncryptedOtpBundle } from '../../src/wallet/crypto/otp.ts';
import type { BundleSigner } from '../../src/wallet/crypto/signed-bundle.ts';
import { verifyWalletStamp } from '../../src/wallet/crypto/stamp.ts';
import { SESSION_KEY_VECTOR, STAMP_VECTOR } from './vectors.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const signer: BundleSigner = { privateKey, publicKeyHex: keyObjectToPublicKeyHex(createPublicKey(privateKey)) };
const decode = (header: string) => JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Record<string, string>;

describe('client helpers', () => {
  it('generateKeyPair gives either key encoding', () => {
    const u = generateKeyPair();
    expect(u.privateKey).toMatch(/^[0-9a-f]{64}$/);
    expect(u.publicKey).toMatch(/^04[0-9a-f]{128}$/);
    expect(publicKeyFromPrivateKeyHex(u.privateKey, false)).toBe(u.publicKey);
    const c = generateKeyPair({ compressed: true });
    expect(c.publicKey).toMatch(/^0[23][0-9a-f]{64}$/);
    expect(publicKeyFromPrivateKeyHex(c.privateKey)).toBe(c.publicKey);
  });

  it('completes an OTP login: encrypt the code, then stamp payloadToSign with the TEK', () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const tek = generateKeyPair(); // uncompressed, as the reference CLI sends it
    const encrypted = encryptOtp(target.otpEncryptionTargetBundle, tek.publicKey, '000000', {
      expectedSignerPublicKey: signer.publicKeyHex,
    });
    const opened = openEncryptedOtpBundle(encrypted, target.targetPrivateKeyHex);
    expect(opened).toMatchObject({ ok: true, otpCode: '000000', publicKeyAsSent: tek.publicKey });
    if (!opened.ok) return;

    const payloadToSign = 'eyJhbGciOiJFUzI1NiIsImtpZCI6InR1cm5rZXkifQ.eyJzdWIiOiJ4In0.c2ln';
    const header = stamp(tek.privateKey, payloadToSign);
    const verified = verifyWalletStamp(header, payloadToSign);
    // The stamp carries the compressed key while the bundle carried the uncompressed one: normalised, they match.
    expect(decode(header).publicKey).toBe(compressPublicKeyHex(tek.publicKey));
    expect(verified).toMatchObject({ ok: true, publicKey: opened.publicKey });
  });

  it('encryptOtp output equals the format of @turnkey/crypto encryptOtpCodeToBundle', async () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const tek = generateKeyPair({ compressed: true });
    const ours = JSON.parse(encryptOtp(target.otpEncryptionTargetBundle, tek.publicKey, '000000')) as Record<string, string>;
    const theirs = JSON.parse(
      await encryptOtpCodeToBundle('000000', target.otpEncryptionTargetBundle, tek.publicKey, signer.publicKeyHex),
    ) as Record<string, string>;
    expect(Object.keys(ours)).toEqual(Object.keys(theirs));
    expect(ours.encappedPublic).toMatch(/^04[0-9a-f]{128}$/);
    expect(ours.ciphertext!.length).toBe(theirs.ciphertext!.length);
  });

  it('encryptOtp refuses a bundle not signed by the pinned key', () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const other = generateKeyPair().publicKey;
    expect(() =>
      encryptOtp(target.otpEncryptionTargetBundle, generateKeyPair().publicKey, '000000', { expectedSignerPublicKey: other }),
    ).toThrow(/signature/);
  });

  it('stamp matches the ApiKeyStamper format and reproduces the §2 vector when signatures are deterministic', async () => {
    const k = generateKeyPair({ compressed: true });
    const payload = '{"type":"ACTIVITY_TYPE_EXPORT_WALLET"}';
    const ours = stamp(k.privateKey, payload);
    const theirs = (await new ApiKeyStamper({ apiPublicKey: k.publicKey, apiPrivateKey: k.privateKey }).stamp(payload)).stampHeaderValue;
    expect(Object.keys(decode(ours))).toEqual(['publicKey', 'scheme', 'signature']);
    expect({ ...decode(ours), signature: '' }).toEqual({ ...decode(theirs), signature: '' });
    expect(verifyWalletStamp(ours, payload).ok).toBe(true);
    expect(verifyWalletStamp(theirs, payload).ok).toBe(true);

    // Uncompressed key copied verbatim, as the stamper does.
    const u = generateKeyPair();
    const withUncompressed = stamp(u.privateKey, payload, u.publicKey);
    expect(decode(withUncompressed).publicKey).toBe(u.publicKey);
    expect(verifyWalletStamp(withUncompressed, payload)).toMatchObject({ ok: true, publicKey: compressPublicKeyHex(u.publicKey) });

    // The vector's signature verifies with the key our stamp derives.
    expect(decode(stamp(STAMP_VECTOR.privHex, 'sample')).publicKey).toBe(STAMP_VECTOR.pub);
  });

  it('decryptBundle opens session-key bundles (like decryptCredentialBundle) and export bundles', () => {
    expect(decryptBundle(SESSION_KEY_VECTOR.encryptedSessionSigningKey, SESSION_KEY_VECTOR.clientPrivHex)).toBe(
      SESSION_KEY_VECTOR.sessionPrivHex,
    );
    const client = generateKeyPair();
    const session = generateKeyPair({ compressed: true });
    const bundle = sealCredentialBundle(client.publicKey, Buffer.from(session.privateKey, 'hex'));
    expect(decryptBundle(`${bundle}\n`, client.privateKey)).toBe(decryptCredentialBundle(bundle, client.privateKey));
    // The decrypted session key stamps as the session's public key.
    const header = stamp(decryptBundle(bundle, client.privateKey), 'payload');
    expect(verifyWalletStamp(header, 'payload')).toMatchObject({ ok: true, publicKey: session.publicKey });

    const mnemonic = 'legal winner thank year wave sausage worth useful legal winner thank yellow';
    const exported = sealExportBundle(client.publicKey, mnemonic, { organizationId: 'org', signer: null });
    expect(decryptBundle(exported, client.privateKey)).toBe(Buffer.from(mnemonic).toString('hex'));
    expect(decryptExportBundleText(exported, client.privateKey)).toBe(mnemonic);
    const signed = sealExportBundle(client.publicKey, mnemonic, { organizationId: 'org', signer });
    expect(decryptExportBundleText(signed, client.privateKey, { expectedSignerPublicKey: signer.publicKeyHex })).toBe(mnemonic);
    expect(() => decryptBundle(bundle, generateKeyPair().privateKey)).toThrow();
  });

  it('depends on node built-ins only (no dev dependency, no Turnkey library)', () => {
    const seen = new Set<string>();
    const external: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const source = fs.readFileSync(file, 'utf8');
      for (const m of source.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+'([^']+)'/gm)) {
        const spec = m[1]!;
        if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec));
        else if (!spec.startsWith('node:')) external.push(`${path.relative(ROOT, file)} → ${spec}`);
      }
    };
    visit(path.join(ROOT, 'src/wallet/client.ts'));
    expect(seen.size).toBeGreaterThan(4);
    expect(external).toEqual([]);
  });
});
