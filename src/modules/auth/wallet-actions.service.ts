/**
 * Signed wallet actions on an EMBEDDED_WALLET account (spec §4.2): export of the wallet
 * credentials, PATCH of `privateEnabled`, and the signature of a quote execute whose source is the
 * wallet (a signed retry, or a stamp over the quote's own payload).
 */
import { generateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { errors } from '../../http/errors.ts';
import type { WalletSignature } from '../../http/wallet-signature.ts';
import { SECRET_COLUMNS, secretRef } from '../../store/secret-box.ts';
import type { Unit } from '../../unit.ts';
import { findCustomersByIds } from '../customers/customers.repo.ts';
import { customerHolderName } from '../customers/customers.service.ts';
import { internalAccountToWire, type InternalAccountWire } from '../internal-accounts/internal-accounts.service.ts';
import { findWalletMnemonic, insertWalletMnemonic, setAccountPrivacy } from './auth.repo.ts';
import type { AccountUpdate } from './auth.schemas.ts';
import { sealExportBundle } from './crypto.ts';
import { walletAccount } from './credentials.service.ts';
import { activityPayload, organizationId } from './payloads.ts';
import { type Challenge, checkStamp, signedStep, type Signed, type Signer } from './signed-retry.ts';

/** An exported wallet: its credentials sealed to the client's key. */
export interface ExportedWallet {
  id: string;
  encryptedWalletCredentials: string;
}

/**
 * The wallet's recovery phrase, made on first export and kept with the account. Corridor's
 * wallets hold no on-chain keys; the phrase is what an export hands over, in the live format.
 * Stored sealed by `u.app.secrets` (clear only without CORRIDOR_SECRET_KEY).
 */
async function walletMnemonic(u: Unit, accountId: string): Promise<string> {
  const { secrets } = u.app;
  const ref = secretRef(SECRET_COLUMNS.walletMnemonic, accountId);
  const stored = await findWalletMnemonic(u.trx, accountId);
  if (stored !== undefined) return secrets.open(stored, ref);
  const mnemonic = secrets.seal(generateMnemonic(wordlist, 128), ref);
  await insertWalletMnemonic(u.trx, { account_id: accountId, platform_id: u.platform.id, mnemonic });
  // Two racing first exports: both hand over the phrase that won.
  const won = await findWalletMnemonic(u.trx, accountId);
  if (won === undefined) throw new Error(`recovery phrase of ${accountId} missing after its insert`);
  return secrets.open(won, ref);
}

/** POST /internal-accounts/{id}/export: a challenge, then the credentials sealed to clientPublicKey. */
export async function exportWallet(
  u: Unit,
  input: { signature: WalletSignature; accountId: string; clientPublicKey: string },
): Promise<Signed<ExportedWallet>> {
  const { clientPublicKey } = input;
  const account = await walletAccount(u, input.accountId);
  const step = await signedStep(u, input.signature, {
    operation: 'account.export',
    accountId: account.id,
    targetId: account.id,
    content: { clientPublicKey: clientPublicKey.toLowerCase() },
    signer: { kind: 'account-session' },
    payload: (requestId, nowMs) =>
      activityPayload(u.platform, requestId, nowMs, {
        type: 'ACTIVITY_TYPE_EXPORT_WALLET',
        parameters: { targetPublicKey: clientPublicKey, walletId: account.id },
      }),
    ttlMs: u.app.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { kind: 'challenge', challenge: step.challenge };
  const mnemonic = await walletMnemonic(u, account.id);
  return {
    kind: 'done',
    value: { id: account.id, encryptedWalletCredentials: sealExportBundle(mnemonic, clientPublicKey, organizationId(u.platform)) },
  };
}

/** PATCH /internal-accounts/{id}: a challenge, then the updated account. */
export async function updateWallet(
  u: Unit,
  input: { signature: WalletSignature; accountId: string; body: AccountUpdate },
): Promise<Signed<InternalAccountWire>> {
  const { body } = input;
  if (body.privateEnabled === undefined)
    throw errors.invalidInput('Nothing to update: send privateEnabled', [{ field: 'privateEnabled', message: 'is required' }]);
  const account = await walletAccount(u, input.accountId);
  const step = await signedStep(u, input.signature, {
    operation: 'account.update',
    accountId: account.id,
    targetId: account.id,
    content: body,
    signer: { kind: 'account-session' },
    payload: (requestId, nowMs) => signRawPayload(u, requestId, nowMs, JSON.stringify({ privateEnabled: body.privateEnabled }), account.id),
    ttlMs: u.app.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { kind: 'challenge', challenge: step.challenge };
  const privateEnabled = body.privateEnabled ? 1 : 0;
  await setAccountPrivacy(u.trx, account.id, privateEnabled, u.at);
  const updated = { ...account, private_enabled: privateEnabled, updated_at: u.at };
  const [customer] = account.customer_id ? await findCustomersByIds(u.trx, u.platform.id, [account.customer_id]) : [];
  const platformName = u.platform.name;
  return { kind: 'done', value: internalAccountToWire(updated, customer ? customerHolderName(customer, platformName) : platformName) };
}

/**
 * Who may sign a quote execute from the wallet: an active session, or an ACTIVE delegated key of the
 * wallet (a card funding source's key, which Corridor holds and signs card payments with).
 */
const EXECUTE_SIGNER: Signer = { kind: 'account-session', delegatedKeys: true };

/**
 * The stamp of a quote execute from an embedded wallet over the quote's own `payloadToSign`
 * (its EMBEDDED_WALLET payment instructions), by an active session of the wallet. There is no
 * Request-Id; the quote itself is single use. (The agents module's execute takes only this form.)
 */
export async function checkExecuteStamp(u: Unit, stamp: string | undefined, walletAccountId: string, payloadToSign: string): Promise<void> {
  if (stamp === undefined)
    throw errors.walletAuthFailed(
      'WALLET_SIGNATURE_MISSING',
      'Service-Wallet-Signature is required to execute a quote funded from an embedded wallet',
    );
  await checkStamp(u, stamp, payloadToSign, walletAccountId, EXECUTE_SIGNER);
}

/** The payload of a signed retry that signs `raw` with the wallet `signWith` (Turnkey's sign-raw-payload activity). */
function signRawPayload(u: Unit, requestId: string, nowMs: number, raw: string, signWith: string): string {
  return activityPayload(u.platform, requestId, nowMs, {
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
    parameters: {
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
      payload: Buffer.from(raw).toString('hex'),
      signWith,
    },
  });
}

/** What the signature of a wallet-funded execute decides: a challenge to answer (202), or go ahead. */
export type ExecuteAuthorization = { kind: 'challenge'; challenge: Challenge } | { kind: 'authorized' };

/**
 * The signature of `POST /quotes/{id}/execute` for a quote funded from the wallet `walletAccountId`
 * (spec §4.2, §4.9), in one of three forms:
 * - no `Service-Wallet-Signature` and no `Request-Id`: a signed-retry challenge bound to the quote
 *   and the request content (`quote.execute`), which expires with the quote at the latest;
 * - `Request-Id` (with the stamp over that challenge's `payloadToSign`): the retry, checked and
 *   consumed by the signed-retry engine;
 * - the stamp alone: over the quote's own `payloadToSign` (the live API's form, `checkExecuteStamp`).
 * Either signer is any active session of the wallet (or `sandbox-valid-signature` on a sandbox platform).
 */
export async function authorizeWalletExecute(
  u: Unit,
  input: {
    signature: WalletSignature;
    walletAccountId: string;
    quoteId: string;
    /** The quote's own payloadToSign. */
    quotePayload: string;
    quoteExpiresAt: string;
    /** The request content the retry must repeat (the execute body). */
    content: unknown;
  },
): Promise<ExecuteAuthorization> {
  const { signature, walletAccountId, quotePayload } = input;
  if (signature.stamp !== undefined && signature.requestId === undefined) {
    await checkExecuteStamp(u, signature.stamp, walletAccountId, quotePayload);
    return { kind: 'authorized' };
  }
  const step = await signedStep(u, signature, {
    operation: 'quote.execute',
    accountId: walletAccountId,
    targetId: input.quoteId,
    content: input.content,
    signer: EXECUTE_SIGNER,
    payload: (requestId, nowMs) => signRawPayload(u, requestId, nowMs, quotePayload, walletAccountId),
    // A challenge never outlives its quote (the caller has checked the quote is unexpired).
    ttlMs: Math.min(u.app.config.wallet.challengeSeconds * 1000, Date.parse(input.quoteExpiresAt) - u.nowMs),
  });
  return step.kind === 'challenge' ? { kind: 'challenge', challenge: step.challenge } : { kind: 'authorized' };
}
