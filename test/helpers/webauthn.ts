/**
 * A software WebAuthn authenticator (node:crypto P-256 plus a tiny CBOR encoder) that produces
 * registration (`none` attestation) and assertion responses in the service's field names
 * (crypto-formats.md §5 "Minting a software authenticator"). Every knob a negative test needs —
 * origin, RP ID, flags, counter, challenge bytes, signing key — can be overridden per call.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { PasskeyAssertion, PasskeyAttestation } from '../../src/wallet/crypto/passkey.ts';

export const FLAG_UP = 0x01;
export const FLAG_UV = 0x04;
export const FLAG_BE = 0x08;
export const FLAG_BS = 0x10;
export const FLAG_AT = 0x40;

type CborValue = number | string | Uint8Array | CborValue[] | Map<CborValue, CborValue> | { [k: string]: CborValue };

function cborHead(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

/** Canonical-enough CBOR for attestation objects and COSE keys (ints, strings, bytes, arrays, maps). */
export function cborEncode(value: CborValue): Buffer {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error('only integers');
    return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([cborHead(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([cborHead(4, value.length), ...value.map(cborEncode)]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([cborHead(5, entries.length), ...entries.flatMap(([k, v]) => [cborEncode(k), cborEncode(v)])]);
}

const b64u = (b: Uint8Array): string => Buffer.from(b).toString('base64url');
const sha256 = (b: Uint8Array | string): Buffer => createHash('sha256').update(b).digest();

export interface RegisterOptions {
  origin?: string;
  rpId?: string;
  flags?: number;
  transports?: string[];
  /** Put a different id in `credentialId` than in the authenticator data. */
  credentialIdOverride?: string;
  type?: string;
}

export interface AssertOptions {
  origin?: string;
  rpId?: string;
  /** Authenticator flags; default UP. */
  flags?: number;
  /** Signature counter to report; default the next value. */
  counter?: number;
  /** The raw clientData challenge (base64url); default base64url(UTF-8(service challenge)). */
  challengeB64?: string;
  /** Sign with another key (a cloned credential). */
  signWith?: KeyObject;
  /** Replace the signature with these bytes. */
  signature?: Buffer;
  credentialId?: string;
  userHandle?: string;
  type?: string;
}

export class SoftwareAuthenticator {
  readonly rpId: string;
  readonly origin: string;
  readonly credentialIdBytes: Buffer;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  signCount: number;

  constructor(opts: { rpId?: string; origin?: string; credentialId?: Buffer; signCount?: number } = {}) {
    this.rpId = opts.rpId ?? 'wallet.example.com';
    this.origin = opts.origin ?? `https://${this.rpId}`;
    this.credentialIdBytes = opts.credentialId ?? randomBytes(32);
    const pair = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = pair.privateKey;
    this.publicKey = pair.publicKey;
    this.signCount = opts.signCount ?? 0;
  }

  /** Base64url credential id (the service's `credentialId`). */
  get credentialId(): string {
    return b64u(this.credentialIdBytes);
  }

  /** ES256 COSE_Key `{1:2, 3:-7, -1:1, -2:x, -3:y}`. */
  coseKey(): Buffer {
    const jwk = this.publicKey.export({ format: 'jwk' });
    return cborEncode(
      new Map<CborValue, CborValue>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
  }

  private clientData(type: string, challengeB64: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge: challengeB64, origin, crossOrigin: false }), 'utf8');
  }

  /** A registration response for the integrator's base64url `challenge`. */
  register(challenge: string, opts: RegisterOptions = {}): PasskeyAttestation {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(this.signCount);
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.credentialIdBytes.length);
    const authData = Buffer.concat([
      sha256(opts.rpId ?? this.rpId),
      Buffer.from([opts.flags ?? FLAG_UP | FLAG_AT]),
      counter,
      Buffer.alloc(16), // AAGUID
      idLen,
      this.credentialIdBytes,
      this.coseKey(),
    ]);
    const attestationObject = cborEncode({ fmt: 'none', attStmt: {}, authData });
    const clientDataJson = this.clientData(opts.type ?? 'webauthn.create', challenge, opts.origin ?? this.origin);
    return {
      credentialId: opts.credentialIdOverride ?? this.credentialId,
      clientDataJson: b64u(clientDataJson),
      attestationObject: b64u(attestationObject),
      transports: opts.transports ?? ['internal'],
    };
  }

  /** An assertion over the service challenge H (hex text), signed as the WebAuthn challenge UTF-8(H). */
  assert(serviceChallenge: string, opts: AssertOptions = {}): PasskeyAssertion {
    const count = opts.counter ?? this.signCount + 1;
    if (opts.counter === undefined) this.signCount = count;
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(count);
    const authenticatorData = Buffer.concat([sha256(opts.rpId ?? this.rpId), Buffer.from([opts.flags ?? FLAG_UP]), counter]);
    const challengeB64 = opts.challengeB64 ?? b64u(Buffer.from(serviceChallenge, 'utf8'));
    const clientDataJson = this.clientData(opts.type ?? 'webauthn.get', challengeB64, opts.origin ?? this.origin);
    const signature =
      opts.signature ?? sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJson)]), opts.signWith ?? this.privateKey);
    return {
      credentialId: opts.credentialId ?? this.credentialId,
      clientDataJson: b64u(clientDataJson),
      authenticatorData: b64u(authenticatorData),
      signature: b64u(signature),
      ...(opts.userHandle !== undefined ? { userHandle: opts.userHandle } : {}),
    };
  }
}
