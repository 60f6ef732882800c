/**
 * Secrets at rest: the private keys the store holds (webhook signing keys, wallet keys, wallet
 * recovery phrases, OTP target keys inside pending auth requests) are sealed with AES-256-GCM when
 * CORRIDOR_SECRET_KEY is set.
 *
 * - Key: HKDF-SHA256 of the configured string (fixed salt, per-purpose info) → 32 bytes. The
 *   configured string must be random (e.g. `openssl rand -base64 32`): HKDF does not stretch a
 *   passphrase.
 * - Key id: 8 bytes of a second HKDF output of the same string (hex), so a sealed value says which
 *   key sealed it without revealing anything about the encryption key.
 * - Sealed text: `enc:v1:<key id>:<base64url(nonce 12 | ciphertext | tag 16)>`; random nonce.
 * - AAD: the header and the value's place (table, column, row key), so a sealed value copied to
 *   another row or column does not open.
 *
 * `open` takes clear values (stores written before a key was set), values under the current key
 * and values under the previous key (CORRIDOR_SECRET_KEY_PREVIOUS, while rotating). Anything else
 * is a {@link SecretKeyError}. Without a key `seal` stores the value in clear.
 *
 * A box is built from the configuration and handed down explicitly (AppContext.secrets), never a
 * module global: tests run several servers with different configurations in one process.
 */
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';

/** Where a sealed value lives: the AAD binds the ciphertext to it. */
export interface SecretRef {
  table: string;
  column: string;
  /** The row's primary key value. */
  row: string;
}

/** What a stored value is, as far as this box can tell without opening it. */
export type SecretState = 'clear' | 'current' | 'previous' | 'unknown';

export const SEALED_PREFIX = 'enc:';
const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_SALT = 'corridor/secret-box';
const KEY_INFO = 'corridor secrets at rest v1: aes-256-gcm key';
const ID_INFO = 'corridor secrets at rest v1: key id';

/** The message when the store holds secrets no configured key opens (the server refuses to start). */
export const MISSING_KEY_MESSAGE =
  'the store holds secrets encrypted with a key that is not configured: set CORRIDOR_SECRET_KEY (and CORRIDOR_SECRET_KEY_PREVIOUS while rotating)';

/** A stored secret cannot be opened with the configured keys (or failed authentication). Never carries secret material. */
export class SecretKeyError extends Error {
  override name = 'SecretKeyError';
}

interface DerivedKey {
  id: string;
  key: KeyObject;
  /** `enc:v1:<id>:` */
  prefix: string;
}

function derive(secret: string): DerivedKey {
  const ikm = Buffer.from(secret, 'utf8');
  const key = Buffer.from(hkdfSync('sha256', ikm, HKDF_SALT, KEY_INFO, 32));
  const id = Buffer.from(hkdfSync('sha256', ikm, HKDF_SALT, ID_INFO, 8)).toString('hex');
  return { id, key: createSecretKey(key), prefix: `${SEALED_PREFIX}${VERSION}:${id}:` };
}

function aad(prefix: string, ref: SecretRef): Buffer {
  return Buffer.from(`${prefix}${JSON.stringify([ref.table, ref.column, ref.row])}`, 'utf8');
}

function where(ref: SecretRef): string {
  return `${ref.table}.${ref.column} of ${ref.row}`;
}

export class SecretBox {
  private readonly current: DerivedKey | undefined;
  private readonly previous: DerivedKey | undefined;

  constructor(keys: { secretKey?: string | undefined; secretKeyPrevious?: string | undefined }) {
    if (keys.secretKeyPrevious !== undefined && keys.secretKey === undefined) throw new Error('a previous secret key needs a current one');
    this.current = keys.secretKey === undefined ? undefined : derive(keys.secretKey);
    this.previous = keys.secretKeyPrevious === undefined ? undefined : derive(keys.secretKeyPrevious);
    if (this.previous && this.previous.id === this.current!.id) throw new Error('the previous secret key must differ from the current one');
  }

  /** True when a key is configured (values are sealed, not stored in clear). */
  get enabled(): boolean {
    return this.current !== undefined;
  }

  /** The current key's id (not secret: a one-way fingerprint), for start-up output. */
  get keyId(): string | undefined {
    return this.current?.id;
  }

  get previousKeyId(): string | undefined {
    return this.previous?.id;
  }

  /** `enc:v1:<id>:` of the current and previous keys (what the start-up sweep matches in SQL). */
  get prefixes(): { current: string | undefined; previous: string | undefined } {
    return { current: this.current?.prefix, previous: this.previous?.prefix };
  }

  /** The value to store for `plain` at `ref`: sealed under the current key, or `plain` without a key. */
  seal(plain: string, ref: SecretRef): string {
    // A clear value must never look sealed (it would be misread as one).
    if (plain.startsWith(SEALED_PREFIX)) throw new Error(`refusing to store a value that looks sealed in ${where(ref)}`);
    const k = this.current;
    if (!k) return plain;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', k.key, nonce);
    cipher.setAAD(aad(k.prefix, ref));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${k.prefix}${Buffer.concat([nonce, ct, cipher.getAuthTag()]).toString('base64url')}`;
  }

  /** What `stored` is: clear, sealed under the current or previous key, or sealed under a key not configured. */
  state(stored: string): SecretState {
    if (!stored.startsWith(SEALED_PREFIX)) return 'clear';
    if (this.current && stored.startsWith(this.current.prefix)) return 'current';
    if (this.previous && stored.startsWith(this.previous.prefix)) return 'previous';
    return 'unknown';
  }

  /** The clear value of `stored` (read from `ref`); throws {@link SecretKeyError} when it cannot be opened. */
  open(stored: string, ref: SecretRef): string {
    const state = this.state(stored);
    if (state === 'clear') return stored;
    if (state === 'unknown') throw new SecretKeyError(`${MISSING_KEY_MESSAGE} (${where(ref)})`);
    const k = state === 'current' ? this.current! : this.previous!;
    const raw = Buffer.from(stored.slice(k.prefix.length), 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new SecretKeyError(`the sealed secret in ${where(ref)} is truncated`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', k.key, raw.subarray(0, NONCE_BYTES));
      decipher.setAAD(aad(k.prefix, ref));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretKeyError(`the sealed secret in ${where(ref)} does not authenticate: it was altered or moved from another row`);
    }
  }

  /** `stored` sealed under the current key (opened first when clear or under the previous key); unchanged when already current. */
  reseal(stored: string, ref: SecretRef): string {
    if (this.state(stored) === 'current') return stored;
    return this.seal(this.open(stored, ref), ref);
  }
}

/** The box for a configuration (CORRIDOR_SECRET_KEY / CORRIDOR_SECRET_KEY_PREVIOUS, checked by readConfig). */
export function secretBox(config: { secretKey: string | undefined; secretKeyPrevious: string | undefined }): SecretBox {
  return new SecretBox(config);
}

/** Every stored column that holds a secret, with its row key: what is sealed, and what the start-up sweep covers. */
export const SECRET_COLUMNS = {
  /** PKCS#8 PEM of the platform's webhook signing key. */
  webhookKey: { table: 'webhook_keys', column: 'private_key_pem', key: 'platform_id' },
  /** PKCS#8 PEM of the platform's wallet key (signs OTP bundles and verification tokens). */
  walletKey: { table: 'wallet_keys', column: 'private_key_pem', key: 'platform_id' },
  /** An embedded wallet's BIP-39 recovery phrase. */
  walletMnemonic: { table: 'wallet_secrets', column: 'mnemonic', key: 'account_id' },
  /** A pending auth request's operation data (JSON; an OTP's target private key). */
  authRequestData: { table: 'auth_requests', column: 'data', key: 'id' },
  /** A delegated key's P-256 private scalar (64 hex); null once the key is revoked. */
  delegatedKey: { table: 'delegated_keys', column: 'private_key', key: 'id' },
  /** A card's number (16 digits); null until the card is activated. */
  cardPan: { table: 'cards', column: 'pan', key: 'id' },
  /** A card's CVV (3 digits); null until the card is activated. */
  cardCvv: { table: 'cards', column: 'cvv', key: 'id' },
  /** A stablecoin provider account link's API client secret. */
  stablecoinProviderSecret: { table: 'stablecoin_provider_accounts', column: 'api_client_secret', key: 'id' },
  /** A customer's SCA TOTP shared secret (base32). */
  scaTotpSecret: { table: 'sca_factors', column: 'totp_secret', key: 'id' },
} as const;

export type SecretColumn = (typeof SECRET_COLUMNS)[keyof typeof SECRET_COLUMNS];

/** The place of one value of `column` (its row key `row`): the AAD it is sealed with. */
export function secretRef(column: SecretColumn, row: string): SecretRef {
  return { table: column.table, column: column.column, row };
}
