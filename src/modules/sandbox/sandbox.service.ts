/** Sandbox operations: funding and the per-platform clock. */
import { Type } from '@sinclair/typebox';
import type { Kysely } from 'kysely';
import { DateTime, Obj } from '../../http/schemas.ts';
import { shiftPlatformSchedule } from '../../jobs/jobs.ts';
import { retryOnConflict } from '../../store/retry.ts';
import { getPlatform, updatePlatform } from '../platforms/platforms.repo.ts';
import type { AppContext } from '../../context.ts';
import { errors } from '../../http/errors.ts';
import { postEntry, systemAccount } from '../../ledger/ledger.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import { enqueueEvent } from '../../outbox/outbox.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import { findInternalAccount } from '../internal-accounts/internal-accounts.repo.ts';
import { createInternalAccount, holdingTypeFor, internalAccountToWire, type InternalAccountWire } from '../internal-accounts/internal-accounts.service.ts';
import { settingsOf } from '../platforms/platform-settings.ts';

/**
 * Credits an internal account from the platform's sandbox issuer, in the caller's transaction,
 * and records INTERNAL_ACCOUNT.BALANCE_UPDATED.
 */
export async function fundInternalAccount(
  trx: Kysely<Database>,
  ctx: AppContext,
  platform: PlatformRow,
  accountId: string,
  amount: number,
): Promise<InternalAccountWire> {
  const account = await findInternalAccount(trx, platform.id, accountId);
  if (!account) throw errors.notFound('Internal account', accountId);
  const at = iso(platformNowMs(ctx.deps.clock, platform));
  const [updated] = await postEntry(trx, {
    id: ctx.deps.ids.next('LedgerEntry'),
    platformId: platform.id,
    kind: 'SANDBOX_FUNDING',
    referenceId: account.id,
    at,
    postings: [
      { accountId: systemAccount(platform.id, 'SANDBOX_ISSUER'), currency: account.currency, bucket: 'AVAILABLE', amount: -amount },
      { accountId: account.id, currency: account.currency, bucket: 'AVAILABLE', amount },
    ],
  });
  if (!updated) throw new Error('funding moved no internal account');
  await enqueueEvent(trx, {
    id: ctx.deps.ids.next('Webhook'),
    platformId: platform.id,
    type: 'INTERNAL_ACCOUNT.BALANCE_UPDATED',
    resourceId: account.id,
    data: internalAccountToWire(updated, platform.name, false),
    at,
  });
  return internalAccountToWire(updated, platform.name);
}

export const SandboxClockSchema = Obj(
  {
    now: DateTime,
    offsetMs: Type.Integer({ description: "How far the platform's clock is ahead of real time" }),
  },
  { title: 'SandboxClock' },
);

/**
 * Moves a platform's clock forward: later timestamps, expiries, delayed outcomes and webhook retries
 * follow it. Everything that became due is run before this returns, so a caller sees the outcome.
 */
export async function advanceClock(ctx: AppContext, platformId: string, ms: number) {
  const platform = await retryOnConflict(() => ctx.db.transaction().execute(async (trx) => {
    const p = await getPlatform(trx, platformId, ctx.store.kind);
    if (!p) throw errors.notFound('Platform', platformId);
    const offset = Number(p.clock_offset_ms) + ms;
    await updatePlatform(trx, p.id, { clock_offset_ms: offset });
    await shiftPlatformSchedule(trx, ctx.store.kind, p.id, ms);
    return { ...p, clock_offset_ms: offset };
  }));
  await ctx.jobs.drain(platformId);
  await ctx.webhooks.drain(platformId);
  return { now: iso(platformNowMs(ctx.deps.clock, platform)), offsetMs: Number(platform.clock_offset_ms) };
}

/**
 * Every table holding a platform's customers, accounts and history, children before parents.
 * Tokens, configuration, the webhook signing key and the platform's clock are kept.
 */
const RESETTABLE_TABLES = [
  'agent_actions', 'agent_quotes', 'agent_tokens', 'agent_device_codes', 'agents',
  'ledger_postings', 'ledger_entries', 'webhook_attempts', 'outbox_events', 'jobs', 'idempotency_keys', 'quotes', 'transactions',
  'auth_attempts', 'auth_requests', 'auth_sessions', 'auth_credentials', 'wallet_secrets',
  'verifications', 'document_files', 'documents', 'beneficial_owners', 'external_accounts', 'internal_accounts', 'customers',
] as const;

/** POST /sandbox/reset: wipes the platform's data and recreates its (empty) platform internal accounts. */
export async function resetPlatform(ctx: AppContext, platformId: string): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    const platform = await getPlatform(trx, platformId, ctx.store.kind);
    if (!platform) throw errors.notFound('Platform', platformId);
    for (const table of RESETTABLE_TABLES) await trx.deleteFrom(table).where('platform_id', '=', platformId).execute();
    const at = iso(platformNowMs(ctx.deps.clock, platform));
    const codes = new Set([platform.fiat_currency, ...settingsOf(platform).supportedCurrencies.map((c) => c.currencyCode)]);
    for (const code of codes) {
      await createInternalAccount(trx, ctx.deps, { platformId, customerId: null, type: holdingTypeFor(code), currency: code, at });
    }
  });
}
