/**
 * Group commit on PostgreSQL (issue #26): concurrent units of work share one transaction and one
 * COMMIT — one WAL flush for many payments — with each unit's own failure isolated.
 *
 * Units queue here. A group takes one pooled connection, opens a transaction, and runs the queued
 * units one after the other, each inside its own SAVEPOINT: a unit that throws is rolled back to
 * its savepoint (its statements undone, the units before it kept), a unit that returns has its
 * savepoint released. Units that arrive while the group runs join it, up to MAX_MEMBERS or
 * MAX_GROUP_MS; then it commits. Only then does any of its units hear its outcome:
 *
 * - after COMMIT succeeds, each succeeded unit gets its result and each failed unit its own error;
 * - if the transaction fails as a whole (COMMIT fails, the connection drops, or a unit's error left
 *   the transaction unusable so its savepoint could not be rolled back to), every unit of the group
 *   gets that error — none was acknowledged. A deadlock or serialisation failure there is retried
 *   by each unit's caller (store/retry.ts) in a later group.
 *
 * So nothing a caller is told rests on work that did not commit: a refusal (say, for want of funds)
 * that saw the group's earlier, uncommitted work is only reported once that work is durable.
 * Units of one group see each other's work, as they would running one after the other. Durability
 * is unchanged: `synchronous_commit` stays as configured, and a caller is answered after COMMIT.
 *
 * Up to `groups` groups run at once (each on its own connection). Units that touch the same rows
 * queue on those rows' locks across groups as single transactions did; within a group they never
 * wait for each other. The unit's callback must not act outside the database (as before).
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/** Units per group at most: a bound on a group's lock hold time and on its members' latency. */
const MAX_MEMBERS = 64;
/** A group stops taking new units after this long and commits. */
const MAX_GROUP_MS = 25;

interface Member {
  fn: (trx: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

type Outcome = { member: Member; ok: true; value: unknown } | { member: Member; ok: false; error: unknown };

export class PgGroupCommit {
  private readonly queue: Member[] = [];
  private active = 0;
  /** Groups committed and units run (for the bench and tests). */
  readonly stats = { groups: 0, units: 0 };

  constructor(
    private readonly db: Kysely<Database>,
    private readonly groups: number,
  ) {}

  /** Runs `fn` in a transaction shared with the units queued beside it; settles after the COMMIT. */
  run<T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.active < this.groups && this.queue.length > 0) {
      this.active += 1;
      void this.runGroup().finally(() => {
        this.active -= 1;
        this.pump();
      });
    }
  }

  private async runGroup(): Promise<void> {
    const outcomes: Outcome[] = [];
    const taken: Member[] = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        const started = Date.now();
        while (this.queue.length > 0 && taken.length < MAX_MEMBERS && (taken.length === 0 || Date.now() - started < MAX_GROUP_MS)) {
          const member = this.queue.shift()!;
          taken.push(member);
          outcomes.push(await runMember(trx, member));
        }
      });
      this.stats.groups += 1;
      this.stats.units += taken.length;
      for (const o of outcomes) {
        if (o.ok) o.member.resolve(o.value);
        else o.member.reject(o.error);
      }
    } catch (err) {
      // The transaction did not commit: no unit of it may be reported as done (or as refused on
      // the strength of work that is gone). A unit whose error broke the transaction gets its own.
      for (const m of taken) {
        const own = outcomes.find((o) => o.member === m);
        m.reject(own && !own.ok && own.error === err ? own.error : err);
      }
    }
  }
}

/** One unit inside its savepoint: its value, or its error with its work rolled back. */
async function runMember(trx: Kysely<Database>, member: Member): Promise<Outcome> {
  await sql`savepoint corridor_unit`.execute(trx);
  try {
    const value = await member.fn(trx);
    await sql`release savepoint corridor_unit`.execute(trx);
    return { member, ok: true, value };
  } catch (error) {
    // Rolling back to the savepoint undoes the unit and leaves the transaction usable; if even
    // that fails, the transaction is lost and the group fails as a whole (with this error).
    try {
      await sql`rollback to savepoint corridor_unit`.execute(trx);
      await sql`release savepoint corridor_unit`.execute(trx);
    } catch {
      throw error;
    }
    return { member, ok: false, error };
  }
}
