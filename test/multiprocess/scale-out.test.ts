/**
 * The scale-out mode (README "Scaling out on PostgreSQL"): three real `corridor start` processes on
 * one PostgreSQL database, behind a client that spreads requests across them round-robin, as a load
 * balancer would. Under concurrent load — fundings, customers, immediate quotes to every outcome
 * suffix, transfers out and in, an account funded for exactly N of M concurrent executes, cancels
 * racing the job that fails the same transfer, and sandbox clock advances sent to different
 * processes so that delayed jobs fall due while all three job runners compete — it checks:
 *
 * - no 5xx, every answer the expected one, and exactly N of the M executes succeed;
 * - balances equal an independent model of the expected totals, nothing is left pending, and the
 *   ledger check is clean (no overdraft, no unbalanced entry);
 * - each delayed job ran exactly once: every job is DONE at its first attempt, and every payment has
 *   exactly its expected ledger entries (one settlement, refund, return …) and events (one each);
 * - every final transaction status (and failure reason, refund) is the expected one;
 * - an Idempotency-Key sent to two processes at once runs once and answers the same on both;
 * - a token created on one process works on the others and is refused by all of them once revoked
 *   (nothing about credentials is cached per process on PostgreSQL);
 * - every outbox event reaches a loopback receiver at least once with a valid signature, including
 *   events whose first attempt the receiver refused (duplicates are counted and allowed; losses not).
 *
 * PostgreSQL only: the embedded SQLite store is single-process by design (README), so the SQLite
 * lane has nothing to run here. The plan (amounts, suffixes, duplicates) comes from a printed seed;
 * set SCALE_SEED to replay it (the interleaving across processes still varies).
 */
import { createHash, randomInt, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../src/ledger/ledger.ts';
import { isParked } from '../../src/outbox/outbox.ts';
import { openStore, type Store } from '../../src/store/db.ts';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { cliEnv, killChildren, startCli, type RunningCli } from '../helpers/child.ts';
import { Client, type Res } from '../helpers/http.ts';
import { closeServer, listenLoopback } from '../helpers/loopback.ts';
import { ADMIN_TOKEN, laneStore } from '../helpers/server.ts';
import { usAccountInfo } from '../helpers/payments.ts';
import { waitFor } from '../helpers/receiver.ts';
import { uniqueAccountNumber } from '../helpers/random.ts';

const PROCESSES = 3;
/** Requests in flight at once across the three processes. */
const WIDTH = 20;
/** The N-of-M race: M executes against an account funded for exactly N of them. */
const M = 60;
const N = 25;
const LOCKED_AMOUNT = 700;
/** Pending transfers whose cancel races the job that fails them. */
const CANCEL_RACE = 24;
/** The cancels go out over this long from the advance that makes their transfers' jobs due. */
const CANCEL_SPREAD_MS = 1_500;

/** mulberry32: a small seeded generator, so a failing run's plan can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------------
// The load balancer: round-robin over the processes, every answer recorded

class Spread {
  private turn = 0;
  readonly served: number[];
  /** Every 5xx, with where it came from (must stay empty). */
  readonly serverErrors: string[] = [];
  /** Their request ids, to find the server's log lines. */
  readonly serverErrorIds: string[] = [];

  constructor(readonly clients: Client[]) {
    this.served = clients.map(() => 0);
  }

  /** The next process in turn. */
  pick(): number {
    return this.turn++ % this.clients.length;
  }

  async send(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
    proc = this.pick(),
  ): Promise<Res & { proc: number }> {
    this.served[proc]!++;
    const res = await this.clients[proc]!.request(method, path, body, headers ? { headers } : {});
    if (res.status >= 500) {
      this.serverErrors.push(`process ${proc}: ${method} ${path} → ${res.status} ${res.text}`);
      this.serverErrorIds.push(res.headers.get('x-request-id') ?? '');
    }
    return { ...res, proc };
  }

  get(path: string, proc?: number) {
    return this.send('GET', path, undefined, undefined, proc);
  }
  post(path: string, body?: unknown, proc?: number) {
    return this.send('POST', path, body, undefined, proc);
  }
}

// ---------------------------------------------------------------------------------------------
// The webhook receiver: verifies every request; while `refuseSome`, answers 500 to the first
// attempt of about one event in twenty, so that its retry (from whichever process claims it) is
// part of the run.

class Receiver {
  url = '';
  publicKey = '';
  refuseSome = true;
  readonly badSignatures: string[] = [];
  /** 2xx acknowledgements per event id. */
  readonly acks = new Map<string, number>();
  readonly types = new Map<string, string>();
  readonly refused = new Set<string>();
  private readonly server: Server = createServer((req, res) => this.handle(req, res));

  async listen(): Promise<void> {
    this.url = await listenLoopback(this.server);
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const grid = String(req.headers['x-grid-signature'] ?? '');
      let envelope: { id?: unknown; type?: unknown } | undefined;
      let valid = false;
      try {
        envelope = JSON.parse(raw.toString('utf8')) as { id?: unknown; type?: unknown };
        valid = grid === req.headers['x-service-signature'] && verifyWebhook(raw, grid, this.publicKey);
      } catch {
        valid = false;
      }
      if (!valid || typeof envelope?.id !== 'string' || typeof envelope.type !== 'string') {
        this.badSignatures.push(`${String(envelope?.id)}: ${grid}`);
        res.writeHead(400).end('bad signature');
        return;
      }
      const id = envelope.id;
      this.types.set(id, envelope.type);
      // TEST and INCOMING_PAYMENT.PENDING are never retried by design: refusing them would lose them on purpose.
      const retried = envelope.type !== 'TEST' && envelope.type !== 'INCOMING_PAYMENT.PENDING';
      if (this.refuseSome && retried && !this.refused.has(id) && createHash('sha256').update(id).digest()[0]! < 13) {
        this.refused.add(id);
        res.writeHead(500).end('try again');
        return;
      }
      res.once('finish', () => this.acks.set(id, (this.acks.get(id) ?? 0) + 1));
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  }
}

// ---------------------------------------------------------------------------------------------
// The model: what each payment must end as

type Kind = 'QUOTE' | 'LOCKED_QUOTE' | 'OUT' | 'IN';

interface Payment {
  kind: Kind;
  suffix: string;
  txId: string;
  quoteId?: string;
  /** The internal account the money leaves (or, for IN, arrives at). */
  account: string;
  amount: number;
  fees: number;
  /** LOCKED_QUOTE: whether its execute succeeded. */
  executed?: boolean;
  /** OUT 005: whether a cancel won the race against the job that fails it. */
  cancelled?: boolean;
}

interface Expected {
  status: string;
  failureReason: string | undefined;
  refund: { status: string; reason: string } | undefined;
  ledger: string[];
  events: string[];
  jobs: string[];
}

const OP = (s: string) => `OUTGOING_PAYMENT.${s}`;
const IP = (s: string) => `INCOMING_PAYMENT.${s}`;
const REFUNDED = [OP('FAILED'), OP('REFUND_PENDING'), OP('REFUND_COMPLETED')];

function expected(p: Payment): Expected {
  const refund = (status: string, reason = 'TRANSACTION_FAILED') => ({ status, reason });
  const quote = [OP('PENDING'), OP('PROCESSING')];
  switch (p.kind) {
    case 'QUOTE':
      switch (p.suffix) {
        case '002':
          return {
            status: 'FAILED',
            failureReason: 'QUOTE_EXECUTION_FAILED',
            refund: refund('COMPLETED'),
            ledger: ['PAYMENT_HOLD', 'PAYMENT_REFUND'],
            events: [...quote, ...REFUNDED],
            jobs: ['PAYMENT_FAIL'],
          };
        case '005':
          return {
            status: 'FAILED',
            failureReason: 'PAYOUT_RETURNED',
            refund: refund('COMPLETED'),
            ledger: ['PAYMENT_HOLD', 'PAYMENT_SETTLEMENT', 'PAYMENT_RETURN'],
            events: [...quote, OP('COMPLETED'), ...REFUNDED],
            jobs: ['PAYMENT_SETTLE', 'PAYMENT_RETURN'],
          };
        case '007':
          return {
            status: 'FAILED',
            failureReason: 'ACCOUNT_CANNOT_RECEIVE',
            refund: refund('FAILED'),
            ledger: ['PAYMENT_HOLD', 'PAYMENT_REFUND_FAILED'],
            events: [...quote, OP('FAILED'), OP('REFUND_PENDING'), OP('REFUND_FAILED')],
            jobs: ['PAYMENT_FAIL'],
          };
        default: // 001 at once, 003 after six minutes of platform clock
          return {
            status: 'COMPLETED',
            failureReason: undefined,
            refund: undefined,
            ledger: ['PAYMENT_HOLD', 'PAYMENT_SETTLEMENT'],
            events: [...quote, OP('COMPLETED')],
            jobs: ['PAYMENT_SETTLE'],
          };
      }
    case 'LOCKED_QUOTE':
      return p.executed
        ? {
            status: 'COMPLETED',
            failureReason: undefined,
            refund: undefined,
            ledger: ['PAYMENT_HOLD', 'PAYMENT_SETTLEMENT'],
            events: [...quote, OP('COMPLETED')],
            jobs: ['PAYMENT_SETTLE', 'QUOTE_EXPIRE'],
          }
        : {
            status: 'EXPIRED',
            failureReason: 'QUOTE_EXPIRED',
            refund: undefined,
            ledger: [],
            events: [OP('PENDING'), OP('EXPIRED')],
            jobs: ['QUOTE_EXPIRE'],
          };
    case 'OUT':
      switch (p.suffix) {
        case '001':
          return {
            status: 'COMPLETED',
            failureReason: undefined,
            refund: undefined,
            ledger: ['PAYMENT_HOLD', 'PAYMENT_SETTLEMENT'],
            events: [OP('PENDING'), OP('COMPLETED')],
            jobs: ['PAYMENT_SETTLE'],
          };
        case '002':
        case '003':
          return {
            status: 'FAILED',
            failureReason: p.suffix === '002' ? 'LIMIT_EXCEEDED' : 'ACCOUNT_INVALID',
            refund: refund('COMPLETED'),
            ledger: ['PAYMENT_HOLD', 'PAYMENT_REFUND'],
            events: [OP('PENDING'), ...REFUNDED],
            jobs: [],
          };
        default: // 005: fails after 30 s, unless a cancel got there first (the job then finds nothing to do)
          return {
            status: 'FAILED',
            failureReason: p.cancelled ? undefined : 'ACCOUNT_CANNOT_RECEIVE',
            refund: refund('COMPLETED', p.cancelled ? 'USER_CANCELLATION' : 'TRANSACTION_FAILED'),
            ledger: ['PAYMENT_HOLD', 'PAYMENT_REFUND'],
            events: [OP('PENDING'), ...REFUNDED],
            jobs: ['PAYMENT_FAIL'],
          };
      }
    case 'IN':
      return p.suffix === '001'
        ? {
            status: 'COMPLETED',
            failureReason: undefined,
            refund: undefined,
            ledger: ['INCOMING_PENDING', 'INCOMING_SETTLEMENT'],
            events: [IP('PENDING'), IP('COMPLETED')],
            jobs: ['PAYMENT_SETTLE'],
          }
        : {
            status: 'FAILED',
            failureReason: 'COLLECTION_FAILED',
            refund: undefined,
            ledger: ['INCOMING_PENDING', 'INCOMING_REVERSAL'],
            events: [IP('PENDING'), IP('FAILED')],
            jobs: ['PAYMENT_FAIL'],
          };
  }
}

/** What a payment finally takes from its source account (fees included), and the fees the platform keeps. */
function effect(p: Payment): { source: number; platformFees: number } {
  switch (p.kind) {
    case 'QUOTE':
      if (p.suffix === '002') return { source: 0, platformFees: 0 };
      if (p.suffix === '005') return { source: p.fees, platformFees: p.fees }; // returned: the principal comes back
      if (p.suffix === '007') return { source: p.amount, platformFees: 0 }; // refund failed: all of it is gone
      return { source: p.amount, platformFees: p.fees };
    case 'LOCKED_QUOTE':
      return p.executed ? { source: p.amount, platformFees: p.fees } : { source: 0, platformFees: 0 };
    case 'OUT':
      return { source: p.suffix === '001' ? p.amount : 0, platformFees: 0 };
    case 'IN':
      return { source: p.suffix === '001' ? -p.amount : 0, platformFees: 0 };
  }
}

const sorted = (xs: string[]) => [...xs].sort();

// ---------------------------------------------------------------------------------------------
// The plan: every random choice made up front from the seed

interface Op {
  kind: 'FUND' | 'QUOTE' | 'OUT' | 'IN';
  /** Index into the accounts (FUND, QUOTE): 0 is the platform's, 1.. the customers'. */
  account: number;
  suffix: string;
  amount: number;
  /** Also send the same request (same Idempotency-Key) to another process at the same moment. */
  duplicate: boolean;
}

const CUSTOMERS = 6;

function makePlan(rand: () => number) {
  const pickOf = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]!;
  const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const dup = () => rand() < 0.2;
  // Funding first (everything below spends within it): 5 fundings of the platform account, 3 per customer.
  const funding: Op[] = [];
  for (let i = 0; i < 5; i++) funding.push({ kind: 'FUND', account: 0, suffix: '', amount: between(20_000, 25_000), duplicate: dup() });
  for (let c = 1; c <= CUSTOMERS; c++)
    for (let i = 0; i < 3; i++) funding.push({ kind: 'FUND', account: c, suffix: '', amount: between(15_000, 18_000), duplicate: dup() });
  // The load: 14 immediate quotes per customer (≤ 42,000 of ≥ 45,000), 48 transfers out of the
  // platform account (≤ 96,000 of ≥ 100,000), 16 transfers in, 8 more fundings, in a shuffled order.
  const load: Op[] = [];
  for (let c = 1; c <= CUSTOMERS; c++) {
    for (let i = 0; i < 14; i++)
      load.push({
        kind: 'QUOTE',
        account: c,
        suffix: pickOf(['001', '002', '003', '005', '007']),
        amount: between(100, 3_000),
        duplicate: dup(),
      });
  }
  for (let i = 0; i < 48; i++)
    load.push({ kind: 'OUT', account: 0, suffix: pickOf(['001', '002', '003', '005']), amount: between(100, 2_000), duplicate: dup() });
  for (let i = 0; i < 16; i++)
    load.push({ kind: 'IN', account: 0, suffix: pickOf(['001', '005']), amount: between(500, 5_000), duplicate: dup() });
  for (let i = 0; i < 8; i++)
    load.push({ kind: 'FUND', account: between(0, CUSTOMERS), suffix: '', amount: between(1_000, 5_000), duplicate: dup() });
  for (let i = load.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [load[i], load[j]] = [load[j]!, load[i]!];
  }
  return { funding, load };
}

/** Runs `run` over `items` with `width` in flight; failures are collected, not thrown. */
async function pool<T>(items: T[], width: number, run: (item: T) => Promise<void>, problems: string[]): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        try {
          await run(item);
        } catch (err) {
          problems.push(err instanceof Error ? err.message : String(err));
        }
      }
    }),
  );
}

const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  killChildren();
  for (const f of cleanup.reverse()) await f();
});

describe('scale-out: three processes on one PostgreSQL behind a round-robin client', () => {
  // vitest.config.ts runs this file on the postgres lane only.
  if (laneStore() !== 'postgres') throw new Error('scale-out needs the postgres lane (TEST_DATABASE_URL)');
  it('under concurrent load: no 5xx, balances and ledger exact, each delayed job once, every event delivered', async () => {
    const started = Date.now();
    const seed = Number(process.env.SCALE_SEED ?? randomInt(2 ** 31));
    const plan = makePlan(seeded(seed));
    const log = (msg: string) => console.log(`[scale-out +${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);
    log(`seed=${seed} (replay the plan with SCALE_SEED=${seed})`);

    const receiver = new Receiver();
    await receiver.listen();
    cleanup.push(() => receiver.close());

    // --- Three processes at once on one database, each with its own (unused) DATA_DIR and port.
    const procs: RunningCli[] = await Promise.all(
      Array.from({ length: PROCESSES }, () => {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-scale-'));
        cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
        // Three TypeScript start-ups at once on two cores: more than the default banner wait.
        return startCli(cliEnv(dataDir, { CORRIDOR_ADMIN_TOKEN: ADMIN_TOKEN }), 60_000);
      }),
    );
    log(`${PROCESSES} processes up: ${procs.map((p) => p.origin).join(' ')}`);

    const created = await new Client(procs[0]!.origin, { bearer: ADMIN_TOKEN }).post('/_admin/platforms', { name: 'Scale-out platform' });
    expect(created.status, created.text).toBe(201);
    const platformId = created.body.platform.id as string;
    const creds = { id: created.body.token.clientId as string, secret: created.body.token.clientSecret as string };
    const spread = new Spread(procs.map((p) => new Client(p.baseUrl, { basic: creds })));
    /** No 5xx anywhere; on failure, with the servers' log lines for those requests. */
    const expectNoServerErrors = () => {
      const lines = spread.serverErrorIds.flatMap((id) =>
        procs.flatMap((p) =>
          p
            .output()
            .stdout.split('\n')
            .filter((l) => id !== '' && l.includes(id)),
        ),
      );
      expect(spread.serverErrors, `server log:\n${lines.join('\n')}`).toEqual([]);
    };

    const store: Store = openStore({ databaseUrl: process.env.TEST_DATABASE_URL, dataDir: os.tmpdir(), poolSize: 2 });
    cleanup.push(() => store.close());

    // --- Credentials are never cached per process on PostgreSQL: a token made on one process works
    // on the others, and once revoked on one, all of them refuse it at once.
    const token = await spread.post('/tokens', { name: 'scale-out reader', permissions: ['VIEW'] }, 0);
    expect(token.status, token.text).toBe(201);
    const reader = (i: number) => new Client(procs[i]!.baseUrl, { basic: { id: token.body.clientId, secret: token.body.clientSecret } });
    for (const i of [1, 2, 0]) expect((await reader(i).get('/platform/internal-accounts')).status).toBe(200);
    expect((await spread.send('DELETE', `/tokens/${token.body.id}`, undefined, undefined, 2)).status).toBe(204);
    for (const i of [0, 1, 2]) expect((await reader(i).get('/platform/internal-accounts')).status).toBe(401);

    // --- The webhook endpoint, set through one process, is used by the deliverers of all three.
    const key = await spread.get('/webhooks/signing-key', 2);
    expect(key.status).toBe(200);
    receiver.publicKey = key.body.publicKey as string;
    expect((await spread.send('PATCH', '/config', { webhookEndpoint: receiver.url }, undefined, 1)).status).toBe(200);

    // --- Accounts: the platform's USD account, one per customer, one each for the N-of-M and cancel races, and
    // platform external accounts for each sandbox suffix (created across the processes).
    const accounts: string[] = [];
    const platformAccounts = await spread.get('/platform/internal-accounts');
    accounts.push(
      platformAccounts.body.data.find((a: { balance: { currency: { code: string } } }) => a.balance.currency.code === 'USD').id as string,
    );
    const customerAccount = async (i: number) => {
      const c = await spread.post('/customers', {
        customerType: 'INDIVIDUAL',
        fullName: `Scale Customer ${i}`,
        birthDate: '1990-01-15',
        nationality: 'US',
        email: `scale-${i}@example.com`,
      });
      expect(c.status, c.text).toBe(201);
      const list = await spread.send('GET', `/customers/internal-accounts?customerId=${encodeURIComponent(c.body.id)}`);
      expect(list.status, list.text).toBe(200);
      return list.body.data[0].id as string;
    };
    accounts.push(...(await Promise.all(Array.from({ length: CUSTOMERS + 2 }, (_, i) => customerAccount(i)))));
    const cancelAccount = accounts.pop()!;
    const raceAccount = accounts.pop()!;
    const externals = new Map<string, string>();
    await Promise.all(
      ['001', '002', '003', '005', '007'].map(async (suffix) => {
        const info = { ...usAccountInfo(suffix), accountNumber: uniqueAccountNumber(suffix) };
        const e = await spread.post('/platform/external-accounts', { currency: 'USD', accountInfo: info });
        expect(e.status, e.text).toBe(201);
        externals.set(suffix, e.body.id as string);
      }),
    );
    await waitFor(() => [...receiver.types.values()].includes('TEST'), 15_000);

    // --- The driver
    const problems: string[] = [];
    const payments = new Map<string, Payment>();
    const funded = new Map<string, number>();
    const fundingKeys = new Map<string, number>();
    let duplicatesSent = 0;

    /**
     * A money-moving request with an Idempotency-Key, to the next process; for a duplicate, the same
     * request also goes to the next process at the same moment (a client retrying through the
     * balancer): both must answer the same, and exactly one of them runs it.
     */
    const once = async (op: Op, path: string, body: unknown): Promise<Res> => {
      const headers = { 'idempotency-key': `scale-${randomUUID()}` };
      const first = spread.pick();
      if (!op.duplicate) return spread.send('POST', path, body, headers, first);
      duplicatesSent++;
      const [a, b] = await Promise.all([
        spread.send('POST', path, body, headers, first),
        spread.send('POST', path, body, headers, (first + 1) % PROCESSES),
      ]);
      if (a.status !== b.status || !isDeepStrictEqual(a.body, b.body))
        problems.push(`same key, different answers from processes ${a.proc} and ${b.proc}: ${a.status} ${a.text} / ${b.status} ${b.text}`);
      const hits = [a, b].filter((r) => r.headers.get('idempotency-hit') === 'true').length;
      if (a.status < 300 && hits !== 1) problems.push(`same key sent twice: ${hits} replays (expected exactly 1) for ${path}`);
      return a;
    };

    const run = async (op: Op): Promise<void> => {
      const account = accounts[op.account]!;
      if (op.kind === 'FUND') {
        const res = await once(op, `/sandbox/internal-accounts/${account}/fund`, { amount: op.amount });
        if (res.status !== 200) throw new Error(`fund: ${res.status} ${res.text}`);
        funded.set(account, (funded.get(account) ?? 0) + op.amount);
        fundingKeys.set(account, (fundingKeys.get(account) ?? 0) + 1);
      } else if (op.kind === 'QUOTE') {
        const res = await once(op, '/quotes', {
          source: { sourceType: 'ACCOUNT', accountId: account },
          destination: { destinationType: 'ACCOUNT', accountId: externals.get(op.suffix) },
          lockedCurrencySide: 'SENDING',
          lockedCurrencyAmount: op.amount,
          immediatelyExecute: true,
        });
        if (res.status !== 201 || res.body.status !== 'PROCESSING') throw new Error(`quote ${op.suffix}: ${res.status} ${res.text}`);
        payments.set(res.body.transactionId, {
          kind: 'QUOTE',
          suffix: op.suffix,
          txId: res.body.transactionId,
          quoteId: res.body.id,
          account,
          amount: res.body.totalSendingAmount,
          fees: res.body.feesIncluded,
        });
      } else {
        const out = op.kind === 'OUT';
        const ext = externals.get(op.suffix);
        const res = await once(op, out ? '/transfer-out' : '/transfer-in', {
          source: { accountId: out ? account : ext },
          destination: { accountId: out ? ext : account },
          amount: op.amount,
        });
        // 002/003 fail inside the request; everything else is pending until its job runs.
        const now = out && (op.suffix === '002' || op.suffix === '003') ? 'FAILED' : 'PENDING';
        if (res.status !== 201 || res.body.status !== now) throw new Error(`${op.kind} ${op.suffix}: ${res.status} ${res.text}`);
        payments.set(res.body.id, { kind: op.kind, suffix: op.suffix, txId: res.body.id, account, amount: op.amount, fees: 0 });
      }
    };

    /** POST /sandbox/clock/advance on process `proc`: everything due has run when it answers. */
    const advance = async (seconds: number, proc: number): Promise<void> => {
      const res = await spread.post('/sandbox/clock/advance', { seconds }, proc);
      if (res.status !== 200 && res.status < 500) problems.push(`advance ${seconds}s on process ${proc}: ${res.status} ${res.text}`);
    };

    /**
     * The race: M locked quotes from an account funded for exactly N, then all M executes at once,
     * round-robin across the processes: exactly N succeed, the rest are refused, nothing overdraws.
     */
    let executesOk = 0;
    let executesRefused = 0;
    const race = async () => {
      const fund = await spread.post(`/sandbox/internal-accounts/${raceAccount}/fund`, { amount: N * LOCKED_AMOUNT });
      expect(fund.status, fund.text).toBe(200);
      funded.set(raceAccount, N * LOCKED_AMOUNT);
      fundingKeys.set(raceAccount, 1);
      const quotes: Res[] = [];
      await pool(
        Array.from({ length: M }, (_, i) => i),
        8,
        async () => {
          const q = await spread.post('/quotes', {
            source: { sourceType: 'ACCOUNT', accountId: raceAccount },
            destination: { destinationType: 'ACCOUNT', accountId: externals.get('001') },
            lockedCurrencySide: 'SENDING',
            lockedCurrencyAmount: LOCKED_AMOUNT,
          });
          if (q.status !== 201 || q.body.status !== 'PENDING') throw new Error(`locked quote: ${q.status} ${q.text}`);
          quotes.push(q);
        },
        problems,
      );
      const results = await Promise.all(quotes.map((q) => spread.post(`/quotes/${q.body.id}/execute`)));
      results.forEach((r, i) => {
        const q = quotes[i]!.body;
        const executed = r.status === 200;
        if (executed) executesOk++;
        else if (r.status === 400 && r.body?.code === 'INVALID_AMOUNT' && r.body?.details?.reason === 'INSUFFICIENT_FUNDS')
          executesRefused++;
        else problems.push(`execute ${q.id}: ${r.status} ${r.text}`);
        payments.set(q.transactionId, {
          kind: 'LOCKED_QUOTE',
          suffix: '001',
          txId: q.transactionId,
          quoteId: q.id,
          account: raceAccount,
          amount: q.totalSendingAmount,
          fees: q.feesIncluded,
          executed,
        });
      });
    };

    // --- 1. Funding, spread across the processes.
    await pool(plan.funding, WIDTH, run, problems);
    expect(problems).toEqual([]);
    log(`funded ${accounts.length} accounts (${plan.funding.length} fundings)`);

    // --- 2. The load, the N-of-M race beside it, and three 9-second clock advances sent to each
    // process in turn while requests are in flight (27 s in all: locked quotes stay executable, and
    // the 30-second transfers stay pending for the cancel race below).
    const midLoad = async () => {
      for (const proc of [0, 1, 2]) {
        await new Promise((r) => setTimeout(r, 400));
        await advance(9, proc);
      }
    };
    await Promise.all([pool(plan.load, WIDTH, run, problems), race(), midLoad()]);
    log(
      `load done: ${payments.size} payments, ${duplicatesSent} requests also sent to a second process; N-of-M: ${executesOk} executed, ${executesRefused} refused`,
    );

    // --- 3. Delayed outcomes fall due while all three runners compete: concurrent advances on the
    // three processes (the job runners of all three, and the drains of the three advances, take due
    // jobs side by side).
    await Promise.all([advance(360, 0), advance(61, 1), advance(61, 2)]);
    // Returns (60 s after a 005 quote completes) scheduled during those advances fall due here.
    await Promise.all([advance(61, 0), advance(61, 1), advance(61, 2)]);

    // --- 4. Cancels race the job that fails the same 30-second transfers: fresh transfers, one
    // advance that makes their jobs due, and cancels sent through all processes while the runners
    // work through those jobs. Each transfer must be failed (and refunded) by exactly one side.
    const cancelFund = await spread.post(`/sandbox/internal-accounts/${cancelAccount}/fund`, { amount: CANCEL_RACE * 1_000 });
    expect(cancelFund.status, cancelFund.text).toBe(200);
    funded.set(cancelAccount, CANCEL_RACE * 1_000);
    fundingKeys.set(cancelAccount, 1);
    const pendingOut: Payment[] = [];
    await pool(
      Array.from({ length: CANCEL_RACE }, (_, i) => i),
      WIDTH,
      async () => {
        const res = await spread.post('/transfer-out', {
          source: { accountId: cancelAccount },
          destination: { accountId: externals.get('005') },
          amount: 1_000,
        });
        if (res.status !== 201 || res.body.status !== 'PENDING') throw new Error(`transfer-out 005: ${res.status} ${res.text}`);
        const p: Payment = { kind: 'OUT', suffix: '005', txId: res.body.id, account: cancelAccount, amount: 1_000, fees: 0 };
        payments.set(p.txId, p);
        pendingOut.push(p);
      },
      problems,
    );
    const cancel = async (p: Payment) => {
      const res = await spread.post(`/transactions/${p.txId}/cancel`, {});
      if (res.status === 200) p.cancelled = true;
      // A 5xx is recorded by the balancer (and fails the test at the end); the transfer then fails by its job.
      else if (res.status < 500 && !(res.status === 409 && res.body?.code === 'TRANSACTION_NOT_CANCELLABLE'))
        problems.push(`cancel ${p.txId}: ${res.status} ${res.text}`);
    };
    // Sent from the moment the advance is, evenly over a window longer than the advance usually
    // takes to make the jobs due: the first cancels come before the jobs run, the last after, and
    // those between meet the runners working through the same transfers.
    const cancels = () =>
      Promise.all(
        pendingOut.map(async (p, i) => {
          await new Promise((r) => setTimeout(r, (i * CANCEL_SPREAD_MS) / pendingOut.length));
          await cancel(p);
        }),
      );
    await Promise.all([advance(31, 0), cancels()]);

    const final = new Set(['COMPLETED', 'FAILED', 'EXPIRED']);
    await waitFor(async () => {
      const rows = await store.db.selectFrom('transactions').select(['id', 'status']).where('platform_id', '=', platformId).execute();
      return rows.length === payments.size && rows.every((r) => final.has(r.status));
    }, 20_000).catch(() => problems.push('transactions still in flight 20 s after the last advance'));
    log(
      `delayed outcomes done; ${pendingOut.filter((p) => p.cancelled).length} of ${pendingOut.length} 30-second transfers cancelled before their job failed them`,
    );

    // (5xx are checked last, so that a failing run still reports whether any invariant broke.)
    expect(problems).toEqual([]);
    expect(executesOk).toBe(N);
    expect(executesRefused).toBe(M - N);
    // The balancer really spread the load.
    for (const n of spread.served) expect(n).toBeGreaterThan(50);

    // --- Final statuses, read through the balancer.
    const statusProblems: string[] = [];
    await pool(
      [...payments.values()],
      WIDTH,
      async (p) => {
        const t = await spread.get(`/transactions/${p.txId}`);
        const e = expected(p);
        const got = {
          status: t.body?.status,
          failureReason: t.body?.failureReason,
          refund: t.body?.refund ? { status: t.body.refund.status, reason: t.body.refund.reason } : undefined,
        };
        const want = { status: e.status, failureReason: e.failureReason, refund: e.refund };
        if (t.status !== 200 || !isDeepStrictEqual(got, want))
          statusProblems.push(`${p.kind} ${p.suffix} ${p.txId}: ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
        if (p.quoteId) {
          const q = await spread.get(`/quotes/${p.quoteId}`);
          const want = p.kind === 'LOCKED_QUOTE' && !p.executed ? 'EXPIRED' : e.status;
          if (q.body?.status !== want) statusProblems.push(`quote ${p.quoteId}: ${q.body?.status}, expected ${want}`);
        }
      },
      statusProblems,
    );
    expect(statusProblems).toEqual([]);

    // --- Balances: the model's totals, nothing held or arriving.
    const expectedBalance = new Map<string, number>([...accounts, raceAccount, cancelAccount].map((a) => [a, funded.get(a) ?? 0]));
    for (const p of payments.values()) {
      const { source, platformFees } = effect(p);
      expectedBalance.set(p.account, expectedBalance.get(p.account)! - source);
      expectedBalance.set(accounts[0]!, expectedBalance.get(accounts[0]!)! + platformFees);
    }
    const wire = [
      ...(await spread.get('/platform/internal-accounts')).body.data,
      ...(await spread.send('GET', '/customers/internal-accounts?limit=100')).body.data,
    ] as { id: string; balance: { amount: number }; totalBalance: { amount: number } }[];
    const actual = new Map(wire.map((a) => [a.id, { balance: a.balance.amount, total: a.totalBalance.amount }]));
    for (const [id, amount] of expectedBalance) expect(actual.get(id), id).toEqual({ balance: amount, total: amount });
    expect(expectedBalance.get(raceAccount)).toBe(0);

    const ledger = await checkLedger(store.db, platformId);
    expect(ledger.problems).toEqual([]);
    expect(ledger.ok).toBe(true);

    // --- Exactly once: each payment's ledger entries, events and jobs are exactly the expected
    // ones (a job run twice would settle, refund or return twice, or emit twice).
    const group = <R>(rows: R[], key: (r: R) => string, value: (r: R) => string) => {
      const m = new Map<string, string[]>();
      for (const r of rows) m.set(key(r), [...(m.get(key(r)) ?? []), value(r)]);
      return m;
    };
    const entries = group(
      await store.db.selectFrom('ledger_entries').select(['kind', 'reference_id']).where('platform_id', '=', platformId).execute(),
      (r) => r.reference_id,
      (r) => r.kind,
    );
    const events = group(
      await store.db.selectFrom('outbox_events').select(['type', 'resource_id']).where('platform_id', '=', platformId).execute(),
      (r) => r.resource_id,
      (r) => r.type,
    );
    const jobRows = await store.db
      .selectFrom('jobs')
      .select(['id', 'kind', 'status', 'attempts', 'payload', 'last_error'])
      .where('platform_id', '=', platformId)
      .execute();
    const byQuote = new Map([...payments.values()].filter((p) => p.quoteId).map((p) => [p.quoteId!, p.txId]));
    const jobs = group(
      jobRows,
      (r) => {
        const pl = JSON.parse(r.payload) as { transactionId?: string; quoteId?: string };
        return pl.transactionId ?? byQuote.get(pl.quoteId ?? '') ?? `unknown ${r.payload}`;
      },
      (r) => r.kind,
    );
    const onceProblems: string[] = [];
    for (const p of payments.values()) {
      const e = expected(p);
      const what = `${p.kind} ${p.suffix}${p.cancelled ? ' (cancelled)' : ''} ${p.txId}`;
      if (!isDeepStrictEqual(sorted(entries.get(p.txId) ?? []), sorted(e.ledger)))
        onceProblems.push(`${what}: ledger ${entries.get(p.txId)?.join(',')}, expected ${e.ledger.join(',')}`);
      if (!isDeepStrictEqual(sorted(events.get(p.txId) ?? []), sorted(e.events)))
        onceProblems.push(`${what}: events ${events.get(p.txId)?.join(',')}, expected ${e.events.join(',')}`);
      if (!isDeepStrictEqual(sorted(jobs.get(p.txId) ?? []), sorted(e.jobs)))
        onceProblems.push(`${what}: jobs ${jobs.get(p.txId)?.join(',')}, expected ${e.jobs.join(',')}`);
    }
    for (const [account, n] of fundingKeys) {
      const fundings = (entries.get(account) ?? []).filter((k) => k === 'SANDBOX_FUNDING').length;
      if (fundings !== n) onceProblems.push(`${account}: ${fundings} SANDBOX_FUNDING entries for ${n} funding keys`);
    }
    for (const ref of entries.keys())
      if (!payments.has(ref) && !fundingKeys.has(ref)) onceProblems.push(`ledger entry for an unknown reference ${ref}`);
    for (const ref of jobs.keys()) if (!payments.has(ref)) onceProblems.push(`job for an unknown reference ${ref}`);
    for (const j of jobRows)
      if (j.status !== 'DONE' || j.attempts !== 1)
        onceProblems.push(`job ${j.id} ${j.kind}: ${j.status} after ${j.attempts} attempts (${j.last_error ?? ''})`);
    expect(onceProblems).toEqual([]);
    log(`exactly once: ${payments.size} payments, ${jobRows.length} jobs, ${[...entries.values()].flat().length} ledger entries checked`);

    // --- Every event delivered at least once, signed. Retries of refused first attempts are brought
    // forward with the sandbox clock (through whichever process is next).
    receiver.refuseSome = false;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const rows = await store.db
        .selectFrom('outbox_events')
        .select(['id', 'status', 'next_attempt_ms'])
        .where('platform_id', '=', platformId)
        .execute();
      const missing = rows.filter((r) => r.status !== 'DELIVERED' || !receiver.acks.has(r.id));
      if (missing.length === 0) break;
      if (Date.now() > deadline) throw new Error(`events never delivered:\n${JSON.stringify(missing.slice(0, 20), null, 1)}`);
      // Parked events (behind an older one of their resource) have no due time of their own.
      const later = missing.filter((r) => r.status === 'PENDING' && Number(r.next_attempt_ms) > Date.now() && !isParked(r));
      if (later.length > 0)
        await advance(Math.ceil((Math.max(...later.map((r) => Number(r.next_attempt_ms))) - Date.now()) / 1000) + 1, spread.pick());
      else await new Promise((r) => setTimeout(r, 100));
    }
    const all = await store.db.selectFrom('outbox_events').select(['id', 'type']).where('platform_id', '=', platformId).execute();
    expect(receiver.badSignatures).toEqual([]);
    const stored = new Map(all.map((r) => [r.id, r.type]));
    for (const [id, type] of receiver.types) expect(stored.get(id), `received ${id}, which the store does not hold`).toBe(type);
    const duplicates = [...receiver.acks.values()].filter((n) => n > 1).length;
    log(
      `webhooks: all ${all.length} events delivered (${receiver.refused.size} refused once and retried), ${duplicates} acknowledged more than once`,
    );

    // --- No 5xx, no background loop that threw, and a clean stop. (Failed job attempts are judged
    // by the jobs table above, for this platform's jobs only: the database is shared with the
    // other test files, whose jobs these processes may also run.)
    expectNoServerErrors();
    const exits = await Promise.all(procs.map((p) => p.stop()));
    for (const [i, p] of procs.entries()) {
      const errorsLogged = p
        .output()
        .stdout.split('\n')
        .filter((l) => /"level":(50|60)/.test(l) && !l.includes('"msg":"job failed"'));
      expect(errorsLogged, `process ${i} logged errors`).toEqual([]);
      expect(exits[i]!.code, p.output().stderr).toBe(0);
    }
    log(`requests per process: ${spread.served.join(' / ')}; ${((Date.now() - started) / 1000).toFixed(1)} s in all`);
  }, 150_000);
});
