/**
 * The workload's card operations (docs/cards.md; test/cards/ is their executable specification):
 * KYC-approved cardholders whose funded USD accounts fund their cards, cards issued (provisioning on
 * the job runner and the platform's clock), frozen, unfrozen and closed, and the ten sandbox
 * simulations — each answer, each balance, each CardTransaction and each card event predicted by
 * the card model (card-model.ts) before the request goes out.
 *
 * Like the SCA operations, they run after a step's operation on their own seeded stream, and the
 * other operations' pickers leave their customers, accounts and keyed requests alone: adding them
 * left every seed's other operations as they were. Their accounts are in the model, so every
 * balance audit covers them; their ledger entries are audited one by one (`checkLedger`).
 */
import { AuditError, eq, expectError, expectStatus, sleep, type Planned, type Workload } from './driver.ts';
import type { Res, Wire } from './http.ts';
import type { Timer } from './model.ts';
import type { Ops } from './ops.ts';
import { Rng } from './rng.ts';
import {
  brandOf,
  CardModel,
  type CardKind,
  type CardState,
  entryKey,
  isDebit,
  KIND_PATH,
  magicOf,
  type MCard,
  type MCardTx,
  type MHolder,
  PULL_CONFIRM_MS,
  provisioningOf,
  sourceRefused,
  stateDecline,
  VELOCITY_MAX,
} from './card-model.ts';

/** The chance that a step also runs a card operation. */
const CARD_STEP_CHANCE = 0.5;

/** Paths of each operation a run should see: its weight is raised until the run has seen them all. */
const GOALS: Record<string, (string | RegExp)[]> = {
  cardIssue: [
    'card create (provisioning DELAYED) → 201',
    'card create (provisioning NEVER) → 201',
    'card create (provisioning REJECT) → 201',
    'card create (KYC PENDING) → 400 CARDHOLDER_KYC_NOT_APPROVED',
    'card create (platformCardId taken) → 409 CONFLICT',
  ],
  cardPatch: [
    'card patch ACTIVE→FROZEN → 200',
    'card patch FROZEN→ACTIVE → 200',
    /^card patch (ACTIVE|FROZEN)→CLOSED → 200$/,
    'card patch CLOSED→CLOSED → 409 CARD_ALREADY_CLOSED',
    /^card patch (limit|fundingSources) → 409 CARD_NOT_MUTABLE$/,
    'card patch fundingSources → 200',
    'card patch fundingSources → 400 FUNDING_SOURCE_INELIGIBLE',
  ],
  cardClearing: ['card clearing (EXCEPTION) → 202', 'card clearing (post-hoc pull) → 202', 'card clearing (partial) → 202'],
  cardAdvice: [
    'card authorization_advice (below what settled) → 400 INVALID_INPUT',
    'card authorization_advice (up beyond the balance, declined INSUFFICIENT_FUNDS) → 202',
    'card authorization_advice (down) → 202',
  ],
  cardReturn: ['card return (partial) → 202', 'card return (full) → 202'],
  cardReturnReversal: ['card return_reversal (EXCEPTION) → 202', 'card return_reversal (covered) → 202'],
  cardRefusal: [
    'card authorization (unknown card) → 404 REFERENCE_NOT_FOUND',
    'card authorization (EUR) → 400 INVALID_INPUT',
    "card clearing (another card's transaction) → 404 TRANSACTION_NOT_FOUND",
  ],
};
const UNKNOWN_CARD = 'Card:00000000-0000-7000-8000-000000000000';
const UNKNOWN_CUSTOMER = 'Customer:00000000-0000-7000-8000-000000000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const USD = { code: 'USD' };

const MERCHANTS: Record<string, string>[] = [
  { descriptor: 'BLUE BOTTLE COFFEE SF', mcc: '5814', country: 'US' },
  { descriptor: 'CITY GROCERY MARKET', mcc: '5411', country: 'US' },
  { descriptor: 'METRO TRANSIT', mcc: '4111', country: 'US' },
  { descriptor: 'BOOKSHOP ONLINE', mcc: '5942' },
  { descriptor: 'HOTEL LAKESIDE', mcc: '7011', country: 'CH' },
];
/** The descriptor's sandbox suffix ('' = none: decided on the card and its money). */
const DESCRIPTOR_SUFFIXES: [string, number][] = [
  ['', 14],
  ['002', 1],
  ['003', 1],
  ['005', 1.2],
  ['006', 0.8],
];
/** What each descriptor suffix shows once seen. */
const SUFFIX_GOAL: Record<string, string | RegExp> = {
  '002': /^card \w+ \(declined INSUFFICIENT_FUNDS, descriptor …002\) → 202$/,
  '003': /^card \w+ \(declined CARD_PAUSED, descriptor …003\) → 202$/,
  '005': /^card \w+ \(pull delayed\) → 202$/,
  '006': /^card \w+ \(pull fails: EXCEPTION\) → 202$/,
};
const AUTH_KINDS: [CardKind | 'BALANCE_INQUIRY', number][] = [
  ['AUTHORIZATION', 10],
  ['FINANCIAL_AUTHORIZATION', 2.5],
  ['CREDIT_AUTHORIZATION', 1.5],
  ['FINANCIAL_CREDIT_AUTHORIZATION', 1.2],
  ['CREDIT_AUTHORIZATION_ADVICE', 0.8],
  ['BALANCE_INQUIRY', 1.2],
];

function holderBody(n: number, pending: boolean): Record<string, unknown> {
  return {
    customerType: 'INDIVIDUAL',
    platformCustomerId: `workload-card-${n}`,
    // The sandbox's fullName suffix sets kycStatus: none is APPROVED, 001 PENDING.
    fullName: pending ? 'Pending Holder 001' : 'Card Holder',
    birthDate: '1988-07-21',
    nationality: 'US',
    email: `workload-card-${n}@example.com`,
    address: { line1: '500 Howard Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
    currencies: ['USD', 'EUR'],
  };
}

type Expect = { status: number; code?: string; field?: string };

const canonical = (v: unknown) => JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? sortKeys(x) : x));
const sortKeys = (o: object) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

export class CardOps {
  readonly rng: Rng;
  readonly cm: CardModel;
  /** Keyed requests of the card operations (the main `replay` leaves them alone). */
  private readonly plans = new WeakSet<Planned>();
  private readonly touchedCards = new Set<string>();
  private readonly touchedTxs = new Set<string>();
  /** Card money moved since the last ledger audit. */
  private ledgerDirty = false;
  private serial = 0;

  constructor(
    private readonly w: Workload,
    private readonly ops: Ops,
  ) {
    this.rng = new Rng(w.o.seed ^ 0xca2d5);
    this.cm = new CardModel(w.model);
  }

  private get m() {
    return this.w.model;
  }

  /** An account of a cardholder (only the card operations use it). */
  owns(accountId: string): boolean {
    return this.cm.accounts.has(accountId);
  }

  ownsPlan(p: Planned): boolean {
    return this.plans.has(p);
  }

  private seen(feature: string): boolean {
    return this.w.features.has(feature);
  }

  /** A rare path's weight: `boosted` until the run has seen `feature`, `base` after. */
  private until(feature: string, base: number, boosted: number): number {
    return this.seen(feature) ? base : boosted;
  }

  private now(): string {
    return new Date(this.w.now()).toISOString();
  }

  async maybeStep(): Promise<void> {
    if (!this.rng.chance(CARD_STEP_CHANCE)) return;
    // From the state the step's operation left, with what it made due applied.
    await this.w.settle();
    await this.step();
  }

  private async step(): Promise<void> {
    if (!this.cm.holders.some((h) => h.kyc === 'APPROVED')) await this.createHolder(false);
    // Cardholders top their accounts up now and then when they run low.
    const low = this.cm.holders.filter((h) => h.kyc === 'APPROVED' && this.m.account(h.usd).available < 30_000);
    if (low.length > 0 && this.rng.chance(0.5)) await this.fundAccount(this.rng.pick(low).usd, this.rng.int(200_000, 2_000_000));
    const cards = [...this.cm.cards.values()];
    const active = cards.filter((c) => c.state === 'ACTIVE');
    const roomy = this.roomy(active).length;
    const txs = this.calmTxs();
    const ops: [() => Promise<void>, number, string][] = [
      [() => this.issue(), roomy === 0 ? 30 : roomy < 2 ? 4 : cards.length < 5 ? 1.5 : 0.4, 'cardIssue'],
      [() => this.authorize(), active.length > 0 ? 12 : 0.5, 'cardAuthorize'],
      [() => this.clearing(), txs.some((t) => this.cm.open(t)) ? 5 : 0, 'cardClearing'],
      [() => this.advice(), txs.some((t) => this.cm.open(t)) ? 2 : 0, 'cardAdvice'],
      [() => this.ret(), txs.some((t) => t.direction === 'DEBIT' && t.status === 'SETTLED') ? 3 : 0, 'cardReturn'],
      [() => this.reversal(), txs.some((t) => t.status === 'REFUNDED') ? 3 : 0, 'cardReturnReversal'],
      [() => this.patch(), cards.length > 0 ? 2.5 : 0, 'cardPatch'],
      [() => this.fund(), 0.7, 'cardFund'],
      [() => this.velocity(), active.length > 0 ? (this.seen('card velocity limit') ? 0.1 : 1) : 0, 'cardVelocity'],
      [() => this.refusal(), cards.length > 0 ? 0.8 : 0, 'cardRefusal'],
      [() => this.createHolder(false).then(() => undefined), this.cm.holders.length < 3 ? 0.3 : 0, 'cardHolder'],
    ];
    const boost = (name: string) => ((GOALS[name] ?? []).some((g) => !this.seenLike(g)) ? 2 : 1);
    const [run, , name] = this.rng.weighted(ops.filter(([, weight]) => weight > 0).map((o) => [o, o[1] * boost(o[2])] as const));
    this.w.count(name);
    await run();
  }

  private seenLike(g: string | RegExp): boolean {
    return typeof g === 'string' ? this.seen(g) : [...this.w.features].some((f) => g.test(f));
  }

  // ---------------------------------------------------------------------------------------------
  // On a real clock: what the auditor cannot know the order of

  /** Slack for the few requests an operation sends after choosing (a real clock only). */
  private get slack(): number {
    return this.w.deterministic ? 0 : 10_000;
  }

  /** A card timer of `ref` that may fire while an operation runs (or may have, unseen). */
  private near(ref: string): Timer | undefined {
    return this.m.timers.find((t) => t.ref === ref && this.m.effective(t) && !this.w.clearlyBefore(t.dueAt - this.slack));
  }

  private calmCards(): MCard[] {
    return [...this.cm.cards.values()].filter((c) => !this.near(c.id));
  }

  private calmTxs(): MCardTx[] {
    return [...this.cm.txs.values()].filter((t) => !this.near(t.id));
  }

  // ---------------------------------------------------------------------------------------------
  // Cardholders, funding

  /** A new cardholder with a USD and a EUR account (in the model, empty); `pending`: its KYC is PENDING. */
  private async createHolder(pending: boolean): Promise<MHolder> {
    const n = this.cm.holders.length + 1;
    const res = await this.w.api.post('/customers', holderBody(n, pending), { headers: { 'idempotency-key': this.w.nextKey() } });
    this.w.record(`create cardholder ${n}${pending ? ' (KYC PENDING)' : ''} → ${res.status} ${res.body?.id ?? res.body?.code}`);
    expectStatus(res, 201, 'create cardholder');
    eq(`cardholder ${n} kycStatus`, res.body.kycStatus, pending ? 'PENDING' : 'APPROVED');
    const listed = await this.w.listAll(this.w.api, '/customers/internal-accounts', { customerId: res.body.id });
    const by = new Map<string, string>();
    for (const a of listed) {
      eq(`new account ${a.id} balance`, a.balance.amount, 0);
      const currency = a.balance.currency.code as string;
      this.m.accounts.set(a.id, { id: a.id, currency, type: a.type, customerId: res.body.id, available: 0, pending: 0 });
      this.cm.accounts.add(a.id);
      by.set(currency, a.id);
    }
    if (!by.has('USD') || !by.has('EUR'))
      throw new AuditError(`cardholder ${res.body.id} lacks a USD or EUR account: ${JSON.stringify(listed)}`);
    const h: MHolder = {
      id: res.body.id,
      n,
      platformCustomerId: `workload-card-${n}`,
      kyc: pending ? 'PENDING' : 'APPROVED',
      usd: by.get('USD')!,
      eur: by.get('EUR')!,
    };
    this.cm.holders.push(h);
    this.w.features.add(`cardholder${pending ? ' (KYC PENDING)' : ''}`);
    if (!pending) await this.fundAccount(h.usd, this.rng.int(200_000, 3_000_000));
    // A USD account whose (random) id ends in a refusing suffix cannot fund a card (rare): another cardholder.
    if (!pending && sourceRefused(h.usd)) return this.createHolder(false);
    return h;
  }

  private async fundAccount(accountId: string, amount: number): Promise<void> {
    const p = this.ops.planFund(this.m.account(accountId), amount);
    this.plans.add(p);
    await this.w.send(p);
  }

  private async fund(): Promise<void> {
    const h = this.rng.pick(this.cm.holders.filter((x) => x.kyc === 'APPROVED'));
    await this.fundAccount(h.usd, this.rng.int(50_000, 2_000_000));
  }

  // ---------------------------------------------------------------------------------------------
  // Issuing

  /**
   * Why funding sources are refused for a card of `h` (docs/cards.md, "Funding sources"): each
   * entry one `fundingSources.<i>` problem; `currency` is the card's (undefined: the first eligible
   * source's, on create).
   */
  private ineligible(h: MHolder, sources: string[], currency?: string): string[] {
    const fields: string[] = [];
    let cur = currency;
    sources.forEach((id, i) => {
      const a = this.m.accounts.get(id);
      let bad = !a || a.customerId !== h.id || !(a.currency === 'USD' || a.currency === 'USDB') || sourceRefused(id);
      if (!bad && a) {
        cur ??= a.currency;
        bad = a.currency !== cur;
      }
      if (bad) fields.push(`fundingSources.${i}`);
    });
    return fields;
  }

  private async issue(): Promise<void> {
    const holders = this.cm.holders.filter((h) => h.kyc === 'APPROVED');
    const usable = holders.filter((h) => !sourceRefused(h.usd));
    const h = this.rng.pick(usable.length > 0 ? usable : holders);
    const others = holders.filter((x) => x !== h);
    const variant = this.rng.weighted([
      ['normal', 12],
      ['no platformCardId', 1],
      ['platformCardId taken', this.cm.cards.size > 0 ? this.until('card create (platformCardId taken) → 409 CONFLICT', 0.3, 3) : 0],
      ['EUR source', this.until('card create (EUR source) → 400 FUNDING_SOURCE_INELIGIBLE', 0.3, 1.5)],
      ['USD and EUR sources', 0.4],
      ["another holder's account", others.length > 0 ? 0.4 : 0],
      ['KYC PENDING', this.until('card create (KYC PENDING) → 400 CARDHOLDER_KYC_NOT_APPROVED', 0.3, 3)],
      ['unknown cardholder', 0.25],
      ['3-D Secure password', 0.2],
      ['repeated source', 0.2],
    ] as const);
    let holder = h;
    if (variant === 'KYC PENDING') holder = this.cm.holders.find((x) => x.kyc === 'PENDING') ?? (await this.createHolder(true));
    const sources =
      variant === 'EUR source'
        ? [holder.eur]
        : variant === 'USD and EUR sources'
          ? [holder.usd, holder.eur]
          : variant === "another holder's account"
            ? [this.rng.pick(others).usd]
            : variant === 'repeated source'
              ? [holder.usd, holder.usd]
              : [holder.usd];
    // The issuance suffix (…act: activated at once), each likelier until the run has seen it.
    const suffix = this.rng.weighted([
      ['act', 8],
      ['005', this.until('card create (provisioning DELAYED) → 201', 1.5, 3)],
      ['001', this.until('card create (provisioning NEVER) → 201', 1, 3)],
      ['002', this.until('card create (provisioning REJECT) → 201', 1, 3)],
    ] as const);
    this.serial += 1;
    const taken = variant === 'platformCardId taken' ? this.rng.pick([...this.cm.cards.values()]) : undefined;
    const platformCardId = taken ? taken.platformCardId : variant === 'no platformCardId' ? undefined : `wl-card-${this.serial}-${suffix}`;
    const maxSpend = this.rng.chance(0.35) ? this.rng.int(2_000, 60_000) : undefined;
    const body: Record<string, unknown> = {
      cardholderId: variant === 'unknown cardholder' ? UNKNOWN_CUSTOMER : holder.id,
      form: 'VIRTUAL',
      fundingSources: sources,
      ...(platformCardId !== undefined ? { platformCardId } : {}),
      ...(maxSpend !== undefined ? { maxSpendPerTransaction: maxSpend } : {}),
      ...(variant === '3-D Secure password' ? { threeDSecurePassword: 'Secret123' } : {}),
    };
    let expect: Expect;
    const bad = this.ineligible(holder, sources);
    if (variant === 'unknown cardholder') expect = { status: 404, code: 'USER_NOT_FOUND' };
    else if (holder.kyc !== 'APPROVED') expect = { status: 400, code: 'CARDHOLDER_KYC_NOT_APPROVED', field: 'cardholderId' };
    else if (variant === '3-D Secure password') expect = { status: 400, code: 'INVALID_INPUT', field: 'threeDSecurePassword' };
    else if (variant === 'repeated source') expect = { status: 400, code: 'INVALID_INPUT', field: 'fundingSources.1' };
    else if (bad.length > 0) expect = { status: 400, code: 'FUNDING_SOURCE_INELIGIBLE', field: bad[0] };
    else if (platformCardId !== undefined && [...this.cm.cards.values()].some((c) => c.platformCardId === platformCardId))
      expect = { status: 409, code: 'CONFLICT', field: 'platformCardId' };
    else expect = { status: 201 };
    const provisioning = provisioningOf(platformCardId ?? holder.id);
    await this.w.send({
      // (A generated platformCardId is random: the history names its card instead.)
      label: `card create for ${holder.id} (${variant}${taken ? ` of ${taken.id}` : platformCardId ? `, ${platformCardId}` : ''}${maxSpend ? `, limit ${maxSpend}` : ''})`,
      client: this.w.api,
      path: '/cards',
      body,
      key: undefined,
      debits: [],
      feature: `card create${variant === 'normal' ? (provisioning === 'NOW' ? '' : ` (provisioning ${provisioning})`) : ` (${variant})`}`,
      apply: (res) => {
        if (expect.code) return this.expectError(res, expect, 'create card');
        expectStatus(res, 201, 'create card');
        const b = res.body;
        if (typeof b.id !== 'string' || !b.id.startsWith('Card:')) throw new AuditError(`card id ${b.id}`);
        const uuid = (b.id as string).slice('Card:'.length).replace(/-/g, '');
        const at = this.w.deterministic ? this.now() : b.createdAt;
        const c: MCard = {
          id: b.id,
          holder,
          platformCardId: platformCardId ?? (b.id as string).slice('Card:'.length),
          state: 'PROCESSING',
          stateReason: null,
          fundingSources: sources,
          maxSpend: maxSpend ?? null,
          provisioning,
          createdAt: at,
          updatedAt: at,
          activatedAt: null,
          last4: null,
          events: [],
        };
        eq('card processorRef', b.processorRef, `card_${uuid.slice(-8)}`);
        eq('card issuerRef', b.issuerRef, `corridor_card_${uuid.slice(-12, -4)}`);
        this.checkCard(b, c);
        this.cm.issued(c, this.w.timeOf(b.createdAt));
        this.touchedCards.add(c.id);
      },
    });
    // Provisioning due at once runs on the job runner a moment later: see it before going on.
    await this.w.settle();
  }

  // ---------------------------------------------------------------------------------------------
  // PATCH /cards/{id}

  private async patch(): Promise<void> {
    const cards = this.calmCards();
    if (cards.length === 0) return;
    // By state, so that the few CLOSED and PROCESSING cards get their refusals too.
    const stateWeights: Record<CardState, number> = {
      ACTIVE: 4,
      FROZEN: this.until('card patch FROZEN→ACTIVE → 200', 3, 6),
      CLOSED:
        this.seen('card patch CLOSED→CLOSED → 409 CARD_ALREADY_CLOSED') &&
        this.seenLike(/^card patch (limit|fundingSources) → 409 CARD_NOT_MUTABLE$/)
          ? 1
          : 4,
      PROCESSING: 1,
    };
    const state = this.rng.weighted(
      (Object.keys(stateWeights) as CardState[])
        .filter((st) => cards.some((x) => x.state === st))
        .map((st) => [st, stateWeights[st]] as const),
    );
    const c = this.rng.pick(cards.filter((x) => x.state === state));
    const others = this.cm.holders.filter((h) => h.kyc === 'APPROVED' && h !== c.holder);
    const open = [...this.cm.cards.values()].filter((x) => x.state === 'ACTIVE' || x.state === 'FROZEN');
    // Closing is for good: keep a few cards that can authorize.
    const closable = open.length > 2 ? this.until('card patch ACTIVE→CLOSED → 200', 0.7, 1.5) : 0.15;
    const notMutable = this.until('card patch limit → 409 CARD_NOT_MUTABLE', 1, 3);
    const byState: Record<CardState, [string, number][]> = {
      ACTIVE: [
        ['FROZEN', 4],
        ['CLOSED', closable],
        ['ACTIVE', 0.5],
        ['limit', 1.5],
        ['sources', this.until('card patch fundingSources → 200', 1, 3)],
        ['FROZEN with sources', 0.5],
        ['ineligible sources', this.until('card patch fundingSources → 400 FUNDING_SOURCE_INELIGIBLE', 0.5, 2)],
        ['nothing', 0.3],
        ['CLOSED with limit', 0.3],
      ],
      FROZEN: [
        ['ACTIVE', 5],
        ['CLOSED', closable],
        ['FROZEN', 0.4],
        ['limit', 1],
        ['sources', 0.5],
      ],
      CLOSED: [
        ['CLOSED', this.until('card patch CLOSED→CLOSED → 409 CARD_ALREADY_CLOSED', 1, 3)],
        ['ACTIVE', 1],
        ['FROZEN', 0.5],
        ['limit', notMutable],
        ['sources', 0.5],
      ],
      PROCESSING: [
        ['ACTIVE', 1],
        ['FROZEN', 1],
        ['CLOSED', 0.5],
        ['limit', 1],
        ['sources', 0.5],
      ],
    };
    const v = this.rng.weighted(byState[c.state]);
    const limit = this.rng.chance(0.3) ? null : this.rng.int(2_000, 60_000);
    const body: Record<string, unknown> =
      v === 'limit'
        ? { maxSpendPerTransaction: limit }
        : v === 'sources'
          ? { fundingSources: [c.holder.usd] }
          : v === 'FROZEN with sources'
            ? { state: 'FROZEN', fundingSources: [c.holder.usd] }
            : v === 'ineligible sources'
              ? { fundingSources: others.length > 0 && this.rng.chance(0.4) ? [this.rng.pick(others).usd] : [c.holder.usd, c.holder.eur] }
              : v === 'nothing'
                ? {}
                : v === 'CLOSED with limit'
                  ? { state: 'CLOSED', maxSpendPerTransaction: 5_000 }
                  : { state: v };
    await this.sendPatch(c, body);
  }

  /** PATCH /cards/{id}, predicted in the service's order (docs/cards.md, "The card's state"). */
  private async sendPatch(c: MCard, body: Record<string, unknown>): Promise<void> {
    const state = body.state as CardState | undefined;
    const sources = body.fundingSources as string[] | undefined;
    const hasLimit = Object.hasOwn(body, 'maxSpendPerTransaction');
    let expect: Expect = { status: 200 };
    let to: CardState | undefined;
    if (state === undefined && sources === undefined && !hasLimit) expect = { status: 400, code: 'INVALID_INPUT', field: 'state' };
    else if (state === 'CLOSED' && sources !== undefined) expect = { status: 400, code: 'INVALID_INPUT', field: 'fundingSources' };
    else if (state === 'CLOSED' && hasLimit) expect = { status: 400, code: 'INVALID_INPUT', field: 'maxSpendPerTransaction' };
    else if (state !== undefined && c.state === 'CLOSED')
      expect = { status: 409, code: state === 'CLOSED' ? 'CARD_ALREADY_CLOSED' : 'INVALID_STATE_TRANSITION' };
    else if (state !== undefined && c.state === 'PROCESSING') expect = { status: 409, code: 'INVALID_STATE_TRANSITION' };
    else if (state === undefined && c.state === 'CLOSED') expect = { status: 409, code: 'CARD_NOT_MUTABLE' };
    else {
      const bad = sources ? this.ineligible(c.holder, sources, 'USD') : [];
      if (bad.length > 0) expect = { status: 400, code: 'FUNDING_SOURCE_INELIGIBLE', field: bad[0] };
      else if (state !== undefined && state !== c.state) to = state;
    }
    const what = [
      state ? `${c.state}→${state}` : '',
      sources ? 'fundingSources' : '',
      hasLimit ? `limit ${body.maxSpendPerTransaction}` : '',
    ].filter(Boolean);
    const feature = `card patch ${what.length > 0 ? what.join(' ').replace(/limit \S+/, 'limit') : 'nothing'}`;
    const res = await this.w.api.patch(`/cards/${c.id}`, body);
    this.w.record(
      `card patch ${c.id} ${JSON.stringify(body)} → ${res.status}${res.body?.code ? ` ${res.body.code}` : ` ${res.body?.state}`}`,
    );
    this.touchedCards.add(c.id);
    if (expect.code) this.expectError(res, expect, 'PATCH card');
    else {
      expectStatus(res, 200, 'PATCH card');
      const changed = to !== undefined || sources !== undefined || hasLimit;
      if (to !== undefined) {
        c.state = to;
        c.stateReason = to === 'CLOSED' ? 'CLOSED_BY_PLATFORM' : null;
      }
      if (sources) c.fundingSources = [...sources];
      if (hasLimit) c.maxSpend = body.maxSpendPerTransaction as number | null;
      if (changed) c.updatedAt = this.w.deterministic ? this.now() : res.body.updatedAt;
      if (to !== undefined) this.cm.cardEvent(c, 'CARD.STATE_CHANGE');
      if (sources) this.cm.cardEvent(c, 'CARD.FUNDING_SOURCE_CHANGE');
      this.checkCard(res.body, c);
    }
    this.w.features.add(`${feature} → ${res.status}${expect.code ? ` ${expect.code}` : ''}`);
  }

  // ---------------------------------------------------------------------------------------------
  // Authorization-like simulations

  private merchant(): Record<string, string> {
    const base = this.rng.pick(MERCHANTS);
    const suffix = this.rng.weighted(
      DESCRIPTOR_SUFFIXES.map(([x, weight]) => [x, x && !this.seenLike(SUFFIX_GOAL[x]!) ? 4 : weight] as const),
    );
    return suffix ? { ...base, descriptor: `${base.descriptor} #${suffix}` } : { ...base };
  }

  private async authorize(): Promise<void> {
    const cards = this.calmCards();
    if (cards.length === 0) return;
    const active = cards.filter((c) => c.state === 'ACTIVE');
    // Mostly an ACTIVE card; a FROZEN, CLOSED or PROCESSING one for its decline, likelier until the run has seen it.
    const unseen = cards.filter(
      (x) => x.state !== 'ACTIVE' && !this.seenLike(new RegExp(`^card \\w+ \\(declined ${stateDecline(x.state)}\\) → 202$`)),
    );
    // An ACTIVE card with room in its velocity window (the clock may stand still for many steps).
    const roomy = this.roomy(active);
    const c =
      unseen.length > 0 && this.rng.chance(0.4)
        ? this.rng.pick(unseen)
        : roomy.length > 0 && this.rng.chance(0.9)
          ? this.rng.pick(roomy)
          : active.length > 0 && this.rng.chance(0.8)
            ? this.rng.pick(active)
            : this.rng.pick(cards);
    // Each kind likelier until the run has seen it approved.
    const kind = this.rng.weighted(
      AUTH_KINDS.map(
        ([k, weight]) =>
          [k, this.until(`card ${k === 'BALANCE_INQUIRY' ? 'balance_inquiry' : KIND_PATH[k]} → 202`, weight, weight + 3)] as const,
      ),
    );
    if (kind === 'BALANCE_INQUIRY') return this.balanceInquiry(c);
    let merchant = this.merchant();
    // No delayed pull on credits (there is no pull to confirm).
    if (!isDebit(kind) && magicOf(merchant.descriptor!) === 'DELAYED_PULL') merchant = { ...MERCHANTS[0]! };
    const a = this.m.account(c.fundingSources[0]!);
    if (isDebit(kind) && a.available < 20_000 && this.rng.chance(0.8)) await this.fundAccount(a.id, this.rng.int(100_000, 1_000_000));
    // Declined for the limit or the balance, sometimes (not when the descriptor asks for an approval's variant).
    const r = magicOf(merchant.descriptor!) === 'DELAYED_PULL' || magicOf(merchant.descriptor!) === 'PULL_FAILS' ? 1 : this.rng.next();
    let amount: number;
    if (isDebit(kind) && c.maxSpend !== null && r < 0.2) amount = c.maxSpend + this.rng.int(this.rng.chance(0.2) ? 0 : 1, 2_000);
    else if (isDebit(kind) && r < this.until('card authorization (declined INSUFFICIENT_FUNDS) → 202', 0.32, 0.5))
      amount = a.available + this.rng.int(1, 20_000);
    else if (isDebit(kind)) amount = this.rng.int(100, Math.max(100, Math.floor(a.available * 0.25)));
    else amount = this.rng.int(100, 50_000);
    await this.sendAuth(c, kind, amount, merchant);
  }

  /**
   * An authorization-like simulation, its decision predicted (state, descriptor suffix, limit,
   * velocity, funds); approved, the transaction it made is found by its token and must be exactly
   * what the model made. Undefined when declined (or, on a real clock, when the velocity window's
   * edge leaves the decision unknown: not sent).
   */
  private async sendAuth(c: MCard, kind: CardKind, amount: number, merchant: Record<string, string>): Promise<MCardTx | undefined> {
    const decision = this.cm.decide(c, kind, amount, merchant.descriptor!, this.w.now(), this.w.margin);
    if (decision === 'UNKNOWN') return undefined;
    const path = KIND_PATH[kind];
    const magic = magicOf(merchant.descriptor!);
    let feature = `card ${path}`;
    if ('reason' in decision) {
      const bySuffix =
        (decision.reason === 'INSUFFICIENT_FUNDS' && magic === 'DECLINE_FUNDS') ||
        (decision.reason === 'CARD_PAUSED' && magic === 'DECLINE_PAUSED');
      feature += ` (declined ${decision.reason}${bySuffix ? `, descriptor …${merchant.descriptor!.slice(-3)}` : ''})`;
    } else if (magic === 'DELAYED_PULL') feature += ' (pull delayed)';
    else if (magic === 'PULL_FAILS') feature += ' (pull fails: EXCEPTION)';
    let made: MCardTx | undefined;
    await this.w.send({
      label: `card ${path} ${c.id} (${c.state}) ${amount} at "${merchant.descriptor}"`,
      client: this.w.api,
      path: `/sandbox/cards/${c.id}/simulate/${path}`,
      body: { amount, currency: USD, merchant },
      key: undefined,
      debits: [],
      feature,
      apply: async (res) => {
        const token = this.decision(res, 'reason' in decision ? decision.reason : undefined, path);
        if ('reason' in decision) return;
        const w = await this.findByToken(c.holder, token);
        const at = this.w.deterministic ? this.now() : w.createdAt;
        if (this.w.deterministic) this.w.checkStamp(`card transaction ${w.id} createdAt`, w.createdAt);
        made = this.cm.approve({
          id: w.id,
          card: c,
          token,
          kind,
          merchant,
          account: decision.account,
          authorized: amount,
          createdMs: Date.parse(at),
          createdAt: at,
        });
        this.checkTx(w, made);
        this.touchedTxs.add(made.id);
        this.ledgerDirty = true;
      },
    });
    return made;
  }

  private async balanceInquiry(c: MCard): Promise<void> {
    const reason = stateDecline(c.state);
    await this.w.send({
      label: `card balance_inquiry ${c.id} (${c.state})`,
      client: this.w.api,
      path: `/sandbox/cards/${c.id}/simulate/balance_inquiry`,
      body: { merchant: this.rng.pick(MERCHANTS) },
      key: undefined,
      debits: [],
      feature: `card balance_inquiry${reason ? ` (declined ${reason})` : ''}`,
      apply: (res) => void this.decision(res, reason, 'balance_inquiry'),
    });
  }

  /** A 202 with its decision headers as predicted; returns the issuer token. */
  private decision(res: Res, declined: string | undefined, what: string): string {
    expectStatus(res, 202, `card ${what}`);
    const token = res.body?.issuerTransactionToken;
    if (typeof token !== 'string' || !UUID.test(token)) throw new AuditError(`card ${what}: issuerTransactionToken ${token}`);
    eq(`card ${what} Corridor-Card-Decision`, res.headers.get('corridor-card-decision'), declined ? 'DECLINED' : 'APPROVED');
    eq(`card ${what} Corridor-Decline-Reason`, res.headers.get('corridor-decline-reason'), declined ?? null);
    return token;
  }

  /** The card transaction carrying `token`, among its cardholder's recent ones. */
  private async findByToken(h: MHolder, token: string): Promise<Wire> {
    const since = new Date(this.w.now() - (this.w.deterministic ? 0 : 60_000)).toISOString();
    const rows = await this.w.listAll(this.w.api, '/transactions', { customerId: h.id, startDate: since });
    const found = rows.filter((r) => r.issuerTransactionToken === token);
    if (found.length !== 1) throw new AuditError(`${found.length} card transactions with the approved token ${token}`);
    if (this.cm.txs.has(found[0].id)) throw new AuditError(`the approved token ${token} names the earlier ${found[0].id}`);
    return found[0];
  }

  /** Cards with room for a few more approvals in their velocity window. */
  private roomy(cards: MCard[]): MCard[] {
    return cards.filter((c) => this.cm.velocity(c, this.w.now() + this.w.margin) < VELOCITY_MAX - 2);
  }

  /** Approvals on one card up to the limit inside a minute of the platform clock: the next is declined VELOCITY_LIMIT_EXCEEDED. */
  private async velocity(): Promise<void> {
    const cards = this.calmCards().filter((c) => c.state === 'ACTIVE' && c.maxSpend === null);
    if (cards.length === 0) return this.authorize();
    const c = this.rng.pick(cards);
    const a = this.m.account(c.fundingSources[0]!);
    if (a.available < 20_000) await this.fundAccount(a.id, this.rng.int(100_000, 500_000));
    const n = VELOCITY_MAX - this.cm.velocity(c, this.w.now()) + 1;
    for (let i = 0; i < n; i++) {
      const kind = this.rng.chance(0.7) ? 'AUTHORIZATION' : 'CREDIT_AUTHORIZATION';
      await this.sendAuth(c, kind, this.rng.int(100, 900), { ...this.rng.pick(MERCHANTS) });
    }
    if (
      this.seen('card authorization (declined VELOCITY_LIMIT_EXCEEDED) → 202') ||
      this.seen('card credit_authorization (declined VELOCITY_LIMIT_EXCEEDED) → 202')
    )
      this.w.features.add('card velocity limit');
  }

  // ---------------------------------------------------------------------------------------------
  // Messages on a transaction

  /**
   * Sends a message on `t` (through its card, or another one for the 404): refused as `refusal`
   * says, or approved (or declined, for an advice whose feature says so) — then `apply` is the
   * model's change, at the platform time the message happened, and the transaction is read back.
   */
  private async message(
    t: MCardTx,
    path: string,
    body: Record<string, unknown>,
    feature: string,
    refusal: Expect | undefined,
    apply: (at: string, w: Wire) => void = () => undefined,
    card = t.card,
  ): Promise<void> {
    await this.w.send({
      label: `card ${path} ${t.id} (${t.direction} ${t.status}) ${JSON.stringify({ ...body, cardTransactionId: undefined })}`,
      client: this.w.api,
      path: `/sandbox/cards/${card.id}/simulate/${path}`,
      body: { cardTransactionId: t.id, ...body },
      key: undefined,
      debits: [],
      feature,
      apply: async (res) => {
        this.touchedTxs.add(t.id);
        if (refusal) return this.expectError(res, refusal, `card ${path}`);
        const declined = feature.includes('declined INSUFFICIENT_FUNDS') ? 'INSUFFICIENT_FUNDS' : undefined;
        const token = this.decision(res, declined, path);
        // docs/cards.md: "approved, the token is the issuerTransactionToken of the CardTransaction it made or
        // changed". The server answers a fresh token per message instead (reported); the transaction keeps its own.
        if (token === t.token) throw new AuditError(`card ${path}: answered the transaction's own token`);
        const w = await this.getTx(t.id);
        if (!declined) {
          apply(this.w.deterministic ? this.now() : w.updatedAt, w);
          this.ledgerDirty = true;
          this.w.features.add(`card ${path} → 202`);
        }
        this.checkTx(w, t);
      },
    });
  }

  private pickTx(filter: (t: MCardTx) => boolean): MCardTx | undefined {
    const txs = this.calmTxs().filter(filter);
    return txs.length > 0 ? this.rng.pick(txs) : undefined;
  }

  private async clearing(): Promise<void> {
    const closed = this.rng.chance(0.08) ? this.pickTx((t) => !this.cm.open(t)) : undefined;
    if (closed) return this.message(closed, 'clearing', { amount: this.rng.int(1, 1_000) }, 'card clearing (not open)', this.notIn());
    const t = this.pickTx((x) => this.cm.open(x));
    if (!t) return;
    const v = this.rng.weighted([
      ['partial', t.held >= 2 ? 3 : 0],
      ['exact', 3],
      ['over', t.direction === 'DEBIT' ? this.until('card clearing (post-hoc pull) → 202', 1.5, 3) : 1],
      ['uncovered', t.direction === 'DEBIT' ? this.until('card clearing (EXCEPTION) → 202', 0.4, 2.5) : 0],
      ['zero', 1.2],
    ] as const);
    // A post-hoc pull needs money left on the account.
    if (v === 'over' && this.m.account(t.account).available < 1_000) await this.fundAccount(t.account, this.rng.int(50_000, 500_000));
    const av = this.m.account(t.account).available;
    const amount =
      v === 'partial'
        ? this.rng.int(1, t.held - 1)
        : v === 'exact'
          ? t.held
          : v === 'over'
            ? t.held + this.rng.int(1, Math.max(1, Math.min(av, 20_000)))
            : v === 'uncovered'
              ? t.held + av + this.rng.int(1, 20_000)
              : 0;
    const outcome = this.cm.clearingOutcome(t, amount);
    await this.message(t, 'clearing', { amount }, `card clearing (${outcome})`, undefined, (at) => this.cm.clear(t, amount, at));
  }

  private notIn(field = 'cardTransactionId'): Expect {
    return { status: 400, code: 'INVALID_INPUT', field };
  }

  private async advice(): Promise<void> {
    const closed = this.rng.chance(0.06) ? this.pickTx((t) => !this.cm.open(t)) : undefined;
    if (closed)
      return this.message(
        closed,
        'authorization_advice',
        { amount: this.rng.int(1, 1_000) },
        'card authorization_advice (not open)',
        this.notIn(),
      );
    // One that cleared in part (an advice cannot go below that), likelier until the run has seen the refusal.
    const below = this.seen('card authorization_advice (below what settled) → 400 INVALID_INPUT');
    const t = (!below && this.pickTx((x) => this.cm.open(x) && x.settled >= 2)) || this.pickTx((x) => this.cm.open(x));
    if (!t) return;
    const av = this.m.account(t.account).available;
    const debit = t.direction === 'DEBIT';
    const v = this.rng.weighted([
      ['up', !debit || av >= 1 ? 3 : 0],
      ['up beyond the balance', debit ? 1 : 0],
      ['down', t.authorized - t.settled >= 2 ? 2 : 0],
      ['same', 0.5],
      ['to what settled', t.settled >= 1 ? 0.8 : 0],
      ['below what settled', t.settled >= 2 ? this.until('card authorization_advice (below what settled) → 400 INVALID_INPUT', 0.6, 3) : 0],
    ] as const);
    const amount =
      v === 'up'
        ? t.authorized + this.rng.int(1, debit ? Math.min(av, 20_000) : 20_000)
        : v === 'up beyond the balance'
          ? t.settled + t.held + av + this.rng.int(1, 5_000)
          : v === 'down'
            ? this.rng.int(t.settled + 1, t.authorized - 1)
            : v === 'same'
              ? t.authorized
              : v === 'to what settled'
                ? t.settled
                : this.rng.int(1, t.settled - 1);
    const outcome = this.cm.adviceOutcome(t, amount);
    const refusal = outcome === 'BELOW_SETTLED' ? this.notIn('amount') : undefined;
    const feature = `card authorization_advice (${v}${outcome === 'DECLINED' ? ', declined INSUFFICIENT_FUNDS' : ''})`;
    await this.message(t, 'authorization_advice', { amount }, feature, refusal, (at) => this.cm.advise(t, amount, Date.parse(at), at));
  }

  private async ret(): Promise<void> {
    const r = this.rng.next();
    const wrong =
      r < 0.07
        ? this.pickTx((t) => t.direction === 'CREDIT')
        : r < 0.13
          ? this.pickTx((t) => t.direction === 'DEBIT' && t.status !== 'SETTLED')
          : undefined;
    const t = wrong ?? this.pickTx((x) => x.direction === 'DEBIT' && x.status === 'SETTLED');
    if (!t) return;
    const refundable = t.settled - this.cm.refunded(t);
    const v = wrong
      ? 'wrong'
      : this.rng.weighted([
          ['partial', refundable >= 2 ? 3 : 0],
          ['full', refundable >= 1 ? 3 : 0],
          ['too much', 0.7],
        ] as const);
    const amount =
      v === 'partial'
        ? this.rng.int(1, refundable - 1)
        : v === 'full'
          ? refundable
          : v === 'too much'
            ? refundable + this.rng.int(1, 1_000)
            : this.rng.int(1, 1_000);
    const outcome = this.cm.returnOutcome(t, amount);
    const refusal =
      outcome === 'CREDIT' || outcome === 'NOT_SETTLED' ? this.notIn() : outcome === 'TOO_MUCH' ? this.notIn('amount') : undefined;
    const name = { CREDIT: 'credit', NOT_SETTLED: 'not settled', TOO_MUCH: 'too much', partial: 'partial', full: 'full' }[outcome];
    await this.message(t, 'return', { amount }, `card return (${name})`, refusal, (at) => this.cm.ret(t, amount, at));
  }

  private async reversal(): Promise<void> {
    const wrong = this.rng.chance(0.1) ? this.pickTx((t) => t.status !== 'REFUNDED') : undefined;
    const t = wrong ?? this.pickTx((x) => x.status === 'REFUNDED');
    if (!t) return;
    const uncovered = this.seen('card return_reversal (EXCEPTION) → 202')
      ? 0.2
      : this.seen('card return_reversal (covered) → 202')
        ? 0.8
        : 0.4;
    if (!wrong && this.rng.chance(uncovered)) {
      // Another authorization holds most of the account first: the reversal cannot be covered.
      const last = t.returns.at(-1)!;
      const a = this.m.account(t.account);
      const c = this.calmCards().find((x) => x.state === 'ACTIVE' && x.fundingSources[0] === t.account);
      const hold = a.available - Math.floor(last / 2);
      if (c && hold >= 1) {
        if (c.maxSpend !== null && c.maxSpend < hold) await this.sendPatch(c, { maxSpendPerTransaction: null });
        await this.sendAuth(c, 'AUTHORIZATION', hold, { ...MERCHANTS[1]! });
      }
    }
    const outcome = this.cm.reversalOutcome(t);
    const refusal = outcome === 'CREDIT' || outcome === 'NOT_REFUNDED' ? this.notIn() : undefined;
    const name = { CREDIT: 'credit', NOT_REFUNDED: 'not refunded', covered: 'covered', EXCEPTION: 'EXCEPTION' }[outcome];
    await this.message(t, 'return_reversal', {}, `card return_reversal (${name})`, refusal, (at) => this.cm.reverse(t, at));
  }

  /** Refusals around the simulations: an unknown card, another currency, another card's transaction. */
  private async refusal(): Promise<void> {
    const v = this.rng.weighted([
      ['unknown card', this.until('card authorization (unknown card) → 404 REFERENCE_NOT_FOUND', 1, 3)],
      ['EUR', this.until('card authorization (EUR) → 400 INVALID_INPUT', 1, 3)],
      [
        "another card's transaction",
        this.cm.cards.size > 1 && this.cm.txs.size > 0
          ? this.until("card clearing (another card's transaction) → 404 TRANSACTION_NOT_FOUND", 1, 3)
          : 0,
      ],
    ] as const);
    if (v === "another card's transaction") {
      const t = this.pickTx(() => true);
      const other = [...this.cm.cards.values()].find((c) => c !== t?.card);
      if (!t || !other) return;
      const expect = { status: 404, code: 'TRANSACTION_NOT_FOUND' };
      return this.message(t, 'clearing', { amount: 1 }, "card clearing (another card's transaction)", expect, () => undefined, other);
    }
    const c = this.rng.pick([...this.cm.cards.values()]);
    const id = v === 'unknown card' ? UNKNOWN_CARD : c.id;
    await this.w.send({
      label: `card authorization ${id} (${v})`,
      client: this.w.api,
      path: `/sandbox/cards/${id}/simulate/authorization`,
      body: { amount: 100, currency: v === 'EUR' ? { code: 'EUR' } : USD, merchant: MERCHANTS[0] },
      key: undefined,
      debits: [],
      feature: `card authorization (${v})`,
      apply: (res) =>
        this.expectError(
          res,
          v === 'EUR' ? { status: 400, code: 'INVALID_INPUT', field: 'currency.code' } : { status: 404, code: 'REFERENCE_NOT_FOUND' },
          'card authorization',
        ),
    });
  }

  // ---------------------------------------------------------------------------------------------
  // The end of a run

  /**
   * Before the final advance: delayed pull confirmations and activations come first (on PostgreSQL's
   * two job loops their order against a hold expiry in the same drain is not fixed); on a real clock
   * the open authorizations are expired by a 0 clearing instead of a 7-day advance.
   */
  async beforeFinal(): Promise<void> {
    const early = (t: Timer) => (t.kind === 'CARD_PULL_CONFIRM' || t.kind === 'CARD_PROVISION') && this.m.effective(t);
    if (this.m.timers.some(early)) {
      await this.ops.advance(PULL_CONFIRM_MS / 1000 + 1);
      await this.w.settle();
    }
    if (!this.w.deterministic)
      for (const t of this.calmTxs().filter((x) => this.cm.open(x)))
        await this.message(t, 'clearing', { amount: 0 }, 'card clearing (final expiry)', undefined, (at) => this.cm.clear(t, 0, at));
  }

  /** The final advance: at least `seconds`, and past every hold still open (their 7-day expiry). */
  finalAdvance(seconds: number): number {
    const due = this.m.timers.filter((t) => t.kind === 'CARD_HOLD_EXPIRY' && this.m.effective(t)).map((t) => t.dueAt);
    if (due.length === 0) return seconds;
    return Math.max(seconds, Math.ceil((Math.max(...due) - this.w.now()) / 1000) + 1);
  }

  // ---------------------------------------------------------------------------------------------
  // Timers (the driver's settle)

  /** Whether the server shows the card timer `t` fired (waiting up to 15 s when it must); with the platform time it fired at. */
  async observeTimer(t: Timer, must: boolean): Promise<{ at: number } | undefined> {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const card = t.kind === 'CARD_PROVISION';
      const res = await this.w.api.get(card ? `/cards/${t.ref}` : `/transactions/${t.ref}`);
      expectStatus(res, 200, `GET ${t.ref}`);
      const b = res.body;
      const fired = card
        ? b.state !== 'PROCESSING'
        : t.kind === 'CARD_HOLD_EXPIRY'
          ? b.status === 'SETTLED'
          : b.pullSummary?.pendingCount === 0;
      if (fired) {
        if (this.w.deterministic) this.w.checkStamp(`${t.kind} of ${t.ref} updatedAt`, b.updatedAt);
        return { at: this.w.timeOf(b.updatedAt) };
      }
      if (!must) return undefined;
      if (Date.now() > deadline)
        throw new AuditError(
          `${t.kind} of ${t.ref} was due at ${new Date(t.dueAt).toISOString()} (now ${this.now()}) but it shows ${canonical(b)}`,
        );
      await sleep(20);
    }
  }

  touch(t: Timer): void {
    if (t.kind === 'CARD_PROVISION') this.touchedCards.add(t.ref);
    else this.touchedTxs.add(t.ref);
    this.ledgerDirty = true;
  }

  // ---------------------------------------------------------------------------------------------
  // The audit

  private expectError(res: Res, e: Expect, label: string): void {
    expectError(res, e.status, e.code!, label);
    if (e.field) {
      const fields = ((res.body.details?.errors ?? []) as { field: string }[]).map((x) => x.field);
      if (!fields.includes(e.field))
        throw new AuditError(`${label}: ${res.status} ${e.code} without the field ${e.field}: ${res.text.slice(0, 400)}`);
    }
  }

  private async getTx(id: string): Promise<Wire> {
    const res = await this.w.api.get(`/transactions/${id}`);
    expectStatus(res, 200, `GET /transactions/${id}`);
    return res.body;
  }

  /** A card on the wire against the model (a provisioning that may be happening now: either side). */
  private checkCard(w: Wire, c: MCard): void {
    const label = `card ${c.id}`;
    // A provisioning that may be happening now (a real clock): either side; settle() applies it once it shows.
    if (c.state === 'PROCESSING' && this.near(c.id)) return;
    eq(`${label} id`, w.id, c.id);
    eq(`${label} cardholderId`, w.cardholderId, c.holder.id);
    eq(`${label} platformCardId`, w.platformCardId, c.platformCardId);
    eq(`${label} state`, w.state, c.state);
    eq(`${label} stateReason`, w.stateReason, c.stateReason);
    eq(`${label} form`, w.form, 'VIRTUAL');
    eq(`${label} fundingSources`, canonical(w.fundingSources), canonical(c.fundingSources));
    eq(`${label} maxSpendPerTransaction`, w.maxSpendPerTransaction, c.maxSpend);
    eq(`${label} currency`, w.currency, 'USD');
    eq(`${label} createdAt`, w.createdAt, c.createdAt);
    if (this.w.deterministic) eq(`${label} updatedAt`, w.updatedAt, c.updatedAt);
    if (c.activatedAt === null) {
      for (const f of ['brand', 'last4', 'expMonth', 'expYear']) eq(`${label} ${f}`, w[f], undefined);
      return;
    }
    eq(`${label} brand`, w.brand, brandOf(c.id));
    if (typeof w.last4 !== 'string' || !/^\d{4}$/.test(w.last4)) throw new AuditError(`${label} last4 ${w.last4}`);
    if (c.last4 === null) c.last4 = w.last4;
    eq(`${label} last4`, w.last4, c.last4);
    const d = new Date(c.activatedAt);
    eq(`${label} expMonth`, w.expMonth, d.getUTCMonth() + 1);
    eq(`${label} expYear`, w.expYear, d.getUTCFullYear() + 3);
  }

  /** A card transaction on the wire (GET /transactions and /transactions/{id}) against the model. */
  private checkTx(w: Wire, t: MCardTx): void {
    const label = `card transaction ${t.id}`;
    const timer = this.near(t.id);
    if (timer?.kind === 'CARD_HOLD_EXPIRY') return;
    const amount = (x: Wire, name: string, want: number) => {
      eq(`${label} ${name}`, x?.amount, want);
      eq(`${label} ${name} currency`, x?.currency?.code, 'USD');
    };
    eq(`${label} type`, w.type, 'CARD');
    eq(`${label} id`, w.id, t.id);
    eq(`${label} cardId`, w.cardId, t.card.id);
    eq(`${label} customerId`, w.customerId, t.card.holder.id);
    eq(`${label} platformCustomerId`, w.platformCustomerId, t.card.holder.platformCustomerId);
    eq(`${label} issuerTransactionToken`, w.issuerTransactionToken, t.token);
    eq(`${label} status`, w.status, t.status);
    eq(`${label} direction`, w.direction, t.direction);
    eq(`${label} merchant`, canonical(w.merchant), canonical(t.merchant));
    amount(w.authorizedAmount, 'authorizedAmount', t.authorized);
    amount(w.settledAmount, 'settledAmount', t.settled);
    amount(w.refundedAmount, 'refundedAmount', this.cm.refunded(t));
    eq(`${label} accountId`, w.accountId, t.account);
    eq(`${label} pullSummary.count`, w.pullSummary?.count, t.pulls);
    eq(`${label} pullSummary.totalAmount`, w.pullSummary?.totalAmount, t.pullTotal);
    if (timer?.kind !== 'CARD_PULL_CONFIRM') eq(`${label} pullSummary.pendingCount`, w.pullSummary?.pendingCount, t.pullPending);
    eq(`${label} refundSummary`, canonical(w.refundSummary), canonical({ count: t.returns.length, totalAmount: this.cm.refunded(t) }));
    eq(`${label} settlementSummary`, canonical(w.settlementSummary), canonical({ count: t.settlements, totalAmount: t.settled }));
    eq(`${label} createdAt`, w.createdAt, t.createdAt);
    eq(`${label} authorizedAt`, w.authorizedAt, t.createdAt);
    if (this.w.deterministic) {
      eq(`${label} updatedAt`, w.updatedAt, t.updatedAt);
      eq(`${label} lastEventAt`, w.lastEventAt, t.updatedAt);
    }
  }

  /**
   * The card rows of a full GET /transactions: exactly the model's card transactions, each as the
   * model has it (called by the driver's full check).
   */
  checkListed(rows: Wire[]): void {
    const seen = new Set<string>();
    for (const w of rows) {
      const t = this.cm.txs.get(w.id);
      if (!t) throw new AuditError(`the server has a card transaction the model does not know: ${canonical(w)}`);
      seen.add(w.id);
      this.checkTx(w, t);
    }
    for (const id of this.cm.txs.keys())
      if (!seen.has(id)) throw new AuditError(`card transaction ${id} is missing from GET /transactions`);
  }

  /** After every step: the touched cards and card transactions, every card with `full`, and the card ledger entries. */
  async check(full: boolean): Promise<void> {
    const cards = full ? [...this.cm.cards.keys()] : [...this.touchedCards];
    await Promise.all([
      ...cards.map(async (id) => {
        const res = await this.w.api.get(`/cards/${id}`);
        expectStatus(res, 200, `GET /cards/${id}`);
        this.checkCard(res.body, this.cm.cards.get(id)!);
      }),
      ...(full ? [] : [...this.touchedTxs]).map(async (id) => this.checkTx(await this.getTx(id), this.cm.txs.get(id)!)),
      ...(full
        ? this.cm.holders.map(async (h) => {
            const listed = await this.w.listAll(this.w.api, '/cards', { cardholderId: h.id });
            const want = [...this.cm.cards.values()].filter((c) => c.holder === h).map((c) => c.id);
            eq(`cards of ${h.id}`, canonical(listed.map((c) => c.id).sort()), canonical(want.sort()));
          })
        : []),
      ...(full || this.ledgerDirty ? [this.checkLedger()] : []),
    ]);
  }

  /** The checks passed: start the next step's. */
  checked(): void {
    this.touchedCards.clear();
    this.touchedTxs.clear();
    this.ledgerDirty = false;
  }

  /**
   * Every ledger entry of a card transaction (CARD_* kinds, or referencing a CardTransaction) is one
   * the model expects, with the same postings, and each expected one is there: a hold, a
   * settlement or a pull the model does not expect fails the audit even where balances net out.
   */
  async checkLedger(): Promise<void> {
    const db = this.w.openedStore().db;
    const rows = await db
      .selectFrom('ledger_entries as e')
      .innerJoin('ledger_postings as p', 'p.entry_id', 'e.id')
      .select(['e.id', 'e.kind', 'e.reference_id', 'p.account_id', 'p.bucket', 'p.amount'])
      .where('e.platform_id', '=', this.w.platformId)
      .where((eb) => eb.or([eb('e.kind', 'like', 'CARD%'), eb('e.reference_id', 'like', 'CardTransaction:%')]))
      .execute();
    const network = `System:${this.w.platformId}:CARD_NETWORK`;
    const byEntry = new Map<string, { kind: string; ref: string; postings: string[] }>();
    for (const r of rows) {
      const e = byEntry.get(r.id) ?? { kind: r.kind, ref: r.reference_id, postings: [] };
      e.postings.push(r.account_id === network ? `NETWORK=${Number(r.amount)}` : `${r.account_id}:${r.bucket}=${Number(r.amount)}`);
      byEntry.set(r.id, e);
    }
    const want = new Map<string, number>();
    for (const k of this.cm.entries) want.set(k, (want.get(k) ?? 0) + 1);
    const unexpected: string[] = [];
    for (const e of byEntry.values()) {
      const k = entryKey(e.kind, e.ref, e.postings);
      const n = want.get(k) ?? 0;
      if (n === 0) unexpected.push(k);
      else want.set(k, n - 1);
    }
    const missing = [...want].flatMap(([k, n]) => Array<string>(n).fill(k));
    if (unexpected.length > 0 || missing.length > 0)
      throw new AuditError(
        `card ledger entries differ from the model:\n  unexpected: ${unexpected.slice(0, 10).join('\n    ')}\n  missing: ${missing.slice(0, 10).join('\n    ')}`,
      );
  }

  /**
   * The CARD.* and CARD_TRANSACTION.* events of the outbox: per card and per transaction, exactly
   * the model's, in order, each carrying the resource as the model had it then.
   */
  eventProblems(rows: { type: string; resource_id: string; payload: string }[]): string[] {
    const wrong: string[] = [];
    const got = new Map<string, Wire[]>();
    for (const r of rows) {
      if (!r.type.startsWith('CARD')) continue;
      const known = r.type.startsWith('CARD_TRANSACTION.') ? this.cm.txs.has(r.resource_id) : this.cm.cards.has(r.resource_id);
      if (!known) wrong.push(`a card event the model does not expect: ${r.type} ${r.resource_id}`);
      else got.set(r.resource_id, [...(got.get(r.resource_id) ?? []), { type: r.type, data: JSON.parse(r.payload) }]);
    }
    const det = this.w.deterministic;
    for (const c of this.cm.cards.values()) {
      const events = got.get(c.id) ?? [];
      if (events.map((e) => e.type).join() !== c.events.map((e) => e.type).join()) {
        wrong.push(`${c.id}: events ${events.map((e) => e.type).join(', ')}; model ${c.events.map((e) => e.type).join(', ')}`);
        continue;
      }
      c.events.forEach((s, i) => {
        const d = events[i].data;
        const view = [d.state, d.stateReason, canonical(d.fundingSources), d.maxSpendPerTransaction, det ? d.updatedAt : ''];
        const want = [s.state, s.stateReason, canonical(s.fundingSources), s.maxSpend, det ? s.updatedAt : ''];
        if (canonical(view) !== canonical(want))
          wrong.push(`${c.id} event ${i + 1} ${s.type}: ${canonical(view)}; model ${canonical(want)}`);
      });
    }
    for (const t of this.cm.txs.values()) {
      const events = got.get(t.id) ?? [];
      if (events.map((e) => e.type).join() !== t.events.map((e) => e.type).join()) {
        wrong.push(`${t.id}: events ${events.map((e) => e.type).join(', ')}; model ${t.events.map((e) => e.type).join(', ')}`);
        continue;
      }
      t.events.forEach((s, i) => {
        const d = events[i].data;
        const view = [
          d.status,
          d.authorizedAmount?.amount,
          d.settledAmount?.amount,
          d.refundedAmount?.amount,
          d.settlementSummary?.count,
          d.refundSummary?.count,
          d.pullSummary?.count,
          d.pullSummary?.totalAmount,
          d.pullSummary?.pendingCount,
          det ? d.updatedAt : '',
        ];
        const want = [
          s.status,
          s.authorized,
          s.settled,
          s.refunded,
          s.settlements,
          s.refunds,
          s.pulls,
          s.pullTotal,
          s.pullPending,
          det ? s.updatedAt : '',
        ];
        if (canonical(view) !== canonical(want))
          wrong.push(`${t.id} event ${i + 1} ${s.type}: ${canonical(view)}; model ${canonical(want)}`);
      });
    }
    return wrong;
  }
}
