/**
 * The secret box (src/store/secret-box.ts): AES-256-GCM under an HKDF-derived key, the
 * `enc:v1:<key id>:…` text, the binding of a sealed value to its row, and rotation.
 */
import { describe, expect, it } from 'vitest';
import { MISSING_KEY_MESSAGE, SECRET_COLUMNS, SecretBox, SecretKeyError, secretRef } from '../../src/store/secret-box.ts';

const K1 = 'k1-0123456789abcdefghijklmnopqrstuvwxyz';
const K2 = 'k2-ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210';
const PEM = '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg\n-----END PRIVATE KEY-----\n';
const A = secretRef(SECRET_COLUMNS.webhookKey, 'Platform:a');
const B = secretRef(SECRET_COLUMNS.webhookKey, 'Platform:b');

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a throw');
}

describe('seal and open', () => {
  it('seals to enc:v1:<key id>:<base64url> that holds no plaintext, with a fresh nonce each time, and opens back', () => {
    const box = new SecretBox({ secretKey: K1 });
    expect(box.enabled).toBe(true);
    expect(box.keyId).toMatch(/^[0-9a-f]{16}$/);
    const a = box.seal(PEM, A);
    const b = box.seal(PEM, A);
    expect(a).toMatch(new RegExp(`^enc:v1:${box.keyId}:[A-Za-z0-9_-]+$`));
    expect(a).not.toBe(b);
    expect(a).not.toContain('PRIVATE');
    expect(a).not.toContain('MIGHAgEAMBMG');
    // nonce (12) + ciphertext (as long as the text) + tag (16)
    expect(Buffer.from(a.split(':')[3]!, 'base64url').length).toBe(12 + Buffer.byteLength(PEM) + 16);
    expect(box.open(a, A)).toBe(PEM);
    expect(box.open(b, A)).toBe(PEM);
    expect(box.state(a)).toBe('current');
  });

  it('derives the key id from the key string alone: same string, same id; another string, another id; the id is not the key', () => {
    const one = new SecretBox({ secretKey: K1 });
    expect(new SecretBox({ secretKey: K1 }).keyId).toBe(one.keyId);
    expect(new SecretBox({ secretKey: K2 }).keyId).not.toBe(one.keyId);
    expect(K1).not.toContain(one.keyId!);
    // A value sealed by one box opens in another built from the same string (another process).
    expect(new SecretBox({ secretKey: K1 }).open(one.seal('abandon ability able', A), A)).toBe('abandon ability able');
  });

  it('opens clear values unchanged (stores written before a key was set)', () => {
    const box = new SecretBox({ secretKey: K1 });
    expect(box.state(PEM)).toBe('clear');
    expect(box.open(PEM, A)).toBe(PEM);
    expect(box.open('{"targetPrivateKey":"ab"}', A)).toBe('{"targetPrivateKey":"ab"}');
  });

  it('without a key stores values in clear and refuses a sealed one, naming the cause', () => {
    const none = new SecretBox({});
    expect(none.enabled).toBe(false);
    expect(none.keyId).toBeUndefined();
    expect(none.seal(PEM, A)).toBe(PEM);
    expect(none.open(PEM, A)).toBe(PEM);
    const sealed = new SecretBox({ secretKey: K1 }).seal(PEM, A);
    expect(none.state(sealed)).toBe('unknown');
    const err = thrown(() => none.open(sealed, A));
    expect(err).toBeInstanceOf(SecretKeyError);
    expect(err.message).toContain(MISSING_KEY_MESSAGE);
    expect(err.message).not.toContain('PRIVATE');
  });

  it('refuses to store a clear value that would read as sealed', () => {
    expect(() => new SecretBox({}).seal('enc:v1:0000000000000000:AAAA', A)).toThrow(/looks sealed/);
    expect(() => new SecretBox({ secretKey: K1 }).seal('enc:x', A)).toThrow(/looks sealed/);
  });
});

describe('binding to the row (AAD)', () => {
  it('a sealed value does not open for another row, column or table', () => {
    const box = new SecretBox({ secretKey: K1 });
    const sealed = box.seal(PEM, A);
    for (const other of [B, { ...A, column: 'public_key_pem' }, secretRef(SECRET_COLUMNS.walletKey, 'Platform:a')]) {
      const err = thrown(() => box.open(sealed, other));
      expect(err).toBeInstanceOf(SecretKeyError);
      expect(err.message).toMatch(/does not authenticate: it was altered or moved from another row/);
    }
    expect(box.open(sealed, A)).toBe(PEM);
  });

  it('a changed byte anywhere in the sealed text, or a truncated one, does not open', () => {
    const box = new SecretBox({ secretKey: K1 });
    const sealed = box.seal(PEM, A);
    const [head, body] = [
      sealed.slice(0, sealed.lastIndexOf(':') + 1),
      Buffer.from(sealed.slice(sealed.lastIndexOf(':') + 1), 'base64url'),
    ];
    for (const i of [0, 11, 12, 40, body.length - 1]) {
      const bad = Buffer.from(body);
      bad[i] = bad[i]! ^ 0x01;
      expect(() => box.open(head + bad.toString('base64url'), A)).toThrow(SecretKeyError);
    }
    expect(() => box.open(head + body.subarray(0, 20).toString('base64url'), A)).toThrow(/truncated/);
  });
});

describe('wrong key and rotation', () => {
  it('a box with another key refuses the value as sealed under a key that is not configured', () => {
    const sealed = new SecretBox({ secretKey: K1 }).seal(PEM, A);
    const other = new SecretBox({ secretKey: K2 });
    expect(other.state(sealed)).toBe('unknown');
    expect(() => other.open(sealed, A)).toThrow(MISSING_KEY_MESSAGE);
  });

  it('with the old key as previous: opens old values, re-seals them under the new key, after which the old key alone refuses them', () => {
    const old = new SecretBox({ secretKey: K1 });
    const sealedOld = old.seal(PEM, A);
    const rotating = new SecretBox({ secretKey: K2, secretKeyPrevious: K1 });
    expect(rotating.previousKeyId).toBe(old.keyId);
    expect(rotating.state(sealedOld)).toBe('previous');
    expect(rotating.open(sealedOld, A)).toBe(PEM);

    const resealed = rotating.reseal(sealedOld, A);
    expect(resealed.startsWith(`enc:v1:${rotating.keyId}:`)).toBe(true);
    expect(rotating.state(resealed)).toBe('current');
    expect(rotating.reseal(resealed, A)).toBe(resealed);
    expect(rotating.reseal(PEM, A).startsWith(`enc:v1:${rotating.keyId}:`)).toBe(true);

    expect(new SecretBox({ secretKey: K2 }).open(resealed, A)).toBe(PEM);
    expect(() => old.open(resealed, A)).toThrow(MISSING_KEY_MESSAGE);
    // The binding holds across a rotation: the re-sealed value is still row A's only.
    expect(() => rotating.open(resealed, B)).toThrow(SecretKeyError);
  });

  it('a previous key needs a current one and must differ from it', () => {
    expect(() => new SecretBox({ secretKeyPrevious: K1 })).toThrow();
    expect(() => new SecretBox({ secretKey: K1, secretKeyPrevious: K1 })).toThrow();
  });
});
