/**
 * Platform configuration and its merge rules:
 * - `umaDomain`, `webhookEndpoint` replace; `supportedCurrencies` replaces the list, and a currency
 *   without a platform internal account gets one;
 * - `embeddedWalletConfig` and `cardTokenization2faConfig` merge field by field;
 * - `feeConfigs` upsert on (feeType, sourceCurrency); a config whose fees are both 0 is removed;
 *   only USD fee configs exist (others: 501 NOT_IMPLEMENTED);
 * - a new or changed `webhookEndpoint` queues one TEST event; a PRODUCTION platform's must not point
 *   to a loopback, private, link-local or non-routable address (400 on the field).
 */
import type { AppContext } from '../../context.ts';
import { errors, type FieldError } from '../../http/errors.ts';
import { findCurrency } from '../../lib/currencies.ts';
import type { PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { listPlatformAccounts } from '../internal-accounts/internal-accounts.repo.ts';
import { createInternalAccount, holdingTypeFor } from '../internal-accounts/internal-accounts.service.ts';
import { getPlatform, updatePlatform } from '../platforms/platforms.repo.ts';
import { settingsOf, type PlatformSettings } from '../platforms/platform-settings.ts';
import type { FeeConfig, PlatformConfigUpdate } from './config.schemas.ts';

export function configToWire(p: PlatformRow) {
  const s = settingsOf(p);
  return { id: `PlatformConfig:${p.id.slice(p.id.indexOf(':') + 1)}`, ...s, createdAt: p.created_at, updatedAt: p.updated_at };
}

/**
 * What PATCH /config checks before its unit opens: the patch's own consistency, and a PRODUCTION
 * platform's webhookEndpoint, which may ask DNS (bounded, best effort) — never inside a transaction.
 */
export async function checkConfigPatch(
  ctx: AppContext,
  platform: Pick<PlatformRow, 'id' | 'environment'>,
  patch: PlatformConfigUpdate,
): Promise<void> {
  validatePatch(patch);
  if (patch.webhookEndpoint !== undefined) await checkWebhookEndpoint(ctx, platform, patch.webhookEndpoint);
}

/** PATCH /config: merges the (checked) patch into the platform's settings, read afresh under its row lock. */
export async function updateConfig(u: Unit, patch: PlatformConfigUpdate) {
  const platform = await getPlatform(u.trx, u.platform.id, { forUpdate: true });
  if (!platform) throw errors.notFound('Platform', u.platform.id);
  const at = u.at;
  const before = settingsOf(platform);
  const next = merge(before, patch);
  if (patch.supportedCurrencies) await ensureAccounts(u, next);
  if (patch.webhookEndpoint !== undefined && patch.webhookEndpoint !== before.webhookEndpoint) u.emit('TEST', platform.id, {});
  const updated: PlatformRow = { ...platform, config: JSON.stringify(next), updated_at: at };
  await updatePlatform(u.trx, platform.id, { config: updated.config, updated_at: at });
  return configToWire(updated);
}

/**
 * A PRODUCTION platform's webhookEndpoint must reach a globally routable address, unless the
 * operator set CORRIDOR_WEBHOOK_ALLOW_PRIVATE=true (webhook-delivery/target-guard.ts; delivery checks every
 * connection too).
 */
async function checkWebhookEndpoint(ctx: AppContext, platform: Pick<PlatformRow, 'id' | 'environment'>, url: string): Promise<void> {
  const refused = await ctx.webhooks.endpointRefusal(platform, url);
  if (refused !== undefined) {
    const why = refused.replace(/^refused: /, '');
    throw errors.invalidField(
      'webhookEndpoint',
      `${why}; a PRODUCTION platform's webhooks may only go to public (globally routable) addresses`,
    );
  }
}

function validatePatch(patch: PlatformConfigUpdate): void {
  const problems: FieldError[] = [];
  const seen = new Set<string>();
  patch.supportedCurrencies?.forEach((c, i) => {
    if (!findCurrency(c.currencyCode))
      problems.push({ field: `supportedCurrencies.${i}.currencyCode`, message: `unknown currency ${c.currencyCode}` });
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
    if (unknown) throw errors.currenciesRejected(`Invalid currency: ${problems[0]!.message}`, problems);
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

async function ensureAccounts(u: Unit, s: PlatformSettings): Promise<void> {
  const platformId = u.platform.id;
  const have = new Set((await listPlatformAccounts(u.trx, platformId, {})).map((a) => a.currency));
  for (const c of s.supportedCurrencies) {
    if (have.has(c.currencyCode)) continue;
    await createInternalAccount(u.trx, u.deps, {
      platformId,
      customerId: null,
      type: holdingTypeFor(c.currencyCode),
      currency: c.currencyCode,
      at: u.at,
    });
  }
}
