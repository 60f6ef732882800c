/**
 * OTP bundles: the target bundle's format and signature (accepted by `@turnkey/crypto`
 * `encryptOtpCodeToBundle` when our signer key is pinned), opening `encryptedOtpBundle`s made by
 * the library, by our client code and by the §3.5 vector, and typed failures for malformed and
 * tampered bundles.
 */
import { createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { encryptOtpCodeToBundle as turnkeyEncryptOtp, formatHpkeBuf, hpkeEncrypt } from '@turnkey/crypto';
import { describe, expect, it } from 'vitest';
import { hpkeSeal } from '../../src/wallet/crypto/hpke.ts';
import {
  compressPublicKeyHex,
  generateP256KeyPair,
  keyObjectToPublicKeyHex,
  publicKeyObject,
  uncompressPublicKeyHex,
} from '../../src/wallet/crypto/keys.ts';
import {
  createOtpEncryptionTargetBundle,
  encryptOtpCodeToBundle,
  openEncryptedOtpBundle,
  otpCodeMatches,
} from '../../src/wallet/crypto/otp.ts';
import { parseSignedBundle, verifySignedBundle, type BundleSigner } from '../../src/wallet/crypto/signed-bundle.ts';
import { HPKE_VECTOR } from './vectors.ts';

function newSigner(): BundleSigner {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, publicKeyHex: keyObjectToPublicKeyHex(createPublicKey(privateKey)) };
}

const signer = newSigner();

describe('otpEncryptionTargetBundle', () => {
  it('has the documented shape, and its signature verifies under the published signer key', () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const bundle = JSON.parse(target.otpEncryptionTargetBundle) as Record<string, string>;
    expect(Object.keys(bundle)).toEqual(['version', 'data', 'dataSignature', 'enclaveQuorumPublic']);
    expect(bundle.version).toBe('v1.0.0');
    expect(bundle.data!.startsWith('7b227461726765745075626c6963')).toBe(true); // {"targetPublic
    expect(JSON.parse(Buffer.from(bundle.data!, 'hex').toString())).toEqual({ targetPublic: target.targetPublicKeyHex });
    expect(target.targetPublicKeyHex).toMatch(/^04[0-9a-f]{128}$/);
    expect(bundle.enclaveQuorumPublic).toBe(signer.publicKeyHex);
    expect(bundle.enclaveQuorumPublic).toMatch(/^04[0-9a-f]{128}$/);
    expect(
      verify('sha256', Buffer.from(bundle.data!, 'hex'), publicKeyObject(signer.publicKeyHex), Buffer.from(bundle.dataSignature!, 'hex')),
    ).toBe(true);
    expect(verifySignedBundle(parseSignedBundle(target.otpEncryptionTargetBundle).bundle, signer.publicKeyHex)).toBe(true);
    expect(verifySignedBundle(parseSignedBundle(target.otpEncryptionTargetBundle).bundle, newSigner().publicKeyHex)).toBe(false);
  });

  it('publishes the signer key uncompressed and lowercase even when configured compressed', () => {
    const compressedSigner = { ...signer, publicKeyHex: compressPublicKeyHex(signer.publicKeyHex).toUpperCase() };
    const bundle = JSON.parse(createOtpEncryptionTargetBundle(compressedSigner).otpEncryptionTargetBundle) as Record<string, string>;
    expect(bundle.enclaveQuorumPublic).toBe(signer.publicKeyHex);
  });

  it('issues a fresh target key each time and carries extra data keys', () => {
    const a = createOtpEncryptionTargetBundle(signer, { extraData: { organizationId: 'org_1', userId: 'user_1' } });
    const b = createOtpEncryptionTargetBundle(signer);
    expect(a.targetPublicKeyHex).not.toBe(b.targetPublicKeyHex);
    expect(parseSignedBundle(a.otpEncryptionTargetBundle).data).toEqual({
      targetPublic: a.targetPublicKeyHex,
      organizationId: 'org_1',
      userId: 'user_1',
    });
  });

  it('@turnkey/crypto encryptOtpCodeToBundle accepts it with our key pinned, and its output opens', async () => {
    for (let i = 0; i < 10; i++) {
      const target = createOtpEncryptionTargetBundle(signer);
      const tek = generateP256KeyPair();
      const tekKey = i % 2 ? tek.publicKeyHex : tek.publicKeyUncompressedHex;
      const encrypted = await turnkeyEncryptOtp('000000', target.otpEncryptionTargetBundle, tekKey, signer.publicKeyHex);
      expect(openEncryptedOtpBundle(encrypted, target.targetPrivateKeyHex)).toEqual({
        ok: true,
        otpCode: '000000',
        publicKey: tek.publicKeyHex,
        publicKeyAsSent: tekKey,
      });
    }
  });

  it('@turnkey/crypto refuses it without our key pinned, with another key pinned, or when data is altered', async () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const tek = generateP256KeyPair().publicKeyHex;
    await expect(turnkeyEncryptOtp('000000', target.otpEncryptionTargetBundle, tek)).rejects.toThrow();
    await expect(turnkeyEncryptOtp('000000', target.otpEncryptionTargetBundle, tek, newSigner().publicKeyHex)).rejects.toThrow();
    const bundle = JSON.parse(target.otpEncryptionTargetBundle) as Record<string, string>;
    const forged = JSON.stringify({
      ...bundle,
      data: Buffer.from(JSON.stringify({ targetPublic: generateP256KeyPair().publicKeyUncompressedHex })).toString('hex'),
    });
    await expect(turnkeyEncryptOtp('000000', forged, tek, signer.publicKeyHex)).rejects.toThrow();
    expect(() => encryptOtpCodeToBundle('000000', forged, tek, { expectedSignerPublicKeyHex: signer.publicKeyHex })).toThrow(/signature/);
  });
});

describe('encryptedOtpBundle', () => {
  it('opens the §3.5 vector', () => {
    expect(openEncryptedOtpBundle(HPKE_VECTOR.encryptedOtpBundle, HPKE_VECTOR.targetPrivHex)).toEqual({
      ok: true,
      otpCode: '000000',
      publicKey: compressPublicKeyHex(HPKE_VECTOR.tekPublicHex),
      publicKeyAsSent: HPKE_VECTOR.tekPublicHex,
    });
  });

  it('our client encryption reproduces the vector byte for byte', () => {
    const target = createOtpEncryptionTargetBundle(signer, {
      targetKeyPair: {
        privateKeyHex: HPKE_VECTOR.targetPrivHex,
        publicKeyUncompressedHex: HPKE_VECTOR.targetPublicHex,
        publicKeyHex: compressPublicKeyHex(HPKE_VECTOR.targetPublicHex),
      },
    });
    const encrypted = encryptOtpCodeToBundle('000000', target.otpEncryptionTargetBundle, HPKE_VECTOR.tekPublicHex, {
      ephemeralPrivateKeyHex: HPKE_VECTOR.ephemeralPrivHex,
      expectedSignerPublicKeyHex: signer.publicKeyHex,
    });
    expect(encrypted).toBe(HPKE_VECTOR.encryptedOtpBundle);
  });

  it('accepts an object, a JSON string, and a double-encoded JSON string', () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const tek = generateP256KeyPair();
    const encrypted = encryptOtpCodeToBundle('123456', target.otpEncryptionTargetBundle, tek.publicKeyUncompressedHex);
    for (const form of [encrypted, JSON.stringify(encrypted), JSON.parse(encrypted) as unknown]) {
      expect(openEncryptedOtpBundle(form, target.targetPrivateKeyHex)).toMatchObject({
        ok: true,
        otpCode: '123456',
        publicKey: tek.publicKeyHex,
      });
    }
  });

  it('opens a bundle from @turnkey/crypto hpkeEncrypt + formatHpkeBuf (the reference CLI path)', () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const tek = generateP256KeyPair();
    const plainTextBuf = Buffer.from(JSON.stringify({ otp_code: '000000', public_key: tek.publicKeyUncompressedHex }));
    const encrypted = formatHpkeBuf(hpkeEncrypt({ plainTextBuf, targetKeyBuf: Buffer.from(target.targetPublicKeyHex, 'hex') }));
    expect(openEncryptedOtpBundle(encrypted, target.targetPrivateKeyHex)).toMatchObject({
      ok: true,
      otpCode: '000000',
      publicKey: tek.publicKeyHex,
    });
  });

  it('tampered or foreign bundles → OTP_BUNDLE_INVALID', () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const tek = generateP256KeyPair().publicKeyHex;
    const encrypted = JSON.parse(encryptOtpCodeToBundle('000000', target.otpEncryptionTargetBundle, tek)) as {
      encappedPublic: string;
      ciphertext: string;
    };
    const flipHex = (h: string, i: number) => h.slice(0, i) + (h[i] === '0' ? '1' : '0') + h.slice(i + 1);
    const variants = [
      { ...encrypted, ciphertext: flipHex(encrypted.ciphertext, 4) },
      { ...encrypted, ciphertext: flipHex(encrypted.ciphertext, encrypted.ciphertext.length - 1) },
      { ...encrypted, encappedPublic: generateP256KeyPair().publicKeyUncompressedHex },
    ];
    for (const v of variants) {
      const result = openEncryptedOtpBundle(JSON.stringify(v), target.targetPrivateKeyHex);
      expect(result).toMatchObject({ ok: false, code: 'OTP_BUNDLE_INVALID' });
    }
    // Built for another challenge's target.
    const other = createOtpEncryptionTargetBundle(signer);
    expect(openEncryptedOtpBundle(JSON.stringify(encrypted), other.targetPrivateKeyHex)).toMatchObject({
      ok: false,
      code: 'OTP_BUNDLE_INVALID',
    });
  });

  it('malformed bundles and plaintexts → OTP_BUNDLE_MALFORMED with a reason', () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const sealedPlain = (text: string) => {
      const s = hpkeSeal(target.targetPublicKeyHex, Buffer.from(text));
      return JSON.stringify({ encappedPublic: s.enc.toString('hex'), ciphertext: s.ciphertext.toString('hex') });
    };
    const tek = generateP256KeyPair().publicKeyHex;
    const cases: [string, unknown][] = [
      ['not JSON', '{nope'],
      ['array', '[]'],
      ['number', 12],
      ['null', null],
      ['no encappedPublic', JSON.stringify({ ciphertext: 'aa'.repeat(20) })],
      ['encappedPublic not a point', JSON.stringify({ encappedPublic: `04${'ab'.repeat(64)}`, ciphertext: 'aa'.repeat(20) })],
      ['ciphertext not hex', JSON.stringify({ encappedPublic: tek, ciphertext: 'zz' })],
      ['ciphertext shorter than the tag', JSON.stringify({ encappedPublic: tek, ciphertext: 'aa'.repeat(8) })],
      ['too long', 'x'.repeat(9000)],
      ['plaintext not JSON', sealedPlain('000000')],
      ['plaintext without otp_code', sealedPlain(JSON.stringify({ public_key: tek }))],
      ['plaintext with numeric otp_code', sealedPlain(JSON.stringify({ otp_code: 0, public_key: tek }))],
      ['plaintext without public_key', sealedPlain(JSON.stringify({ otp_code: '000000' }))],
      ['plaintext with a bad public_key', sealedPlain(JSON.stringify({ otp_code: '000000', public_key: '04abcd' }))],
    ];
    for (const [name, input] of cases) {
      const result = openEncryptedOtpBundle(input, target.targetPrivateKeyHex);
      expect(result, name).toMatchObject({ ok: false, code: 'OTP_BUNDLE_MALFORMED' });
      if (!result.ok) expect(result.reason.length, name).toBeGreaterThan(0);
    }
  });

  it('returns any decrypted code for the caller to judge, and compares codes in constant time', () => {
    const target = createOtpEncryptionTargetBundle(signer);
    const tek = generateP256KeyPair();
    const result = openEncryptedOtpBundle(
      encryptOtpCodeToBundle('123456', target.otpEncryptionTargetBundle, tek.publicKeyHex),
      target.targetPrivateKeyHex,
    );
    expect(result).toMatchObject({ ok: true, otpCode: '123456', publicKey: tek.publicKeyHex, publicKeyAsSent: tek.publicKeyHex });
    expect(otpCodeMatches('000000', '000000')).toBe(true);
    expect(otpCodeMatches('123456', '000000')).toBe(false);
    expect(otpCodeMatches('0000000', '000000')).toBe(false);
    expect(uncompressPublicKeyHex(tek.publicKeyHex)).toBe(tek.publicKeyUncompressedHex);
  });

  it('the client refuses a target bundle without targetPublic, and tolerates quoting artifacts', () => {
    const noTarget = JSON.stringify({
      version: 'v1.0.0',
      data: Buffer.from('{}').toString('hex'),
      dataSignature: '',
      enclaveQuorumPublic: '',
    });
    expect(() => encryptOtpCodeToBundle('000000', noTarget, generateP256KeyPair().publicKeyHex)).toThrow(/targetPublic/);
    const target = createOtpEncryptionTargetBundle(signer);
    const quoted = `'''${target.otpEncryptionTargetBundle}'''`;
    const tek = generateP256KeyPair();
    expect(openEncryptedOtpBundle(encryptOtpCodeToBundle('000000', quoted, tek.publicKeyHex), target.targetPrivateKeyHex)).toMatchObject({
      ok: true,
    });
  });
});
