/**
 * Group commit on PostgreSQL (issue #26): concurrent units of work share one transaction on one
 * connection — one COMMIT and one WAL flush for many payments, their statements sent together
 * (store/pg-pipeline.ts sends whatever the members have queued in one pipeline per round trip),
 * and a hot row (a payer's balance) locked once per group rather than once per payment.
 *
 * - A group opens when a unit arrives and a group slot (`groups`) is free. It takes the queued
 *   units, and units that arrive while it runs join it, until MAX_MEMBERS or MAX_GROUP_MS; the
 *   members run **concurrently** in the group's transaction, as interleaved statements on its
 *   connection.
 * - When every member has returned, the group commits, and only then does each member hear its
 *   result.
 * - If a member that wrote throws (a refusal after a write, an SQL error), or COMMIT fails, nothing
 *   of the group is kept: the transaction rolls back and **every member runs again alone**, in a
 *   transaction of its own, and reports that outcome. A member that throws having only read (a
 *   refusal for want of funds, found before anything is written) leaves nothing to undo: the group
 *   commits and the refusal is reported after it, since what the member read may have been the
 *   others' work. So every outcome a caller hears is the outcome of its unit run by itself or beside
 *   others that all committed — never a refusal caused by a neighbour's work that was then undone,
 *   never a success resting on work that was rolled back.
 *
 * - Members lock the balance rows they move (`lockRowsInOrder`, called by the ledger) together, at
 *   the barrier where every member has come to its first write, in one statement and in id order:
 *   two groups that lock overlapping accounts in the order their members happen to arrive could
 *   each hold a row the other waits for.
 *
 * A unit's callback may run more than once (already so: store/retry.ts reruns a unit on a deadlock)
 * and must not act outside the database. Durability is unchanged: `synchronous_commit` stays as
 * configured, and a caller is answered after COMMIT.
 */
import { CompiledQuery, type DatabaseConnection, type Kysely, PostgresDialect, Transaction } from 'kysely';
import type { GroupProfile } from './group-profile.ts';
import { DEFERRED } from './pg-deferred.ts';
import type { Database } from './schema.ts';

/** Units per group at most: a bound on a group's lock hold time and on its members' latency. */
const MAX_MEMBERS = 64;
/** A group stops taking new units after this long, lets its members finish, and commits. */
const MAX_GROUP_MS = 10;

interface Member {
  fn: (trx: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** Whether it sent anything but a SELECT in the group's transaction. */
  wrote?: boolean;
  /** With a profile: when it asked to run, and when it started in a group (GroupProfile's clock). */
  asked?: number;
  started?: number;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * The dialect a group's Transaction objects are built with: Kysely needs one, but a group's
 * statements go through the executor's connection provider, so it is never used to connect.
 */
const unusedDialect = new PostgresDialect({
  pool: async () => {
    throw new Error('a group transaction does not open connections');
  },
});
const unusedDriver = unusedDialect.createDriver();

export class PgGroupCommit {
  private readonly queue: Member[] = [];
  private active = 0;
  /** The group still taking members, if any. */
  private open: Group | undefined;
  /** Groups committed, units committed in them, and groups rolled back and run again unit by unit. */
  readonly stats = { groups: 0, units: 0, replayed: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly groups: number,
    /** Timings of every group's phases (a development tool: CORRIDOR_GROUP_PROFILE; group-profile.ts). */
    readonly profile?: GroupProfile,
  ) {}

  /** Runs `fn` in a transaction shared with the units beside it; settles after that transaction ends. */
  run<T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const member: Member = { fn, resolve: resolve as (v: unknown) => void, reject };
      if (this.profile) member.asked = this.profile.now();
      if (this.open?.join(member)) return;
      this.queue.push(member);
      this.pump();
    });
  }

  private pump(): void {
    while (this.active < this.groups && this.queue.length > 0) {
      this.active += 1;
      const group = new Group(this.db, this.queue.splice(0, MAX_MEMBERS), this.profile);
      this.open = group;
      void this.finish(group);
    }
  }

  private async finish(group: Group): Promise<void> {
    const committed = await group.run();
    if (this.open === group) this.open = undefined;
    this.active -= 1;
    if (committed) {
      this.stats.groups += 1;
      this.stats.units += group.members.length;
    } else {
      this.stats.replayed += 1;
      this.profile?.rolledBack();
      // Alone, each in its own transaction (concurrently, on the pool's connections).
      for (const m of group.members) void this.db.transaction().execute(m.fn).then(m.resolve, m.reject);
    }
    this.pump();
  }
}

class Group {
  readonly members: Member[] = [];
  private readonly outcomes: Promise<Outcome>[] = [];
  private accepting = true;
  private connection: DatabaseConnection | undefined;
  private readonly started = Date.now();
  /** With a profile: when the group was formed and first reached its barrier (GroupProfile's clock). */
  private readonly formed: number | undefined;
  private barrierAt: number | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    first: Member[],
    private readonly profile: GroupProfile | undefined,
  ) {
    this.members.push(...first);
    this.formed = profile?.now();
  }

  /** Adds a member while the group takes them; false once it no longer does. */
  join(member: Member): boolean {
    if (!this.accepting || this.members.length >= MAX_MEMBERS || Date.now() - this.started >= MAX_GROUP_MS) return false;
    this.members.push(member);
    if (this.connection) this.outcomes.push(this.start(member));
    return true;
  }

  /**
   * Runs a member over the group's connection, noting whether it writes, and holding its first
   * write that is not deferred (one that may lock a row others wait for: a payer's balance) until
   * every other member has come to such a write or finished. The group's row locks are then taken
   * together, at its end, and held for its last round trips only — not while members still read.
   */
  private start(member: Member): Promise<Outcome> {
    if (this.profile) member.started = this.profile.now();
    this.reading.add(member);
    const trx = concurrentTransaction(this.db, this.connection!, (sql) => {
      if (isRead(sql)) return;
      member.wrote = true;
      if (sql.startsWith(DEFERRED) || !this.reading.has(member)) return;
      // From the group's first such write to its COMMIT, members that would join could only
      // lengthen the time its locks are held.
      this.accepting = false;
      this.reading.delete(member);
      return this.allAtWrite();
    });
    groupTransactions.set(trx, { group: this, member });
    return settle(member.fn(trx)).finally(() => {
      if (this.reading.delete(member)) this.release();
    });
  }

  /** Members still reading (neither at a write that is not deferred nor finished). */
  private readonly reading = new Set<Member>();
  private waiting: (() => void)[] = [];
  /** Balance rows the members waiting at the barrier said they will lock (`lockRowsInOrder`). */
  private announced = new Set<string>();
  /** The failure of the statement that took those locks (outside a pipeline it may fail on its own). */
  private lockFailure: unknown;

  /**
   * A member about to lock `ids` (its first such write): it waits at the barrier like any first
   * write, and the group locks every announced row there, in one statement and in id order.
   */
  announce(member: Member, ids: readonly string[]): Promise<void> | undefined {
    // Past the barrier already (a unit's second entry): the group's locks are taken.
    if (!this.reading.has(member)) return undefined;
    member.wrote = true;
    for (const id of ids) this.announced.add(id);
    this.accepting = false;
    this.reading.delete(member);
    return this.allAtWrite();
  }

  private allAtWrite(): Promise<void> | undefined {
    if (this.reading.size === 0) {
      this.release();
      return undefined;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    if (this.reading.size > 0) return;
    if (this.profile && this.barrierAt === undefined) this.barrierAt = this.profile.now();
    if (this.announced.size > 0 && this.connection) {
      // Deferred: it travels ahead of the members' first writes, in their round trip. In id order
      // (byte order, as a job batch moves balances), so no two transactions that lock several of
      // these rows each hold one the other waits for: members lock in whatever order they come to
      // their writes, which across two groups could deadlock (PostgreSQL finds that only after
      // deadlock_timeout, a second by default).
      const ids = [...this.announced].sort();
      this.announced = new Set();
      this.connection.executeQuery(CompiledQuery.raw(LOCK_BALANCES, [ids])).catch((err: unknown) => {
        this.lockFailure = err;
      });
    }
    const go = this.waiting;
    this.waiting = [];
    for (const resolve of go) resolve();
  }

  /**
   * Runs the members in one transaction and commits it. True when it committed (each member has
   * its result); false when it did not (no member has heard anything; the caller runs each alone).
   */
  async run(): Promise<boolean> {
    let outcomes: Outcome[] = [];
    /** With a profile: when the group had its connection and sent COMMIT (GroupProfile's clock). */
    let connected: number | undefined;
    let commitSent: number | undefined;
    try {
      await this.db.getExecutor().provideConnection(async (connection) => {
        connected = this.profile?.now();
        await connection.executeQuery(CompiledQuery.raw('begin'));
        try {
          this.connection = connection;
          for (const m of this.members) this.outcomes.push(this.start(m));
          // Members that join while these run are awaited too.
          let seen = 0;
          while (seen < this.outcomes.length) {
            const batch = this.outcomes.slice(seen);
            seen = this.outcomes.length;
            await Promise.all(batch);
          }
          this.accepting = false;
          outcomes = await Promise.all(this.outcomes);
          // A member that failed after writing leaves work in the transaction that must not commit;
          // one that failed having only read is refused on its own (told after the COMMIT, as what
          // it read may be the others' work).
          // (An error of the server's own aborted the whole transaction, whatever the member sent.)
          if (this.lockFailure !== undefined || outcomes.some((o, i) => !o.ok && (this.members[i]!.wrote || isServerError(o.error))))
            throw new GroupFailed();
          commitSent = this.profile?.now();
          await connection.executeQuery(CompiledQuery.raw('commit'));
        } catch (err) {
          this.accepting = false;
          await connection.executeQuery(CompiledQuery.raw('rollback')).catch(() => undefined);
          throw err;
        }
      });
    } catch {
      this.accepting = false;
      return false;
    }
    // Committed: nothing from here may fail the group (its members would run a second time).
    if (this.profile) this.profiled(connected!, commitSent!);
    this.members.forEach((m, i) => {
      const o = outcomes[i]!;
      if (o.ok) m.resolve(o.value);
      // It asked to leave having written nothing: it runs now, alone.
      else if (o.error instanceof RunAloneError) void this.db.transaction().execute(m.fn).then(m.resolve, m.reject);
      else m.reject(o.error);
    });
    return true;
  }

  /** Adds a committed group's phases to the profile. */
  private profiled(connected: number, commitSent: number): void {
    const members = this.members.map((m) => ({ asked: m.asked!, started: m.started! }));
    const t = { formed: this.formed!, connected, barrier: this.barrierAt, commitSent, done: this.profile!.now() };
    this.profile!.committed(t, members);
  }
}

class GroupFailed extends Error {}

/** Locks internal account rows (`$1`: their ids) for their balance UPDATEs, in byte order (as a job batch moves balances). */
const LOCK_BALANCES = `${DEFERRED}select id from internal_accounts where id = any($1) order by id collate "C" for no key update`;

/** The transactions of group members, with their group and member. */
const groupTransactions = new WeakMap<Kysely<Database>, { group: Group; member: Member }>();

/**
 * Called by a unit just before it moves the balances of internal accounts `ids` (ledger.ts). In a
 * group, the rows are locked with every other member's, in id order, when all members have come
 * to their first write (the group's barrier); the caller awaits that. Outside a group it does
 * nothing: a lone transaction locks its rows as its UPDATEs come (the ledger's own order).
 */
export function lockRowsInOrder(trx: Kysely<Database>, ids: readonly string[]): Promise<void> | undefined {
  const g = groupTransactions.get(trx);
  return g?.group.announce(g.member, ids);
}

/** A group member that must run alone (see `requireOwnTransaction`). */
export class RunAloneError extends Error {
  constructor() {
    super('this unit must run in a transaction of its own');
  }
}

/**
 * For a unit that reads a value and writes back one computed from it (a counter), which interleaved
 * with another unit in one transaction could lose an update: called before the unit writes, it takes
 * the unit out of its group, to run again in a transaction of its own. Outside a group it does nothing.
 */
export function requireOwnTransaction(trx: Kysely<Database>): void {
  if (groupTransactions.has(trx)) throw new RunAloneError();
}

function settle(p: Promise<unknown>): Promise<Outcome> {
  return p.then(
    (value): Outcome => ({ ok: true, value }),
    (error: unknown): Outcome => ({ ok: false, error }),
  );
}

/**
 * A Kysely transaction over the group's connection whose queries are not queued one behind the
 * other (Kysely's own transaction runs one query at a time): the members' statements reach the
 * connection as they are issued, so one round trip carries several members' statements.
 */
export function concurrentTransaction(
  db: Kysely<Database>,
  connection: DatabaseConnection,
  onStatement?: (sql: string) => Promise<void> | undefined,
): Kysely<Database> {
  const seen: DatabaseConnection = onStatement
    ? {
        executeQuery: async (q) => {
          await onStatement(q.sql);
          return connection.executeQuery(q);
        },
        streamQuery: (q, chunkSize) => connection.streamQuery(q, chunkSize),
      }
    : connection;
  const executor = db.getExecutor().withConnectionProvider({ provideConnection: (consumer) => consumer(seen) });
  return new Transaction<Database>({ config: { dialect: unusedDialect }, dialect: unusedDialect, driver: unusedDriver, executor });
}

/** An error PostgreSQL answered (pg's DatabaseError carries a severity): it aborts the transaction. */
function isServerError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && 'severity' in err;
}

/** A statement that only reads (a SELECT; the platform lock is one): anything else counts as a write. */
function isRead(sql: string): boolean {
  const text = sql.startsWith(DEFERRED) ? sql.slice(DEFERRED.length) : sql;
  return /^\s*select\b/i.test(text);
}
