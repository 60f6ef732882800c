/**
 * Signed wallet actions on an EMBEDDED_WALLET account (spec §4.2): export of the wallet
 * credentials, PATCH of `privateEnabled`, and the stamp check of a quote execute whose source is
 * the wallet.
 */
import { generateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import { findCustomersByIds } from '../customers/customers.repo.ts';
import { customerHolderName } from '../customers/customers.service.ts';
import { internalAccountToWire, type InternalAccountWire } from '../internal-accounts/internal-accounts.service.ts';
import { sealExportBundle } from './crypto.ts';
import { walletAccount } from './credentials.service.ts';
import { activityPayload, organizationId } from './payloads.ts';
import { checkStamp, signedStep, walletError, type Challenge } from './signed-retry.ts';

/**
 * The wallet's recovery phrase, made on first export and kept with the account. Corridor's
 * wallets hold no on-chain keys; the phrase is what an export hands over, in the live format.
 */
async function walletMnemonic(trx: Kysely<Database>, platformId: string, accountId: string): Promise<string> {
  const row = await trx.selectFrom('wallet_secrets').select('mnemonic').where('account_id', '=', accountId).executeTakeFirst();
  if (row) return row.mnemonic;
  const mnemonic = generateMnemonic(wordlist, 128);
  await trx.insertInto('wallet_secrets').values({ account_id: accountId, platform_id: platformId, mnemonic }).onConflict((oc) => oc.column('account_id').doNothing()).execute();
  return (await trx.selectFrom('wallet_secrets').select('mnemonic').where('account_id', '=', accountId).executeTakeFirstOrThrow()).mnemonic;
}

/** POST /internal-accounts/{id}/export: 202, then 200 with the credentials sealed to clientPublicKey. */
export async function exportWallet(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, req: FastifyRequest, accountId: string, clientPublicKey: string): Promise<{ status: 202; body: Challenge } | { status: 200; body: { id: string; encryptedWalletCredentials: string } }> {
  const account = await walletAccount(trx, platform.id, accountId);
  const step = await signedStep(trx, ctx, platform, req, {
    operation: 'account.export',
    accountId: account.id,
    targetId: account.id,
    content: { clientPublicKey: clientPublicKey.toLowerCase() },
    signer: { kind: 'account-session' },
    payload: (requestId, nowMs) => activityPayload(platform, requestId, nowMs, { type: 'ACTIVITY_TYPE_EXPORT_WALLET', parameters: { targetPublicKey: clientPublicKey, walletId: account.id } }),
    ttlMs: ctx.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { status: 202, body: step.challenge };
  const mnemonic = await walletMnemonic(trx, platform.id, account.id);
  return { status: 200, body: { id: account.id, encryptedWalletCredentials: sealExportBundle(mnemonic, clientPublicKey, organizationId(platform)) } };
}

/** PATCH /internal-accounts/{id}: 202, then 200 with the updated account. */
export async function updateWallet(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, req: FastifyRequest, accountId: string, body: { privateEnabled?: boolean | undefined }): Promise<{ status: 202; body: Challenge } | { status: 200; body: InternalAccountWire }> {
  if (body.privateEnabled === undefined) throw errors.invalidInput('Nothing to update: send privateEnabled', [{ field: 'privateEnabled', message: 'is required' }]);
  const account = await walletAccount(trx, platform.id, accountId);
  const step = await signedStep(trx, ctx, platform, req, {
    operation: 'account.update',
    accountId: account.id,
    targetId: account.id,
    content: body,
    signer: { kind: 'account-session' },
    payload: (requestId, nowMs) =>
      activityPayload(platform, requestId, nowMs, {
        type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
        parameters: { encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP', payload: Buffer.from(JSON.stringify({ privateEnabled: body.privateEnabled })).toString('hex'), signWith: account.id },
      }),
    ttlMs: ctx.config.wallet.challengeSeconds * 1000,
  });
  if (step.kind === 'challenge') return { status: 202, body: step.challenge };
  const at = iso(platformNowMs(ctx.deps.clock, platform));
  await trx.updateTable('internal_accounts').set({ private_enabled: body.privateEnabled ? 1 : 0, updated_at: at }).where('id', '=', account.id).execute();
  const updated = { ...account, private_enabled: body.privateEnabled ? 1 : 0, updated_at: at };
  const [customer] = account.customer_id ? await findCustomersByIds(trx, platform.id, [account.customer_id]) : [];
  return { status: 200, body: internalAccountToWire(updated, customer ? customerHolderName(customer, platform.name) : platform.name) };
}

/**
 * The stamp of `POST /quotes/{id}/execute` from an embedded wallet: over the quote's
 * `payloadToSign`, by an active session of the wallet. There is no Request-Id; the quote itself is
 * single use.
 */
export async function checkExecuteStamp(trx: Kysely<Database>, ctx: AppContext, platform: PlatformRow, stamp: string | undefined, walletAccountId: string, payloadToSign: string): Promise<void> {
  if (stamp === undefined) throw walletError('WALLET_SIGNATURE_MISSING', 'Service-Wallet-Signature is required to execute a quote funded from an embedded wallet');
  await checkStamp(trx, ctx, platform, stamp, payloadToSign, walletAccountId, { kind: 'account-session' });
}
