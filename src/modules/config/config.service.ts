/**
 * Platform configuration and its merge rules:
 * - `umaDomain`, `webhookEndpoint` replace; `supportedCurrencies` replaces the list, and a currency
 *   without a platform internal account gets one;
 * - `embeddedWalletConfig` and `cardTokenization2faConfig` merge field by field;
 * - `feeConfigs` upsert on (feeType, sourceCurrency); a config whose fees are both 0 is removed;
 *   only USD fee configs exist (others: 501 NOT_IMPLEMENTED);
 * - a new or changed `webhookEndpoint` queues one TEST event.
 */
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.ts';
import { ApiError, errors, type FieldError } from '../../http/errors.ts';
import { findCurrency } from '../../lib/currencies.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import { enqueueEvent } from '../../outbox/outbox.ts';
import type { Database, PlatformRow } from '../../store/schema.ts';
import { listPlatformAccounts } from '../internal-accounts/internal-accounts.repo.ts';
import { createInternalAccount, holdingTypeFor } from '../internal-accounts/internal-accounts.service.ts';
import { getPlatform, updatePlatform } from '../platforms/platforms.repo.ts';
import { settingsOf, type PlatformSettings } from '../platforms/platform-settings.ts';
import type { FeeConfig, PlatformConfigUpdate } from './config.schemas.ts';

export function configToWire(p: PlatformRow) {
  const s = settingsOf(p);
  return { id: `PlatformConfig:${p.id.slice(p.id.indexOf(':') + 1)}`, ...s, createdAt: p.created_at, updatedAt: p.updated_at };
}

export async function updateConfig(ctx: AppContext, platformId: string, patch: PlatformConfigUpdate) {
  validatePatch(patch);
  return ctx.db.transaction().execute(async (trx) => {
    const platform = await getPlatform(trx, platformId, ctx.store.kind);
    if (!platform) throw errors.notFound('Platform', platformId);
    const at = iso(platformNowMs(ctx.deps.clock, platform));
    const before = settingsOf(platform);
    const next = merge(before, patch);
    if (patch.supportedCurrencies) await ensureAccounts(trx, ctx, platform.id, next, at);
    if (patch.webhookEndpoint !== undefined && patch.webhookEndpoint !== before.webhookEndpoint) {
      await enqueueEvent(trx, {
        id: ctx.deps.ids.next('Webhook'),
        platformId: platform.id,
        type: 'TEST',
        resourceId: platform.id,
        data: {},
        at,
      });
    }
    const updated: PlatformRow = { ...platform, config: JSON.stringify(next), updated_at: at };
    await updatePlatform(trx, platform.id, { config: updated.config, updated_at: at });
    return configToWire(updated);
  });
}

function validatePatch(patch: PlatformConfigUpdate): void {
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  patch.supportedCurrencies?.forEach((c, i) => {
    if (!findCurrency(c.currencyCode)) problems.push({ field: `supportedCurrencies.${i}.currencyCode`, message: `unknown currency ${c.currencyCode}` });
    if (seen.has(c.currencyCode)) problems.push({ field: `supportedCurrencies.${i}.currencyCode`, message: 'appears more than once' });
    seen.add(c.currencyCode);
    if (c.minAmount > c.maxAmount) problems.push({ field: `supportedCurrencies.${i}.minAmount`, message: 'must not exceed maxAmount' });
  });
  patch.feeConfigs?.forEach((f, i) => {
    if (f.fixedFee.currency !== f.sourceCurrency) {
      problems.push({ field: `feeConfigs.${i}.fixedFee.currency`, message: 'must equal sourceCurrency' });
    }
  });
  if (problems.length > 0) {
    const unknown = problems.every((p) => p.message.startsWith('unknown currency'));
    if (unknown) throw new ApiError(400, 'INVALID_CURRENCY', `Invalid currency: ${problems[0]!.message}`, { errors: problems });
    throw errors.invalidInput(`Invalid configuration: ${problems[0]!.field} ${problems[0]!.message}`, problems);
  }
  const nonUsd = patch.feeConfigs?.find((f) => f.sourceCurrency !== 'USD');
  if (nonUsd) throw errors.notImplemented(`Fee configs are only available for sourceCurrency USD (got ${nonUsd.sourceCurrency})`);
}

function merge(s: PlatformSettings, patch: PlatformConfigUpdate): PlatformSettings {
  const next: PlatformSettings = { ...s };
  if (patch.umaDomain !== undefined) next.umaDomain = patch.umaDomain;
  if (patch.webhookEndpoint !== undefined) next.webhookEndpoint = patch.webhookEndpoint;
  if (patch.supportedCurrencies !== undefined) next.supportedCurrencies = patch.supportedCurrencies;
  if (patch.embeddedWalletConfig !== undefined) next.embeddedWalletConfig = { ...s.embeddedWalletConfig, ...patch.embeddedWalletConfig };
  if (patch.cardTokenization2faConfig !== undefined) {
    const cur = s.cardTokenization2faConfig ?? {};
    const p = patch.cardTokenization2faConfig;
    next.cardTokenization2faConfig = {
      ...cur,
      ...p,
      ...(p.email || cur.email ? { email: { ...cur.email, ...p.email } } : {}),
      ...(p.sms || cur.sms ? { sms: { ...cur.sms, ...p.sms } } : {}),
    };
  }
  if (patch.feeConfigs !== undefined) next.feeConfigs = upsertFees(s.feeConfigs, patch.feeConfigs);
  return next;
}

function upsertFees(current: FeeConfig[], changes: FeeConfig[]): FeeConfig[] {
  const key = (f: FeeConfig) => `${f.feeType}|${f.sourceCurrency}`;
  const byKey = new Map(current.map((f) => [key(f), f]));
  for (const f of changes) {
    if (f.variableFeeBps === 0 && f.fixedFee.amount === 0) byKey.delete(key(f));
    else byKey.set(key(f), f);
  }
  return [...byKey.values()];
}

async function ensureAccounts(trx: Kysely<Database>, ctx: AppContext, platformId: string, s: PlatformSettings, at: string): Promise<void> {
  const have = new Set((await listPlatformAccounts(trx, platformId, {})).map((a) => a.currency));
  for (const c of s.supportedCurrencies) {
    if (have.has(c.currencyCode)) continue;
    await createInternalAccount(trx, ctx.deps, { platformId, customerId: null, type: holdingTypeFor(c.currencyCode), currency: c.currencyCode, at });
  }
}
