/**
 * HPKE with the Turnkey profile (info "turnkey_hpke", AAD = enc‖pkR): the crypto-formats.md §3.5
 * vector, and interop both ways with `@turnkey/crypto` and an independent RFC 9180 implementation
 * (`@hpke/core`).
 */
import { Aes256Gcm, CipherSuite, DhkemP256HkdfSha256, HkdfSha256 } from '@hpke/core';
import { formatHpkeBuf, hpkeDecrypt, hpkeEncrypt } from '@turnkey/crypto';
import { describe, expect, it } from 'vitest';
import { hpkeOpen, HpkeOpenError, hpkeSeal, HPKE_INFO } from '../../src/wallet/crypto/hpke.ts';
import { generateP256KeyPair, type P256KeyPair } from '../../src/wallet/crypto/keys.ts';
import { HPKE_VECTOR } from './vectors.ts';

const suite = new CipherSuite({ kem: new DhkemP256HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes256Gcm() });
const ab = (b: Uint8Array): ArrayBuffer => Uint8Array.from(b).buffer;

async function hpkeCorePrivateKey(k: P256KeyPair) {
  const pub = Buffer.from(k.publicKeyUncompressedHex, 'hex');
  return suite.kem.importKey(
    'jwk',
    {
      kty: 'EC',
      crv: 'P-256',
      d: Buffer.from(k.privateKeyHex, 'hex').toString('base64url'),
      x: pub.subarray(1, 33).toString('base64url'),
      y: pub.subarray(33).toString('base64url'),
    },
    false,
  );
}

describe('HPKE test vector (crypto-formats §3.5)', () => {
  const vector = JSON.parse(HPKE_VECTOR.encryptedOtpBundle) as { encappedPublic: string; ciphertext: string };

  it('sealing with the vector ephemeral key reproduces enc and ciphertext exactly', () => {
    const sealed = hpkeSeal(HPKE_VECTOR.targetPublicHex, Buffer.from(HPKE_VECTOR.plaintext), {
      ephemeralPrivateKeyHex: HPKE_VECTOR.ephemeralPrivHex,
    });
    expect(sealed.enc.toString('hex')).toBe(vector.encappedPublic);
    expect(sealed.ciphertext.toString('hex')).toBe(vector.ciphertext);
    expect(JSON.stringify({ encappedPublic: sealed.enc.toString('hex'), ciphertext: sealed.ciphertext.toString('hex') })).toBe(
      HPKE_VECTOR.encryptedOtpBundle,
    );
  });

  it('opens with our code, @turnkey/crypto hpkeDecrypt and @hpke/core', async () => {
    const ct = Buffer.from(vector.ciphertext, 'hex');
    const enc = Buffer.from(vector.encappedPublic, 'hex');
    expect(hpkeOpen(HPKE_VECTOR.targetPrivHex, enc, ct).toString()).toBe(HPKE_VECTOR.plaintext);
    expect(Buffer.from(hpkeDecrypt({ ciphertextBuf: ct, encappedKeyBuf: enc, receiverPriv: HPKE_VECTOR.targetPrivHex })).toString()).toBe(
      HPKE_VECTOR.plaintext,
    );

    const target = { privateKeyHex: HPKE_VECTOR.targetPrivHex, publicKeyUncompressedHex: HPKE_VECTOR.targetPublicHex, publicKeyHex: '' };
    const recipient = await suite.createRecipientContext({
      recipientKey: await hpkeCorePrivateKey(target),
      enc: ab(enc),
      info: ab(HPKE_INFO),
    });
    const aad = Buffer.concat([enc, Buffer.from(HPKE_VECTOR.targetPublicHex, 'hex')]);
    expect(Buffer.from(await recipient.open(ab(ct), ab(aad))).toString()).toBe(HPKE_VECTOR.plaintext);
  });

  it('refuses the vector under a tampered ciphertext, enc, AAD, info or key', () => {
    const ct = Buffer.from(vector.ciphertext, 'hex');
    const enc = Buffer.from(vector.encappedPublic, 'hex');
    const flip = (b: Buffer, i: number) => {
      const c = Buffer.from(b);
      c[i] = c[i]! ^ 1;
      return c;
    };
    expect(() => hpkeOpen(HPKE_VECTOR.targetPrivHex, enc, flip(ct, 0))).toThrow(HpkeOpenError);
    expect(() => hpkeOpen(HPKE_VECTOR.targetPrivHex, enc, flip(ct, ct.length - 1))).toThrow(HpkeOpenError);
    expect(() => hpkeOpen(HPKE_VECTOR.targetPrivHex, generateP256KeyPair().publicKeyUncompressedHex, ct)).toThrow(HpkeOpenError);
    expect(() => hpkeOpen(HPKE_VECTOR.targetPrivHex, flip(enc, 10), ct)).toThrow(HpkeOpenError); // off-curve or wrong point
    expect(() => hpkeOpen(HPKE_VECTOR.targetPrivHex, enc, ct, { aad: Buffer.alloc(130) })).toThrow(HpkeOpenError);
    expect(() => hpkeOpen(HPKE_VECTOR.targetPrivHex, enc, ct, { info: Buffer.from('other') })).toThrow(HpkeOpenError);
    expect(() => hpkeOpen(generateP256KeyPair().privateKeyHex, enc, ct)).toThrow(HpkeOpenError);
    expect(() => hpkeOpen(HPKE_VECTOR.targetPrivHex, enc, ct.subarray(0, 10))).toThrow(HpkeOpenError);
  });
});

describe('HPKE interop', () => {
  it('@turnkey/crypto hpkeEncrypt output opens with hpkeOpen', () => {
    for (let i = 0; i < 5; i++) {
      const k = generateP256KeyPair();
      const plaintext = Buffer.from(`secret ${i} ${'x'.repeat(i * 17)}`);
      const formatted = JSON.parse(
        formatHpkeBuf(hpkeEncrypt({ plainTextBuf: plaintext, targetKeyBuf: Buffer.from(k.publicKeyUncompressedHex, 'hex') })),
      ) as {
        encappedPublic: string;
        ciphertext: string;
      };
      expect(hpkeOpen(k.privateKeyHex, formatted.encappedPublic, Buffer.from(formatted.ciphertext, 'hex')).equals(plaintext)).toBe(true);
    }
  });

  it('hpkeSeal output opens with @turnkey/crypto hpkeDecrypt, also when sealed to a compressed key', () => {
    const k = generateP256KeyPair();
    for (const target of [k.publicKeyUncompressedHex, k.publicKeyHex]) {
      const sealed = hpkeSeal(target, Buffer.from('hello'));
      expect(sealed.enc).toHaveLength(65);
      expect(sealed.ciphertext).toHaveLength(5 + 16);
      expect(
        Buffer.from(
          hpkeDecrypt({ ciphertextBuf: sealed.ciphertext, encappedKeyBuf: sealed.enc, receiverPriv: k.privateKeyHex }),
        ).toString(),
      ).toBe('hello');
    }
  });

  it('cross-checks with @hpke/core in both directions', async () => {
    const k = generateP256KeyPair();
    const pkR = Buffer.from(k.publicKeyUncompressedHex, 'hex');
    const recipientPublicKey = await suite.kem.importKey('raw', ab(pkR), true);

    // @hpke/core seals (with the Turnkey AAD), we open.
    const sender = await suite.createSenderContext({ recipientPublicKey, info: ab(HPKE_INFO) });
    const enc = Buffer.from(sender.enc);
    const ct = Buffer.from(await sender.seal(ab(Buffer.from('from hpke/core')), ab(Buffer.concat([enc, pkR]))));
    expect(hpkeOpen(k.privateKeyHex, enc, ct).toString()).toBe('from hpke/core');

    // We seal, @hpke/core opens.
    const sealed = hpkeSeal(k.publicKeyUncompressedHex, Buffer.from('from corridor'));
    const recipient = await suite.createRecipientContext({
      recipientKey: await hpkeCorePrivateKey(k),
      enc: ab(sealed.enc),
      info: ab(HPKE_INFO),
    });
    expect(Buffer.from(await recipient.open(ab(sealed.ciphertext), ab(Buffer.concat([sealed.enc, pkR])))).toString()).toBe('from corridor');

    // Plain RFC 9180 (empty info, empty AAD) also matches when asked for.
    const plain = hpkeSeal(k.publicKeyUncompressedHex, Buffer.from('plain'), { info: new Uint8Array(0), aad: new Uint8Array(0) });
    const r2 = await suite.createRecipientContext({ recipientKey: await hpkeCorePrivateKey(k), enc: ab(plain.enc) });
    expect(Buffer.from(await r2.open(ab(plain.ciphertext))).toString()).toBe('plain');
  });
});
