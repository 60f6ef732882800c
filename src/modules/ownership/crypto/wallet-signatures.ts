/**
 * Checks a wallet's signature over an ownership challenge's message, per chain, with real crypto:
 *
 * | Wallets | Signature | Checked against |
 * |---|---|---|
 * | ETHEREUM, BASE, POLYGON, PLASMA | EIP-191 `personal_sign`: hex r ‖ s ‖ v (65 bytes, `0x` optional), v 27/28 or 0/1 | the address recovered from it (case-insensitive) |
 * | TRON | TIP-191 (TronWeb `signMessageV2`): the same hex form, prefix `\x19TRON Signed Message:\n` | the base58check address (0x41 ‖ 20 bytes) recovered from it |
 * | CHAIN2 (Solana) | base58 Ed25519 signature (64 bytes) over the message bytes | the address, which is the public key |
 * | LAYER2 (Spark) | hex ECDSA over SHA-256 of the message, DER or compact r ‖ s (the Spark SDK's `signMessageWithIdentityKey`); or base64 Bitcoin message signature (BIP-137, or Electrum's header range with `signatureScheme: electrum`) | the identity public key the bech32m address carries |
 *
 * Three outcomes: `malformed` (the text is not a signature in the chain's encoding: the request is
 * wrong, the challenge stays), `invalid` (a well-formed signature that does not prove control of the
 * address), `valid`.
 */
import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto';
import { base58Decode, bs58checkDecode, bs58checkEncode } from '../../../wallet/crypto/base58.ts';
import { decodeBech32 } from './bech32.ts';
import { keccak256 } from './keccak.ts';
import { bigIntOf, compressPublicKey, liftX, rawPublicKey, recoverPublicKey } from './secp256k1.ts';

export type Chain = 'EVM' | 'TRON' | 'SOLANA' | 'SPARK';
export type SignatureScheme = 'bip137' | 'electrum';

const CHAINS: Record<string, Chain> = {
  ETHEREUM_WALLET: 'EVM',
  BASE_WALLET: 'EVM',
  POLYGON_WALLET: 'EVM',
  PLASMA_WALLET: 'EVM',
  TRON_WALLET: 'TRON',
  CHAIN2_WALLET: 'SOLANA',
  LAYER2_WALLET: 'SPARK',
};

/** The chain whose message signing a canonical wallet accountType uses. */
export function chainOf(accountType: string): Chain | undefined {
  return CHAINS[accountType];
}

/** Human-readable part of Spark addresses: current and legacy prefixes, per network. */
const SPARK_HRPS = new Set(['spark', 'sparkt', 'sparkrt', 'sparks', 'sparkl', 'sp', 'spt', 'sprt', 'sps', 'spl']);

export type SignatureCheck = { kind: 'valid' } | { kind: 'invalid'; message: string } | { kind: 'malformed'; message: string };

const malformed = (message: string): SignatureCheck => ({ kind: 'malformed', message });
const invalid = (message: string): SignatureCheck => ({ kind: 'invalid', message });
const VALID: SignatureCheck = { kind: 'valid' };

/**
 * Why no signature could ever prove control of this address (it does not decode to a key or a key
 * hash), or undefined when it can be checked.
 */
export function addressProblem(accountType: string, address: string): string | undefined {
  switch (chainOf(accountType)) {
    case 'EVM':
      return /^0x[0-9a-fA-F]{40}$/.test(address) ? undefined : 'is not a 20-byte hex address';
    case 'TRON':
      return tronAddressBytes(address) ? undefined : 'is not a base58check Tron address (0x41 and 20 bytes)';
    case 'SOLANA':
      return solanaKey(address) ? undefined : 'is not a base58 Ed25519 public key (32 bytes)';
    case 'SPARK':
      return sparkIdentityKey(address) ? undefined : 'is not a bech32m Spark address carrying an identity public key';
    default:
      return 'is not an address of a chain whose message signatures Corridor checks';
  }
}

/** Checks `signature` over `message` (UTF-8) for the wallet `address` of `accountType`. */
export function checkWalletSignature(input: {
  accountType: string;
  address: string;
  message: string;
  signature: string;
  scheme: SignatureScheme;
}): SignatureCheck {
  const message = Buffer.from(input.message, 'utf8');
  switch (chainOf(input.accountType)) {
    case 'EVM':
      return checkRecoverable(input.signature, prefixed('\x19Ethereum Signed Message:\n', message), (key) =>
        `0x${keccak256(key).subarray(12).toString('hex')}` === input.address.toLowerCase()
          ? VALID
          : invalid('the signature was made by another key than the one of this address'),
      );
    case 'TRON':
      return checkRecoverable(input.signature, prefixed('\x19TRON Signed Message:\n', message), (key) =>
        bs58checkEncode(Buffer.concat([Buffer.from([0x41]), keccak256(key).subarray(12)])) === input.address
          ? VALID
          : invalid('the signature was made by another key than the one of this address'),
      );
    case 'SOLANA':
      return checkSolana(input.address, message, input.signature);
    case 'SPARK':
      return checkSpark(input.address, message, input.signature, input.scheme);
    default:
      return invalid(`${input.accountType} wallets cannot be verified by signature`);
  }
}

/** keccak256(prefix ‖ decimal byte length ‖ message): EIP-191 version 0x45, and Tron's TIP-191. */
function prefixed(prefix: string, message: Buffer): Buffer {
  return keccak256(Buffer.concat([Buffer.from(`${prefix}${message.length}`, 'utf8'), message]));
}

const HEX_SIGNATURE = /^(0x)?[0-9a-fA-F]{130}$/;

/** An EVM-style r ‖ s ‖ v signature: recovers the key and hands its x ‖ y to `match`. */
function checkRecoverable(signature: string, hash: Buffer, match: (rawKey: Buffer) => SignatureCheck): SignatureCheck {
  if (!HEX_SIGNATURE.test(signature)) return malformed('must be 65 bytes in hex (r ‖ s ‖ v, 0x-prefixed), as personal_sign returns it');
  const bytes = Buffer.from(signature.replace(/^0x/, ''), 'hex');
  const v = bytes[64]!;
  if (v !== 0 && v !== 1 && v !== 27 && v !== 28) return malformed(`has recovery byte v = ${v}; expected 27 or 28 (or 0 or 1)`);
  const key = recoverPublicKey(hash, bigIntOf(bytes.subarray(0, 32)), bigIntOf(bytes.subarray(32, 64)), v >= 27 ? v - 27 : v);
  return key ? match(rawPublicKey(key)) : invalid('no public key matches this signature');
}

function tronAddressBytes(address: string): Buffer | undefined {
  try {
    const payload = bs58checkDecode(address);
    return payload.length === 21 && payload[0] === 0x41 ? payload : undefined;
  } catch {
    return undefined;
  }
}

function solanaKey(address: string): KeyObject | undefined {
  try {
    const raw = base58Decode(address);
    if (raw.length !== 32) return undefined;
    return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
  } catch {
    return undefined;
  }
}

function checkSolana(address: string, message: Buffer, signature: string): SignatureCheck {
  let sig: Buffer;
  try {
    sig = base58Decode(signature);
  } catch {
    return malformed('must be base58 (an Ed25519 signature of 64 bytes)');
  }
  if (sig.length !== 64) return malformed(`must be an Ed25519 signature of 64 bytes in base58 (got ${sig.length} bytes)`);
  const key = solanaKey(address);
  if (!key) return invalid('the address is not an Ed25519 public key');
  return verify(null, message, key, sig) ? VALID : invalid('the signature does not verify under this address');
}

/** SubjectPublicKeyInfo header of a compressed secp256k1 key (id-ecPublicKey, secp256k1, 33-byte point). */
const SPKI_SECP256K1_COMPRESSED = Buffer.from('3036301006072a8648ce3d020106052b8104000a032200', 'hex');

/** The 33-byte compressed identity key of a Spark address (protobuf field 1 of its payload). */
function sparkIdentityKey(address: string): Buffer | undefined {
  const decoded = decodeBech32(address);
  if (decoded?.encoding !== 'bech32m' || !SPARK_HRPS.has(decoded.hrp)) return undefined;
  const d = decoded.data;
  // SparkAddress { bytes identity_public_key = 1; … }: tag 0x0a, length 33, then the key.
  if (d.length < 35 || d[0] !== 0x0a || d[1] !== 33) return undefined;
  const key = d.subarray(2, 35);
  if (key[0] !== 2 && key[0] !== 3) return undefined;
  return liftX(bigIntOf(key.subarray(1)), key[0] === 3) ? Buffer.from(key) : undefined;
}

const HEX_BYTES = /^(0x)?([0-9a-fA-F]{2})+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

function checkSpark(address: string, message: Buffer, signature: string, scheme: SignatureScheme): SignatureCheck {
  const identity = sparkIdentityKey(address);
  if (!identity) return invalid('the address carries no identity public key');
  if (HEX_BYTES.test(signature)) {
    const sig = Buffer.from(signature.replace(/^0x/, ''), 'hex');
    const dsaEncoding = sig.length === 64 ? 'ieee-p1363' : sig[0] === 0x30 ? 'der' : undefined;
    if (!dsaEncoding) return malformed('in hex must be an ECDSA signature, DER or compact (64 bytes r ‖ s)');
    const key = createPublicKey({ key: Buffer.concat([SPKI_SECP256K1_COMPRESSED, identity]), format: 'der', type: 'spki' });
    try {
      return verify('sha256', message, { key, dsaEncoding }, sig)
        ? VALID
        : invalid("the signature does not verify under the address's identity key");
    } catch {
      return malformed('is not a DER-encoded ECDSA signature');
    }
  }
  if (!BASE64.test(signature)) return malformed('must be hex (Spark identity-key signature) or base64 (Bitcoin message signature)');
  const sig = Buffer.from(signature, 'base64');
  if (sig.length !== 65) return malformed(`in base64 must be a 65-byte Bitcoin message signature (got ${sig.length} bytes)`);
  const header = sig[0]!;
  const highest = scheme === 'electrum' ? 34 : 42;
  if (header < 27 || header > highest) {
    return malformed(`has header byte ${header}; ${scheme} signatures use 27-${highest} (see signatureScheme)`);
  }
  const key = recoverPublicKey(bitcoinMessageHash(message), bigIntOf(sig.subarray(1, 33)), bigIntOf(sig.subarray(33)), (header - 27) & 3);
  if (!key) return invalid('no public key matches this signature');
  return compressPublicKey(key).equals(identity) ? VALID : invalid("the signature was made by another key than the address's identity key");
}

/** Bitcoin's compact-size length prefix. */
function compactSize(n: number): Buffer {
  if (n < 0xfd) return Buffer.from([n]);
  if (n <= 0xffff) {
    const b = Buffer.alloc(3);
    b[0] = 0xfd;
    b.writeUInt16LE(n, 1);
    return b;
  }
  const b = Buffer.alloc(5);
  b[0] = 0xfe;
  b.writeUInt32LE(n, 1);
  return b;
}

/** SHA-256d of the length-prefixed magic "Bitcoin Signed Message:\n" and the length-prefixed message. */
function bitcoinMessageHash(message: Buffer): Buffer {
  const magic = Buffer.from('Bitcoin Signed Message:\n', 'utf8');
  const once = createHash('sha256')
    .update(Buffer.concat([compactSize(magic.length), magic, compactSize(message.length), message]))
    .digest();
  return createHash('sha256').update(once).digest();
}
