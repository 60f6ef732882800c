/**
 * Stablecoin provider account links: a platform's API credentials at its provider (only BRALE),
 * checked by the simulated provider (stablecoins.rules.ts) and kept with the secret sealed.
 *
 * State machine:
 *   (link) ──credentials accepted──▶ ACTIVE        (credentials refused: 400, nothing stored)
 *   ACTIVE ──provider revokes the access──▶ REVOKED (sandbox: apiClientId ending 003, 60 s later)
 *   ACTIVE ──credentials stop working──▶ INVALID    (sandbox: apiClientId ending 004, 60 s later)
 *   INVALID / REVOKED ──linked again (new credentials)──▶ ACTIVE (same link id)
 * Linking an account whose link is ACTIVE is a 409.
 *
 * - `providerEnvironment` is the platform's environment; `providerAccountId`, when omitted, is the
 *   one account the credentials expose (derived from the client id; 007 exposes several: 400).
 * - The secret is sealed with the store's SecretBox under its row and never leaves the store.
 */
import type { AppContext } from '../../context.ts';
import type { JobHandler } from '../../jobs/jobs.ts';
import { pageOf, type Page, type PageRequest } from '../../lib/paging.ts';
import { SECRET_COLUMNS, secretRef } from '../../store/secret-box.ts';
import type { PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { stablecoinErrors as errs } from './stablecoins.errors.ts';
import { findLink, findLinkByAccount, insertLink, linksOf, listLinks, updateLink } from './stablecoins.repo.ts';
import { LINK_LAPSE_MS, providerAccountIdFor, verifyCredentials } from './stablecoins.rules.ts';
import type {
  StablecoinProviderAccountFilter,
  StablecoinProviderAccountLink,
  StablecoinProviderAccountWire,
} from './stablecoins.schemas.ts';
import type { ProviderAccountRow, ProviderAccountStatus } from './stablecoins.tables.ts';

export const JOB_STABLECOIN_LINK_LAPSE = 'STABLECOIN_LINK_LAPSE';

export function environmentOf(platform: PlatformRow): 'SANDBOX' | 'PRODUCTION' {
  return isSandbox(platform) ? 'SANDBOX' : 'PRODUCTION';
}

/** POST /stablecoin-provider-accounts: an ACTIVE link (a new one, or a lapsed one linked again). */
export async function linkProviderAccount(u: Unit, input: StablecoinProviderAccountLink): Promise<StablecoinProviderAccountWire> {
  const verdict = verifyCredentials(input.apiClientId, isSandbox(u.platform));
  if (verdict.kind === 'REFUSED') throw errs.credentialsRefused();
  if (input.providerAccountId === undefined && verdict.severalAccounts) throw errs.severalProviderAccounts();
  const providerAccountId = input.providerAccountId ?? providerAccountIdFor(input.apiClientId);
  const environment = environmentOf(u.platform);

  const existing = await findLinkByAccount(u.trx, u.platform.id, input.provider, environment, providerAccountId, { forUpdate: true });
  let row: ProviderAccountRow;
  if (existing) {
    if (existing.status === 'ACTIVE') throw errs.linkExists(existing.id);
    row = {
      ...existing,
      status: 'ACTIVE',
      api_client_id: input.apiClientId,
      api_client_secret: sealSecret(u, existing.id, input.apiClientSecret),
      last_verified_at: u.at,
      updated_at: u.at,
    };
    const { id: _id, platform_id: _p, created_at: _c, ...set } = row;
    if (!(await updateLink(u.trx, u.platform.id, existing.id, set, { status: existing.status }))) throw errs.linkExists(existing.id);
  } else {
    const id = u.deps.ids.next('StablecoinProviderAccount');
    row = {
      id,
      platform_id: u.platform.id,
      provider: input.provider,
      provider_account_id: providerAccountId,
      provider_environment: environment,
      status: 'ACTIVE',
      api_client_id: input.apiClientId,
      api_client_secret: sealSecret(u, id, input.apiClientSecret),
      last_verified_at: u.at,
      created_at: u.at,
      updated_at: u.at,
    };
    if (!(await insertLink(u.trx, row))) {
      // A concurrent link of the same account won past the read above.
      const winner = await findLinkByAccount(u.trx, u.platform.id, input.provider, environment, providerAccountId);
      throw errs.linkExists(winner?.id ?? 'another request');
    }
  }
  if (verdict.lapsesTo) {
    await u.schedule(JOB_STABLECOIN_LINK_LAPSE, { linkId: row.id, to: verdict.lapsesTo, verifiedAt: row.last_verified_at }, LINK_LAPSE_MS);
  }
  return linkToWire(row);
}

function sealSecret(u: Unit, linkId: string, secret: string): string {
  return u.app.secrets.seal(secret, secretRef(SECRET_COLUMNS.stablecoinProviderSecret, linkId));
}

/** The provider's side of a sandbox link lapsing: ACTIVE → REVOKED or INVALID, unless the link was made again since. */
export const linkLapseJob: JobHandler = async (u, job) => {
  const p = JSON.parse(job.payload) as { linkId: string; to: Exclude<ProviderAccountStatus, 'ACTIVE'>; verifiedAt: string };
  await updateLink(u.trx, u.platform.id, p.linkId, { status: p.to, updated_at: u.at }, { status: 'ACTIVE', lastVerifiedAt: p.verifiedAt });
};

/** GET /stablecoin-provider-accounts/{id}. */
export async function getProviderAccount(ctx: AppContext, platform: PlatformRow, id: string): Promise<StablecoinProviderAccountWire> {
  const row = await findLink(ctx.db, platform.id, id);
  if (!row) throw errs.linkNotFound(id);
  return linkToWire(row);
}

/** GET /stablecoin-provider-accounts: newest first. */
export async function listProviderAccounts(
  ctx: AppContext,
  platform: PlatformRow,
  f: StablecoinProviderAccountFilter,
  page: PageRequest,
): Promise<Page<StablecoinProviderAccountWire>> {
  const { rows, totalCount } = await listLinks(ctx.db, platform.id, f, page.limit, page.afterId);
  return pageOf(rows, page.limit, totalCount, linkToWire);
}

/**
 * The link a registration uses: the one named (404 unknown, 400 INVALID/REVOKED), or, when none is
 * named, the platform's one ACTIVE link of the provider in its environment (400 SELECTION_REQUIRED
 * with several; with none, the newest link's own error, or 404 when there is no link at all).
 */
export async function resolveLink(u: Unit, provider: string, id: string | undefined): Promise<ProviderAccountRow> {
  if (id !== undefined) {
    const row = await findLink(u.trx, u.platform.id, id);
    if (!row) throw errs.linkNotFound(id);
    return requireUsable(row);
  }
  const links = await linksOf(u.trx, u.platform.id, provider, environmentOf(u.platform), 1000);
  const active = links.filter((l) => l.status === 'ACTIVE');
  if (active.length === 1) return active[0]!;
  if (active.length > 1) throw errs.selectionRequired(active.map((l) => l.id));
  if (links.length > 0) throw errs.linkUnusable(links[0]!);
  throw errs.linkNotFound();
}

/** The link itself when ACTIVE; the 400 of its status otherwise. */
export function requireUsable(row: ProviderAccountRow): ProviderAccountRow {
  if (row.status !== 'ACTIVE') throw errs.linkUnusable(row);
  return row;
}

export function linkToWire(row: ProviderAccountRow): StablecoinProviderAccountWire {
  return {
    id: row.id,
    provider: row.provider as 'BRALE',
    providerAccountId: row.provider_account_id,
    providerEnvironment: row.provider_environment as 'SANDBOX' | 'PRODUCTION',
    status: row.status,
    lastVerifiedAt: row.last_verified_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
