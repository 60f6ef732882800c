/**
 * Registered stablecoins: a token created at the provider, registered against a provider account
 * link. Registration does not create the token; its name, symbol, decimals and base currency come
 * from the provider's metadata (derived: stablecoins.rules.ts).
 *
 * issuanceStatus (the provider's; on the platform's clock, through jobs):
 *   PROVISIONING ──5 s──▶ PROVISIONED                      (any token)
 *   PENDING_REVIEW ──60 s──▶ PROVISIONING ──5 s──▶ PROVISIONED   (sandbox: identifier ending 001)
 *   PENDING_REVIEW ──60 s──▶ REJECTED                      (sandbox: 002)
 *   PROVISIONING ──5 s──▶ FAILED                           (sandbox: 003)
 * gridOperationsStatus is NOT_ENABLED for good: the live API has no operation that enables it.
 *
 * - The token is registered once per platform (by either identifier): a second registration is a 409.
 * - Its providerTokenIdentifier is its symbol and its ledger currency, so it may not be a currency
 *   code Corridor already moves (400).
 */
import type { AppContext } from '../../context.ts';
import type { JobHandler } from '../../jobs/jobs.ts';
import { findCurrency } from '../../lib/currencies.ts';
import { pageOf, type Page, type PageRequest } from '../../lib/paging.ts';
import type { PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { resolveLink } from './provider-accounts.service.ts';
import { stablecoinErrors as errs } from './stablecoins.errors.ts';
import { advanceIssuance, findStablecoin, findStablecoinByToken, insertStablecoin, listStablecoins } from './stablecoins.repo.ts';
import { issuancePath, nextIssuance, tokenMetadata } from './stablecoins.rules.ts';
import type { StablecoinFilter, StablecoinRegister, StablecoinWire } from './stablecoins.schemas.ts';
import type { IssuanceStatus, StablecoinRow } from './stablecoins.tables.ts';

export const JOB_STABLECOIN_ISSUANCE = 'STABLECOIN_ISSUANCE';

/** POST /stablecoins. */
export async function registerStablecoin(u: Unit, input: StablecoinRegister): Promise<StablecoinWire> {
  const known = findCurrency(input.providerTokenIdentifier.toUpperCase());
  if (known) throw errs.tokenCollides(known.code);
  const link = await resolveLink(u, 'BRALE', input.stablecoinProviderAccountId);
  const duplicate = await findStablecoinByToken(
    u.trx,
    u.platform.id,
    input.providerTokenIdentifier,
    input.network,
    input.networkTokenIdentifier,
  );
  if (duplicate) throw errs.alreadyRegistered(duplicate.id);

  const meta = tokenMetadata(input.providerTokenIdentifier);
  const sandbox = isSandbox(u.platform);
  const path = issuancePath(input.providerTokenIdentifier, sandbox);
  const row: StablecoinRow = {
    id: u.deps.ids.next('Stablecoin'),
    platform_id: u.platform.id,
    provider_account_link_id: link.id,
    provider: link.provider,
    provider_environment: link.provider_environment,
    provider_token_identifier: input.providerTokenIdentifier,
    network: input.network,
    network_token_identifier: input.networkTokenIdentifier,
    name: meta.name,
    symbol: meta.symbol,
    decimals: meta.decimals,
    base_currency: meta.baseCurrency,
    issuance_status: path.first,
    grid_operations_status: 'NOT_ENABLED',
    supply: 0,
    mints_in_flight: 0,
    burns_in_flight: 0,
    created_at: u.at,
    updated_at: u.at,
  };
  // A concurrent registration of the same token may have won past the read above.
  if (!(await insertStablecoin(u.trx, row))) {
    const winner = await findStablecoinByToken(
      u.trx,
      u.platform.id,
      row.provider_token_identifier,
      row.network,
      row.network_token_identifier,
    );
    throw errs.alreadyRegistered(winner?.id);
  }
  await u.schedule(JOB_STABLECOIN_ISSUANCE, { stablecoinId: row.id, from: row.issuance_status }, path.delayMs);
  return stablecoinToWire(row);
}

/** The provider's next issuance step for a stablecoin (a no-op when it has moved on since the job was scheduled). */
export const issuanceJob: JobHandler = async (u, job) => {
  const p = JSON.parse(job.payload) as { stablecoinId: string; from: IssuanceStatus };
  const coin = await findStablecoin(u.trx, u.platform.id, p.stablecoinId, { forUpdate: true });
  if (!coin || coin.issuance_status !== p.from) return;
  const next = nextIssuance(p.from, coin.provider_token_identifier, isSandbox(u.platform));
  if (!next) return;
  if (!(await advanceIssuance(u.trx, u.platform.id, coin.id, p.from, next.to, u.at))) return;
  if (next.delayMs !== undefined) await u.schedule(JOB_STABLECOIN_ISSUANCE, { stablecoinId: coin.id, from: next.to }, next.delayMs);
};

/** GET /stablecoins/{id}. */
export async function getStablecoin(ctx: AppContext, platform: PlatformRow, id: string): Promise<StablecoinWire> {
  const row = await findStablecoin(ctx.db, platform.id, id);
  if (!row) throw errs.stablecoinNotFound(id);
  return stablecoinToWire(row);
}

/** GET /stablecoins: newest first. */
export async function listStablecoinPage(
  ctx: AppContext,
  platform: PlatformRow,
  f: StablecoinFilter,
  page: PageRequest,
): Promise<Page<StablecoinWire>> {
  const { rows, totalCount } = await listStablecoins(ctx.db, platform.id, f, page.limit, page.afterId);
  return pageOf(rows, page.limit, totalCount, stablecoinToWire);
}

export function stablecoinToWire(row: StablecoinRow): StablecoinWire {
  return {
    id: row.id,
    name: row.name,
    symbol: row.symbol,
    baseCurrency: row.base_currency,
    network: row.network as 'SPARK',
    decimals: row.decimals,
    issuanceStatus: row.issuance_status,
    gridOperationsStatus: row.grid_operations_status,
    networkTokenIdentifier: row.network_token_identifier,
    provider: row.provider as 'BRALE',
    stablecoinProviderAccountId: row.provider_account_link_id,
    providerEnvironment: row.provider_environment as 'SANDBOX' | 'PRODUCTION',
    providerTokenIdentifier: row.provider_token_identifier,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
