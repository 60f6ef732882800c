/**
 * The wallet stamp: the crypto-formats.md §2 test vector, interop with `@turnkey/api-key-stamper`
 * (all three runtimes, compressed and uncompressed keys), high-S acceptance, and the split between
 * WALLET_SIGNATURE_MALFORMED and WALLET_SIGNATURE_INVALID.
 */
import { ApiKeyStamper } from '@turnkey/api-key-stamper';
import { describe, expect, it } from 'vitest';
import { rawToDer, derToRaw } from '../../src/wallet/crypto/der.ts';
import { generateP256KeyPair } from '../../src/wallet/crypto/keys.ts';
import { STAMP_VECTOR } from './vectors.ts';
import { createWalletStamp, encodeWalletStamp, parseWalletStamp, STAMP_SCHEME, verifyWalletStamp } from '../../src/wallet/crypto/stamp.ts';

const VECTOR = STAMP_VECTOR;
const N = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

const b64uJson = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
const decode = (header: string) => JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as Record<string, string>;

function expectFailure(result: ReturnType<typeof verifyWalletStamp>, code: 'WALLET_SIGNATURE_MALFORMED' | 'WALLET_SIGNATURE_INVALID') {
  expect(result.ok).toBe(false);
  if (!result.ok) {
    expect(result.code).toBe(code);
    expect(result.reason.length).toBeGreaterThan(0);
  }
}

describe('stamp test vector (crypto-formats §2)', () => {
  it('the header is base64url of the stamp JSON and verifies over "sample"', () => {
    expect(Buffer.from(VECTOR.header, 'base64url').toString('utf8')).toBe(VECTOR.json);
    const result = verifyWalletStamp(VECTOR.header, VECTOR.payload);
    expect(result).toMatchObject({ ok: true, publicKey: VECTOR.pub });
  });

  it('carries a high-S signature (so passing it proves high-S is accepted)', () => {
    const raw = derToRaw(Buffer.from(decode(VECTOR.header).signature!, 'hex'));
    const s = BigInt(`0x${raw.subarray(32).toString('hex')}`);
    expect(s > N / 2n).toBe(true);
  });

  it('the purejs ApiKeyStamper (RFC 6979) produces exactly the vector', async () => {
    const stamper = new ApiKeyStamper({ apiPublicKey: VECTOR.pub, apiPrivateKey: VECTOR.privHex, runtimeOverride: 'purejs' });
    const { stampHeaderValue } = await stamper.stamp(VECTOR.payload);
    expect(stampHeaderValue).toBe(VECTOR.header);
  });

  it('fails on any other payload with WALLET_SIGNATURE_INVALID', () => {
    expectFailure(verifyWalletStamp(VECTOR.header, 'Sample'), 'WALLET_SIGNATURE_INVALID');
    expectFailure(verifyWalletStamp(VECTOR.header, 'sample '), 'WALLET_SIGNATURE_INVALID');
  });
});

describe('interop with @turnkey/api-key-stamper', () => {
  const payload =
    '{"organizationId":"org_1","parameters":{"targetPublicKey":"04ab"},"timestampMs":"1775681700000","type":"ACTIVITY_TYPE_EXPORT_WALLET"}';

  for (const runtime of ['node', 'purejs', 'browser'] as const) {
    it(`stamps from the ${runtime} runtime verify (compressed key) and tampering is caught`, async () => {
      const k = generateP256KeyPair();
      const stamper = new ApiKeyStamper({ apiPublicKey: k.publicKeyHex, apiPrivateKey: k.privateKeyHex, runtimeOverride: runtime });
      const { stampHeaderName, stampHeaderValue } = await stamper.stamp(payload);
      expect(stampHeaderName).toBe('X-Stamp');
      expect(verifyWalletStamp(stampHeaderValue, payload)).toMatchObject({ ok: true, publicKey: k.publicKeyHex });

      // Tampered payload, signature, or key.
      expectFailure(verifyWalletStamp(stampHeaderValue, payload.replace('org_1', 'org_2')), 'WALLET_SIGNATURE_INVALID');
      const stamp = decode(stampHeaderValue);
      const raw = derToRaw(Buffer.from(stamp.signature!, 'hex'));
      raw[40] = raw[40]! ^ 1;
      expectFailure(
        verifyWalletStamp(b64uJson({ ...stamp, signature: rawToDer(raw).toString('hex') }), payload),
        'WALLET_SIGNATURE_INVALID',
      );
      expectFailure(
        verifyWalletStamp(b64uJson({ ...stamp, publicKey: generateP256KeyPair().publicKeyHex }), payload),
        'WALLET_SIGNATURE_INVALID',
      );
    });
  }

  it('accepts an uncompressed key copied verbatim into the stamp and normalises it', async () => {
    const k = generateP256KeyPair();
    const stamper = new ApiKeyStamper({
      apiPublicKey: k.publicKeyUncompressedHex,
      apiPrivateKey: k.privateKeyHex,
      runtimeOverride: 'node',
    });
    const { stampHeaderValue } = await stamper.stamp(payload);
    expect(decode(stampHeaderValue).publicKey).toBe(k.publicKeyUncompressedHex);
    expect(verifyWalletStamp(stampHeaderValue, payload)).toMatchObject({ ok: true, publicKey: k.publicKeyHex });
  });

  it('accepts both low-S and high-S stamps over many signatures', async () => {
    const k = generateP256KeyPair();
    const stamper = new ApiKeyStamper({ apiPublicKey: k.publicKeyHex, apiPrivateKey: k.privateKeyHex, runtimeOverride: 'node' });
    let high = 0;
    let low = 0;
    for (let i = 0; i < 40; i++) {
      const { stampHeaderValue } = await stamper.stamp(`${payload}#${i}`);
      const s = BigInt(
        `0x${derToRaw(Buffer.from(decode(stampHeaderValue).signature!, 'hex'))
          .subarray(32)
          .toString('hex')}`,
      );
      if (s > N / 2n) high++;
      else low++;
      expect(verifyWalletStamp(stampHeaderValue, `${payload}#${i}`).ok).toBe(true);
    }
    // Also force the other half explicitly: s → n − s verifies too.
    const { stampHeaderValue } = await stamper.stamp(payload);
    const stamp = decode(stampHeaderValue);
    const raw = derToRaw(Buffer.from(stamp.signature!, 'hex'));
    const s = BigInt(`0x${raw.subarray(32).toString('hex')}`);
    const flipped = Buffer.concat([raw.subarray(0, 32), Buffer.from((N - s).toString(16).padStart(64, '0'), 'hex')]);
    expect(verifyWalletStamp(b64uJson({ ...stamp, signature: rawToDer(flipped).toString('hex') }), payload).ok).toBe(true);
    expect(high + low).toBe(40);
    expect(high).toBeGreaterThan(0);
    expect(low).toBeGreaterThan(0);
  });

  it('our createWalletStamp has the stamper format and verifies', async () => {
    const k = generateP256KeyPair();
    const ours = createWalletStamp(k.privateKeyHex, payload);
    const theirs = (await new ApiKeyStamper({ apiPublicKey: k.publicKeyHex, apiPrivateKey: k.privateKeyHex }).stamp(payload))
      .stampHeaderValue;
    expect(ours).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Object.keys(decode(ours))).toEqual(Object.keys(decode(theirs)));
    expect(decode(ours).publicKey).toBe(decode(theirs).publicKey);
    expect(decode(ours).scheme).toBe(STAMP_SCHEME);
    expect(verifyWalletStamp(ours, payload)).toMatchObject({ ok: true, publicKey: k.publicKeyHex });
    // Deterministic fields give byte-identical headers: re-encode theirs with our signature.
    expect(encodeWalletStamp({ ...decode(theirs), signature: decode(ours).signature } as never)).toBe(ours);
  });
});

describe('malformed stamps', () => {
  const k = generateP256KeyPair();
  const good = decode(createWalletStamp(k.privateKeyHex, 'p'));
  const cases: [string, string][] = [
    ['empty', ''],
    ['legacy sandbox literal', 'sandbox-valid-signature'],
    ['not base64url', 'eyJ+/'],
    ['bad base64url length', 'abcde'],
    ['not JSON', Buffer.from('{nope').toString('base64url')],
    ['JSON array', b64uJson([good])],
    ['JSON string', b64uJson('x')],
    ['missing publicKey', b64uJson({ scheme: good.scheme, signature: good.signature })],
    ['numeric signature', b64uJson({ ...good, signature: 12 })],
    ['missing scheme', b64uJson({ publicKey: good.publicKey, signature: good.signature })],
    ['wrong scheme', b64uJson({ ...good, scheme: 'SIGNATURE_SCHEME_TK_API_SECP256K1' })],
    ['short key', b64uJson({ ...good, publicKey: good.publicKey!.slice(0, 64) })],
    ['key not on curve', b64uJson({ ...good, publicKey: `04${'ab'.repeat(64)}` })],
    ['odd-length signature hex', b64uJson({ ...good, signature: `${good.signature}0` })],
    ['non-hex signature', b64uJson({ ...good, signature: 'zz'.repeat(35) })],
    [
      'raw (P1363) signature instead of DER',
      b64uJson({ ...good, signature: derToRaw(Buffer.from(good.signature!, 'hex')).toString('hex') }),
    ],
    ['DER with trailing bytes', b64uJson({ ...good, signature: `${good.signature}00` })],
    ['too long', 'A'.repeat(5000)],
  ];
  for (const [name, header] of cases) {
    it(`${name} → WALLET_SIGNATURE_MALFORMED`, () => {
      expectFailure(verifyWalletStamp(header, 'p'), 'WALLET_SIGNATURE_MALFORMED');
    });
  }

  it('tolerates padding and extra fields', () => {
    const padded = `${b64uJson(good)}${'='.repeat((4 - (b64uJson(good).length % 4)) % 4)}`;
    expect(verifyWalletStamp(padded, 'p').ok).toBe(true);
    expect(
      verifyWalletStamp(
        b64uJson({ signature: good.signature, extra: 1, scheme: good.scheme, publicKey: good.publicKey!.toUpperCase() }),
        'p',
      ),
    ).toMatchObject({
      ok: true,
      publicKey: k.publicKeyHex,
    });
  });

  it('parseWalletStamp returns the parts without verifying', () => {
    const parsed = parseWalletStamp(b64uJson(good));
    expect(parsed).toMatchObject({ ok: true, publicKey: k.publicKeyHex, stamp: good });
  });
});
