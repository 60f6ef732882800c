/**
 * The crypto behind ownership verification, against published vectors and an independent
 * implementation (@noble): Keccak-256, secp256k1 key recovery, bech32/bech32m, and the per-chain
 * signature checks (EIP-191 from web3.js's documentation, BIP-137 from bitcoinjs-message's).
 */
import { createHash } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak_256 } from '@noble/hashes/sha3';
import { describe, expect, it } from 'vitest';
import { decodeBech32 } from '../../src/modules/ownership/crypto/bech32.ts';
import { keccak256 } from '../../src/modules/ownership/crypto/keccak.ts';
import { bigIntOf, compressPublicKey, rawPublicKey, recoverPublicKey } from '../../src/modules/ownership/crypto/secp256k1.ts';
import { addressProblem, checkWalletSignature } from '../../src/modules/ownership/crypto/wallet-signatures.ts';
import { bs58checkEncode } from '../../src/wallet/crypto/base58.ts';
import { testRng } from '../helpers/random.ts';
import { EvmWallet, SolanaWallet, SparkWallet, TronWallet } from './wallets.ts';

describe('keccak256', () => {
  it('matches the published digests and @noble/hashes at every length around the 136-byte rate', () => {
    expect(keccak256(Buffer.alloc(0)).toString('hex')).toBe('c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470');
    expect(keccak256(Buffer.from('abc')).toString('hex')).toBe('4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45');
    for (const n of [1, 31, 32, 135, 136, 137, 271, 272, 273, 1000]) {
      const data = testRng().bytes(n);
      expect(keccak256(data).toString('hex'), `length ${n}`).toBe(Buffer.from(keccak_256(data)).toString('hex'));
    }
  });
});

describe('secp256k1 key recovery', () => {
  it('recovers the signing key of @noble signatures, low-s and high-s', () => {
    for (let i = 0; i < 20; i++) {
      const key = new EvmWallet().key;
      const hash = testRng().bytes(32);
      const sig = secp256k1.sign(hash, key);
      const want = Buffer.from(secp256k1.getPublicKey(key, false)).subarray(1);
      expect(rawPublicKey(recoverPublicKey(hash, sig.r, sig.s, sig.recovery)!)).toEqual(want);
      // (r, n − s) is the same signature for the other parity of R.
      expect(rawPublicKey(recoverPublicKey(hash, sig.r, secp256k1.CURVE.n - sig.s, sig.recovery ^ 1)!)).toEqual(want);
      expect(compressPublicKey(recoverPublicKey(hash, sig.r, sig.s, sig.recovery)!)).toEqual(
        Buffer.from(secp256k1.getPublicKey(key, true)),
      );
    }
  });

  it('finds no key for out-of-range values', () => {
    const hash = Buffer.alloc(32, 7);
    expect(recoverPublicKey(hash, 0n, 1n, 0)).toBeNull();
    expect(recoverPublicKey(hash, 1n, 0n, 0)).toBeNull();
    expect(recoverPublicKey(hash, secp256k1.CURVE.n, 1n, 0)).toBeNull();
    expect(recoverPublicKey(hash, 1n, 1n, 4)).toBeNull();
    // x = 5 is not on the curve (5³ + 7 = 132 has no square root mod p).
    expect(recoverPublicKey(hash, 5n, 1n, 0)).toBeNull();
  });

  it('recovers the key of the BIP-137 example signature (bitcoinjs-message), whose hash160 is its address', () => {
    const message = Buffer.from('This is an example of a signed message.');
    const sig = Buffer.from('H9L5yLFjti0QTHhPyFrZCT1V/MMnBtXKmoiKDZ78NDBjERki6ZTQZdSMCtkgoNmp17By9ItJr8o7ChX0XxY91nk=', 'base64');
    const magic = Buffer.from('Bitcoin Signed Message:\n');
    const digest = sha256(sha256(Buffer.concat([Buffer.from([magic.length]), magic, Buffer.from([message.length]), message])));
    const key = recoverPublicKey(digest, bigIntOf(sig.subarray(1, 33)), bigIntOf(sig.subarray(33)), (sig[0]! - 27) & 3)!;
    const hash160 = createHash('ripemd160')
      .update(sha256(compressPublicKey(key)))
      .digest();
    expect(bs58checkEncode(Buffer.concat([Buffer.from([0]), hash160]))).toBe('1F3sAm6ZtwLAUnj7d38pGFxtP3RVEvtsbV');
  });
});

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest();

describe('bech32', () => {
  it('decodes the BIP-173 and BIP-350 valid strings and refuses the invalid ones', () => {
    for (const s of ['A1LQFN3A', 'a1lqfn3a', 'abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqzd3ryx', '?1v759aa'])
      expect(decodeBech32(s)?.encoding, s).toBe('bech32m');
    for (const s of ['A12UEL5L', 'a12uel5l', 'abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw'])
      expect(decodeBech32(s)?.encoding, s).toBe('bech32');
    expect(decodeBech32('abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw')?.data.toString('hex')).toBe(
      '00443214c74254b635cf84653a56d7c675be77df',
    );
    for (const s of [
      'a1lqfn3A',
      'A1G7SGD8x',
      'a1lqfn3b',
      'an84characterslonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11',
      'x1b4n0q5v',
      '1pzry9x0s0muk',
    ])
      expect(decodeBech32(s), s).toBeNull();
  });
});

describe('wallet signatures', () => {
  it('EIP-191: the web3.js documentation example verifies, and fails for another text', () => {
    const address = '0x2c7536E3605D9C16a7a3D7b1898e529396a65c23';
    const signature =
      '0xb91467e570a6466aa9e9876cbcd013baba02900b8979d43fe208a4a4f339f5fd6007e74cd82e037b800186422fc2da167c747ef045e5d18a5f5d4300f8e1a0291c';
    const check = (message: string) =>
      checkWalletSignature({ accountType: 'ETHEREUM_WALLET', address, message, signature, scheme: 'bip137' }).kind;
    expect(check('Some data')).toBe('valid');
    expect(check('Some data.')).toBe('invalid');
  });

  it('each chain: its own wallet valid, another key invalid, garbage malformed', () => {
    const message = 'I verify that I control the wallet. Nonce: 0123456789abcdef0123456789abcdef';
    const make = [() => new EvmWallet('BASE_WALLET'), () => new TronWallet(), () => new SolanaWallet(), () => new SparkWallet()];
    for (const m of make) {
      const w = m();
      const check = (signature: string) =>
        checkWalletSignature({ accountType: w.accountType, address: w.address, message, signature, scheme: 'bip137' }).kind;
      expect(addressProblem(w.accountType, w.address)).toBeUndefined();
      expect(check(w.sign(message)), w.accountType).toBe('valid');
      expect(check(m().sign(message)), w.accountType).toBe('invalid');
      expect(check('%'), w.accountType).toBe('malformed');
    }
  });

  it('addresses that carry no key cannot be verified', () => {
    expect(addressProblem('LAYER2_WALLET', `sparkrt1${'q'.repeat(58)}`)).toBeDefined();
    expect(addressProblem('CHAIN2_WALLET', '1111111111111111111111111111111')).toBeDefined();
    expect(addressProblem('TRON_WALLET', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toBeUndefined();
    expect(addressProblem('TRON_WALLET', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6u')).toBeDefined();
    expect(addressProblem('LIGHTNING', 'alice@example.com')).toBeDefined();
  });
});
