/**
 * Real wallet key pairs for the ownership tests, signing as each chain's wallets do, with an
 * independent implementation (@noble/curves and @noble/hashes, the libraries the Ethereum, Solana
 * and Spark JavaScript SDKs build on): EIP-191 personal_sign, TronWeb's signMessageV2, Solana's
 * signMessage, the Spark SDK's signMessageWithIdentityKey and Bitcoin message signing (BIP-137).
 * Keys come from the test file's seeded stream.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { secp256k1 } from '@noble/curves/secp256k1';
import { sha256 } from '@noble/hashes/sha2';
import { keccak_256 } from '@noble/hashes/sha3';
import { base58Encode, bs58checkEncode } from '../../src/wallet/crypto/base58.ts';
import { testRng } from '../helpers/random.ts';

export interface TestWallet {
  accountType: string;
  currency: string;
  address: string;
}

const utf8 = (s: string) => new TextEncoder().encode(s);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** A secp256k1 private key from the file's seeded stream. */
function secpKey(): Uint8Array {
  for (;;) {
    const k = testRng().bytes(32);
    if (secp256k1.utils.isValidPrivateKey(k)) return k;
  }
}

/** r ‖ s ‖ v (v = 27 + recovery) in 0x-hex: what personal_sign and signMessageV2 return. */
function recoverableHex(digest: Uint8Array, key: Uint8Array, vBase = 27): string {
  const sig = secp256k1.sign(digest, key);
  return `0x${sig.toCompactHex()}${(vBase + sig.recovery).toString(16).padStart(2, '0')}`;
}

/** The 20-byte account hash of a secp256k1 key (Ethereum and Tron). */
const accountHash = (key: Uint8Array) => keccak_256(secp256k1.getPublicKey(key, false).subarray(1)).subarray(12);

/** EIP-55 mixed-case checksum form, as wallets display addresses. */
function eip55(address: string): string {
  const lower = address.slice(2).toLowerCase();
  const h = hex(keccak_256(utf8(lower)));
  return `0x${[...lower].map((c, i) => (Number.parseInt(h[i]!, 16) >= 8 ? c.toUpperCase() : c)).join('')}`;
}

export class EvmWallet implements TestWallet {
  readonly key = secpKey();
  readonly address = eip55(`0x${hex(accountHash(this.key))}`);
  constructor(
    readonly accountType = 'ETHEREUM_WALLET',
    readonly currency = 'USDC',
  ) {}
  /** EIP-191 personal_sign; `vBase` 0 gives the 0/1 recovery byte some signers return. */
  sign(message: string, vBase = 27): string {
    const m = utf8(message);
    return recoverableHex(keccak_256(Buffer.concat([utf8(`\x19Ethereum Signed Message:\n${m.length}`), m])), this.key, vBase);
  }
}

export class TronWallet implements TestWallet {
  readonly accountType = 'TRON_WALLET';
  readonly currency = 'USDT';
  readonly key = secpKey();
  readonly address = bs58checkEncode(Buffer.concat([Buffer.from([0x41]), accountHash(this.key)]));
  /** TronWeb's trx.signMessageV2 (TIP-191). */
  sign(message: string): string {
    const m = utf8(message);
    return recoverableHex(keccak_256(Buffer.concat([utf8(`\x19TRON Signed Message:\n${m.length}`), m])), this.key);
  }
}

export class SolanaWallet implements TestWallet {
  readonly accountType = 'CHAIN2_WALLET';
  readonly currency = 'USDC';
  readonly key = testRng().bytes(32);
  readonly address = base58Encode(ed25519.getPublicKey(this.key));
  /** signMessage of a Solana wallet adapter, base58-encoded. */
  sign(message: string): string {
    return base58Encode(ed25519.sign(utf8(message), this.key));
  }
}

/** BIP-350 bech32m, written here apart from the server's decoder. */
function bech32m(hrp: string, data: Uint8Array): string {
  const charset = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';
  const words: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const b of data) {
    acc = (acc << 8) | b;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      words.push((acc >> bits) & 31);
    }
  }
  if (bits > 0) words.push((acc << (5 - bits)) & 31);
  const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  const values = [
    ...[...hrp].map((c) => c.charCodeAt(0) >> 5),
    0,
    ...[...hrp].map((c) => c.charCodeAt(0) & 31),
    ...words,
    0,
    0,
    0,
    0,
    0,
    0,
  ];
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= gen[i]!;
  }
  const mod = (chk ^ 0x2bc830a3) >>> 0;
  const checksum = [0, 1, 2, 3, 4, 5].map((i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => charset[w]).join('')}`;
}

export type SparkFormat = 'der' | 'compact' | 'bip137' | 'bip137-segwit';

export class SparkWallet implements TestWallet {
  readonly accountType = 'LAYER2_WALLET';
  readonly currency = 'BTC';
  readonly key = secpKey();
  readonly identity = secp256k1.getPublicKey(this.key, true);
  /** A Spark address: bech32m of the SparkAddress protobuf (field 1: the identity key). */
  readonly address = bech32m('sparkrt', Buffer.concat([Buffer.from([0x0a, 33]), this.identity]));

  sign(message: string, format: SparkFormat = 'der'): string {
    const m = utf8(message);
    if (format === 'der' || format === 'compact') {
      const sig = secp256k1.sign(sha256(m), this.key);
      return format === 'der' ? sig.toDERHex() : sig.toCompactHex();
    }
    // Bitcoin message signing: header 31-34 (compressed P2PKH), 39-42 (P2WPKH, BIP-137 only).
    const magic = utf8('Bitcoin Signed Message:\n');
    const digest = sha256(sha256(Buffer.concat([Buffer.from([magic.length]), magic, Buffer.from([m.length]), m])));
    const sig = secp256k1.sign(digest, this.key);
    const header = (format === 'bip137' ? 31 : 39) + sig.recovery;
    return Buffer.concat([Buffer.from([header]), sig.toCompactRawBytes()]).toString('base64');
  }
}

/** An address of the shape `accountType` takes, ending in `suffix` (no key behind it: for LIVENESS). */
export function keylessEvmAddress(suffix: string): string {
  return `0x${testRng()
    .hex(20)
    .slice(0, 40 - suffix.length)}${suffix}`;
}
