/**
 * Mint and burn operations of a registered stablecoin (provider-backed; the simulated provider's
 * timeline is in operation-flow.ts and stablecoins.rules.ts).
 *
 * Statuses (sandbox timings on the platform's clock; COMPLETED, FAILED and EXPIRED are final):
 *   WIRE mint, EXTERNAL_ACCOUNT burn: PENDING_FUNDING (fundingInstructions, expiresAt = +7 days)
 *     ──funds arrive, 10 s──▶ PENDING_PROVIDER ──5 s──▶ PROCESSING ──5 s──▶ COMPLETED
 *   ACH_DEBIT / SAME_DAY_ACH_DEBIT mint: CREATED ──5 s──▶ PENDING_PROVIDER ──5 s──▶ PROCESSING ──5 s──▶ COMPLETED
 *   PROVIDER_INTERNAL_BALANCE burn: PENDING_PROVIDER ──5 s──▶ PROCESSING ──5 s──▶ COMPLETED
 * Sandbox, by the amount's cents: 02 ends FAILED (PROVIDER_TRANSFER_FAILED) instead of COMPLETED;
 * 03 is never funded (an operation awaiting funds turns EXPIRED at expiresAt); 05 is a 503 at
 * creation with nothing written.
 *
 * Checks, in order: the stablecoin (404), the amount rule (400 amount), reserved source types (400
 * on the type), the referenced accounts (404 when not the platform's; 400 when unsuitable), the
 * stablecoin's link (400 INVALID / REVOKED), issuanceStatus PROVISIONED (409), the provider (503),
 * then the supply: a burn may take at most the outstanding supply less the burns in flight (409).
 */
import type { AppContext } from '../../context.ts';
import { pageOf, type Page, type PageRequest } from '../../lib/paging.ts';
import { iso } from '../../lib/time.ts';
import type { ExternalAccountRow, PlatformRow } from '../../store/schema.ts';
import type { Unit } from '../../unit.ts';
import { findExternalAccount } from '../external-accounts/external-accounts.repo.ts';
import { FIAT_VARIANTS } from '../external-accounts/fiat-variants.ts';
import { findInternalAccount } from '../internal-accounts/internal-accounts.repo.ts';
import { isSandbox } from '../platforms/platform-settings.ts';
import { scheduleOperation } from './operation-flow.ts';
import type {
  StablecoinBurnRequest,
  StablecoinMintRequest,
  StablecoinOperationFilter,
  StablecoinOperationWire,
} from './operations.schemas.ts';
import { requireUsable } from './provider-accounts.service.ts';
import { stablecoinErrors as errs } from './stablecoins.errors.ts';
import { findLink, findOperation, findStablecoin, insertOperation, listOperations, reserveBurn, reserveMint } from './stablecoins.repo.ts';
import {
  checkAmount,
  depositInstructions,
  estimatedDelivery,
  flowOf,
  FUNDING_WINDOW_MS,
  INITIAL_STATUS,
  PROVIDER_STATUS,
  scenarioOf,
  wireInstructions,
  type CheckedAmount,
} from './stablecoins.rules.ts';
import type { OperationRow, StablecoinRow } from './stablecoins.tables.ts';

const BANK_TYPES: ReadonlySet<string> = new Set(FIAT_VARIANTS.map((v) => v.accountType));

/** POST /stablecoins/{stablecoinId}/mints. */
export async function createMint(u: Unit, stablecoinId: string, input: StablecoinMintRequest): Promise<StablecoinOperationWire> {
  const coin = await requireStablecoin(u, stablecoinId);
  const amount = amountOf(input.amount, coin);
  const source = input.fundingSource;
  if (source.type === 'GRID_INTERNAL_ACCOUNT' || source.type === 'PROVIDER_INTERNAL_BALANCE') {
    throw errs.reservedType('fundingSource.type', source.type);
  }
  if (source.type !== 'WIRE') {
    await requireBankAccount(u, 'fundingSource.externalAccountId', source.externalAccountId, coin.base_currency, 'US_ACCOUNT');
  }
  await requireMintDestination(u, input.destination.accountId, coin);
  const link = await requireReady(u, coin);
  const scenario = scenarioOf(amount.cents, isSandbox(u.platform));
  if (scenario === 'UNAVAILABLE') throw errs.providerUnavailable();
  if (!(await reserveMint(u.trx, u.platform.id, coin.id, amount.amount))) throw errs.supplyLimit();

  const id = u.deps.ids.next('StablecoinOperation');
  const awaitsFunds = flowOf(source.type) === 'FUNDING';
  const row: OperationRow = {
    ...common(u, id, coin, link, amount, scenario, input.description),
    operation_type: 'MINT',
    status: INITIAL_STATUS[flowOf(source.type)],
    source_type: source.type,
    source_external_account_id: source.type === 'WIRE' ? null : source.externalAccountId,
    destination_account_id: input.destination.accountId,
    destination_rail: null,
    funding_instructions: awaitsFunds ? JSON.stringify(wireInstructions(id, amount.cents, coin.base_currency)) : null,
    expires_at: awaitsFunds ? iso(u.nowMs + FUNDING_WINDOW_MS) : null,
  };
  await insertOperation(u.trx, row);
  await scheduleOperation(u, row);
  return operationToWire(row);
}

/** POST /stablecoins/{stablecoinId}/burns. */
export async function createBurn(u: Unit, stablecoinId: string, input: StablecoinBurnRequest): Promise<StablecoinOperationWire> {
  const coin = await requireStablecoin(u, stablecoinId);
  const amount = amountOf(input.amount, coin);
  const source = input.source;
  if (source.type === 'GRID_INTERNAL_ACCOUNT') throw errs.reservedType('source.type', source.type);
  const rail = input.destination.rail;
  await requireBankAccount(
    u,
    'destination.externalAccountId',
    input.destination.externalAccountId,
    coin.base_currency,
    rail === 'WIRE' ? undefined : 'US_ACCOUNT',
  );
  const link = await requireReady(u, coin);
  const sandbox = isSandbox(u.platform);
  const scenario = scenarioOf(amount.cents, sandbox);
  if (scenario === 'UNAVAILABLE') throw errs.providerUnavailable();
  if (!(await reserveBurn(u.trx, u.platform.id, coin.id, amount.amount))) {
    const now = await findStablecoin(u.trx, u.platform.id, coin.id);
    const supply = Number(now?.supply ?? 0);
    throw errs.burnExceedsSupply(amount.amount, Math.max(0, supply - Number(now?.burns_in_flight ?? 0)), supply);
  }

  const id = u.deps.ids.next('StablecoinOperation');
  const awaitsFunds = flowOf(source.type) === 'FUNDING';
  const row: OperationRow = {
    ...common(u, id, coin, link, amount, scenario, input.description),
    operation_type: 'BURN',
    status: INITIAL_STATUS[flowOf(source.type)],
    source_type: source.type,
    source_external_account_id: null,
    destination_account_id: input.destination.externalAccountId,
    destination_rail: rail,
    funding_instructions: awaitsFunds ? JSON.stringify(depositInstructions(id, coin.symbol, sandbox)) : null,
    expires_at: awaitsFunds ? iso(u.nowMs + FUNDING_WINDOW_MS) : null,
  };
  await insertOperation(u.trx, row);
  await scheduleOperation(u, row);
  return operationToWire(row);
}

/** GET /stablecoin-operations/{id}. */
export async function getOperation(ctx: AppContext, platform: PlatformRow, id: string): Promise<StablecoinOperationWire> {
  const row = await findOperation(ctx.db, platform.id, id);
  if (!row) throw errs.operationNotFound(id);
  return operationToWire(row);
}

/** GET /stablecoins/{id}/operations: most recent first. */
export async function listOperationPage(
  ctx: AppContext,
  platform: PlatformRow,
  stablecoinId: string,
  f: StablecoinOperationFilter,
  page: PageRequest,
): Promise<Page<StablecoinOperationWire>> {
  if (!(await findStablecoin(ctx.db, platform.id, stablecoinId))) throw errs.stablecoinNotFound(stablecoinId);
  const { rows, totalCount } = await listOperations(ctx.db, platform.id, stablecoinId, f.operationType, page.limit, page.afterId);
  return pageOf(rows, page.limit, totalCount, operationToWire);
}

export function operationToWire(row: OperationRow): StablecoinOperationWire {
  const w: StablecoinOperationWire = {
    id: row.id,
    stablecoinId: row.stablecoin_id,
    operationType: row.operation_type,
    status: row.status,
    amount: String(row.amount),
    provider: row.provider as 'BRALE',
    providerEnvironment: row.provider_environment as 'SANDBOX' | 'PRODUCTION',
    stablecoinProviderAccountId: row.provider_account_link_id,
    source: { type: row.source_type as NonNullable<StablecoinOperationWire['source']>['type'] },
    destination: { accountId: row.destination_account_id },
    providerStatus: PROVIDER_STATUS[row.status],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.source_external_account_id !== null) w.source!.externalAccountId = row.source_external_account_id;
  if (row.destination_rail !== null) {
    w.destination!.rail = row.destination_rail;
    w.estimatedDelivery = estimatedDelivery(row.destination_rail, Number(row.fiat_amount), row.base_currency);
  }
  if (row.funding_instructions !== null)
    w.fundingInstructions = JSON.parse(row.funding_instructions) as StablecoinOperationWire['fundingInstructions'];
  if (row.expires_at !== null) w.expiresAt = row.expires_at;
  if (row.failure_reason !== null) w.failureReason = row.failure_reason;
  if (row.description !== null) w.description = row.description;
  return w;
}

// ── helpers ───────────────────────────────────────────────────────────────────────────────────

async function requireStablecoin(u: Unit, id: string): Promise<StablecoinRow> {
  const coin = await findStablecoin(u.trx, u.platform.id, id);
  if (!coin) throw errs.stablecoinNotFound(id);
  return coin;
}

function amountOf(text: string, coin: StablecoinRow): CheckedAmount {
  const checked = checkAmount(text, coin.decimals);
  if ('problem' in checked) throw errs.amount(checked.problem);
  return checked;
}

/** The stablecoin's link, ACTIVE (400 otherwise), and the stablecoin PROVISIONED (409 otherwise). */
async function requireReady(u: Unit, coin: StablecoinRow) {
  const link = await findLink(u.trx, u.platform.id, coin.provider_account_link_id);
  if (!link) throw new Error(`stablecoin ${coin.id} names a link that does not exist`);
  requireUsable(link);
  if (coin.issuance_status !== 'PROVISIONED') throw errs.notProvisioned(coin.id, coin.issuance_status);
  return link;
}

/** An active bank account of the platform or its customers in `currency` (and of `type` when given). */
async function requireBankAccount(
  u: Unit,
  field: string,
  id: string,
  currency: string,
  type: 'US_ACCOUNT' | undefined,
): Promise<ExternalAccountRow> {
  const row = await findExternalAccount(u.trx, u.platform.id, id);
  if (!row) throw errs.accountNotFound(id);
  if (!BANK_TYPES.has(row.account_type)) throw errs.account(field, `is a ${row.account_type} account: a bank account is needed`);
  if (type !== undefined && row.account_type !== type) throw errs.account(field, `is a ${row.account_type}: this rail needs a ${type}`);
  if (row.currency !== currency) throw errs.account(field, `holds ${row.currency}: the stablecoin is backed by ${currency}`);
  if (row.status !== 'ACTIVE') throw errs.account(field, `is ${row.status}: it must be ACTIVE`);
  return row;
}

/** A mint's destination: an active LAYER2_WALLET external account of the platform or its customers. */
async function requireMintDestination(u: Unit, id: string, coin: StablecoinRow): Promise<void> {
  const field = 'destination.accountId';
  if (id.startsWith('InternalAccount:')) {
    const account = await findInternalAccount(u.trx, u.platform.id, id);
    if (!account) throw errs.accountNotFound(id);
    throw errs.account(
      field,
      `holds ${account.currency}: an internal account receiving a mint must hold ${coin.symbol}, which none does while the stablecoin's gridOperationsStatus is ${coin.grid_operations_status}`,
    );
  }
  if (!id.startsWith('ExternalAccount:')) throw errs.account(field, 'must be an ExternalAccount: or InternalAccount: id');
  const row = await findExternalAccount(u.trx, u.platform.id, id);
  if (!row) throw errs.accountNotFound(id);
  if (row.account_type !== 'LAYER2_WALLET')
    throw errs.account(field, `is a ${row.account_type}: mints go to a LAYER2_WALLET (Spark) account`);
  if (row.status !== 'ACTIVE') throw errs.account(field, `is ${row.status}: it must be ACTIVE`);
}

function common(
  u: Unit,
  id: string,
  coin: StablecoinRow,
  link: { id: string; provider: string; provider_environment: string },
  amount: CheckedAmount,
  scenario: string,
  description: string | undefined,
) {
  return {
    id,
    platform_id: u.platform.id,
    stablecoin_id: coin.id,
    amount: amount.amount,
    fiat_amount: amount.cents,
    base_currency: coin.base_currency,
    provider_account_link_id: link.id,
    provider: link.provider,
    provider_environment: link.provider_environment,
    scenario,
    failure_reason: null,
    description: description ?? null,
    created_at: u.at,
    updated_at: u.at,
  };
}
