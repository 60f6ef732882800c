/** Sandbox operations: funding, the per-platform clock and the reset. */
import { Type } from '@sinclair/typebox';
import type { Deps } from '../../deps.ts';
import { errors } from '../../http/errors.ts';
import { DateTime, Obj } from '../../http/schemas.ts';
import { shiftPlatformSchedule } from '../../jobs/jobs.ts';
import { postEntry, systemAccount } from '../../ledger/ledger.ts';
import { iso, platformNowMs } from '../../lib/time.ts';
import type { PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findInternalAccount, listPlatformAccounts } from '../internal-accounts/internal-accounts.repo.ts';
import {
  createInternalAccount,
  holdingTypeFor,
  internalAccountToWire,
  type InternalAccountWire,
} from '../internal-accounts/internal-accounts.service.ts';
import { settingsOf } from '../platforms/platform-settings.ts';
import { getPlatform, updatePlatform } from '../platforms/platforms.repo.ts';
import { deletePlatformData, emptyPlatformAccounts } from './sandbox.repo.ts';

/**
 * Credits an internal account from the platform's sandbox issuer and emits
 * INTERNAL_ACCOUNT.BALANCE_UPDATED.
 */
export async function fundInternalAccount(u: Unit, accountId: string, amount: number): Promise<InternalAccountWire> {
  const account = await findInternalAccount(u.trx, u.platform.id, accountId);
  if (!account) throw errors.notFound('Internal account', accountId);
  const [updated] = await postEntry(u.trx, {
    id: u.deps.ids.next('LedgerEntry'),
    platformId: u.platform.id,
    kind: 'SANDBOX_FUNDING',
    referenceId: account.id,
    at: u.at,
    postings: [
      { accountId: systemAccount(u.platform.id, 'SANDBOX_ISSUER'), currency: account.currency, bucket: 'AVAILABLE', amount: -amount },
      { accountId: account.id, currency: account.currency, bucket: 'AVAILABLE', amount },
    ],
  });
  if (!updated) throw new Error('funding moved no internal account');
  u.emit('INTERNAL_ACCOUNT.BALANCE_UPDATED', account.id, internalAccountToWire(updated, u.platform.name, false));
  return internalAccountToWire(updated, u.platform.name);
}

export const SandboxClockSchema = Obj(
  {
    now: DateTime,
    offsetMs: Type.Integer({ description: "How far the platform's clock is ahead of real time" }),
  },
  { title: 'SandboxClock' },
);

/** The platform's sandbox clock as the API shows it. */
export function sandboxClock(deps: Pick<Deps, 'clock'>, platform: Pick<PlatformRow, 'clock_offset_ms'>) {
  return { now: iso(platformNowMs(deps.clock, platform)), offsetMs: Number(platform.clock_offset_ms) };
}

/**
 * Moves the platform's clock forward by `ms`: later timestamps, expiries, delayed outcomes and
 * webhook retries follow it (its pending jobs and retries come due `ms` earlier). Returns the
 * platform as it now is; the caller runs what became due once this unit has committed.
 */
export async function advanceClock(u: Unit, ms: number): Promise<PlatformRow> {
  // Locked: two advances of one platform add up.
  const p = await getPlatform(u.trx, u.platform.id, { forUpdate: true });
  if (!p) throw errors.notFound('Platform', u.platform.id);
  const offset = Number(p.clock_offset_ms) + ms;
  await updatePlatform(u.trx, p.id, { clock_offset_ms: offset });
  await shiftPlatformSchedule(u.trx, p.id, ms);
  return { ...p, clock_offset_ms: offset };
}

/**
 * POST /sandbox/reset, in the one exclusive unit (`runExclusiveUnit`: the platform's writes in
 * flight finish first, those that start meanwhile wait, so no write lands on half-deleted data):
 * wipes the platform's customers (with their accounts) and history, empties its own internal
 * accounts — keeping their ids, so scripts holding them go on working — makes sure it holds one in
 * each currency it supports, and puts its sandbox clock back to real time.
 */
export async function resetPlatform(u: Unit): Promise<void> {
  const { platform } = u;
  // Real time: the clock goes back to it.
  const at = iso(u.deps.clock.nowMs());
  await deletePlatformData(u.trx, platform.id);
  await emptyPlatformAccounts(u.trx, platform.id, at);
  await updatePlatform(u.trx, platform.id, { clock_offset_ms: 0 });
  const have = new Set((await listPlatformAccounts(u.trx, platform.id, {})).map((a) => a.currency));
  const codes = new Set([platform.fiat_currency, ...settingsOf(platform).supportedCurrencies.map((c) => c.currencyCode)]);
  for (const code of codes) {
    if (have.has(code)) continue;
    await createInternalAccount(u.trx, u.deps, {
      platformId: platform.id,
      customerId: null,
      type: holdingTypeFor(code),
      currency: code,
      at,
    });
  }
}
