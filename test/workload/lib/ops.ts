/**
 * The workload's operations. Each picks its inputs with the seeded generator from the model's
 * state (never from server ids or order), states what the server must answer — from the model
 * and the docs' rules alone — and applies the effect to the model. Money requests are `Planned`
 * (sent with an Idempotency-Key) so a crash burst can send them concurrently and reconcile them.
 */
import { encryptOtp, generateKeyPair, stamp } from '../../../src/wallet/client.ts';
import { AuditError, checkAction, checkTx, eq, expectError, expectStatus, sleep, type Planned, type Workload } from './driver.ts';
import { accountInfo, CURRENCY_BOUNDS, CURRENCY_OF, customerBody, scaCustomerBody, USD_FEE, type ExternalKind } from './fixtures.ts';
import { CardOps } from './card-ops.ts';
import { Api, type Wire } from './http.ts';
import { Rng } from './rng.ts';
import {
  APPROVAL_WINDOW_MS,
  LOOKUP_TTL_MS,
  MINUTE,
  parseRate,
  priceQuote,
  QUOTE_TTL_MS,
  quoteScenario,
  SCA_CHALLENGE_TTL_MS,
  SCA_CODE,
  SCA_MAX_WRONG,
  SCA_SESSION_MS,
  SESSION_MS,
  transferScenario,
  UMA_PARTIES,
  type MAccount,
  type MAction,
  type MAgent,
  type MChallenge,
  type MExternal,
  type MInvitation,
  type MQuote,
  type MTx,
  type Rate,
  type Scenario,
} from './model.ts';

const UMA_DOMAIN = 'sandbox.uma.money';
const MAX_CUSTOMERS = 10;
const MAX_AGENTS = 4;
const MAX_FUND = 100_000_000_000;
const AGENT_PERMISSIONS = ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES', 'MANAGE_EXTERNAL_ACCOUNTS'];

interface Customer {
  id: string;
  n: number;
  platformCustomerId: string;
  /** Its UMA address (given, or made by the server from platformCustomerId). */
  uma: string;
  /** Its non-wallet internal accounts by currency. */
  accounts: Map<string, string>;
  wallet: WalletState | null;
}

interface WalletState {
  accountId: string;
  credentialId: string | null;
  /** OTP challenges issued (the server allows 5 a minute per credential, and the frozen clock never lets a minute pass). */
  challenges: number;
  session: { id: string; privateKey: string; expiresAt: number } | null;
}

/**
 * A customer in the EEA: Strong Customer Authentication applies to its payments (issue #23). Kept
 * out of `customers` and of `fiatAccounts()`, so the other operations (which predict PROCESSING
 * for every execute) never pick it; its accounts are in the model, so their balances are audited.
 */
interface ScaCustomer {
  id: string;
  n: number;
  /** Its internal accounts by currency (USD, EUR). */
  accounts: Map<string, string>;
  /** Its SCA login session's end (platform ms); null before the first login and after a password reset. */
  session: number | null;
  /** Failed logins counted against it (5 would lock it: the workload stays below 3). */
  failedLogins: number;
}

/** SCA payments stay above the low-value exemption (EUR 30): 5,000 cents is over EUR 45 from USD, EUR 50 from EUR. */
const SCA_MIN_AMOUNT = 5_000;
const SCA_IP = '203.0.113.7';
/** The chance that a step also runs an SCA operation. */
const SCA_STEP_CHANCE = 0.14;

type Destination = { kind: 'external'; ext: MExternal } | { kind: 'uma'; name: string } | { kind: 'internal'; account: MAccount };

type Expect = { status: number; code?: string };

/** A receiver lookup (GET /receiver/…) the workload made: whom it is for, and when (it lives LOOKUP_TTL_MS). */
interface Lookup {
  id: string;
  customerId: string;
  receiver: Destination;
  at: number;
}

/** What a quote says of the lookup it names: its id, the payer data sent, and the refusal expected (none: honoured). */
interface LookupUse {
  id: string;
  info: Record<string, string> | undefined;
  refusal: (Expect & { why: string }) | undefined;
}

const PAYER_INFO = { FULL_NAME: 'Jane Workload', BIRTH_DATE: '1990-01-15' };
const INVITATION_CODE = /^[0-9abcdefghjkmnpqrstvwxyz]{12}$/;
const BULK_HEADER = 'umaAddress,platformCustomerId,customerType,fullName,birthDate,email,addressLine1,city,state,postalCode,country';

const TRANSFER_SUFFIXES: [string, number][] = [
  ['001', 4],
  ['002', 1],
  ['003', 1],
  ['004', 1],
  ['005', 2],
  ['009', 1],
];
const QUOTE_SUFFIXES: [string, number][] = [
  ['001', 3],
  ['002', 1],
  ['003', 1.5],
  ['004', 1],
  ['005', 1.5],
  ['006', 1],
  ['007', 1],
  ['010', 1],
];
const UMA_NAMES: [string, number][] = [
  ['$success.usd', 3],
  ['$success.eur', 2],
  ['$success.mxn', 2],
  ['$pending.long.usd', 1],
  ['$fail.compliance.usd', 1.5],
  ['$nobody.usd', 1],
];

export class Ops {
  readonly customers: Customer[] = [];
  readonly scaCustomers: ScaCustomer[] = [];
  /**
   * The SCA operations' own generator: they run after a step's operation, on their own seeded
   * stream, and the other operations' pickers leave their customer, accounts, payments and keyed
   * requests alone — so adding them left every seed's other operations as they were (the fixed
   * seeds' coverage of the other paths with them).
   */
  private readonly scaRng: Rng;
  /** Keyed requests of the SCA operations (replayed by them, not by `replay`). */
  private readonly scaPlans = new WeakSet<Planned>();
  /** The card operations (card-ops.ts): their own stream, cardholders, accounts and keyed requests. */
  readonly cards: CardOps;
  private readonly agentClients = new Map<string, Api>();
  private serial = 0;
  private readonly rates = new Map<string, Rate>();
  private readonly lookups: Lookup[] = [];
  private inviteeSerial = 0;
  private bulkSerial = 0;
  private bulkJobs = 0;
  private umaDomain: string | undefined;

  constructor(private readonly w: Workload) {
    this.scaRng = new Rng(w.o.seed ^ 0x5ca23);
    this.cards = new CardOps(w, this);
  }

  private get rng() {
    return this.w.rng;
  }

  private get m() {
    return this.w.model;
  }

  agentApi(agentId: string): Api {
    const a = this.agentClients.get(agentId);
    if (!a) throw new AuditError(`no client for agent ${agentId}`);
    return a;
  }

  // ---------------------------------------------------------------------------------------------
  // Choosing

  async initial(): Promise<void> {
    await this.createCustomer(false);
    await this.createCustomer(true);
    await this.w.send(this.planFund(this.m.platformAccount('USD')!, 20_000_000));
  }

  async randomStep(): Promise<void> {
    const agents = [...this.m.agents.values()];
    const pendingActions = [...this.m.actions.values()].filter((a) => a.status === 'PENDING_APPROVAL');
    const ops: [() => Promise<void>, number, string][] = [
      [
        () => this.createCustomer(this.rng.chance(0.35)),
        this.customers.length < 3 ? 4 : this.customers.length < MAX_CUSTOMERS ? 1.5 : 0,
        'createCustomer',
      ],
      [() => this.fund(), 8, 'fund'],
      [() => this.transferOut(), 10, 'transferOut'],
      [() => this.transferIn(), 6, 'transferIn'],
      [() => this.race(), 2, 'race'],
      [() => this.quote(), 12, 'quote'],
      [() => this.execute(), 6, 'execute'],
      [() => this.realtime(), 3, 'realtime'],
      [() => this.cancel(), 3, 'cancel'],
      [() => this.umaReceive(), 3, 'umaReceive'],
      [() => this.decideIncoming(), 3, 'decideIncoming'],
      [() => this.advance(this.rng.int(1, 6)), 3, 'advanceSmall'],
      [() => this.advance(this.rng.int(25, 90)), 2, 'advanceMedium'],
      [() => this.advance(this.rng.int(300, 4000)), 1, 'advanceLarge'],
      [() => this.walletPay(), this.customers.some((c) => c.wallet) ? 5 : 0, 'walletPay'],
      [() => this.createAgent(), agents.length < MAX_AGENTS ? (agents.length < 2 ? 3 : 1) : 0, 'createAgent'],
      [() => this.agentTransfer(), agents.length > 0 ? 6 : 0, 'agentTransfer'],
      [() => this.agentQuote(), agents.length > 0 ? 3 : 0, 'agentQuote'],
      [() => this.agentExecute(), agents.length > 0 ? 3 : 0, 'agentExecute'],
      [() => this.decideAction(), pendingActions.length > 0 ? 5 : agents.length > 0 ? 0.5 : 0, 'decideAction'],
      [() => this.replay(), this.w.sent.some((x) => this.mainPlan(x.planned)) ? 3 : 0, 'replay'],
      [() => this.lookupQuote(), 3, 'lookupQuote'],
      [() => this.invitation(), 3, 'invitation'],
      [() => this.bulkImport(), this.bulkJobs < 2 && this.customers.length < MAX_CUSTOMERS ? 0.8 : 0, 'bulkImport'],
    ];
    const [run, , name] = this.rng.weighted(ops.filter(([, weight]) => weight > 0).map((o) => [o, o[1]] as const));
    this.w.count(name);
    await run();
    if (this.scaRng.chance(SCA_STEP_CHANCE)) {
      // From the state the step's operation left, with what it made due applied (a clock advance may lapse challenges).
      await this.w.settle();
      await this.scaStep();
    }
    // Then, on the cards' own stream, sometimes a card operation.
    await this.cards.maybeStep();
  }

  /** A keyed request of the main operations (not the SCA or card ones, which replay their own). */
  private mainPlan(p: Planned): boolean {
    return !this.scaPlans.has(p) && !this.cards.ownsPlan(p);
  }

  /** One SCA operation (its own stream): an SCA customer pays, authorises, or replays an SCA request. */
  private async scaStep(): Promise<void> {
    const parked = [...this.m.quotes.values()].some((q) => q.status === 'PENDING_AUTHORIZATION');
    const sent = this.w.sent.filter((s) => this.scaPlans.has(s.planned));
    const ops: [() => Promise<void>, number, string][] = [
      [() => this.scaPay(), 5, 'scaPay'],
      [() => this.scaAuthorize(), parked ? 5 : this.scaCustomers.length > 0 ? 0.5 : 0, 'scaAuthorize'],
      [() => this.replay(this.scaRng, sent, 'sca '), sent.length > 0 ? 0.6 : 0, 'scaReplay'],
    ];
    const [run, , name] = this.scaRng.weighted(ops.filter(([, weight]) => weight > 0).map((o) => [o, o[1]] as const));
    this.w.count(name);
    await run();
  }

  /** A keyed request of an SCA operation (so that `replay` leaves it to `scaStep`). */
  private sca(p: Planned): Planned {
    this.scaPlans.add(p);
    return p;
  }

  /** Internal accounts money can leave from by transfer or account quote: fiat, not an embedded wallet. */
  private fiatAccounts(): MAccount[] {
    return [...this.m.accounts.values()].filter(
      (a) =>
        (a.currency === 'USD' || a.currency === 'EUR') &&
        a.type !== 'EMBEDDED_WALLET' &&
        !this.isScaAccount(a.id) &&
        !this.cards.owns(a.id),
    );
  }

  /** An account of an SCA customer (only the SCA operations pay from it). */
  private isScaAccount(accountId: string): boolean {
    const owner = this.m.account(accountId).customerId;
    return owner !== null && this.scaCustomers.some((c) => c.id === owner);
  }

  /** A quote paid from an SCA customer's account. */
  private isScaQuote(q: MQuote): boolean {
    return !q.realtime && this.isScaAccount(q.source);
  }

  /**
   * On a child process, whether a delayed outcome due in the next moments may change the
   * account's balance under a request (outcomes only ever add to `balance`: a released hold, a
   * return, a settled pull, a credit, fees), so that whether it can cover an amount is not known.
   */
  volatile(accountId: string, horizonMs = this.w.margin): boolean {
    if (this.w.deterministic) return false;
    const soon = this.w.now() + horizonMs;
    return this.m.timers.some((t) => {
      // Expiries and SCA lapses move no money.
      if (t.dueAt > soon || t.kind === 'EXPIRE' || t.kind === 'SCA_LAPSE' || !this.m.effective(t)) return false;
      const tx = this.m.txs.get(t.ref);
      if (!tx) return false;
      return (
        tx.account === accountId || tx.receiver === accountId || (tx.fees > 0 && this.m.platformAccount(tx.currency)?.id === accountId)
      );
    });
  }

  private pickAccount(candidates: MAccount[]): MAccount {
    const calm = candidates.filter((a) => !this.volatile(a.id));
    const accounts = calm.length > 0 ? calm : candidates;
    // Prefer accounts with money, so most movements go through.
    const funded = accounts.filter((a) => a.available > 0);
    return funded.length > 0 && this.rng.chance(0.85) ? this.rng.pick(funded) : this.rng.pick(accounts);
  }

  /** An amount to move from `a`: mostly part of what it holds, sometimes more (a shortfall), rarely out of bounds. */
  private amountFrom(a: MAccount, minimum = 1): number {
    const r = this.rng.next();
    if (r < 0.08) return a.available + this.rng.int(1, 5_000);
    if (r < 0.11) return CURRENCY_BOUNDS[a.currency]!.max + this.rng.int(1, 1_000);
    if (a.available < minimum * 2) return this.rng.int(minimum, minimum * 5);
    return Math.max(minimum, Math.floor(a.available * (0.03 + 0.45 * this.rng.next())));
  }

  private pickSuffix(table: [string, number][]): string {
    return this.rng.weighted(table);
  }

  private customerOf(accountId: string): Customer | undefined {
    const owner = this.m.account(accountId).customerId;
    return owner ? this.customers.find((c) => c.id === owner) : undefined;
  }

  /** An external account of `owner` (a customer id, or null for the platform) of `kind` ending in `suffix`; created on first use. */
  async external(owner: string | null, kind: ExternalKind, suffix: string): Promise<MExternal> {
    const currency = CURRENCY_OF[kind];
    const found = this.m.externals.find((e) => e.customerId === owner && e.currency === currency && e.suffix === suffix);
    if (found) return found;
    this.serial += 1;
    const body = { ...(owner ? { customerId: owner } : {}), currency, accountInfo: accountInfo(kind, this.serial, suffix) };
    const res = await this.w.api.post(owner ? '/customers/external-accounts' : '/platform/external-accounts', body);
    this.w.record(
      `create ${kind} external account …${suffix} for ${owner ?? 'the platform'} → ${res.status} ${res.body?.id ?? res.body?.code}`,
    );
    expectStatus(res, 201, 'create external account');
    const ext: MExternal = { id: res.body.id, currency, suffix, customerId: owner, accountType: res.body.accountInfo.accountType };
    this.m.externals.push(ext);
    return ext;
  }

  private async rateFor(from: string, to: string): Promise<Rate> {
    if (from === to) return parseRate(1);
    const window = Math.floor(this.w.now() / 300_000);
    const key = `${from}>${to}@${window}`;
    const cached = this.w.deterministic ? this.rates.get(key) : undefined;
    if (cached) return cached;
    const res = await this.w.api.get('/exchange-rates', { query: { sourceCurrency: from, destinationCurrency: to } });
    expectStatus(res, 200, `GET /exchange-rates ${from}>${to}`);
    const rate = parseRate(res.body.data[0].exchangeRate);
    this.rates.set(key, rate);
    return rate;
  }

  /** On a child process, a rate fetched now may not be the one a request a moment later gets, near a 5-minute boundary. */
  private nearRateBoundary(marginMs: number): boolean {
    if (this.w.deterministic) return false;
    const into = this.w.now() % 300_000;
    return into < marginMs || into > 300_000 - marginMs;
  }

  // ---------------------------------------------------------------------------------------------
  // Customers

  async createCustomer(withWallet: boolean): Promise<void> {
    const n = this.customers.length + 1;
    const currencies = withWallet ? ['USD', 'EUR', 'USDB'] : ['USD', 'EUR'];
    const key = this.w.nextKey();
    const res = await this.w.api.post('/customers', customerBody(n, currencies), { headers: { 'idempotency-key': key } });
    this.w.record(`create customer ${n} (${currencies.join(',')}) → ${res.status} ${res.body?.id ?? res.body?.code}`);
    expectStatus(res, 201, 'create customer');
    await this.adopt({ id: res.body.id, n, platformCustomerId: `workload-${n}`, uma: res.body.umaAddress }, withWallet);
  }

  /** A new customer joins the model: its internal accounts, each empty. */
  private async adopt(base: Pick<Customer, 'id' | 'n' | 'platformCustomerId' | 'uma'>, withWallet: boolean): Promise<void> {
    const id = base.id;
    if (typeof base.uma !== 'string') throw new AuditError(`customer ${id} has no umaAddress`);
    const listed = await this.w.listAll(this.w.api, '/customers/internal-accounts', { customerId: id });
    const c: Customer = { ...base, accounts: new Map(), wallet: null };
    for (const a of listed) {
      eq(`new account ${a.id} balance`, a.balance.amount, 0);
      eq(`new account ${a.id} totalBalance`, a.totalBalance.amount, 0);
      const currency = a.balance.currency.code as string;
      this.m.accounts.set(a.id, { id: a.id, currency, type: a.type, customerId: id, available: 0, pending: 0 });
      if (a.type === 'EMBEDDED_WALLET') c.wallet = { accountId: a.id, credentialId: null, challenges: 0, session: null };
      else c.accounts.set(currency, a.id);
    }
    for (const cur of ['USD', 'EUR'])
      if (!c.accounts.has(cur)) throw new AuditError(`customer ${id} has no ${cur} account: ${JSON.stringify(listed)}`);
    if (withWallet && !c.wallet) throw new AuditError(`customer ${id} with USDB has no EMBEDDED_WALLET account`);
    this.customers.push(c);
  }

  // ---------------------------------------------------------------------------------------------
  // Funding and transfers

  planFund(a: MAccount, amount: number): Planned {
    const over = amount > MAX_FUND;
    return {
      label: `fund ${a.currency} ${a.id} +${amount}`,
      client: this.w.api,
      path: `/sandbox/internal-accounts/${a.id}/fund`,
      body: { amount },
      key: this.w.nextKey(),
      debits: [a.id],
      feature: `fund ${a.type === 'EMBEDDED_WALLET' ? 'wallet' : a.currency}`,
      apply: (res) => {
        if (over) return expectError(res, 400, 'INVALID_INPUT', 'fund over the sandbox maximum');
        expectStatus(res, 200, 'fund');
        const calm = !this.volatile(a.id);
        this.m.fund(a.id, amount);
        if (calm) {
          eq('fund: balance', res.body.balance.amount, a.available);
          eq('fund: totalBalance', res.body.totalBalance.amount, a.available + a.pending);
        }
      },
    };
  }

  private fundAmount(currency: string): number {
    if (this.rng.chance(0.02)) return MAX_FUND + 1;
    return currency === 'USDB' ? this.rng.int(1_000_000, 5_000_000_000) : this.rng.int(10_000, 5_000_000);
  }

  async fund(): Promise<void> {
    const all = [...this.m.accounts.values()].filter((a) => a.currency !== 'MXN' && !this.isScaAccount(a.id) && !this.cards.owns(a.id));
    // Emptier accounts are funded more often.
    const a = this.rng.chance(0.6) ? all.reduce((lo, x) => (x.available < lo.available ? x : lo), all[0]!) : this.rng.pick(all);
    await this.w.send(this.planFund(a, this.fundAmount(a.currency)));
  }

  planTransferOut(a: MAccount, ext: MExternal, amount: number | undefined): Planned {
    const amt = amount ?? a.available;
    const bounds = CURRENCY_BOUNDS[a.currency]!;
    let expect: Expect;
    if (amount === undefined && a.available <= 0) expect = { status: 400, code: 'INVALID_INPUT' };
    else if (amt < bounds.min || amt > bounds.max) expect = { status: 400, code: 'AMOUNT_OUT_OF_RANGE' };
    else if (amt > a.available) expect = { status: 400, code: 'INVALID_AMOUNT' };
    else expect = { status: 201 };
    const body = { source: { accountId: a.id }, destination: { accountId: ext.id }, ...(amount !== undefined ? { amount } : {}) };
    return {
      label: `transfer-out ${a.currency} ${a.id} → …${ext.suffix} ${amount ?? '(all)'}`,
      client: this.w.api,
      path: '/transfer-out',
      body,
      key: this.w.nextKey(),
      debits: [a.id],
      feature: `transfer-out ${a.currency} …${ext.suffix}${amount === undefined ? ' (whole balance)' : ''}`,
      apply: (res) => {
        if (expect.code) return expectError(res, expect.status, expect.code, 'transfer-out');
        expectStatus(res, 201, 'transfer-out');
        this.applyTransferOut(res.body, a, ext, amt);
      },
    };
  }

  private applyTransferOut(w: Wire, a: MAccount, ext: MExternal, amt: number): void {
    const t = this.newTx(w.id, 'TRANSFER_OUT', a.id, amt, a.currency, transferScenario(ext.suffix, false));
    this.w.checkStamp('transfer-out createdAt', w.createdAt);
    this.m.startOutgoing(t, this.w.timeOf(w.createdAt));
    checkTx(w, t);
    this.w.touched.txs.add(t.id);
  }

  planTransferIn(ext: MExternal, a: MAccount, amount: number): Planned {
    const bounds = CURRENCY_BOUNDS[a.currency]!;
    const expect: Expect = amount < bounds.min || amount > bounds.max ? { status: 400, code: 'AMOUNT_OUT_OF_RANGE' } : { status: 201 };
    return {
      label: `transfer-in …${ext.suffix} → ${a.currency} ${a.id} ${amount}`,
      client: this.w.api,
      path: '/transfer-in',
      body: { source: { accountId: ext.id }, destination: { accountId: a.id }, amount },
      key: this.w.nextKey(),
      debits: [a.id],
      feature: `transfer-in …${ext.suffix}`,
      apply: (res) => {
        if (expect.code) return expectError(res, expect.status, expect.code, 'transfer-in');
        expectStatus(res, 201, 'transfer-in');
        this.applyTransferIn(res.body, ext, a, amount);
      },
    };
  }

  private applyTransferIn(w: Wire, ext: MExternal, a: MAccount, amount: number): void {
    const t = this.newTx(w.id, 'TRANSFER_IN', a.id, amount, a.currency, transferScenario(ext.suffix, true));
    this.w.checkStamp('transfer-in createdAt', w.createdAt);
    this.m.startPull(t, this.w.timeOf(w.createdAt));
    checkTx(w, t);
    this.w.touched.txs.add(t.id);
  }

  private newTx(id: string, kind: MTx['kind'], account: string | null, amount: number, currency: string, scenario: Scenario): MTx {
    return {
      id,
      kind,
      status: 'PENDING',
      failureReason: null,
      refund: null,
      account,
      amount,
      fees: 0,
      currency,
      received: amount,
      receivedCurrency: currency,
      receiver: null,
      scenario,
      quoteId: null,
      awaitingApproval: false,
      incomingHeld: false,
      events: [],
    };
  }

  async transferOut(): Promise<void> {
    const a = this.pickAccount(this.fiatAccounts());
    const kind: ExternalKind = a.currency === 'USD' ? 'US' : 'EUR';
    const ext = await this.external(a.customerId, kind, this.pickSuffix(TRANSFER_SUFFIXES));
    const amount = this.rng.chance(0.05) ? undefined : this.amountFrom(a);
    await this.w.send(this.planTransferOut(a, ext, amount));
  }

  /**
   * Several equal transfer-outs from one account at once, together more than it holds: exactly as
   * many as it can cover go through (whichever they are), the rest are 400 INVALID_AMOUNT, and
   * nothing is spent twice. All go to the same destination, so any winners leave the same state.
   */
  async race(): Promise<void> {
    const funded = this.fiatAccounts().filter((a) => a.available >= 100);
    if (funded.length === 0) return this.fund();
    const a = this.pickAccount(funded);
    const k = this.rng.int(3, 6);
    const amount = Math.min(CURRENCY_BOUNDS[a.currency]!.max, Math.floor(a.available / this.rng.int(1, k - 1)) - this.rng.int(0, 9));
    const ext = await this.external(a.customerId, a.currency === 'USD' ? 'US' : 'EUR', '009');
    const expected = Math.min(k, Math.floor(a.available / amount));
    const plans = Array.from({ length: k }, () => this.planTransferOut(a, ext, amount));
    const results = await Promise.all(plans.map(async (p) => ({ p, res: await this.w.post(p) })));
    let won = 0;
    for (const { res } of results) {
      if (res.status === 201) {
        won += 1;
        this.applyTransferOut(res.body, a, ext, amount);
      } else {
        expectError(res, 400, 'INVALID_AMOUNT', 'a racing transfer-out that found the money gone');
      }
    }
    // One line whatever the order of the answers, so a seed's history stays the same.
    this.w.record(
      `race: ${k} concurrent transfer-outs of ${amount} from ${a.currency} ${a.id} (balance ${a.available + won * amount}) → ${won} × 201, ${k - won} × 400`,
    );
    eq(`transfer-outs that went through out of ${k} racing for ${a.id}`, won, expected);
    this.w.features.add(`race ${won < k ? 'with losers' : 'all covered'}`);
  }

  /** A pull that stays PENDING 30 s and then fails (suffix 005): a delayed outcome to have pending. */
  async delayedPull(): Promise<void> {
    const a = this.rng.pick(this.fiatAccounts().filter((x) => x.currency === 'USD'));
    await this.w.send(this.planTransferIn(await this.external(a.customerId, 'US', '005'), a, this.rng.int(100, 100_000)));
  }

  async transferIn(): Promise<void> {
    const a = this.rng.pick(this.fiatAccounts().filter((x) => x.currency === 'USD'));
    const ext = await this.external(a.customerId, 'US', this.pickSuffix(TRANSFER_SUFFIXES));
    const amount = this.rng.chance(0.03) ? CURRENCY_BOUNDS.USD!.max + 1 : this.rng.int(100, 2_000_000);
    await this.w.send(this.planTransferIn(ext, a, amount));
  }

  // ---------------------------------------------------------------------------------------------
  // Quotes

  private destCurrency(d: Destination): string | undefined {
    if (d.kind === 'external') return d.ext.currency;
    if (d.kind === 'internal') return d.account.currency;
    return UMA_PARTIES[d.name]?.currency;
  }

  private destLabel(d: Destination): string {
    if (d.kind === 'external') return `${d.ext.currency} …${d.ext.suffix}`;
    if (d.kind === 'internal') return `internal ${d.account.currency} ${d.account.id}`;
    return d.name;
  }

  /**
   * A quote from `a` (or, with `realtime`, funded in real time in `a`'s currency: no account is
   * debited, the money arrives through POST /sandbox/send and is held outside the internal
   * accounts).
   */
  async planQuote(
    a: MAccount,
    d: Destination,
    side: 'SENDING' | 'RECEIVING',
    amount: number,
    immediate: boolean,
    o: { agent?: MAgent; realtime?: { customerId: string | null }; lookup?: LookupUse } = {},
  ): Promise<Planned> {
    const { agent, realtime, lookup } = o;
    // From an SCA customer's account, executing needs its authorisation unless it goes to its own account.
    const sca = !realtime && this.isScaAccount(a.id);
    const gated = sca && !(d.kind === 'internal' && d.account.customerId === a.customerId);
    const destCur = this.destCurrency(d);
    const wallet = a.type === 'EMBEDDED_WALLET';
    let expect: Expect;
    let priced = { total: 0, receiving: 0, fees: 0 };
    let rate = parseRate(1);
    if (destCur === undefined) expect = { status: 404, code: 'UMA_NOT_FOUND' };
    // A lookup the quote names is checked before anything is priced (docs/lookups.md).
    else if (lookup?.refusal) expect = lookup.refusal;
    else if (immediate && wallet) expect = { status: 400, code: 'INVALID_INPUT' };
    else {
      rate = await this.rateFor(a.currency, destCur);
      const terms = a.currency !== destCur && a.currency === 'USD' ? USD_FEE : undefined;
      priced = priceQuote(side, amount, rate, terms);
      const bounds = CURRENCY_BOUNDS[a.currency]!;
      if (priced.receiving <= 0 || priced.total < bounds.min || priced.total > bounds.max)
        expect = { status: 400, code: 'AMOUNT_OUT_OF_RANGE' };
      else if (immediate && !realtime && priced.total > a.available) expect = { status: 400, code: 'INVALID_AMOUNT' };
      // Executed at once by an SCA customer: parked for its authorisation (202), nothing moves.
      else expect = { status: immediate && gated ? 202 : 201 };
    }
    const destination =
      d.kind === 'uma'
        ? { destinationType: 'UMA_ADDRESS', umaAddress: `${d.name}@${UMA_DOMAIN}` }
        : { destinationType: 'ACCOUNT', accountId: d.kind === 'external' ? d.ext.id : d.account.id };
    const source = realtime
      ? { sourceType: 'REALTIME_FUNDING', currency: a.currency, ...(realtime.customerId ? { customerId: realtime.customerId } : {}) }
      : { sourceType: 'ACCOUNT', accountId: a.id };
    const body = {
      source,
      destination,
      lockedCurrencySide: side,
      lockedCurrencyAmount: amount,
      ...(immediate ? { immediatelyExecute: true } : {}),
      ...(lookup ? { lookupId: lookup.id, ...(lookup.info ? { senderCustomerInfo: lookup.info } : {}) } : {}),
    };
    // A real-time funded quote waits for its funds whatever immediatelyExecute says.
    const executes = immediate && !realtime;
    const scenario: Scenario =
      d.kind === 'external'
        ? quoteScenario(d.ext.suffix)
        : d.kind === 'uma'
          ? (UMA_PARTIES[d.name]?.scenario ?? { kind: 'SUCCESS', delayMs: 0 })
          : { kind: 'SUCCESS', delayMs: 0 };
    return {
      label: `${sca ? 'sca ' : ''}${agent ? `agent ${agent.id} ` : ''}${lookup ? `lookup ${lookup.id} ` : ''}quote ${immediate ? 'immediate' : 'locked'} ${a.currency} ${realtime ? 'real-time funded' : a.id} → ${this.destLabel(d)} ${side} ${amount}`,
      client: agent ? this.agentApi(agent.id) : this.w.api,
      path: agent ? '/agents/me/quotes' : '/quotes',
      body,
      key: this.w.nextKey(),
      debits: executes ? [a.id] : [],
      feature: lookup?.refusal
        ? `lookup quote (${lookup.refusal.why})`
        : `${sca ? 'sca ' : lookup ? 'lookup ' : agent ? 'agent ' : wallet ? 'wallet ' : realtime ? 'real-time ' : ''}quote ${immediate ? 'immediate' : 'locked'} ${side} → ${d.kind === 'external' ? `${d.ext.currency} …${d.ext.suffix}` : d.kind === 'uma' ? d.name : 'internal'}`,
      apply: (res) => {
        if (expect.code) return expectError(res, expect.status, expect.code, 'create quote');
        expectStatus(res, expect.status, 'create quote');
        const q = res.body;
        const parks = executes && gated;
        eq('quote status', q.status, parks ? 'PENDING_AUTHORIZATION' : executes ? 'PROCESSING' : 'PENDING');
        if (sca && !parks) eq('quote scaChallenge', q.scaChallenge, undefined);
        eq('quote exchangeRate', q.exchangeRate, rate.value);
        eq('quote totalSendingAmount', q.totalSendingAmount, priced.total);
        eq('quote totalReceivingAmount', q.totalReceivingAmount, priced.receiving);
        eq('quote feesIncluded', q.feesIncluded, priced.fees);
        eq('quote sendingCurrency', q.sendingCurrency.code, a.currency);
        eq('quote receivingCurrency', q.receivingCurrency.code, destCur);
        eq('quote expiresAt', Date.parse(q.expiresAt) - Date.parse(q.createdAt), QUOTE_TTL_MS);
        this.w.checkStamp('quote createdAt', q.createdAt);
        const payload: string | null = wallet ? (q.paymentInstructions?.[0]?.accountOrWalletInfo?.payloadToSign ?? null) : null;
        if (wallet && typeof payload !== 'string')
          throw new AuditError(`wallet quote without a payloadToSign: ${JSON.stringify(q.paymentInstructions)}`);
        if (realtime && !q.paymentInstructions?.[0]?.accountOrWalletInfo)
          throw new AuditError(`a real-time funded quote without payment instructions: ${res.text}`);
        const mq: MQuote = {
          id: q.id,
          txId: q.transactionId,
          status: 'PENDING',
          expiresAt: Date.parse(q.expiresAt),
          source: a.id,
          realtime: realtime !== undefined,
          total: priced.total,
          receiving: priced.receiving,
          fees: priced.fees,
          payload,
          agentId: agent?.id ?? null,
          scaGated: gated,
          challenge: null,
          authorised: false,
        };
        const t = this.newTx(q.transactionId, 'QUOTE', realtime ? null : a.id, priced.total, a.currency, scenario);
        t.fees = priced.fees;
        t.received = priced.receiving;
        t.receivedCurrency = destCur!;
        t.receiver = d.kind === 'internal' ? d.account.id : null;
        t.quoteId = q.id;
        this.m.event(t, 'PENDING');
        this.m.txs.set(t.id, t);
        this.m.quotes.set(mq.id, mq);
        if (parks) this.m.parkQuote(mq, this.challengeOf(q, Date.parse(q.createdAt)));
        else if (executes) this.m.executeQuote(mq, this.w.timeOf(q.createdAt));
        else this.m.schedule('EXPIRE', mq.id, mq.expiresAt);
        this.w.touched.txs.add(t.id);
        this.w.touched.quotes.add(mq.id);
      },
    };
  }

  private async pickDestination(a: MAccount, owner: string | null, allowInternal: boolean): Promise<Destination> {
    const kind = this.rng.weighted([
      ['external', 6],
      ['uma', 3],
      ['internal', allowInternal ? 1.5 : 0],
    ] as const);
    if (kind === 'uma') return { kind: 'uma', name: this.rng.weighted(UMA_NAMES) };
    if (kind === 'internal') {
      const others = this.fiatAccounts().filter((x) => x.id !== a.id);
      return { kind: 'internal', account: this.rng.pick(others) };
    }
    return { kind: 'external', ext: await this.external(owner, this.rng.chance(0.5) ? 'US' : 'EUR', this.pickSuffix(QUOTE_SUFFIXES)) };
  }

  /** A quote amount for `a` toward `d` on `side`: mostly part of the balance, some too large, a few too small to cover the fee. */
  private quoteAmount(a: MAccount, side: 'SENDING' | 'RECEIVING', destCur: string | undefined): number {
    const cross = destCur !== undefined && destCur !== a.currency;
    if (side === 'SENDING') {
      if (cross && a.currency === 'USD' && this.rng.chance(0.04)) return this.rng.int(1, USD_FEE.fixed);
      // Enough that something arrives at any of the sandbox rates.
      return this.amountFrom(a, cross ? 200 : 1);
    }
    return this.rng.int(100, 300_000);
  }

  async quote(): Promise<void> {
    if (this.nearRateBoundary(5_000)) return this.fund();
    const a = this.pickAccount(this.fiatAccounts());
    const d = await this.pickDestination(a, a.customerId, true);
    const side = this.rng.chance(0.75) ? 'SENDING' : 'RECEIVING';
    const immediate = this.rng.chance(0.5);
    await this.w.send(await this.planQuote(a, d, side, this.quoteAmount(a, side, this.destCurrency(d)), immediate));
  }

  planExecute(q: MQuote, signature?: string): Planned {
    const a = this.m.account(q.source);
    const wallet = a.type === 'EMBEDDED_WALLET';
    const sca = this.isScaQuote(q);
    const session = wallet ? this.customerOf(a.id)?.wallet?.session : undefined;
    let expect: Expect;
    if (q.status !== 'PENDING' || this.w.clearlyAfter(q.expiresAt)) expect = { status: 409, code: 'CONFLICT' };
    // Unsigned: a signed-retry challenge (the retry is covered by test/auth/execute.test.ts); nothing moves.
    else if (wallet && signature === undefined) expect = { status: 202 };
    else if (wallet && !(session && this.w.clearlyBefore(session.expiresAt))) expect = { status: 401, code: 'WALLET_SIGNATURE_INVALID' };
    else if (q.total > a.available) expect = { status: 400, code: 'INVALID_AMOUNT' };
    else expect = { status: 200 };
    return {
      label: `${sca ? 'sca ' : ''}execute ${q.id} (${a.currency} ${q.total} from ${a.id}${wallet ? (signature ? ', signed' : ', unsigned') : ''})`,
      client: this.w.api,
      path: `/quotes/${q.id}/execute`,
      body: {},
      ...(signature !== undefined ? { headers: { 'service-wallet-signature': signature } } : {}),
      key: this.w.nextKey(),
      debits: [a.id],
      feature: sca
        ? `sca execute${q.scaGated ? '' : ' (own account)'}`
        : `execute${wallet ? (signature ? ' wallet signed' : ' wallet unsigned') : ''}`,
      apply: (res) => {
        this.w.touched.quotes.add(q.id);
        this.w.touched.txs.add(q.txId);
        if (expect.code) return expectError(res, expect.status, expect.code, 'execute quote');
        if (expect.status === 202) return expectStatus(res, 202, 'execute quote (challenge)');
        expectStatus(res, 200, 'execute quote');
        if (q.scaGated) {
          // The SCA customer must authorise it: parked with its challenge (checked for funds, but nothing is held).
          eq('executed quote status', res.body.status, 'PENDING_AUTHORIZATION');
          return this.m.parkQuote(q, this.challengeOf(res.body, this.w.now()));
        }
        eq('executed quote status', res.body.status, 'PROCESSING');
        if (sca) eq('executed quote scaChallenge', res.body.scaChallenge, undefined);
        this.m.executeQuote(q, this.w.timeOf(undefined));
      },
    };
  }

  /** Quotes the platform may execute whose outcome the auditor can predict (not within the margin of expiring). */
  private executable(q: MQuote): boolean {
    return (
      q.agentId === null &&
      !q.realtime &&
      !this.isScaQuote(q) &&
      this.m.account(q.source).type !== 'EMBEDDED_WALLET' &&
      !this.volatile(q.source) &&
      (this.w.clearlyBefore(q.expiresAt) || this.w.clearlyAfter(q.expiresAt))
    );
  }

  async execute(): Promise<void> {
    const quotes = [...this.m.quotes.values()].filter((q) => this.executable(q));
    const open = quotes.filter((q) => q.status === 'PENDING' && this.w.clearlyBefore(q.expiresAt));
    const q = open.length > 0 && this.rng.chance(0.85) ? this.rng.pick(open) : quotes.length > 0 ? this.rng.pick(quotes) : undefined;
    if (!q) return this.quote();
    await this.w.send(this.planExecute(q));
  }

  /**
   * A real-time funded quote (the payer sends the money; no internal account is debited) and its
   * funding through POST /sandbox/send — sometimes with the wrong amount, sometimes never, so it
   * expires; or the funding of an earlier one.
   */
  async realtime(): Promise<void> {
    if (this.nearRateBoundary(5_000)) return;
    const earlier = [...this.m.quotes.values()].filter(
      (q) => q.realtime && (this.w.clearlyBefore(q.expiresAt) || this.w.clearlyAfter(q.expiresAt)),
    );
    if (earlier.length > 0 && this.rng.chance(0.25)) {
      await this.w.send(this.planSend(this.rng.pick(earlier), this.rng.chance(0.1)));
      return;
    }
    const currency = this.rng.chance(0.75) ? 'USD' : 'EUR';
    const carrier = this.m.platformAccount(currency)!;
    const c = this.rng.chance(0.7) ? this.rng.pick(this.customers) : undefined;
    const d = await this.pickDestination(carrier, c?.id ?? null, true);
    const side = this.rng.chance(0.8) ? 'SENDING' : 'RECEIVING';
    const amount = side === 'SENDING' ? this.rng.int(200, 2_000_000) : this.rng.int(100, 300_000);
    const immediate = this.rng.chance(0.2);
    const created = await this.w.send(
      await this.planQuote(carrier, d, side, amount, immediate, { realtime: { customerId: c?.id ?? null } }),
    );
    const fund = this.rng.chance(0.85);
    const mismatch = this.rng.chance(0.15);
    if (created.status !== 201 || !fund) return;
    await this.w.send(this.planSend(this.m.quotes.get(created.body.id)!, mismatch));
  }

  /** POST /sandbox/send: the payer pays a real-time funded quote (the wrong amount fails it, outside the ledger). */
  planSend(q: MQuote, mismatch: boolean): Planned {
    const t = this.m.tx(q.txId);
    const paid = mismatch ? q.total + 1 : undefined;
    const open = q.status === 'PENDING' && !this.w.clearlyAfter(q.expiresAt);
    return {
      label: `sandbox send ${q.id} (${q.status}) ${paid ?? 'the exact amount'}`,
      client: this.w.api,
      path: '/sandbox/send',
      body: { quoteId: q.id, currencyCode: t.currency, ...(paid !== undefined ? { currencyAmount: paid } : {}) },
      key: undefined,
      debits: [],
      feature: `sandbox send${mismatch ? ' (wrong amount)' : ''}`,
      apply: (res) => {
        this.w.touched.quotes.add(q.id);
        this.w.touched.txs.add(t.id);
        if (!open) return expectError(res, 409, 'CONFLICT', 'sandbox send');
        expectStatus(res, 200, 'sandbox send');
        if (mismatch) {
          // The payer's money bounces back to them: nothing was ever held.
          q.status = 'FAILED';
          t.status = 'FAILED';
          t.failureReason = 'FUNDING_AMOUNT_MISMATCH';
          this.m.event(t, 'FAILED');
        } else {
          this.m.executeQuote(q, this.w.timeOf(res.body.updatedAt));
        }
        checkTx(res.body, t);
      },
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Cancel, incoming payments, decisions

  async cancel(): Promise<void> {
    const txs = this.nonScaTxs();
    const pending = txs.filter(
      (t) => (t.kind === 'TRANSFER_OUT' || t.kind === 'TRANSFER_IN') && t.status === 'PENDING' && this.timerClear(t.id),
    );
    const settled = txs.filter((t) => t.status !== 'PENDING' || t.kind === 'QUOTE' || t.kind === 'UMA_RECEIVE');
    const t =
      pending.length > 0 && this.rng.chance(0.75) ? this.rng.pick(pending) : settled.length > 0 ? this.rng.pick(settled) : undefined;
    if (!t) return this.transferOut();
    let expect: Expect;
    if (t.kind === 'QUOTE' || t.kind === 'UMA_RECEIVE') expect = { status: 400, code: 'INVALID_INPUT' };
    else if (t.status === 'PENDING') expect = { status: 200 };
    else expect = { status: 409, code: 'TRANSACTION_NOT_CANCELLABLE' };
    await this.w.send({
      label: `cancel ${t.kind} ${t.id} (${t.status})`,
      client: this.w.api,
      path: `/transactions/${t.id}/cancel`,
      body: {},
      key: undefined,
      debits: [],
      feature: `cancel ${t.kind} ${t.status}`,
      apply: (res) => {
        this.w.touched.txs.add(t.id);
        if (expect.code) return expectError(res, expect.status, expect.code, 'cancel');
        expectStatus(res, 200, 'cancel');
        this.m.failTx(t, null, 'COMPLETED', 'USER_CANCELLATION');
        // docs/payments.md: a cancelled pull is FAILED (COLLECTION_FAILED); a cancelled push has no failure reason.
        t.failureReason = t.kind === 'TRANSFER_IN' ? 'COLLECTION_FAILED' : undefined;
        checkTx(res.body, t);
      },
    });
  }

  /** Transactions other than the SCA customers' payments (those are the SCA operations'). */
  private nonScaTxs(): MTx[] {
    return [...this.m.txs.values()].filter((t) => !(t.kind === 'QUOTE' && t.account !== null && this.isScaAccount(t.account)));
  }

  /** True when none of the transaction's outcomes is due within the margin (so its status is known). */
  private timerClear(txId: string): boolean {
    return this.m.timers.every((x) => x.ref !== txId || this.w.clearlyBefore(x.dueAt));
  }

  async umaReceive(): Promise<void> {
    const c = this.rng.pick(this.customers);
    const sender = this.rng.weighted([
      ['$success.usd', 3],
      ['$success.eur', 1],
      ['$pending.long.usd', 1],
      ['$fail.compliance.usd', 1],
      ['$nobody.usd', 0.3],
    ] as const);
    const currency = this.rng.chance(0.7) ? 'USD' : 'EUR';
    const account = c.accounts.get(currency)!;
    const amount = this.rng.int(100, 500_000);
    const party = UMA_PARTIES[sender];
    await this.w.send({
      label: `uma receive ${sender} → customer ${c.n} ${currency} ${amount}`,
      client: this.w.api,
      path: '/sandbox/uma/receive',
      body: {
        senderUmaAddress: `${sender}@${UMA_DOMAIN}`,
        customerId: c.id,
        receivingCurrencyCode: currency,
        receivingCurrencyAmount: amount,
      },
      key: undefined,
      debits: [],
      feature: `uma receive from ${sender}`,
      apply: (res) => {
        if (!party) return expectError(res, 404, 'UMA_NOT_FOUND', 'uma receive');
        expectStatus(res, 200, 'uma receive');
        const t = this.newTx(res.body.id, 'UMA_RECEIVE', account, amount, party.currency, party.scenario);
        t.receivedCurrency = currency;
        this.m.txs.set(t.id, t);
        this.w.checkStamp('uma receive createdAt', res.body.createdAt);
        this.m.event(t, 'PENDING');
        if (party.scenario.kind === 'FAIL') {
          t.status = 'FAILED';
          t.failureReason = party.scenario.reason;
          this.m.event(t, 'FAILED');
        } else {
          // A webhook endpoint is configured: the payment waits for the platform's decision.
          t.awaitingApproval = true;
          this.m.schedule('APPROVAL_TIMEOUT', t.id, this.w.timeOf(res.body.createdAt) + APPROVAL_WINDOW_MS);
        }
        checkTx(res.body, t);
        this.w.touched.txs.add(t.id);
      },
    });
  }

  async decideIncoming(): Promise<void> {
    const umas = [...this.m.txs.values()].filter((t) => t.kind === 'UMA_RECEIVE' && this.timerClear(t.id));
    const waiting = umas.filter((t) => t.status === 'PENDING' && t.awaitingApproval);
    const others = this.nonScaTxs().filter((t) => !(t.status === 'PENDING' && t.awaitingApproval) && this.timerClear(t.id));
    const t = waiting.length > 0 && this.rng.chance(0.8) ? this.rng.pick(waiting) : others.length > 0 ? this.rng.pick(others) : undefined;
    if (!t) return this.umaReceive();
    const approve = this.rng.chance(0.6);
    const waitingNow = t.status === 'PENDING' && t.awaitingApproval;
    const reason = approve ? undefined : this.rng.pick([undefined, 'RESTRICTED_JURISDICTION']);
    await this.w.send({
      label: `${approve ? 'approve' : 'reject'} incoming ${t.kind} ${t.id} (${t.status})`,
      client: this.w.api,
      path: `/transactions/${t.id}/${approve ? 'approve' : 'reject'}`,
      body: reason ? { reason } : {},
      key: undefined,
      debits: [],
      feature: `${approve ? 'approve' : 'reject'} incoming`,
      apply: (res) => {
        this.w.touched.txs.add(t.id);
        if (!waitingNow) return expectError(res, 409, 'TRANSACTION_NOT_PENDING_PLATFORM_APPROVAL', 'decide incoming');
        expectStatus(res, 200, 'decide incoming');
        t.awaitingApproval = false;
        if (approve) this.m.completeTx(t, this.w.timeOf(res.body.updatedAt));
        else {
          t.status = 'REJECTED';
          // A reason outside the live enum is kept with the transaction, not in failureReason.
          t.failureReason = null;
          this.m.event(t, 'FAILED');
        }
        checkTx(res.body, t);
      },
    });
  }

  // ---------------------------------------------------------------------------------------------
  // The clock

  async advance(seconds: number, quiet = false): Promise<void> {
    const res = await this.w.api.post('/sandbox/clock/advance', { seconds });
    if (!quiet) this.w.record(`advance the clock ${seconds} s → ${res.status} ${res.body?.now ?? res.body?.code}`);
    expectStatus(res, 200, 'clock advance');
    this.w.applyAdvance(seconds, res.body);
    this.w.features.add(`advance ${seconds < 25 ? 'small' : seconds < 300 ? 'medium' : 'large'}`);
  }

  // ---------------------------------------------------------------------------------------------
  // Strong Customer Authentication (issue #23; test/payments/sca-quotes.test.ts)

  /**
   * The scaChallenge of a quote just parked at platform time `at` (in-process: exactly now): SMS_OTP
   * for the payout, lapsing 5 minutes later.
   */
  private challengeOf(w: Wire, at: number): MChallenge {
    const c = w.scaChallenge;
    if (!c || typeof c.id !== 'string' || !c.id.startsWith('ScaChallenge:'))
      throw new AuditError(`quote ${w.id} parked without an scaChallenge: ${JSON.stringify(w)}`);
    eq(`quote ${w.id} scaChallenge.factor`, c.factor, 'SMS_OTP');
    eq(`quote ${w.id} scaChallenge.purpose`, c.purpose, 'PAYOUT');
    const expiresAt = Date.parse(c.expiresAt);
    if (this.w.deterministic) eq(`quote ${w.id} scaChallenge.expiresAt`, c.expiresAt, new Date(at + SCA_CHALLENGE_TTL_MS).toISOString());
    else if (Math.abs(expiresAt - SCA_CHALLENGE_TTL_MS - at) > 60_000)
      throw new AuditError(`quote ${w.id} scaChallenge.expiresAt ${c.expiresAt}: not 5 minutes after ${new Date(at).toISOString()}`);
    return { id: c.id, expiresAt, wrong: 0 };
  }

  /** A new EEA customer with a USD and a EUR account (both in the model, empty). */
  private async createScaCustomer(): Promise<ScaCustomer> {
    const n = this.scaCustomers.length + 1;
    const res = await this.w.api.post('/customers', scaCustomerBody(n), { headers: { 'idempotency-key': this.w.nextKey() } });
    this.w.record(`create SCA customer ${n} (DE) → ${res.status} ${res.body?.id ?? res.body?.code}`);
    expectStatus(res, 201, 'create SCA customer');
    const listed = await this.w.listAll(this.w.api, '/customers/internal-accounts', { customerId: res.body.id });
    const c: ScaCustomer = { id: res.body.id, n, accounts: new Map(), session: null, failedLogins: 0 };
    for (const a of listed) {
      eq(`new account ${a.id} balance`, a.balance.amount, 0);
      const currency = a.balance.currency.code as string;
      this.m.accounts.set(a.id, { id: a.id, currency, type: a.type, customerId: c.id, available: 0, pending: 0 });
      c.accounts.set(currency, a.id);
    }
    for (const cur of ['USD', 'EUR'])
      if (!c.accounts.has(cur)) throw new AuditError(`SCA customer ${c.id} has no ${cur} account: ${JSON.stringify(listed)}`);
    this.scaCustomers.push(c);
    this.w.features.add('sca customer');
    return c;
  }

  private hasSession(c: ScaCustomer): boolean {
    return c.session !== null && this.w.clearlyBefore(c.session);
  }

  /**
   * An SCA customer pays: a quote from its USD or EUR account (above the low-value limit) to one of
   * its external accounts, a sandbox UMA party or another customer's account — which its execution
   * parks in PENDING_AUTHORIZATION with nothing moved (immediatelyExecute: 202) — or to its own
   * other account, which is exempt and executes at once. Sometimes more than it holds (400
   * INVALID_AMOUNT, checked at parking as at a normal execution), sometimes an earlier quote.
   */
  async scaPay(): Promise<void> {
    if (this.nearRateBoundary(5_000)) return;
    const c = this.scaCustomers.length > 0 ? this.scaRng.pick(this.scaCustomers) : await this.createScaCustomer();
    const earlier = [...this.m.quotes.values()].filter(
      (q) => this.isScaQuote(q) && (this.w.clearlyBefore(q.expiresAt) || this.w.clearlyAfter(q.expiresAt)) && !this.volatile(q.source),
    );
    if (earlier.length > 0 && this.scaRng.chance(0.2)) {
      const open = earlier.filter((q) => q.status === 'PENDING' && this.w.clearlyBefore(q.expiresAt));
      await this.w.send(this.sca(this.planExecute(this.scaRng.pick(open.length > 0 && this.scaRng.chance(0.7) ? open : earlier))));
      return;
    }
    // Parking holds nothing: a second payment parked beside one already waiting may together with it
    // be more than the account holds. Both are authorised: the second is refused for funds (400
    // INVALID_AMOUNT, and stays parked). The new one pays a …001 account: nothing it holds comes back
    // within the step (a failure due at once would refund it before the second authorisation).
    const waiting = [...this.m.quotes.values()].filter(
      (q) =>
        q.status === 'PENDING_AUTHORIZATION' &&
        this.m.account(q.source).customerId === c.id &&
        q.challenge!.wrong < SCA_MAX_WRONG &&
        q.total >= 2 * SCA_MIN_AMOUNT &&
        q.total <= this.m.account(q.source).available &&
        this.w.clearlyBefore(q.challenge!.expiresAt - (this.w.deterministic ? 0 : 10_000)),
    );
    const first =
      waiting.length > 0 && this.scaRng.chance(this.scaSeen('sca authorize → 400 INVALID_AMOUNT') ? 0.05 : 0.5)
        ? this.scaRng.pick(waiting)
        : undefined;
    const a = first ? this.m.account(first.source) : this.m.account(c.accounts.get(this.scaRng.chance(0.7) ? 'USD' : 'EUR')!);
    if (this.volatile(a.id)) return;
    if (a.available < 1_000_000) await this.w.send(this.sca(this.planFund(a, this.scaRng.int(1_000_000, 5_000_000))));
    const kind = this.scaRng.weighted([
      ['external', 6],
      ['uma', 2],
      ['own', 1.5],
      ['other', 0.7],
    ] as const);
    let d: Destination;
    if (kind === 'uma') d = { kind: 'uma', name: this.scaRng.weighted(UMA_NAMES.filter(([n]) => UMA_PARTIES[n])) };
    else if (kind === 'own') d = { kind: 'internal', account: this.m.account(c.accounts.get(a.currency === 'USD' ? 'EUR' : 'USD')!) };
    else if (kind === 'other') d = { kind: 'internal', account: this.scaRng.pick(this.fiatAccounts()) };
    else
      d = {
        kind: 'external',
        ext: await this.external(c.id, this.scaRng.chance(0.6) ? 'US' : 'EUR', this.scaRng.weighted(QUOTE_SUFFIXES)),
      };
    if (first) d = { kind: 'external', ext: await this.external(c.id, 'US', '001') };
    const short = !first && this.scaRng.chance(this.scaSeen('sca execute → 400 INVALID_AMOUNT') ? 0.1 : 0.3);
    const amount = short
      ? a.available + this.scaRng.int(1, 50_000)
      : first
        ? a.available - Math.floor(first.total / 2)
        : Math.max(SCA_MIN_AMOUNT, Math.floor(a.available * (0.02 + 0.25 * this.scaRng.next())));
    const immediate = this.scaRng.chance(short ? 0.25 : 0.35);
    const created = await this.w.send(
      this.sca(await this.planQuote(a, d, 'SENDING', Math.min(amount, CURRENCY_BOUNDS[a.currency]!.max), immediate)),
    );
    if (created.status !== 201 && created.status !== 202) return;
    const q = this.m.quotes.get(created.body.id)!;
    if (!immediate && (short || first || this.scaRng.chance(0.8))) await this.w.send(this.sca(this.planExecute(q)));
    // Sometimes the customer authorises it at once; the others wait for scaAuthorize, or lapse.
    if (q.status === 'PENDING_AUTHORIZATION' && (first || this.scaRng.chance(0.35))) await this.authorizeFlow(c, q);
    if (first) await this.w.send(this.planAuthorize(c, first, SCA_CODE));
  }

  /** Whether the run has seen `feature` (rare SCA paths are made likelier until it has). */
  private scaSeen(feature: string): boolean {
    return this.w.features.has(feature);
  }

  /** The SCA login with the sandbox SMS code (sometimes a wrong one first: 400, counted as a failed login). */
  private async scaLogin(c: ScaCustomer): Promise<void> {
    const q = { query: { customerId: c.id } };
    const start = await this.w.api.post('/sca/login/start', { factor: 'SMS_OTP' }, q);
    this.w.record(`SCA customer ${c.n}: login start → ${start.status} ${start.body?.challengeId ?? start.body?.code}`);
    expectStatus(start, 200, 'SCA login start');
    if (typeof start.body.challengeId !== 'string') throw new AuditError(`SCA login start without a challengeId: ${start.text}`);
    if (this.w.deterministic)
      eq('SCA login challenge expiresAt', start.body.expiresAt, new Date(this.w.now() + SCA_CHALLENGE_TTL_MS).toISOString());
    const complete = (code: string) =>
      this.w.api.post('/sca/login/complete', { factor: 'SMS_OTP', challengeId: start.body.challengeId, code, endUserIpAddress: SCA_IP }, q);
    if (c.failedLogins < 2 && this.scaRng.chance(0.15)) {
      const wrong = await complete('000000');
      this.w.record(`SCA customer ${c.n}: login complete (wrong code) → ${wrong.status} ${wrong.body?.code}`);
      expectError(wrong, 400, 'INVALID_INPUT', 'SCA login with a wrong code');
      c.failedLogins += 1;
      this.w.features.add('sca login (wrong code) → 400 INVALID_INPUT');
    }
    const done = await complete(SCA_CODE);
    this.w.record(`SCA customer ${c.n}: login complete → ${done.status} ${done.body?.status ?? done.body?.code}`);
    expectStatus(done, 200, 'SCA login complete');
    eq('SCA login status', done.body.status, 'SUCCESS');
    const expiresAt = Date.parse(done.body.sessionExpiresAt);
    if (this.w.deterministic) eq('SCA session expiresAt', expiresAt, this.w.now() + SCA_SESSION_MS);
    c.session = expiresAt;
    this.w.features.add('sca login → 200');
  }

  /** RESET_PASSWORD_COMPLETED: the failed-login counter goes back to 0 and the SCA session is revoked. */
  private async scaPasswordReset(c: ScaCustomer): Promise<void> {
    const res = await this.w.api.post('/sca/record-event', { eventType: 'RESET_PASSWORD_COMPLETED' }, { query: { customerId: c.id } });
    this.w.record(`SCA customer ${c.n}: password reset → ${res.status} ${res.body?.failedAttempts ?? res.body?.code}`);
    expectStatus(res, 200, 'SCA record-event');
    eq('password reset failedAttempts', res.body.failedAttempts, 0);
    eq('password reset suspended', res.body.suspended, false);
    c.session = null;
    c.failedLogins = 0;
    this.w.features.add('sca password reset → 200');
  }

  /**
   * POST /quotes/{id}/authorize with `code`: needs a parked quote (else 409 CONFLICT) and the
   * customer's login session (409 SCA_SESSION_REQUIRED); a voided challenge is 429; a wrong code 400
   * (counted); the right one releases the payment as a normal execution — unless the balance no
   * longer covers it (400 INVALID_AMOUNT, nothing changes).
   */
  private planAuthorize(c: ScaCustomer, q: MQuote, code: string): Planned {
    const a = this.m.account(q.source);
    const ch = q.challenge;
    const wrong = code !== SCA_CODE;
    let expect: Expect;
    if (q.status !== 'PENDING_AUTHORIZATION' || !ch) expect = { status: 409, code: 'CONFLICT' };
    else if (!this.hasSession(c)) expect = { status: 409, code: 'SCA_SESSION_REQUIRED' };
    else if (ch.wrong >= SCA_MAX_WRONG) expect = { status: 429, code: 'RATE_LIMITED' };
    else if (wrong) expect = { status: 400, code: 'INVALID_INPUT' };
    else if (q.total > a.available) expect = { status: 400, code: 'INVALID_AMOUNT' };
    else expect = { status: 200 };
    return {
      label: `sca authorize ${q.id} (${q.status}${ch ? `, ${ch.wrong} wrong` : ''}) ${wrong ? 'wrong code' : 'right code'}`,
      client: this.w.api,
      path: `/quotes/${q.id}/authorize`,
      body: { code, endUserIpAddress: SCA_IP },
      key: undefined,
      debits: [a.id],
      feature: `sca authorize${wrong ? ' (wrong code)' : ''}`,
      apply: (res) => {
        this.w.touched.quotes.add(q.id);
        this.w.touched.txs.add(q.txId);
        if (expect.code) {
          expectError(res, expect.status, expect.code, 'authorize quote');
          if (expect.code === 'INVALID_INPUT' && ch) {
            ch.wrong += 1;
            eq('wrong code attemptsRemaining', res.body.details?.attemptsRemaining, SCA_MAX_WRONG - ch.wrong);
          }
          return;
        }
        expectStatus(res, 200, 'authorize quote');
        eq('authorised quote status', res.body.status, 'PROCESSING');
        eq('authorised quote scaChallenge', res.body.scaChallenge, undefined);
        this.m.authorizeQuote(q, this.w.timeOf(undefined));
      },
    };
  }

  /**
   * The customer authorises a parked quote (or tries one that is not parked: 409): without its
   * login session first, sometimes (409 SCA_SESSION_REQUIRED, then it logs in), sometimes after a
   * password reset revoked it; sometimes with wrong codes — rarely until the challenge is void (429
   * after); mostly with the right code at last. Parked quotes left alone lapse with the clock.
   */
  async scaAuthorize(): Promise<void> {
    // Clear of its lapse by more than the few requests this step sends before the authorisation.
    const slack = this.w.deterministic ? 0 : 10_000;
    const known = [...this.m.quotes.values()].filter(
      (q) =>
        this.isScaQuote(q) &&
        !this.volatile(q.source) &&
        (q.status !== 'PENDING_AUTHORIZATION' ||
          this.w.clearlyBefore(q.challenge!.expiresAt - slack) ||
          this.w.clearlyAfter(q.challenge!.expiresAt)),
    );
    const parked = known.filter((q) => q.status === 'PENDING_AUTHORIZATION');
    const q =
      parked.length > 0 && this.scaRng.chance(0.88) ? this.scaRng.pick(parked) : known.length > 0 ? this.scaRng.pick(known) : undefined;
    if (!q) return this.scaPay();
    const owner = this.m.account(q.source).customerId;
    await this.authorizeFlow(this.scaCustomers.find((x) => x.id === owner)!, q);
  }

  private async authorizeFlow(c: ScaCustomer, q: MQuote): Promise<void> {
    if (c.session !== null && this.scaRng.chance(0.1)) await this.scaPasswordReset(c);
    if (!this.hasSession(c)) {
      if (this.scaRng.chance(0.7)) await this.w.send(this.planAuthorize(c, q, SCA_CODE));
      await this.scaLogin(c);
    }
    if (this.scaRng.chance(0.3)) {
      // Rarely, wrong codes until the challenge is void (the next attempt is 429 until it lapses).
      const left = SCA_MAX_WRONG - (q.challenge?.wrong ?? 0);
      const voided = this.scaSeen('sca authorize → 429 RATE_LIMITED') || this.scaSeen('sca authorize (wrong code) → 429 RATE_LIMITED');
      const tries = left > 0 && this.scaRng.chance(voided ? 0.15 : 0.6) ? left : 1;
      for (let i = 0; i < tries; i++) await this.w.send(this.planAuthorize(c, q, this.scaRng.pick(['000000', '654321', '123457'])));
    }
    if (this.scaRng.chance(0.8)) await this.w.send(this.planAuthorize(c, q, SCA_CODE));
  }

  // ---------------------------------------------------------------------------------------------
  // Embedded wallets

  /** An OTP login of the wallet's EMAIL_OTP credential (created on first use); false when its challenges are used up. */
  private async login(c: Customer): Promise<boolean> {
    const wallet = c.wallet!;
    let bundle: string;
    if (wallet.credentialId === null) {
      const res = await this.w.api.post('/auth/credentials', { type: 'EMAIL_OTP', accountId: wallet.accountId });
      this.w.record(`wallet ${wallet.accountId}: add EMAIL_OTP credential → ${res.status}`);
      expectStatus(res, 201, 'create EMAIL_OTP credential');
      wallet.credentialId = res.body.id;
      bundle = res.body.otpEncryptionTargetBundle;
    } else {
      if (wallet.challenges >= 5) return false;
      wallet.challenges += 1;
      const res = await this.w.api.post(`/auth/credentials/${wallet.credentialId}/challenge`, {});
      this.w.record(`wallet ${wallet.accountId}: OTP challenge → ${res.status}`);
      expectStatus(res, 200, 'OTP challenge');
      bundle = res.body.otpEncryptionTargetBundle;
    }
    const tek = generateKeyPair({ compressed: true });
    const body = { type: 'EMAIL_OTP', encryptedOtpBundle: encryptOtp(bundle, tek.publicKey, '000000') };
    const leg1 = await this.w.api.post(`/auth/credentials/${wallet.credentialId}/verify`, body);
    expectStatus(leg1, 202, 'OTP verify (challenge)');
    const leg2 = await this.w.api.post(`/auth/credentials/${wallet.credentialId}/verify`, body, {
      headers: { 'service-wallet-signature': stamp(tek.privateKey, leg1.body.payloadToSign), 'request-id': leg1.body.requestId },
    });
    this.w.record(`wallet ${wallet.accountId}: OTP verify (signed) → ${leg2.status} ${leg2.body?.id ?? leg2.body?.code}`);
    expectStatus(leg2, 200, 'OTP verify (signed)');
    const expiresAt = Date.parse(leg2.body.expiresAt);
    if (this.w.deterministic) eq('session expiresAt', expiresAt, this.w.now() + SESSION_MS);
    wallet.session = { id: leg2.body.id, privateKey: tek.privateKey, expiresAt };
    this.w.features.add(wallet.challenges === 0 ? 'wallet first login' : 'wallet login again');
    return true;
  }

  async walletPay(): Promise<void> {
    const c = this.rng.pick(this.customers.filter((x) => x.wallet));
    const wallet = c.wallet!;
    const a = this.m.account(wallet.accountId);
    if (this.volatile(a.id)) return;
    if (a.available < 2_000_000) await this.w.send(this.planFund(a, this.rng.int(50_000_000, 2_000_000_000)));
    if (this.nearRateBoundary(5_000)) return;
    const dkind = this.rng.weighted([
      ['USD', 3],
      ['USDB', 2],
      ['uma', 1],
    ] as const);
    const d: Destination =
      dkind === 'uma'
        ? { kind: 'uma', name: '$success.usd' }
        : { kind: 'external', ext: await this.external(c.id, dkind === 'USD' ? 'US' : 'USDB', this.pickSuffix(QUOTE_SUFFIXES)) };
    const side = dkind === 'USD' && this.rng.chance(0.3) ? 'RECEIVING' : 'SENDING';
    const amount = side === 'RECEIVING' ? this.rng.int(100, 100_000) : this.amountFrom(a, 1_000_000);
    const immediate = this.rng.chance(0.1);
    const created = await this.w.send(await this.planQuote(a, d, side, amount, immediate));
    if (created.status !== 201) return;
    const q = this.m.quotes.get(created.body.id)!;
    if (this.rng.chance(0.25)) await this.w.send(this.planExecute(q));
    const session = wallet.session;
    if (session && this.w.clearlyAfter(session.expiresAt) && this.rng.chance(0.5)) {
      // A stamp by an expired session is refused; nothing moves.
      await this.w.send(this.planExecute(q, stamp(session.privateKey, q.payload!)));
      this.w.features.add('wallet execute with an expired session');
    }
    if (!wallet.session || !this.w.clearlyBefore(wallet.session.expiresAt - 5_000)) {
      if (!(await this.login(c))) return;
    }
    await this.w.send(this.planExecute(q, stamp(wallet.session!.privateKey, q.payload!)));
  }

  // ---------------------------------------------------------------------------------------------
  // Agents

  async createAgent(): Promise<void> {
    const c = this.rng.pick(this.customers);
    // Alternate the default mode so both kinds of agent exist early.
    const mode = this.m.agents.size % 2 === 0 ? 'AUTO' : 'APPROVAL_REQUIRED';
    const limit = this.rng.pick([50_000, 500_000, 5_000_000]);
    const usd = c.accounts.get('USD')!;
    const rule = this.rng.chance(0.3) ? { accountId: usd, executionMode: mode === 'AUTO' ? 'APPROVAL_REQUIRED' : 'AUTO' } : undefined;
    const policy = {
      permissions: AGENT_PERMISSIONS,
      defaultExecutionMode: mode,
      spendingLimits: { currency: 'USD', perTransactionLimit: limit },
      ...(rule ? { accountRestrictions: { accountRules: [rule] } } : {}),
    };
    const res = await this.w.api.post(
      '/agents',
      { name: `Workload agent ${this.m.agents.size + 1}`, customerId: c.id, policy },
      { headers: { 'idempotency-key': this.w.nextKey() } },
    );
    this.w.record(
      `create agent for customer ${c.n} (${mode}${rule ? `, ${rule.executionMode} on USD` : ''}, limit ${limit}) → ${res.status} ${res.body?.agent?.id ?? res.body?.code}`,
    );
    expectStatus(res, 201, 'create agent');
    const redeemed = await this.w.anon.post(`/agents/device-codes/${res.body.deviceCode.code}/redeem`);
    this.w.record(`redeem the agent's device code → ${redeemed.status}`);
    expectStatus(redeemed, 200, 'redeem device code');
    const agent: MAgent = {
      id: res.body.agent.id,
      customerId: c.id,
      token: redeemed.body.accessToken,
      mode,
      perTransactionLimit: limit,
      ruleAccount: rule ? usd : null,
      ruleMode: rule ? (rule.executionMode as MAgent['mode']) : null,
    };
    this.m.agents.set(agent.id, agent);
    this.agentClients.set(agent.id, new Api(() => this.w.target.baseUrl(), { bearer: agent.token }));
  }

  private modeFor(agent: MAgent, accountId: string): MAgent['mode'] {
    return agent.ruleAccount === accountId && agent.ruleMode ? agent.ruleMode : agent.mode;
  }

  /** An agent's transfer-out or transfer-in: an action, executed at once (AUTO) or waiting for approval. */
  async agentTransfer(): Promise<void> {
    const agent = this.rng.pick([...this.m.agents.values()]);
    const c = this.customers.find((x) => x.id === agent.customerId)!;
    const a = this.m.account(c.accounts.get('USD')!);
    const out = this.rng.chance(0.65);
    if (this.volatile(a.id)) return;
    const ext = await this.external(c.id, 'US', this.pickSuffix(TRANSFER_SUFFIXES));
    const amount = out ? this.amountFrom(a) : this.rng.int(100, 1_000_000);
    const mode = this.modeFor(agent, a.id);
    const bounds = CURRENCY_BOUNDS.USD!;
    let expect: Expect;
    if (amount > agent.perTransactionLimit) expect = { status: 403, code: 'FORBIDDEN' };
    else if (mode === 'APPROVAL_REQUIRED') expect = { status: 201 };
    else if (amount < bounds.min || amount > bounds.max) expect = { status: 400, code: 'AMOUNT_OUT_OF_RANGE' };
    else if (out && amount > a.available) expect = { status: 400, code: 'INVALID_AMOUNT' };
    else expect = { status: 201 };
    const body = out
      ? { source: { accountId: a.id }, destination: { accountId: ext.id }, amount }
      : { source: { accountId: ext.id }, destination: { accountId: a.id }, amount };
    await this.w.send({
      label: `agent ${agent.id} (${mode}) transfer-${out ? 'out' : 'in'} ${out ? `→ …${ext.suffix}` : `…${ext.suffix} →`} ${amount}`,
      client: this.agentApi(agent.id),
      path: out ? '/agents/me/transfer-out' : '/agents/me/transfer-in',
      body,
      key: this.w.nextKey(),
      debits: [a.id],
      feature: `agent transfer-${out ? 'out' : 'in'} ${mode}`,
      apply: (res) => {
        if (expect.code) return expectError(res, expect.status, expect.code, 'agent transfer');
        expectStatus(res, 201, 'agent transfer');
        const action: MAction = {
          id: res.body.id,
          agentId: agent.id,
          type: out ? 'TRANSFER_OUT' : 'TRANSFER_IN',
          status: mode === 'AUTO' ? 'APPROVED' : 'PENDING_APPROVAL',
          transfer: { source: out ? a.id : ext.id, destination: out ? ext.id : a.id, amount },
          quoteId: null,
          txId: null,
          announced: mode !== 'AUTO',
        };
        eq('agent action status', res.body.status, action.status);
        if (mode === 'AUTO') {
          action.txId = res.body.transaction?.id ?? null;
          if (!action.txId) throw new AuditError(`an AUTO action came back without its transaction: ${JSON.stringify(res.body)}`);
          if (out) this.applyTransferOut(res.body.transaction, a, ext, amount);
          else this.applyTransferIn(res.body.transaction, ext, a, amount);
        }
        checkAction(res.body, action.status, action.txId);
        this.m.actions.set(action.id, action);
      },
    });
  }

  async agentQuote(): Promise<void> {
    if (this.nearRateBoundary(5_000)) return;
    const agent = this.rng.pick([...this.m.agents.values()]);
    const c = this.customers.find((x) => x.id === agent.customerId)!;
    const a = this.m.account(c.accounts.get('USD')!);
    const d = await this.pickDestination(a, c.id, false);
    const side = this.rng.chance(0.8) ? 'SENDING' : 'RECEIVING';
    const created = await this.w.send(await this.planQuote(a, d, side, this.quoteAmount(a, side, this.destCurrency(d)), false, { agent }));
    if (created.status === 201 && this.rng.chance(0.6)) await this.agentExecuteQuote(agent, this.m.quotes.get(created.body.id)!);
  }

  async agentExecute(): Promise<void> {
    const agent = this.rng.pick([...this.m.agents.values()]);
    const quotes = [...this.m.quotes.values()].filter(
      (q) => q.agentId === agent.id && !this.volatile(q.source) && (this.w.clearlyBefore(q.expiresAt) || this.w.clearlyAfter(q.expiresAt)),
    );
    const open = quotes.filter((q) => q.status === 'PENDING');
    const q = open.length > 0 && this.rng.chance(0.85) ? this.rng.pick(open) : quotes.length > 0 ? this.rng.pick(quotes) : undefined;
    if (!q) return this.agentQuote();
    await this.agentExecuteQuote(agent, q);
  }

  private async agentExecuteQuote(agent: MAgent, q: MQuote): Promise<void> {
    const a = this.m.account(q.source);
    const mode = this.modeFor(agent, a.id);
    const waiting = [...this.m.actions.values()].some((x) => x.quoteId === q.id && x.status === 'PENDING_APPROVAL');
    let expect: Expect;
    if (waiting || q.status !== 'PENDING' || this.w.clearlyAfter(q.expiresAt)) expect = { status: 409, code: 'CONFLICT' };
    else if (q.total > agent.perTransactionLimit) expect = { status: 403, code: 'FORBIDDEN' };
    else if (mode === 'APPROVAL_REQUIRED') expect = { status: 200 };
    else if (q.total > a.available) expect = { status: 400, code: 'INVALID_AMOUNT' };
    else expect = { status: 200 };
    await this.w.send({
      label: `agent ${agent.id} (${mode}) execute ${q.id} (${q.status}, ${q.total})`,
      client: this.agentApi(agent.id),
      path: `/agents/me/quotes/${q.id}/execute`,
      body: {},
      key: this.w.nextKey(),
      debits: [a.id],
      feature: `agent execute ${mode}`,
      apply: (res) => {
        this.w.touched.quotes.add(q.id);
        if (expect.code) return expectError(res, expect.status, expect.code, 'agent execute');
        expectStatus(res, 200, 'agent execute');
        const action: MAction = {
          id: res.body.id,
          agentId: agent.id,
          type: 'EXECUTE_QUOTE',
          status: mode === 'AUTO' ? 'APPROVED' : 'PENDING_APPROVAL',
          transfer: null,
          quoteId: q.id,
          txId: null,
          announced: mode !== 'AUTO',
        };
        if (mode === 'AUTO') {
          this.m.executeQuote(q, this.w.timeOf(undefined));
          action.txId = q.txId;
          this.w.touched.txs.add(q.txId);
        }
        checkAction(res.body, action.status, action.txId);
        this.m.actions.set(action.id, action);
      },
    });
  }

  /** The platform approves or rejects an agent action; approval runs it under the balances and quote state of now. */
  async decideAction(): Promise<void> {
    const all = [...this.m.actions.values()].filter(
      (x) => (x.quoteId === null || this.predictableQuote(x.quoteId)) && !this.volatile(this.sourceOf(x)),
    );
    const pending = all.filter((x) => x.status === 'PENDING_APPROVAL');
    const action = pending.length > 0 && this.rng.chance(0.9) ? this.rng.pick(pending) : all.length > 0 ? this.rng.pick(all) : undefined;
    if (!action) return;
    const approve = this.rng.chance(0.7);
    let expect: Expect & { outcome?: 'APPROVED' | 'FAILED' };
    if (action.status !== 'PENDING_APPROVAL') expect = { status: 409, code: 'CONFLICT' };
    else if (!approve) expect = { status: 200, outcome: undefined };
    else expect = { status: 200, outcome: this.approvalOutcome(action) };
    await this.w.send({
      label: `${approve ? 'approve' : 'reject'} agent action ${action.id} (${action.type}, ${action.status})`,
      client: this.w.api,
      path: `/agents/${action.agentId}/actions/${action.id}/${approve ? 'approve' : 'reject'}`,
      body: approve ? {} : { reason: 'not today' },
      key: undefined,
      debits: [],
      feature: `${approve ? 'approve' : 'reject'} agent action ${action.type}${expect.outcome ? ` → ${expect.outcome}` : ''}`,
      apply: (res) => {
        this.w.touched.actions.add(action.id);
        if (expect.code) return expectError(res, expect.status, expect.code, 'decide agent action');
        expectStatus(res, 200, 'decide agent action');
        if (!approve) {
          action.status = 'REJECTED';
          eq('rejected action rejectionReason', res.body.rejectionReason, 'not today');
        } else if (expect.outcome === 'FAILED') {
          action.status = 'FAILED';
          if (typeof res.body.failureReason !== 'string') throw new AuditError(`a FAILED action without failureReason: ${res.text}`);
        } else {
          action.status = 'APPROVED';
          this.runApproved(action, res.body);
        }
        checkAction(res.body, action.status, action.txId);
      },
    });
  }

  /** The internal account an action takes money from (or credits). */
  private sourceOf(action: MAction): string {
    if (action.quoteId) return this.m.quotes.get(action.quoteId)!.source;
    return action.type === 'TRANSFER_OUT' ? action.transfer!.source : action.transfer!.destination;
  }

  /** Whether an action's quote is clear of its expiry margin (so approving it has a predictable result). */
  private predictableQuote(quoteId: string): boolean {
    const q = this.m.quotes.get(quoteId)!;
    return this.w.clearlyBefore(q.expiresAt) || this.w.clearlyAfter(q.expiresAt);
  }

  private approvalOutcome(action: MAction): 'APPROVED' | 'FAILED' {
    if (action.type === 'EXECUTE_QUOTE') {
      const q = this.m.quotes.get(action.quoteId!)!;
      if (q.status !== 'PENDING' || this.w.clearlyAfter(q.expiresAt)) return 'FAILED';
      return q.total > this.m.account(q.source).available ? 'FAILED' : 'APPROVED';
    }
    if (action.type === 'TRANSFER_OUT')
      return action.transfer!.amount > this.m.account(action.transfer!.source).available ? 'FAILED' : 'APPROVED';
    return 'APPROVED';
  }

  private runApproved(action: MAction, w: Wire): void {
    if (action.type === 'EXECUTE_QUOTE') {
      const q = this.m.quotes.get(action.quoteId!)!;
      this.m.executeQuote(q, this.w.timeOf(w.updatedAt));
      action.txId = q.txId;
      this.w.touched.txs.add(q.txId);
      this.w.touched.quotes.add(q.id);
      return;
    }
    const tr = action.transfer!;
    const ext = this.m.externals.find((e) => e.id === (action.type === 'TRANSFER_OUT' ? tr.destination : tr.source))!;
    if (!w.transaction) throw new AuditError(`an approved action came back without its transaction: ${JSON.stringify(w)}`);
    action.txId = w.transaction.id;
    if (action.type === 'TRANSFER_OUT') this.applyTransferOut(w.transaction, this.m.account(tr.source), ext, tr.amount);
    else this.applyTransferIn(w.transaction, ext, this.m.account(tr.destination), tr.amount);
  }

  // ---------------------------------------------------------------------------------------------
  // Receiver lookups, and quotes that name them (docs/lookups.md)

  /** A lookup of `d` for customer `c`, audited against the sandbox parties and rates; undefined when refused (an unknown party). */
  private async lookup(c: Customer, d: Destination): Promise<Lookup | undefined> {
    const uma = d.kind === 'uma';
    const path = uma
      ? `/receiver/uma/${encodeURIComponent(`${d.name}@${UMA_DOMAIN}`)}`
      : `/receiver/external-account/${(d as { ext: MExternal }).ext.id}`;
    const res = await this.w.api.get(path, { query: { customerId: c.id } });
    this.w.record(`lookup ${this.destLabel(d)} for customer ${c.n} → ${res.status} ${res.body?.lookupId ?? res.body?.code}`);
    this.w.features.add(
      `lookup ${uma ? d.name : 'external account'} → ${res.status}${typeof res.body?.code === 'string' ? ` ${res.body.code}` : ''}`,
    );
    const currency = this.destCurrency(d);
    if (currency === undefined) {
      expectError(res, 404, 'UMA_NOT_FOUND', 'lookup');
      return undefined;
    }
    expectStatus(res, 200, 'lookup');
    const w = res.body;
    if (uma) eq('lookup receiverUmaAddress', w.receiverUmaAddress, `${d.name}@${UMA_DOMAIN}`);
    else eq('lookup accountId', w.accountId, (d as { ext: MExternal }).ext.id);
    if (typeof w.lookupId !== 'string' || !w.lookupId.startsWith('Lookup:')) throw new AuditError(`lookup without a lookupId: ${res.text}`);
    eq(
      'lookup requiredPayerDataFields',
      JSON.stringify(w.requiredPayerDataFields),
      JSON.stringify(
        uma
          ? [
              { name: 'FULL_NAME', mandatory: true },
              { name: 'BIRTH_DATE', mandatory: true },
            ]
          : [],
      ),
    );
    eq('lookup supportedCurrencies', w.supportedCurrencies.length, 1);
    const pref = w.supportedCurrencies[0];
    eq('lookup currency', pref.currency.code, currency);
    // From the customer's first currency (USD for every workload customer), at the rate a quote now gets.
    if (!this.nearRateBoundary(5_000)) {
      const rate = await this.rateFor('USD', currency);
      eq('lookup estimatedExchangeRate', pref.estimatedExchangeRate, rate.value);
      const pow = 10n ** BigInt(rate.scale);
      const bounds = CURRENCY_BOUNDS.USD!;
      const min = Math.max(1, Number((BigInt(bounds.min) * rate.units + pow - 1n) / pow));
      eq('lookup min', pref.min, min);
      eq('lookup max', pref.max, Math.max(min, Number((BigInt(bounds.max) * rate.units) / pow)));
    }
    const l: Lookup = { id: w.lookupId, customerId: c.id, receiver: d, at: this.w.now() };
    this.lookups.push(l);
    return l;
  }

  /**
   * A quote to a sandbox UMA party (or an external account) through a receiver lookup: the lookup,
   * then POST /quotes with its lookupId and the payer data it asked for — priced and held exactly as
   * a quote without one. Sometimes the quote names a lookup that must be refused: an unknown id,
   * another receiver's or another sender's, one whose 15 minutes are over, or payer data missing.
   */
  async lookupQuote(): Promise<void> {
    if (this.nearRateBoundary(5_000)) return this.fund();
    const c = this.rng.pick(this.customers);
    const a = this.pickAccount(this.fiatAccounts().filter((x) => x.customerId === c.id));
    const clear = (l: Lookup) => this.w.clearlyBefore(l.at + LOOKUP_TTL_MS) || this.w.clearlyAfter(l.at + LOOKUP_TTL_MS);
    const earlier = this.lookups.filter((l) => l.customerId === c.id && clear(l));
    let l: Lookup | undefined;
    let d: Destination;
    let use: LookupUse;
    if (earlier.length > 0 && this.rng.chance(0.25)) {
      // A lookup made earlier: it serves any number of quotes until its 15 minutes are over.
      l = this.rng.pick(earlier);
      d = l.receiver;
      const expired = this.w.clearlyAfter(l.at + LOOKUP_TTL_MS);
      use = {
        id: l.id,
        info: PAYER_INFO,
        refusal: expired ? { status: 404, code: 'LOOKUP_REQUEST_NOT_FOUND', why: 'expired lookupId' } : undefined,
      };
    } else {
      d = this.rng.chance(0.75)
        ? { kind: 'uma', name: this.rng.weighted(UMA_NAMES) }
        : { kind: 'external', ext: await this.external(c.id, this.rng.chance(0.5) ? 'US' : 'EUR', this.pickSuffix(QUOTE_SUFFIXES)) };
      l = await this.lookup(c, d);
      if (!l) return;
      const variant = this.rng.weighted([
        ['honoured', 7],
        ['unknown', 1],
        ['otherReceiver', 1],
        ['otherSender', 0.7],
        ['noPayerData', d.kind === 'uma' ? 0.8 : 0],
      ] as const);
      use = { id: l.id, info: d.kind === 'uma' ? PAYER_INFO : undefined, refusal: undefined };
      if (variant === 'unknown') {
        const hex = (n: number) => Array.from({ length: n }, () => this.rng.int(0, 15).toString(16)).join('');
        use = {
          id: `Lookup:${hex(8)}-${hex(4)}-7${hex(3)}-8${hex(3)}-${hex(12)}`,
          info: PAYER_INFO,
          refusal: { status: 404, code: 'LOOKUP_REQUEST_NOT_FOUND', why: 'unknown lookupId' },
        };
      } else if (variant === 'otherReceiver') {
        // The lookup was for `d`; the quote pays someone else (another party, or the other kind).
        const others = Object.keys(UMA_PARTIES).filter((n) => d.kind !== 'uma' || n !== d.name);
        d = { kind: 'uma', name: this.rng.pick(others) };
        use.info = PAYER_INFO;
        use.refusal = { status: 400, code: 'INVALID_INPUT', why: "another receiver's lookupId" };
      } else if (variant === 'otherSender') {
        const other = this.rng.pick(this.customers.filter((x) => x.id !== c.id));
        const theirs = await this.lookup(other, d);
        if (!theirs) return;
        use = { id: theirs.id, info: use.info, refusal: { status: 400, code: 'INVALID_INPUT', why: "another sender's lookupId" } };
      } else if (variant === 'noPayerData') {
        use.info = this.rng.chance(0.5) ? { FULL_NAME: PAYER_INFO.FULL_NAME } : undefined;
        use.refusal = { status: 400, code: 'MISSING_MANDATORY_USER_INFO', why: 'payer data missing' };
      }
    }
    const side = this.rng.chance(0.75) ? 'SENDING' : 'RECEIVING';
    const immediate = this.rng.chance(0.4);
    const p = await this.planQuote(a, d, side, this.quoteAmount(a, side, this.destCurrency(d)), immediate, { lookup: use });
    const apply = p.apply;
    await this.w.send({
      ...p,
      apply: async (res) => {
        await apply(res);
        if (use.refusal && use.refusal.status === 400 && use.refusal.code === 'INVALID_INPUT') {
          const fields = (res.body.details?.errors ?? []).map((e: { field?: string }) => e.field);
          if (!fields.includes('lookupId')) throw new AuditError(`a refused lookupId not named in the error: ${res.text}`);
        }
        if (use.refusal?.code === 'MISSING_MANDATORY_USER_INFO') {
          const fields = (res.body.details?.errors ?? []).map((e: { field?: string }) => e.field).sort();
          const want = ['senderCustomerInfo.BIRTH_DATE', ...(use.info ? [] : ['senderCustomerInfo.FULL_NAME'])];
          eq('missing payer fields', fields.join(), want.join());
        }
        if (use.refusal?.code === 'LOOKUP_REQUEST_NOT_FOUND') eq('refused lookupId', res.body.details?.lookupId, use.id);
      },
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Invitations (docs/invitations.md)

  /** Invitations whose expiry (if any) is clear of the margin, so their status is known. */
  private knownInvitations(): MInvitation[] {
    return [...this.m.invitations.values()].filter(
      (i) => i.expiresAt === null || this.w.clearlyBefore(i.expiresAt) || this.w.clearlyAfter(i.expiresAt),
    );
  }

  /**
   * An invitation's lifecycle for the workload's customers: create one (some with an amount, some
   * expiring), claim it (INVITATION.CLAIMED, counted by the webhook audit) and sometimes claim it
   * again at once (400 INVITATION_ALREADY_CLAIMED), cancel it, or claim or cancel one no longer
   * PENDING (the 400 of its state), read one, or name a code that does not exist.
   */
  async invitation(): Promise<void> {
    const known = this.knownInvitations();
    const open = known.filter((i) => this.m.invitationStatus(i, this.w.now()) === 'PENDING');
    const done = known.filter((i) => this.m.invitationStatus(i, this.w.now()) !== 'PENDING');
    const kind = this.rng.weighted([
      ['create', open.length < 3 ? 4 : 1],
      ['claim', open.length > 0 ? 4 : 0],
      ['cancel', open.length > 0 ? 1.5 : 0],
      ['again', done.length > 0 ? 2 : 0],
      ['read', known.length > 0 ? 0.5 : 0],
      ['self', open.length > 0 ? 0.3 : 0],
      ['unknown', 0.3],
    ] as const);
    if (kind === 'create') return this.createInvitation();
    if (kind === 'unknown') {
      const code = Array.from({ length: 12 }, () => this.rng.pick([...'0123456789abcdefghjkmnpqrstvwxyz'])).join('');
      const res = await this.w.api.post(`/invitations/${code}/claim`, { inviteeUma: this.invitee() });
      this.w.record(`claim an invitation code that does not exist → ${res.status} ${res.body?.code}`);
      this.w.features.add(`invitation claim unknown → ${res.status} ${res.body?.code}`);
      return expectError(res, 404, 'INVITATION_NOT_FOUND', 'claim an unknown invitation');
    }
    if (kind === 'read') {
      const inv = this.rng.pick(known);
      const res = await this.w.api.get(`/invitations/${inv.code}`);
      this.w.record(`read invitation #${inv.n} → ${res.status} ${res.body?.status}`);
      expectStatus(res, 200, 'GET invitation');
      this.w.checkInvitation(res.body, inv);
      this.w.features.add(`invitation read ${this.m.invitationStatus(inv, this.w.now())}`);
      return;
    }
    if (kind === 'again') {
      const inv = this.rng.pick(done);
      return void (await this.w.send(this.planInvitation(inv, this.rng.chance(0.6) ? 'claim' : 'cancel')));
    }
    const inv = this.rng.pick(open);
    if (kind === 'cancel') return void (await this.w.send(this.planInvitation(inv, 'cancel')));
    const res = await this.w.send(this.planInvitation(inv, 'claim', kind === 'self'));
    // A second claim of the link just claimed is refused, naming who claimed it; nothing is emitted again.
    if (res.status === 200 && this.rng.chance(0.5)) await this.w.send(this.planInvitation(inv, 'claim'));
  }

  private invitee(): string {
    this.inviteeSerial += 1;
    return `$invitee-${this.inviteeSerial}@elsewhere.example`;
  }

  private async createInvitation(): Promise<void> {
    const c = this.rng.pick(this.customers);
    const firstName = this.rng.chance(0.5) ? 'Pat' : null;
    const r = this.rng.next();
    // The inviter's currency is its first one: USD for every workload customer.
    const amount = r < 0.4 ? this.rng.int(100, 500_000) : r < 0.45 ? CURRENCY_BOUNDS.USD!.max + this.rng.int(1, 1_000) : null;
    const expiresAt = this.rng.chance(0.4) ? this.w.now() + this.rng.int(1, 20) * MINUTE : null;
    const body = {
      inviterUma: c.uma,
      ...(firstName ? { firstName } : {}),
      ...(amount !== null ? { amountToSend: amount } : {}),
      ...(expiresAt !== null ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
    };
    const outOfRange = amount !== null && amount > CURRENCY_BOUNDS.USD!.max;
    await this.w.send({
      label: `create invitation #${this.m.invitations.size + 1} by customer ${c.n}${amount !== null ? ` for ${amount}` : ''}${expiresAt !== null ? `, expiring in ${(expiresAt - this.w.now()) / MINUTE} min` : ''}`,
      client: this.w.api,
      path: '/invitations',
      body,
      key: undefined,
      debits: [],
      feature: 'invitation create',
      apply: (res) => {
        if (outOfRange) return expectError(res, 400, 'AMOUNT_OUT_OF_RANGE', 'create invitation');
        expectStatus(res, 201, 'create invitation');
        const w = res.body;
        if (typeof w.code !== 'string' || !INVITATION_CODE.test(w.code)) throw new AuditError(`invitation code ${w.code}`);
        if (this.m.invitations.has(w.code)) throw new AuditError(`invitation code ${w.code} given twice`);
        eq('invitation status', w.status, 'PENDING');
        this.w.checkStamp('invitation createdAt', w.createdAt);
        const inv: MInvitation = {
          n: this.m.invitations.size + 1,
          code: w.code,
          inviterUma: c.uma,
          status: 'PENDING',
          createdAt: w.createdAt,
          expiresAt,
          firstName,
          amountToSend: amount !== null ? { amount, currency: 'USD' } : null,
          inviteeUma: null,
          claimedAt: null,
        };
        this.w.checkInvitation(w, inv);
        this.m.invitations.set(inv.code, inv);
      },
    });
  }

  /** A claim or cancel of `inv`: PENDING moves it (a claim by the inviter itself is a 400); any other state is the 400 naming it. */
  private planInvitation(inv: MInvitation, action: 'claim' | 'cancel', self = false): Planned {
    const status = this.m.invitationStatus(inv, this.w.now());
    const inviteeUma = action === 'claim' ? (self ? inv.inviterUma : this.invitee()) : undefined;
    return {
      label: `${action} invitation #${inv.n} (${status})${self ? ' by its inviter' : ''}`,
      client: this.w.api,
      path: `/invitations/${inv.code}/${action}`,
      body: inviteeUma !== undefined ? { inviteeUma } : {},
      key: undefined,
      debits: [],
      feature: `invitation ${action} ${status}${self ? ' (own address)' : ''}`,
      apply: (res) => {
        const details = res.body?.details;
        if (status === 'CLAIMED') {
          expectError(res, 400, 'INVITATION_ALREADY_CLAIMED', `${action} a claimed invitation`);
          eq('refusal details.status', details?.status, 'CLAIMED');
          return eq('refusal details.inviteeUma', details?.inviteeUma, inv.inviteeUma);
        }
        if (status === 'CANCELLED') {
          expectError(res, 400, 'INVITATION_CANCELLED', `${action} a cancelled invitation`);
          return eq('refusal details.status', details?.status, 'CANCELLED');
        }
        if (status === 'EXPIRED') {
          expectError(res, 400, 'EXPIRED', `${action} an expired invitation`);
          eq('refusal details.status', details?.status, 'EXPIRED');
          return eq('refusal details.expiresAt', details?.expiresAt, new Date(inv.expiresAt!).toISOString());
        }
        if (self) return expectError(res, 400, 'INVALID_INPUT', 'claim by the inviter');
        expectStatus(res, 200, `${action} invitation`);
        if (action === 'claim') {
          inv.status = 'CLAIMED';
          inv.inviteeUma = inviteeUma!;
          inv.claimedAt = res.body.claimedAt;
          this.w.checkStamp('invitation claimedAt', res.body.claimedAt);
        } else {
          inv.status = 'CANCELLED';
        }
        this.w.checkInvitation(res.body, inv);
      },
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Bulk customer import (docs/bulk-import.md)

  /**
   * A small CSV import (one chunk: in-process, the system clock is frozen and chunk runs are paced
   * on it): a few new customers and one duplicate row — of another row in the file or of an existing
   * customer — which is a row error. The job is followed to COMPLETED within the step; its customers
   * then join the model with their (empty) accounts. Sometimes the file is bad: a 400 that leaves
   * nothing behind (the next balance audit would see any customer it made).
   */
  async bulkImport(): Promise<void> {
    if (this.umaDomain === undefined) {
      const cfg = await this.w.api.get('/config');
      expectStatus(cfg, 200, 'GET /config');
      this.umaDomain = cfg.body.umaDomain as string;
    }
    const row = (pid: string, serial: number) =>
      `$wl-bulk-${serial}@${this.umaDomain},${pid},INDIVIDUAL,Sam Bulk,1988-03-04,wl-bulk-${serial}@example.com,"1 Main St, Apt 2",San Francisco,CA,94105,US`;
    const good = Array.from({ length: this.rng.int(2, 3) }, () => {
      this.bulkSerial += 1;
      return { pid: `wl-bulk-${this.bulkSerial}`, serial: this.bulkSerial };
    });
    const dupAt = this.rng.int(1, good.length);
    const ofFile = this.rng.chance(0.5);
    const dupPid = ofFile ? good[this.rng.int(0, dupAt - 1)]!.pid : this.rng.pick(this.customers).platformCustomerId;
    this.bulkSerial += 1;
    const lines = good.map((g) => row(g.pid, g.serial));
    lines.splice(dupAt, 0, row(dupPid, this.bulkSerial));
    const bad = this.rng.chance(0.15);
    const header = bad ? `${BULK_HEADER},nickname` : BULK_HEADER;
    const csv = `${[header, ...lines].join(this.rng.chance(0.5) ? '\r\n' : '\n')}\n`;
    const res = await this.w.api.postFile('/customers/bulk/csv', 'file', csv, 'customers.csv', 'text/csv');
    this.w.record(
      `bulk import of ${lines.length} rows (row ${dupAt + 2} repeats ${ofFile ? 'an earlier row' : 'an existing customer'}${bad ? ', an unknown column' : ''}) → ${res.status} ${res.body?.jobId ?? res.body?.code}`,
    );
    this.w.features.add(
      `bulk import upload${bad ? ' (bad header)' : ''} → ${res.status}${typeof res.body?.code === 'string' ? ` ${res.body.code}` : ''}`,
    );
    if (bad) {
      // Nothing of the file is kept: no job, no customer (the balance audit lists every customer account).
      this.bulkSerial -= lines.length;
      return expectError(res, 400, 'INVALID_INPUT', 'bulk import with an unknown column');
    }
    expectStatus(res, 202, 'bulk import');
    eq('bulk import status', res.body.status, 'PENDING');
    const jobId = res.body.jobId as string;
    if (!/^Job:/.test(jobId)) throw new AuditError(`bulk import jobId ${jobId}`);
    this.bulkJobs += 1;
    const deadline = Date.now() + 15_000;
    let job: Wire;
    for (;;) {
      const got = await this.w.api.get(`/customers/bulk/jobs/${jobId}`);
      expectStatus(got, 200, 'GET bulk import job');
      job = got.body;
      if (job.status === 'COMPLETED' || job.status === 'FAILED') break;
      if (job.status !== 'PENDING' && job.status !== 'PROCESSING') throw new AuditError(`bulk import job status ${job.status}`);
      if (Date.now() > deadline) throw new AuditError(`bulk import ${jobId} not finished after 15 s: ${JSON.stringify(job)}`);
      await sleep(10);
    }
    this.w.record(`bulk import job → ${job.status} ${job.progress?.successful}/${job.progress?.total} imported`);
    this.w.features.add(`bulk import (duplicate ${ofFile ? 'in the file' : 'of a customer'}) → ${job.status}`);
    this.m.bulkJobs.set(jobId, 'BULK_UPLOAD.COMPLETED');
    eq('bulk job id', job.id, jobId);
    eq('bulk job status', job.status, 'COMPLETED');
    eq(
      'bulk job progress',
      JSON.stringify(job.progress),
      JSON.stringify({ total: lines.length, processed: lines.length, successful: good.length, failed: 1 }),
    );
    this.w.checkStamp('bulk job completedAt', job.completedAt);
    eq('bulk job errors', job.errors.length, 1);
    eq('bulk job error correlationId', job.errors[0].correlationId, dupPid);
    eq('bulk job error code', job.errors[0].code, 'CONFLICT');
    eq('bulk job error row', job.errors[0].details?.row, dupAt + 2);
    for (const g of good) {
      const listed = await this.w.api.get('/customers', { query: { platformCustomerId: g.pid } });
      expectStatus(listed, 200, 'GET /customers');
      eq(`imported customers ${g.pid}`, listed.body.data.length, 1);
      const cw = listed.body.data[0];
      eq(`imported ${g.pid} umaAddress`, cw.umaAddress, `$wl-bulk-${g.serial}@${this.umaDomain}`);
      eq(`imported ${g.pid} fullName`, cw.fullName, 'Sam Bulk');
      eq(`imported ${g.pid} address.line1`, cw.address?.line1, '1 Main St, Apt 2');
      // No currencies column: every currency the platform supports (USDB with an embedded wallet).
      eq(`imported ${g.pid} currencies`, JSON.stringify(cw.currencies), JSON.stringify(Object.keys(CURRENCY_BOUNDS)));
      await this.adopt({ id: cw.id, n: this.customers.length + 1, platformCustomerId: g.pid, uma: cw.umaAddress }, true);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Idempotency replays

  /**
   * Sends an earlier successful keyed request again: the same request must answer the stored
   * response (Idempotency-Hit) and change nothing; the same key with another body is a 409.
   */
  async replay(rng = this.rng, sent = this.w.sent.filter((x) => this.mainPlan(x.planned)), tag = ''): Promise<void> {
    const s = rng.pick(sent);
    const p = s.planned;
    const body = p.body as Record<string, unknown>;
    const changed = this.changedBody(body);
    if (changed && rng.chance(0.25)) {
      const res = await p.client.post(p.path, changed, { headers: { ...p.headers, 'idempotency-key': p.key! } });
      this.w.record(`reuse the key of "${p.label}" with another body → ${res.status}`);
      this.w.features.add(`${tag}idempotency key reused with another body`);
      return expectError(res, 409, 'CONFLICT', 'idempotency key reused with another body');
    }
    const res = await this.w.post(p);
    this.w.record(`replay "${p.label}" → ${res.status}${res.headers.get('idempotency-hit') ? ' (hit)' : ''}`);
    eq('replay status', res.status, s.status);
    eq('replay Idempotency-Hit', res.headers.get('idempotency-hit'), 'true');
    if (canonical(res.body) !== canonical(s.body))
      throw new AuditError(`replay body differs:\n  first  ${canonical(s.body)}\n  replay ${canonical(res.body)}`);
    this.w.features.add(`${tag}idempotent replay`);
  }

  private changedBody(body: Record<string, unknown>): Record<string, unknown> | undefined {
    if (typeof body.amount === 'number') return { ...body, amount: body.amount + 1 };
    if (typeof body.lockedCurrencyAmount === 'number') return { ...body, lockedCurrencyAmount: body.lockedCurrencyAmount + 1 };
    return undefined;
  }

  // ---------------------------------------------------------------------------------------------
  // Crash bursts

  /**
   * `n` keyed money requests that can run concurrently with predictable outcomes: each touches
   * accounts no other one touches (so their order does not matter), none near a rate window or
   * quote expiry the restart could cross.
   */
  async burst(n: number): Promise<Planned[]> {
    const out: Planned[] = [];
    const used = new Set<string>();
    // A cut-off request is sent again only after the restart: keep clear of outcomes due before then.
    const free = (a: MAccount) => !used.has(a.id) && !this.volatile(a.id, 120_000);
    for (let tries = 0; out.length < n && tries < n * 6; tries++) {
      const kind = this.rng.weighted([
        ['fund', 2],
        ['out', 3],
        ['in', 2],
        ['quote', 2],
        ['execute', 2],
      ] as const);
      let p: Planned | undefined;
      if (kind === 'fund') {
        const candidates = [...this.m.accounts.values()].filter((a) => a.currency !== 'MXN' && !this.cards.owns(a.id) && free(a));
        if (candidates.length) {
          const a = this.rng.pick(candidates);
          p = this.planFund(a, a.currency === 'USDB' ? this.rng.int(1_000_000, 1_000_000_000) : this.rng.int(10_000, 2_000_000));
        }
      } else if (kind === 'out') {
        const candidates = this.fiatAccounts().filter(free);
        if (candidates.length) {
          const a = this.pickAccount(candidates);
          const ext = await this.external(a.customerId, a.currency === 'USD' ? 'US' : 'EUR', this.pickSuffix(TRANSFER_SUFFIXES));
          p = this.planTransferOut(a, ext, this.amountFrom(a));
        }
      } else if (kind === 'in') {
        const candidates = this.fiatAccounts().filter((a) => a.currency === 'USD' && free(a));
        if (candidates.length) {
          const a = this.rng.pick(candidates);
          p = this.planTransferIn(
            await this.external(a.customerId, 'US', this.pickSuffix(TRANSFER_SUFFIXES)),
            a,
            this.rng.int(100, 1_000_000),
          );
        }
      } else if (kind === 'quote') {
        const candidates = this.fiatAccounts().filter(free);
        if (candidates.length && !this.nearRateBoundary(60_000)) {
          const a = this.pickAccount(candidates);
          const d = await this.pickDestination(a, a.customerId, false);
          p = await this.planQuote(a, d, 'SENDING', this.quoteAmount(a, 'SENDING', this.destCurrency(d)), true);
        }
      } else {
        const candidates = [...this.m.quotes.values()].filter(
          (q) =>
            q.status === 'PENDING' &&
            q.agentId === null &&
            !q.realtime &&
            !this.isScaQuote(q) &&
            q.expiresAt - this.w.now() > 30_000 &&
            this.m.account(q.source).type !== 'EMBEDDED_WALLET' &&
            free(this.m.account(q.source)),
        );
        if (candidates.length) p = this.planExecute(this.rng.pick(candidates));
      }
      if (!p) continue;
      for (const id of p.debits) used.add(id);
      out.push(p);
    }
    return out;
  }
}

/** JSON with sorted keys, for comparing bodies regardless of key order. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === 'object' && !Array.isArray(val)
      ? Object.fromEntries(Object.entries(val as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : val,
  );
}
