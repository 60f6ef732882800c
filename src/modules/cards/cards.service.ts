/**
 * Cards: issue (with provisioning on the job runner), read, list, update (the live state machine,
 * funding sources, the per-transaction limit). Reveals: card-reveal.service.ts; money: the
 * simulations (card-simulations.service.ts). Rules and decisions: docs/cards.md.
 *
 * State machine (cards.rules.ts `stateChange`):
 *   POST /cards ──▶ PROCESSING ──job──▶ ACTIVE ⇄ FROZEN (PATCH)     ACTIVE | FROZEN ──PATCH──▶ CLOSED (CLOSED_BY_PLATFORM)
 *                             └─job (002)──▶ CLOSED (ISSUER_REJECTED)
 * Every change of state emits CARD.STATE_CHANGE, every PATCH carrying fundingSources
 * CARD.FUNDING_SOURCE_CHANGE, both with the card as GET returns it.
 */
import type { AppContext } from '../../context.ts';
import { errors, type FieldError } from '../../http/errors.ts';
import type { JobHandler } from '../../jobs/jobs.ts';
import { type Page, type PageRequest, pageOf } from '../../lib/paging.ts';
import type { InternalAccountRow, PlatformRow } from '../../store/schema.ts';
import { SECRET_COLUMNS, secretRef } from '../../store/secret-box.ts';
import type { Unit } from '../../unit.ts';
import { requireCustomer } from '../customers/customers.service.ts';
import { cardErrors } from './cards.errors.ts';
import {
  findCard,
  findInternalAccounts,
  insertCard,
  isPlatformCardIdViolation,
  listCards as listCardRows,
  platformCardIdInUse,
  replaceCardSources,
  transitionCard,
  updateCard,
} from './cards.repo.ts';
import {
  brandFor,
  CARD_ELIGIBLE_CURRENCIES,
  expiryAt,
  fundingSourceMagic,
  newCvv,
  newPan,
  provisioningFor,
  stateChange,
} from './cards.rules.ts';
import type { CardCreate, CardListQueryT, CardUpdate, CardWire } from './cards.schemas.ts';
import type { CardRow, CardsTable } from './cards.tables.ts';

export const JOB_CARD_PROVISION = 'CARD_PROVISION';

export function cardToWire(row: CardRow): CardWire {
  return {
    id: row.id,
    cardholderId: row.cardholder_id,
    platformCardId: row.platform_card_id,
    state: row.state,
    stateReason: row.state_reason,
    ...(row.brand !== null ? { brand: row.brand } : {}),
    form: row.form,
    ...(row.last4 !== null ? { last4: row.last4 } : {}),
    ...(row.exp_month !== null ? { expMonth: Number(row.exp_month) } : {}),
    ...(row.exp_year !== null ? { expYear: Number(row.exp_year) } : {}),
    fundingSources: JSON.parse(row.funding_sources) as string[],
    maxSpendPerTransaction: row.max_spend_per_transaction === null ? null : Number(row.max_spend_per_transaction),
    currency: row.currency,
    processorRef: row.processor_ref,
    issuerRef: row.issuer_ref,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

// ── Issue ─────────────────────────────────────────────────────────────────────────────────────

/** POST /cards: a PROCESSING card; provisioning runs as a job on the platform's clock. */
export async function createCard(u: Unit, input: CardCreate): Promise<CardWire> {
  const holder = await requireCustomer(u.trx, u.platform.id, input.cardholderId);
  const status = (holder.customer_type === 'BUSINESS' ? holder.kyb_status : holder.kyc_status) ?? 'UNVERIFIED';
  if (status !== 'APPROVED') throw cardErrors.kycNotApproved(holder.id, status);
  if (input.threeDSecurePassword !== undefined) throw cardErrors.noThreeDSecurePassword();
  const currency = await checkFundingSources(u, holder.id, input.fundingSources, undefined);

  const id = u.deps.ids.next('Card');
  const uuid = id.slice('Card:'.length);
  if (input.platformCardId !== undefined && (await platformCardIdInUse(u.trx, u.platform.id, input.platformCardId))) {
    throw cardErrors.platformCardIdTaken(input.platformCardId);
  }
  const row: CardRow = {
    id,
    platform_id: u.platform.id,
    cardholder_id: holder.id,
    platform_card_id: input.platformCardId ?? uuid,
    state: 'PROCESSING',
    state_reason: null,
    brand: null,
    form: input.form,
    last4: null,
    exp_month: null,
    exp_year: null,
    pan: null,
    cvv: null,
    funding_sources: JSON.stringify(input.fundingSources),
    max_spend_per_transaction: input.maxSpendPerTransaction ?? null,
    currency,
    processor_ref: `card_${uuid.replace(/-/g, '').slice(-8)}`,
    issuer_ref: `corridor_card_${uuid.replace(/-/g, '').slice(-12, -4)}`,
    created_at: u.at,
    updated_at: u.at,
  };
  try {
    await insertCard(u.trx, row);
  } catch (err) {
    if (isPlatformCardIdViolation(err)) throw cardErrors.platformCardIdTaken(row.platform_card_id);
    throw err;
  }
  await replaceCardSources(u.trx, u.platform.id, id, input.fundingSources);
  // The sandbox's issuance suffixes: of platformCardId, or of cardholderId when none was given.
  const provisioning = provisioningFor(input.platformCardId ?? holder.id);
  if (provisioning.kind !== 'NEVER') {
    await u.schedule(JOB_CARD_PROVISION, { cardId: id, outcome: provisioning.kind }, provisioning.delayMs);
  }
  return cardToWire(row);
}

/**
 * Checks a card's funding sources: distinct ids of the cardholder's own ACTIVE internal accounts,
 * all in one card-eligible currency (`currency` when the card has one already), none refused by the
 * sandbox's magic suffixes. Returns that currency; every problem found is one entry of a 400
 * FUNDING_SOURCE_INELIGIBLE (a repeated id is a plain INVALID_INPUT).
 */
async function checkFundingSources(u: Unit, cardholderId: string, ids: readonly string[], currency: string | undefined): Promise<string> {
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) throw errors.invalidField(`fundingSources.${i}`, 'appears more than once');
    seen.add(id);
  });
  const byId = new Map((await findInternalAccounts(u.trx, u.platform.id, ids)).map((a) => [a.id, a]));
  const problems: FieldError[] = [];
  let cardCurrency = currency;
  ids.forEach((id, i) => {
    const account = byId.get(id);
    let message = sourceProblem(id, account, cardholderId);
    if (message === undefined && account) {
      cardCurrency ??= account.currency;
      if (account.currency !== cardCurrency)
        message = `${id} is in ${account.currency}; every funding source of the card is in ${cardCurrency}`;
    }
    if (message !== undefined) problems.push({ field: `fundingSources.${i}`, message });
  });
  if (problems.length > 0 || cardCurrency === undefined) throw cardErrors.ineligible(problems);
  return cardCurrency;
}

/** Why one account cannot fund a card of `cardholderId`, whatever the card's currency, if it cannot. */
function sourceProblem(id: string, account: InternalAccountRow | undefined, cardholderId: string): string | undefined {
  if (!account || account.customer_id !== cardholderId) return `${id} is not an internal account of the cardholder`;
  if (account.status !== 'ACTIVE') return `${id} is ${account.status}, not ACTIVE`;
  if (!CARD_ELIGIBLE_CURRENCIES.has(account.currency)) {
    return `${id} is in ${account.currency}; cards are funded in ${[...CARD_ELIGIBLE_CURRENCIES].join(' or ')}`;
  }
  return fundingSourceMagic(id);
}

/** Job: the issuer provisioned the card (ACTIVE, with its number) or rejected it (CLOSED, ISSUER_REJECTED). */
export const provisionCardJob: JobHandler = async (u, job) => {
  const { cardId, outcome } = JSON.parse(job.payload) as { cardId: string; outcome: 'ACTIVATE' | 'REJECT' };
  const card = await findCard(u.trx, u.platform.id, cardId, { forUpdate: true });
  if (card?.state !== 'PROCESSING') return; // gone with a reset, or provisioned already
  let set: Partial<CardRow>;
  if (outcome === 'REJECT') {
    set = { state: 'CLOSED', state_reason: 'ISSUER_REJECTED', updated_at: u.at };
  } else {
    const brand = brandFor(card.id);
    const pan = newPan(brand, u.deps.rng);
    const { expMonth, expYear } = expiryAt(u.nowMs);
    set = {
      state: 'ACTIVE',
      brand,
      last4: pan.slice(-4),
      exp_month: expMonth,
      exp_year: expYear,
      pan: u.app.secrets.seal(pan, secretRef(SECRET_COLUMNS.cardPan, card.id)),
      // The CVV is a secret (shown once, on the reveal page, and in no API answer): never from the
      // seeded stream, which anyone who knows or tries a CORRIDOR_SEED could replay.
      cvv: u.app.secrets.seal(newCvv(u.deps.secretRng), secretRef(SECRET_COLUMNS.cardCvv, card.id)),
      updated_at: u.at,
    };
  }
  if (!(await transitionCard(u.trx, u.platform.id, card.id, 'PROCESSING', set))) return;
  u.emit('CARD.STATE_CHANGE', card.id, cardToWire({ ...card, ...set }));
};

// ── Read ──────────────────────────────────────────────────────────────────────────────────────

export async function getCard(ctx: AppContext, platform: PlatformRow, id: string): Promise<CardWire> {
  const row = await findCard(ctx.db, platform.id, id);
  if (!row) throw cardErrors.notFound(id);
  return cardToWire(row);
}

export async function listCards(ctx: AppContext, platform: PlatformRow, q: CardListQueryT, page: PageRequest): Promise<Page<CardWire>> {
  const { rows, totalCount } = await listCardRows(
    ctx.db,
    platform.id,
    { cardholderId: q.cardholderId, accountId: q.accountId, platformCardId: q.platformCardId, state: q.state },
    { limit: page.limit, afterId: page.afterId, order: q.sortOrder ?? 'desc' },
  );
  return pageOf(rows, page.limit, totalCount, cardToWire);
}

// ── Update ────────────────────────────────────────────────────────────────────────────────────

/**
 * PATCH /cards/{id}. Input first (400: nothing to change, CLOSED with other fields), then the card's
 * state (409), then the funding sources (400 FUNDING_SOURCE_INELIGIBLE). A `state` the card is in
 * already changes nothing. See docs/cards.md for the precedence of the 409s.
 */
export async function updateCardById(u: Unit, id: string, input: CardUpdate): Promise<CardWire> {
  const hasLimit = Object.hasOwn(input, 'maxSpendPerTransaction');
  if (input.state === undefined && input.fundingSources === undefined && !hasLimit) throw cardErrors.nothingToUpdate();
  if (input.state === 'CLOSED') {
    if (input.fundingSources !== undefined) throw cardErrors.closeWithOthers('fundingSources');
    if (hasLimit) throw cardErrors.closeWithOthers('maxSpendPerTransaction');
  }
  const card = await findCard(u.trx, u.platform.id, id, { forUpdate: true });
  if (!card) throw cardErrors.notFound(id);

  const set: Partial<CardsTable> = {};
  if (input.state !== undefined) {
    const change = stateChange(card.state, input.state);
    if (change.kind === 'refuse') throw cardErrors.stateRefused(change.code, card.state, input.state);
    if (change.kind === 'change') {
      set.state = change.to;
      set.state_reason = change.to === 'CLOSED' ? 'CLOSED_BY_PLATFORM' : null;
    }
  } else if (card.state === 'CLOSED') {
    throw cardErrors.notMutable();
  }
  if (input.fundingSources !== undefined) {
    await checkFundingSources(u, card.cardholder_id, input.fundingSources, card.currency);
    set.funding_sources = JSON.stringify(input.fundingSources);
    await replaceCardSources(u.trx, u.platform.id, card.id, input.fundingSources);
  }
  if (hasLimit) set.max_spend_per_transaction = input.maxSpendPerTransaction ?? null;
  if (Object.keys(set).length === 0) return cardToWire(card);

  set.updated_at = u.at;
  await updateCard(u.trx, u.platform.id, card.id, set);
  const wire = cardToWire({ ...card, ...set });
  if (set.state !== undefined) u.emit('CARD.STATE_CHANGE', card.id, wire);
  if (input.fundingSources !== undefined) u.emit('CARD.FUNDING_SOURCE_CHANGE', card.id, wire);
  return wire;
}
