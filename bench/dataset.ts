/**
 * The bench data set: one platform with many customers and a year of their transactions, written
 * straight into a store (SQLite file or PostgreSQL schema) with bulk SQL, so list queries can be
 * measured at the size of issue #8 (100k customers, 1M transactions).
 *
 * What it writes, all through Corridor's own schema (its migrations run first) and in the row
 * formats its services write:
 * - one SANDBOX platform (`createPlatform`: USD account, webhook key, all-permission token) that
 *   also supports EUR and charges a cross-currency fee;
 * - customers (INDIVIDUAL, KYC approved, terms accepted), each with a USD internal account (a
 *   quarter also EUR), a US bank account for transfers and ACH pulls, an IBAN when it holds EUR, and
 *   one foreign payout account (MXN, GBP, PHP or CAD) for cross-currency quotes;
 * - transactions over the year before the end date (busier towards the end; a few customers very
 *   active, most with a handful): same-currency transfers out, cross-currency quotes (with their
 *   quote rows), ACH pulls and incoming UMA payments, mostly COMPLETED, some FAILED, quotes EXPIRED,
 *   and the last hours' payments still in flight;
 * - the ledger entries the payment engine posts for each of them (hold, settlement, refund,
 *   pending credit …) plus one sandbox funding entry per customer account, so every balance
 *   equals its postings and `GET /_admin/ledger/check` is clean.
 *
 * Not written: webhook events (the outbox) and delayed jobs. In-flight payments therefore stay in
 * flight (no settlement job will move them), and outcomes are drawn at random rather than from the
 * external accounts' magic suffixes (every generated account number ends in 001).
 *
 * Speed: secondary indexes of the bulk-loaded tables are dropped (their definitions read from the
 * store's catalogue) and rebuilt after the load; rows go in as multi-row INSERTs (SQLite, prepared
 * statements in large transactions) or `unnest` INSERTs (PostgreSQL).
 *
 * Progress: each long phase (customers, transactions, index rebuild) shows its progress on stderr
 * (src/lib/progress.ts): a line redrawn in place on a terminal, a plain line every 10 % (at most one
 * per 5 s) elsewhere, and a final line with the phase's time. stdout carries only the result (JSON).
 *
 * Parts: dataset/plan.ts (who pays whom, when, with what outcome; final balances), dataset/rows.ts
 * (the rows), dataset/writers.ts (bulk SQL per store), dataset/random.ts (seeded randomness, ids).
 *
 * CLI: node --import tsx bench/dataset.ts --customers 100000 --transactions 1000000
 *        [--store sqlite --data-dir DIR | --store postgres --database-url URL [--pg-schema NAME]] [--seed N]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { uuidV7Ids, type Deps } from '../src/deps.ts';
import { Progress } from '../src/lib/progress.ts';
import { iso } from '../src/lib/time.ts';
import { settingsOf, type PlatformSettings } from '../src/modules/platforms/platform-settings.ts';
import { createPlatform } from '../src/modules/platforms/platforms.service.ts';
import { openStore } from '../src/store/db.ts';
import { migrate } from '../src/store/migrate.ts';
import { SecretBox } from '../src/store/secret-box.ts';
import { migrations } from '../src/store/migrations/index.ts';
import { CUSTOMER_CURRENCIES, DAY_MS, FEES, planBalances, planCustomers, planTransactions, YEAR_MS } from './dataset/plan.ts';
import { Rand } from './dataset/random.ts';
import { internalAccountRow, writeCustomers, writeTransactions, type GenContext, type Party, type Tables } from './dataset/rows.ts';
import { PgWriter, resetPgSchema, SqliteWriter, withSearchPath, type BulkWriter } from './dataset/writers.ts';

export { resetPgSchema, withSearchPath };

/** Bump when the generated data changes, so cached data sets are rebuilt. */
export const GENERATOR_VERSION = 3;

export type DatasetStore = { kind: 'sqlite'; dataDir: string } | { kind: 'postgres'; databaseUrl: string };

export interface DatasetOptions {
  customers: number;
  transactions: number;
  seed: number;
  /** The data set's "now" (ms, UTC): transactions fall in the year before it. Default: today 00:00 UTC. */
  endMs?: number;
  store: DatasetStore;
  /** Whole lines (default: stderr, prefixed `dataset: `); a phase's in-place progress line goes to stderr when it is a terminal. */
  log?: (msg: string) => void;
}

/** Transactions per write batch (one SQLite/PostgreSQL transaction each). */
const BATCH = 20_000;

export interface DatasetResult {
  platformId: string;
  clientId: string;
  clientSecret: string;
  customers: number;
  transactions: number;
  ledgerEntries: number;
  postings: number;
  endMs: number;
  elapsedMs: number;
}

// ---- the generator -------------------------------------------------------------------------------

/** Today 00:00 UTC. */
export function defaultEndMs(now = Date.now()): number {
  return Math.floor(now / DAY_MS) * DAY_MS;
}

/**
 * The key under which a generated data set can be cached and reused: its size and seed, the
 * schema it was written with (migration count) and the generator's version. The end date is left
 * out: a cached data set simply ends some days ago, and readers take the date from its rows.
 */
export function datasetKey(o: { customers: number; transactions: number; seed: number }): string {
  return `c${o.customers}-t${o.transactions}-s${o.seed}-m${migrations.length}-v${GENERATOR_VERSION}`;
}

/**
 * Generates the data set into a store that has no Corridor data yet (SQLite: a data directory
 * without a store; PostgreSQL: a schema without Corridor's tables, or with them but no
 * transactions). Runs Corridor's migrations first.
 */
export async function generateDataset(o: DatasetOptions): Promise<DatasetResult> {
  const t0 = Date.now();
  const log = o.log ?? ((m: string) => process.stderr.write(`dataset: ${m}\n`));
  const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`;
  const endMs = o.endMs ?? defaultEndMs();
  const r = new Rand(o.seed);
  if (!Number.isInteger(o.customers) || o.customers < 1 || !Number.isInteger(o.transactions) || o.transactions < 0) {
    throw new Error('customers must be ≥ 1 and transactions ≥ 0 (integers)');
  }

  // 1. Schema and platform, through Corridor's own code.
  const platformMs = endMs - 2 * YEAR_MS - DAY_MS;
  const clock = { nowMs: () => platformMs };
  const rng = { bytes: (n: number) => r.bytes(n) };
  const deps: Deps = { clock, rng, secretRng: rng, ids: uuidV7Ids(clock, rng) };
  const store = openStore(
    o.store.kind === 'sqlite' ? { dataDir: o.store.dataDir } : { databaseUrl: o.store.databaseUrl, dataDir: os.tmpdir(), poolSize: 1 },
  );
  let platformId: string;
  let token: { clientId: string; clientSecret?: string };
  let settings: PlatformSettings;
  let platformAccounts: Record<string, string>;
  try {
    await migrate(store, { progress: { prefix: 'dataset: ', line: log } });
    const existing = await store.db
      .selectFrom('transactions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(existing.n) > 0) throw new Error(`the store already holds ${existing.n} transactions; generate into an empty store`);
    ({ platformId, token, settings, platformAccounts } = await store.db.transaction().execute(async (trx) => {
      // No CORRIDOR_SECRET_KEY here: a later `corridor start` with one seals the key.
      const created = await createPlatform(
        trx,
        deps,
        { name: 'Bench list platform', fiatCurrency: 'USD', environment: 'SANDBOX' },
        new SecretBox({}),
      );
      const p = created.platform;
      const s = settingsOf(p);
      const usd = s.supportedCurrencies[0]!;
      s.supportedCurrencies.push({ ...usd, currencyCode: 'EUR' });
      s.feeConfigs = CUSTOMER_CURRENCIES.map((c) => ({
        feeType: 'CROSS_CURRENCY_TRANSACTION' as const,
        sourceCurrency: c,
        variableFeeBps: FEES[c].bps,
        fixedFee: { amount: FEES[c].fixed, currency: c },
      }));
      await trx
        .updateTable('platforms')
        .set({ config: JSON.stringify(s) })
        .where('id', '=', p.id)
        .execute();
      // Adding EUR to supportedCurrencies gives the platform a EUR account (as PATCH /config does).
      const at = iso(platformMs);
      await trx
        .insertInto('internal_accounts')
        .values(internalAccountRow(p.id, null, 'EUR', at, deps, r, platformMs))
        .execute();
      const accounts = await trx
        .selectFrom('internal_accounts')
        .select(['id', 'currency'])
        .where('platform_id', '=', p.id)
        .where('customer_id', 'is', null)
        .execute();
      return {
        platformId: p.id,
        token: created.token,
        settings: s,
        platformAccounts: Object.fromEntries(accounts.map((a) => [a.currency, a.id])),
      };
    }));
  } finally {
    await store.close();
  }
  log(`${elapsed()}  migrations applied, platform ${platformId} created`);

  // 2. The plan (in memory), so every account's final balance is known before it is written.
  const cust = planCustomers(o.customers, endMs, r);
  const plan = planTransactions(o.transactions, cust, endMs, r);
  const balances = planBalances(plan, cust);
  log(`${elapsed()}  planned ${o.customers.toLocaleString('en-US')} customers and ${o.transactions.toLocaleString('en-US')} transactions`);

  // 3. Bulk load.
  const w: BulkWriter =
    o.store.kind === 'sqlite'
      ? new SqliteWriter(new SQLite(path.join(o.store.dataDir, 'corridor.sqlite')))
      : await PgWriter.open(o.store.databaseUrl);
  const tables = ['customers', 'internal_accounts', 'external_accounts', 'transactions', 'quotes', 'ledger_entries', 'ledger_postings'];
  // PostgreSQL's status rows (migration 0030), written by a trigger with each transaction: loaded,
  // indexed and vacuumed like the tables the generator writes itself.
  if (o.store.kind === 'postgres') tables.push('transaction_statuses');
  let entries = 0;
  let postings = 0;
  // A phase's progress: in place on a terminal, otherwise plain lines through `log`, timed like the rest.
  const phase = (name: string, total: number | undefined) =>
    new Progress(name, total, { prefix: 'dataset: ', line: (text) => log(`${elapsed()}  ${text}`) });
  let current: Progress | undefined;
  try {
    await w.dropIndexes(tables);
    const ctx: GenContext = { platformId, settings, platformAccounts, r, deps, endMs };
    const parties: Party[] = new Array(o.customers);
    current = phase('customers', o.customers);
    for (let from = 0; from < o.customers; from += BATCH) {
      const to = Math.min(o.customers, from + BATCH);
      await w.begin();
      const out = writeCustomers(ctx, cust, balances, from, to, parties);
      await insertTables(w, out, current, from, to);
      entries += out.get('ledger_entries')!.length;
      postings += out.get('ledger_postings')!.length;
      await w.commit();
      current.update(to);
    }
    current.finish();

    current = phase('transactions', plan.n);
    for (let from = 0; from < plan.n; from += BATCH) {
      const to = Math.min(plan.n, from + BATCH);
      await w.begin();
      const out = writeTransactions(ctx, plan, parties, from, to);
      await insertTables(w, out, current, from, to);
      entries += out.get('ledger_entries')!.length;
      postings += out.get('ledger_postings')!.length;
      await w.commit();
      current.update(to);
    }
    current.finish();

    // Index builds take uneven times (and on PostgreSQL one may run long): the elapsed time, and which step.
    const indexes = phase('indexes', undefined).refreshEvery(1_000);
    current = indexes;
    await w.rebuildIndexes((step, steps, name) => indexes.update(step, `${step + 1}/${steps} ${name}`));
    current.finish();
    current = undefined;
  } finally {
    current?.abandon();
    await w.close();
  }
  await settlePlatformFees(o.store, platformId, balances.fees, platformAccounts, endMs);
  log(
    `${elapsed()}  done: ${o.transactions.toLocaleString('en-US')} transactions, ${entries.toLocaleString('en-US')} ledger entries, ${postings.toLocaleString('en-US')} postings`,
  );
  return {
    platformId,
    clientId: token.clientId,
    clientSecret: token.clientSecret!,
    customers: o.customers,
    transactions: o.transactions,
    ledgerEntries: entries,
    postings,
    endMs,
    elapsedMs: Date.now() - t0,
  };
}

/**
 * Inserts a batch's rows (`out`, items `from`…`to` of a phase), telling `progress` how far it got in
 * between: the share of the batch's rows in so far, as a share of its items.
 */
async function insertTables(w: BulkWriter, out: Tables, progress: Progress, from: number, to: number): Promise<void> {
  let total = 0;
  for (const rows of out.values()) total += rows.length;
  let before = 0;
  for (const [table, rows] of out) {
    await w.insert(table, rows, (n) => progress.update(from + Math.floor(((to - from) * (before + n)) / Math.max(1, total))));
    before += rows.length;
  }
}

/** Credits the collected fees to the platform's accounts (their postings are the settlements'). */
async function settlePlatformFees(
  s: DatasetStore,
  platformId: string,
  fees: Record<string, number>,
  accounts: Record<string, string>,
  endMs: number,
): Promise<void> {
  const store = openStore(s.kind === 'sqlite' ? { dataDir: s.dataDir } : { databaseUrl: s.databaseUrl, dataDir: os.tmpdir(), poolSize: 1 });
  try {
    await store.db.transaction().execute(async (trx) => {
      for (const [cur, total] of Object.entries(fees)) {
        if (total === 0) continue;
        await trx
          .updateTable('internal_accounts')
          .set({ available: total, updated_at: iso(endMs - 1) })
          .where('id', '=', accounts[cur]!)
          .where('platform_id', '=', platformId)
          .execute();
      }
    });
  } finally {
    await store.close();
  }
}

// ---- CLI -------------------------------------------------------------------------------------------

const HELP = `Usage: node --import tsx bench/dataset.ts [options]

Generates the bench data set (one platform, its customers, a year of transactions and their ledger).

  --customers <n>        customers (default 100000)
  --transactions <n>     transactions (default 1000000)
  --store <kind>         sqlite (default) or postgres
  --data-dir <dir>       SQLite: data directory to create the store in (must hold no store yet)
  --database-url <url>   PostgreSQL: the database (default $DATABASE_URL)
  --pg-schema <name>     PostgreSQL: drop and recreate this schema and generate into it
                         (start Corridor with ?options=-c%20search_path%3D<name> in DATABASE_URL)
  --seed <n>             random seed (default 1); same seed and date, same data set
  --end <YYYY-MM-DD>     the data set's "today" (default: today, UTC)
  -h, --help`;

async function cli(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      customers: { type: 'string', default: '100000' },
      transactions: { type: 'string', default: '1000000' },
      store: { type: 'string', default: 'sqlite' },
      'data-dir': { type: 'string' },
      'database-url': { type: 'string' },
      'pg-schema': { type: 'string' },
      seed: { type: 'string', default: '1' },
      end: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const int = (name: string, v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`);
    return n;
  };
  const endMs = values.end ? Date.parse(`${values.end}T00:00:00Z`) : undefined;
  if (endMs !== undefined && Number.isNaN(endMs)) throw new Error('--end must be YYYY-MM-DD');
  let store: DatasetStore;
  let corridorUrl: string | undefined;
  if (values.store === 'postgres') {
    const url = values['database-url'] ?? process.env.DATABASE_URL;
    if (!url) throw new Error('--store postgres needs --database-url (or DATABASE_URL)');
    corridorUrl = url;
    if (values['pg-schema']) {
      await resetPgSchema(url, values['pg-schema']);
      corridorUrl = withSearchPath(url, values['pg-schema']);
    }
    store = { kind: 'postgres', databaseUrl: corridorUrl };
  } else if (values.store === 'sqlite') {
    const dir = values['data-dir'];
    if (!dir) throw new Error('--store sqlite needs --data-dir');
    if (fs.existsSync(path.join(dir, 'corridor.sqlite'))) throw new Error(`${dir} already holds a store; pick an empty data directory`);
    fs.mkdirSync(dir, { recursive: true });
    store = { kind: 'sqlite', dataDir: path.resolve(dir) };
  } else {
    throw new Error('--store must be sqlite or postgres');
  }
  const res = await generateDataset({
    customers: int('customers', values.customers),
    transactions: int('transactions', values.transactions),
    seed: int('seed', values.seed),
    endMs,
    store,
  });
  process.stdout.write(
    `${JSON.stringify({ ...res, end: iso(res.endMs), store: store.kind, ...(corridorUrl ? { databaseUrl: corridorUrl.replace(/:[^:@/]*@/, ':***@') } : { dataDir: (store as { dataDir: string }).dataDir }) }, null, 2)}\n`,
  );
  process.stderr.write(`dataset: authenticate as ${res.clientId}:<clientSecret above> (platform ${res.platformId})\n`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  cli(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`dataset: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
