/**
 * The SQLite driver behind Kysely, with group commit.
 *
 * SQLite has one connection per process and runs one transaction at a time; much of what a write
 * transaction costs is its COMMIT (every page it dirtied goes to the WAL, a system call or two per
 * page), and concurrent requests dirty the same pages (the account row, the last leaf of each
 * index). So the transactions that run within one turn of the event loop share one real
 * transaction:
 *
 * - the first transaction of a group opens `BEGIN IMMEDIATE`; the transactions of the group then
 *   run one after the other inside it, each holding the connection while it runs;
 * - a transaction that fails after it changed something is undone alone: the group's transaction
 *   is rolled back and the statements of the transactions before it run again (see `undoMember`);
 * - a transaction that succeeds hands the connection on and waits for its group's COMMIT, which
 *   runs once the event loop has handled the I/O at hand (`setImmediate`), or at once when a query
 *   outside any transaction needs the connection (so reads outside transactions, and other
 *   processes, never see a group's uncommitted work);
 * - a transaction's caller hears "committed" only after the real COMMIT succeeded; if the COMMIT
 *   fails (or SQLite itself rolls the whole transaction back, e.g. disk full) every transaction of
 *   the group fails and none was acknowledged.
 *
 * Transactions of one group see each other's work — as they would running one after the other —
 * and commit or fail together, so nothing a caller is told rests on work that did not commit.
 * Durability is unchanged: a caller is answered after the COMMIT, as before. (As before, a
 * transaction's callback must not act outside the database — it may still be rolled back.)
 */
import type SQLite from 'better-sqlite3';
import { SelectQueryNode, type CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';

/** Statements whose change count says whether they changed anything. */
const DML = /^\s*(insert|update|delete|replace|with)\b/i;
/** Transaction control: "read-only" to SQLite, but part of what a replay must repeat. */
const TXN_CONTROL = /^\s*(savepoint|release|rollback)\b/i;

type Prepare = (sql: string) => SQLite.Statement;

/** A statement that may have changed something, as it ran, for replaying it (see `undoMember`). */
interface LoggedStatement {
  sql: string;
  parameters: readonly unknown[];
  /** Rows it changed (or returned, with RETURNING): a replay must give the same count. */
  changes: number;
}

/** One shared BEGIN … COMMIT and the transactions waiting for its COMMIT. */
class Group {
  /** Every statement of the group's transactions that may have changed something, in order. */
  readonly log: LoggedStatement[] = [];
  readonly done: Promise<void>;
  resolve!: () => void;
  reject!: (err: unknown) => void;
  constructor() {
    this.done = new Promise<void>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
    // A group whose transactions all failed has no one waiting; its failure is nobody's to report.
    this.done.catch(() => {});
  }
}

/** Lifecycle of one acquisition of the connection (one Kysely transaction or one plain query). */
type HandleState = 'plain' | 'in-transaction' | 'finished' | 'lost';

/** Raised to the transactions of a group whose SQLite transaction was rolled back. */
export class GroupLostError extends Error {
  constructor(cause: unknown) {
    super(`the SQLite transaction was rolled back: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

export interface StatementResult<R> {
  rows: R[];
  changes: number;
  reader: boolean;
  lastInsertRowid: number | bigint;
}

/**
 * The connection as one Kysely acquisition sees it. Holding a handle means holding the connection
 * (until its transaction finishes, when the driver hands the connection on early).
 */
export class SqliteHandle implements DatabaseConnection {
  state: HandleState = 'plain';
  /** The connection was handed on already (finished transaction); releaseConnection does nothing. */
  handedOn = false;
  group: Group | undefined;
  /** Where this transaction's statements start in its group's log. */
  logStart = 0;
  /** It ran a statement that changed something (so a rollback has something to undo). */
  changed = false;
  constructor(readonly driver: GroupCommitDriver) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const r = this.driver.runStatement<R>(this, compiledQuery.sql, compiledQuery.parameters);
      return Promise.resolve(
        r.reader ? { rows: r.rows } : { numAffectedRows: BigInt(r.changes), insertId: BigInt(r.lastInsertRowid), rows: [] },
      );
    } catch (err) {
      return Promise.reject(err);
    }
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    if (!SelectQueryNode.is(compiledQuery.query)) throw new Error('SQLite streams only SELECT queries');
    this.driver.beforeStatement(this);
    for (const row of this.driver.prepare(compiledQuery.sql).iterate(compiledQuery.parameters as unknown[])) yield { rows: [row as R] };
  }
}

export class GroupCommitDriver implements Driver {
  private locked = false;
  private readonly waiters: Array<() => void> = [];
  private group: Group | undefined;
  private flushScheduled = false;
  private closed = false;

  constructor(
    readonly database: SQLite.Database,
    readonly prepare: Prepare,
  ) {}

  async init(): Promise<void> {}

  // ---- the connection lock (FIFO; ownership passes straight to the next waiter)

  private lock(): Promise<void> {
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private unlock(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.locked = false;
  }

  async acquireConnection(): Promise<SqliteHandle> {
    await this.lock();
    return new SqliteHandle(this);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    if (!(connection as SqliteHandle).handedOn) this.unlock();
  }

  // ---- transactions

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const h = connection as SqliteHandle;
    if (!this.group) {
      this.prepare('begin immediate').run();
      this.group = new Group();
    }
    h.state = 'in-transaction';
    h.group = this.group;
    h.logStart = this.group.log.length;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const h = connection as SqliteHandle;
    if (h.state === 'lost') throw new GroupLostError('an earlier statement failed');
    h.state = 'finished';
    // Let the next transaction run now; this one is answered when its group commits.
    h.handedOn = true;
    this.unlock();
    this.scheduleFlush();
    await h.group!.done;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const h = connection as SqliteHandle;
    // Finished: its group's COMMIT failed, and the flush rolled the group back already.
    if (h.state === 'finished' || h.state === 'lost') return;
    h.state = 'plain';
    if (!this.database.inTransaction) {
      // SQLite rolled the whole transaction back itself (e.g. SQLITE_FULL): the group is lost.
      this.failGroup(new GroupLostError('SQLite rolled it back'));
      return;
    }
    if (h.changed) this.undoMember(h);
  }

  /**
   * Undoes a failed transaction's work and nothing else: the group's transaction is rolled back,
   * begun again, and the statements of the transactions before this one run again, in order.
   * SQLite gives the same result for the same statements on the same data; each replayed statement
   * must change as many rows as it did the first time, and if one does not (another process wrote
   * in the instant between ROLLBACK and BEGIN), the whole group fails rather than commit something
   * that differs from what its transactions saw.
   *
   * Why not a savepoint per transaction (or one per group)? SQLite copies every page a write
   * touches under an open savepoint into a journal first, and every payment touches the same
   * dozens of pages: that cost up to a third of the store's time. A transaction that fails after
   * it changed something is rare — refusals come before writing — so replaying is the cheaper path.
   */
  private undoMember(h: SqliteHandle): void {
    const group = h.group!;
    try {
      this.prepare('rollback').run();
      this.prepare('begin immediate').run();
      for (let i = 0; i < h.logStart; i++) {
        const st = group.log[i]!;
        const stmt = this.prepare(st.sql);
        const changes = stmt.reader ? stmt.all(st.parameters as unknown[]).length : stmt.run(st.parameters as unknown[]).changes;
        if (DML.test(st.sql) && changes !== st.changes) throw new Error(`replaying the group diverged at: ${st.sql}`);
      }
      group.log.length = h.logStart;
    } catch (err) {
      this.failGroup(new GroupLostError(err));
    }
  }

  // ---- statements

  /** A statement is about to run on `h`'s behalf: a plain query first commits an open group. */
  beforeStatement(h: SqliteHandle): void {
    if (h.state === 'plain') {
      if (this.group) this.flushNow();
    } else if (h.state !== 'in-transaction') {
      throw new GroupLostError('the transaction is no longer open');
    }
  }

  /** Runs one statement for `h` (which holds the connection). */
  runStatement<R>(h: SqliteHandle, sql: string, parameters: readonly unknown[]): StatementResult<R> {
    this.beforeStatement(h);
    const stmt = this.prepare(sql);
    let result: StatementResult<R>;
    try {
      if (stmt.reader) {
        const rows = stmt.all(parameters as unknown[]) as R[];
        result = { rows, changes: rows.length, reader: true, lastInsertRowid: 0 };
      } else {
        const { changes, lastInsertRowid } = stmt.run(parameters as unknown[]);
        result = { rows: [], changes, reader: false, lastInsertRowid };
      }
    } catch (err) {
      this.afterError(h, err);
      throw err;
    }
    // In a group, whatever may have changed something is logged, for `undoMember`. (A statement
    // that failed changed nothing: with the default ABORT conflict resolution, which Corridor
    // uses throughout, SQLite undoes the failing statement.)
    if (h.state === 'in-transaction' && (!stmt.readonly || TXN_CONTROL.test(sql))) {
      h.group!.log.push({ sql, parameters, changes: result.changes });
      if (!DML.test(sql) || result.changes > 0) h.changed = true;
    }
    return result;
  }

  /**
   * After a failed statement: if SQLite rolled the whole transaction back (it does for some errors),
   * the group is lost, and the handle must not go on writing outside any transaction.
   */
  private afterError(h: SqliteHandle, err: unknown): void {
    if (h.state === 'in-transaction' && !this.database.inTransaction) {
      h.state = 'lost';
      this.failGroup(new GroupLostError(err));
    }
  }

  // ---- the group's COMMIT

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    // After the I/O callbacks of this loop turn: the transactions they start join the group.
    setImmediate(() => {
      this.flushScheduled = false;
      void this.lock().then(() => {
        try {
          if (this.group && !this.closed) this.flushNow();
        } finally {
          this.unlock();
        }
      });
    });
  }

  /** Commits the open group; the caller holds the connection. */
  private flushNow(): void {
    const group = this.group!;
    this.group = undefined;
    try {
      this.prepare('commit').run();
    } catch (err) {
      if (this.database.inTransaction) this.prepare('rollback').run();
      group.reject(err);
      return;
    }
    group.resolve();
  }

  private failGroup(err: unknown): void {
    const group = this.group;
    this.group = undefined;
    if (this.database.inTransaction) this.prepare('rollback').run();
    group?.reject(err);
  }

  /**
   * Runs `fn` while the connection is free: an open group is committed first, and transactions
   * wait (asynchronously) until `fn` is done.
   */
  async exclusive(fn: () => Promise<void>): Promise<void> {
    await this.lock();
    try {
      if (this.closed) return;
      if (this.group) this.flushNow();
      await fn();
    } finally {
      this.unlock();
    }
  }

  async destroy(): Promise<void> {
    await this.lock();
    try {
      if (this.group) this.flushNow();
    } finally {
      this.closed = true;
      this.database.close();
      // Anyone still waiting gets the connection and, from SQLite, "the database is not open".
      this.unlock();
    }
  }
}
