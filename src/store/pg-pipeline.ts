/**
 * A PostgreSQL connection that sends a transaction's statements in as few round trips as their
 * meaning allows. On this kind of machine a round trip — one write to the server's socket, one wake
 * of its backend, one read of the answer — costs more CPU than the statement it carries, so:
 *
 * - **BEGIN waits for the first statement** and goes with it: `BEGIN` and that statement are one
 *   pipeline (an empty transaction sends nothing at all).
 * - **Deferred statements** (their SQL starts with `DEFERRED`: writes whose result the caller does
 *   not read — an INSERT of a fresh row, the platform lock) are queued inside a transaction and go
 *   with the next statement that needs an answer, or with COMMIT.
 *
 * A pipeline is the extended protocol's Parse/Bind/Describe/Execute for each statement, in order,
 * and one Sync (Describe only until the connection knows the prepared statement's columns: see
 * `Shape`): the server runs them one after another exactly as if each had been sent alone
 * (each sees the effects of those before it), and at the first error skips the rest up to the
 * Sync. So a deferred write that fails makes the statement it travelled with fail, with the
 * deferred write's own error (its SQLSTATE, which retries and callers look at), and a COMMIT that
 * travelled behind a failed write never runs: the caller rolls back as after any failed statement.
 *
 * Statements are prepared once per connection under the process-wide names of `Names` (a statement
 * whose Parse may or may not have run when its pipeline failed is sent unnamed from then on, on
 * that connection). Statements without parameters outside a pipeline (migrations' multi-statement
 * scripts) still go by the simple protocol.
 */
import { createRequire } from 'node:module';
import type { PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { coalesce, DEFERRED, type Stmt } from './pg-deferred.ts';
import { encodePipeline, type WireValue } from './pg-wire.ts';

const require = createRequire(import.meta.url);
// pg's own conversion of JavaScript values to bind parameters (Date, Buffer, arrays, JSON), the one
// `client.query` applies; pg exports it only from this file.
const { prepareValue } = require('pg/lib/utils.js') as { prepareValue: (v: unknown) => WireValue };

/** Names of prepared statements by SQL text (see pg-prepared.ts). */
export interface StatementNames {
  of(sql: string): string | undefined;
  renew(): void;
}

export interface QueryResult {
  command: string;
  rowCount: number | null;
  rows: Record<string, unknown>[];
}

/** The failure of a pipeline: the server's error, and the index of the statement it belongs to. */
class PipelineError {
  constructor(
    readonly error: unknown,
    readonly index: number,
    readonly results: QueryResult[],
  ) {}
}

/** What of pg's connection a pipeline writes to (pg does not type its `Client.connection`). */
interface WireConnection {
  stream: { cork?: () => void; uncork?: () => void; writable: boolean; write(b: Buffer): boolean };
  sync(): void;
  sendCopyFail(message: string): void;
}

interface Field {
  name: string;
  dataTypeID: number;
  format: string;
}

/**
 * A statement's result columns as the server described them, with their parsers. A prepared
 * statement's columns never change (PostgreSQL fails it with "cached plan must not change result
 * type" instead: see pg-prepared.ts), so once a connection has them it sends no Describe for that
 * statement again: the server then skips the RowDescription, and this side parsing it — for
 * `select *` of a wide table, a message of a kilobyte and an object per column, on every execution.
 */
interface Shape {
  fields: Field[];
  parsers: ((v: string) => unknown)[];
}

/** The shape of a statement that returns no rows (the server answered its Describe with NoData). */
const NO_ROWS: Shape = { fields: [], parsers: [] };

interface Planned {
  sql: string;
  values: unknown[];
  /** The prepared statement's name ('' for the unnamed one). */
  name: string;
  /** Whether this pipeline sends its Parse (not yet prepared on this connection). */
  parse: boolean;
  /** Its columns as this connection already knows them; undefined: the pipeline sends a Describe. */
  shape: Shape | undefined;
}

/**
 * One pipeline, handed to `client.query` as a pg "submittable": pg calls `submit` when the
 * connection is free and then hands it the server's messages until ReadyForQuery (or an error).
 */
class Pipeline {
  readonly results: QueryResult[] = [];
  private current: QueryResult = { command: '', rowCount: null, rows: [] };
  /** The current statement's columns: known beforehand, or from its RowDescription. */
  private shape: Shape;
  /** Shapes the server described in this pipeline, by statement index (the connection keeps them). */
  readonly described: (Shape | undefined)[] = [];
  private rowError: unknown;
  readonly done: Promise<QueryResult[]>;
  private resolve!: (r: QueryResult[]) => void;
  private reject!: (e: PipelineError) => void;

  constructor(readonly planned: Planned[]) {
    this.shape = planned[0]?.shape ?? NO_ROWS;
    this.done = new Promise((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
  }

  submit(connection: WireConnection): Error | null {
    // Every value is converted and every message encoded before anything is written, so a value pg
    // cannot send fails the pipeline without leaving half its messages on the wire.
    let messages: Buffer;
    try {
      messages = encodePipeline(
        this.planned.map((p) => ({
          name: p.name,
          sql: p.sql,
          parse: p.parse,
          describe: p.shape === undefined,
          values: p.values.map((v): WireValue => prepareValue(v)),
        })),
      );
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
    connection.stream.cork?.();
    try {
      // As pg's own sends: nothing is written to a stream that is no longer writable (the
      // connection's error then fails the pipeline).
      if (connection.stream.writable) connection.stream.write(messages);
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(msg: { fields: Field[] }): void {
    this.shape = {
      fields: msg.fields,
      parsers: msg.fields.map((f) => pg.types.getTypeParser(f.dataTypeID, (f.format || 'text') as 'text')),
    };
    this.described[this.results.length] = this.shape;
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    if (this.rowError) return;
    const row: Record<string, unknown> = {};
    const { fields, parsers } = this.shape;
    try {
      for (let i = 0; i < msg.fields.length; i++) {
        const raw = msg.fields[i];
        row[fields[i]!.name] = raw === null || raw === undefined ? null : parsers[i]!(raw);
      }
    } catch (err) {
      this.rowError = err;
      return;
    }
    this.current.rows.push(row);
  }

  handleCommandComplete(msg: { text: string }): void {
    const m = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/.exec(msg.text);
    if (m) {
      this.current.command = m[1]!;
      const count = m[3] ?? m[2];
      if (count !== undefined) this.current.rowCount = Number.parseInt(count, 10);
    }
    this.next();
  }

  /** An empty statement answers EmptyQueryResponse instead of CommandComplete. */
  handleEmptyQuery(): void {
    this.next();
  }

  handleError(err: unknown): void {
    this.reject(new PipelineError(err, this.results.length, this.results));
  }

  handleReadyForQuery(): void {
    if (this.rowError) this.reject(new PipelineError(this.rowError, this.results.length, this.results));
    else this.resolve(this.results);
  }

  handlePortalSuspended(): void {}

  handleCopyInResponse(connection: WireConnection): void {
    connection.sendCopyFail('COPY is not supported in a pipeline');
  }

  handleCopyData(): void {}

  private next(): void {
    const i = this.results.length;
    // Described, and complete without a RowDescription: the server answered NoData.
    if (this.planned[i]?.shape === undefined && this.described[i] === undefined) this.described[i] = NO_ROWS;
    this.results.push(this.current);
    this.current = { command: '', rowCount: null, rows: [] };
    this.shape = this.planned[i + 1]?.shape ?? NO_ROWS;
  }
}

type Control = 'begin' | 'commit' | 'rollback' | undefined;

/** BEGIN/COMMIT/ROLLBACK as Kysely sends them (raw, without parameters); savepoints are plain statements. */
function control(sql: string): Control {
  const head = sql.trimStart().slice(0, 12).toLowerCase();
  if (head.startsWith('begin') || head.startsWith('start')) return 'begin';
  if (head.startsWith('commit')) return 'commit';
  if (head.startsWith('rollback') && !head.startsWith('rollback to')) return 'rollback';
  return undefined;
}

/** PostgreSQL's answer to a prepared statement whose result type a migration changed (see pg-prepared.ts). */
type StaleCheck = (err: unknown) => boolean;

/**
 * A pooled pg client speaking in pipelines: the connection Kysely's PostgreSQL driver runs its
 * queries on (`query(sql, parameters)`; the cursor form is not used by Corridor).
 */
export class PipelinedClient {
  /** The BEGIN not sent yet (it goes with the transaction's first statement). */
  private pendingBegin: string | undefined;
  private deferred: Stmt[] = [];
  private inTransaction = false;
  /** Names prepared on this connection, and names whose Parse may or may not have run. */
  private readonly prepared = new Set<string>();
  /** The columns of statements prepared on this connection, by name (see `Shape`). */
  private readonly shapes = new Map<string, Shape>();
  private readonly uncertain = new Set<string>();
  /** Statements waiting for the wire, and whether a pipeline is on it. */
  private readonly wire: { statements: Stmt[]; resolve: (r: QueryResult[]) => void; reject: (e: unknown) => void }[] = [];
  private onWire = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly names: StatementNames,
    private readonly isStale: StaleCheck,
  ) {}

  query(sql: string, parameters: readonly unknown[]): Promise<QueryResult> {
    const kind = parameters.length === 0 ? control(sql) : undefined;
    if (kind === 'begin' && !this.inTransaction) {
      this.inTransaction = true;
      this.pendingBegin = sql;
      return Promise.resolve({ command: 'BEGIN', rowCount: null, rows: [] });
    }
    if (kind === 'commit' && this.inTransaction) {
      this.inTransaction = false;
      if (this.pendingBegin !== undefined && this.deferred.length === 0) {
        // Nothing was sent: there is nothing to commit.
        this.pendingBegin = undefined;
        return Promise.resolve({ command: 'COMMIT', rowCount: null, rows: [] });
      }
      // PostgreSQL answers COMMIT of a transaction an earlier error aborted with "ROLLBACK", not an
      // error: a caller that went on after catching that error must not take it for committed.
      return this.send(sql, parameters).then((r) => {
        if (r.command === 'ROLLBACK')
          throw Object.assign(new Error('COMMIT rolled back: an earlier statement of the transaction failed'), { code: '25P02' });
        return r;
      });
    }
    if (kind === 'rollback' && this.inTransaction) {
      this.inTransaction = false;
      this.deferred = [];
      if (this.pendingBegin !== undefined) {
        this.pendingBegin = undefined;
        return Promise.resolve({ command: 'ROLLBACK', rowCount: null, rows: [] });
      }
      return this.simple(sql);
    }
    if (this.inTransaction && sql.startsWith(DEFERRED)) {
      this.deferred.push({ sql, values: parameters });
      return Promise.resolve({ command: '', rowCount: null, rows: [] });
    }
    // A script without parameters (a migration's several statements) cannot be one extended-protocol
    // statement: what is pending goes first, then the script by the simple protocol.
    if (parameters.length === 0 && sql.includes(';')) {
      if (this.pendingBegin === undefined && this.deferred.length === 0) return this.simple(sql);
      return this.flush().then(() => this.simple(sql));
    }
    return this.send(sql, parameters);
  }

  release(): void {
    this.pendingBegin = undefined;
    this.deferred = [];
    this.inTransaction = false;
    this.client.release();
  }

  /** Sends what is pending, without a statement of its own (before a simple-protocol script). */
  private async flush(): Promise<void> {
    const statements = this.take();
    if (statements.length > 0) await this.run(statements);
  }

  /** Sends what is pending and `sql`, and answers `sql`'s result. */
  private async send(sql: string, parameters: readonly unknown[]): Promise<QueryResult> {
    const statements = this.take();
    statements.push({ sql, values: parameters });
    try {
      const results = await this.run(statements);
      return results[results.length - 1]!;
    } catch (err) {
      // A statement prepared before another process migrated the schema: names start afresh, and a
      // lone statement outside a transaction runs again at once (inside one the error aborts it).
      if (this.isStale(err)) {
        this.names.renew();
        if (!this.inTransaction && statements.length === 1) {
          const results = await this.run(statements);
          return results[0]!;
        }
      }
      throw err;
    }
  }

  private take(): Stmt[] {
    const out: Stmt[] = [];
    if (this.pendingBegin !== undefined) out.push({ sql: this.pendingBegin, values: [] });
    this.pendingBegin = undefined;
    out.push(...coalesce(this.deferred));
    this.deferred = [];
    return out;
  }

  /**
   * Sends statements and answers their results. While a pipeline is on the wire, statements that
   * others send (the members of a group commit, store/pg-group-commit.ts) wait and then go
   * together as the next one; a failure answers the caller whose statement failed, and every
   * caller after it, with that error (the server skipped their statements).
   */
  private run(statements: Stmt[]): Promise<QueryResult[]> {
    return new Promise((resolve, reject) => {
      this.wire.push({ statements, resolve, reject });
      if (this.onWire) return;
      this.onWire = true;
      // Not at once: statements issued in the same turn go together. The members of a group are
      // answered by one pipeline and issue their next statements in one burst of promise
      // callbacks; sent at once, the first of them would go alone and the rest a round trip later.
      process.nextTick(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.wire.length > 0) {
      const batches = this.wire.splice(0);
      const all = batches.length === 1 ? batches[0]!.statements : batches.flatMap((b) => b.statements);
      let results: QueryResult[];
      let failure: PipelineError | undefined;
      try {
        results = await this.pipeline(all);
      } catch (err) {
        if (!(err instanceof PipelineError)) {
          for (const b of batches) b.reject(err);
          continue;
        }
        failure = err;
        results = err.results;
      }
      let at = 0;
      for (const b of batches) {
        const end = at + b.statements.length;
        if (failure && failure.index < end) b.reject(failure.error);
        else b.resolve(results.slice(at, end));
        at = end;
      }
    }
    this.onWire = false;
  }

  private async pipeline(statements: Stmt[]): Promise<QueryResult[]> {
    // A statement twice in one pipeline is parsed by its first Parse only.
    const parsing = new Set<string>();
    const planned = statements.map((s): Planned => {
      const name = this.names.of(s.sql);
      if (name === undefined || this.uncertain.has(name))
        return { sql: s.sql, values: [...s.values], name: '', parse: true, shape: undefined };
      const parse = !this.prepared.has(name) && !parsing.has(name);
      if (parse) parsing.add(name);
      return { sql: s.sql, values: [...s.values], name, parse, shape: parse ? undefined : this.shapes.get(name) };
    });
    const pipeline = new Pipeline(planned);
    // pg takes any object with `submit` (a "submittable") and routes the server's messages to it.
    this.client.query(pipeline as unknown as pg.Submittable);
    try {
      const results = await pipeline.done;
      for (const p of planned) if (p.parse && p.name !== '') this.prepared.add(p.name);
      this.keepShapes(planned, pipeline, planned.length);
      return results;
    } catch (failure) {
      if (failure instanceof PipelineError) {
        planned.forEach((p, i) => {
          if (!p.parse || p.name === '') return;
          if (i < failure.index) this.prepared.add(p.name);
          else if (i === failure.index) this.uncertain.add(p.name);
        });
        this.keepShapes(planned, pipeline, failure.index);
      }
      throw failure;
    }
  }

  /** Keeps the columns the server described for the named statements that completed (the first `completed`). */
  private keepShapes(planned: readonly Planned[], pipeline: Pipeline, completed: number): void {
    for (let i = 0; i < completed; i++) {
      const shape = pipeline.described[i];
      if (shape !== undefined && planned[i]!.name !== '') this.shapes.set(planned[i]!.name, shape);
    }
  }

  private async simple(sql: string): Promise<QueryResult> {
    const r = await this.client.query(sql);
    return { command: r.command, rowCount: r.rowCount, rows: r.rows };
  }
}

/** The Kysely-facing shape of the client (its `query(cursor)` overload is never used by Corridor). */
export function pipelinedPoolClient(client: PipelinedClient): PostgresPoolClient {
  return {
    query: ((sql: string, parameters: readonly unknown[]) => client.query(sql, parameters)) as unknown as PostgresPoolClient['query'],
    release: () => client.release(),
  };
}
