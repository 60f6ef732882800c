/**
 * Deferred statements on PostgreSQL (see pg-pipeline.ts): the marker that makes a statement one,
 * and how a pipeline's queue of them is merged into fewer statements with the same effect.
 */

/** The prefix of a deferred statement's SQL (a comment: the statement runs as it is, where it is not deferred). */
export const DEFERRED = '/* deferred */ ';

export interface Stmt {
  sql: string;
  values: readonly unknown[];
}

/**
 * Deferred statements as fewer statements with the same effect (a group commit's members queue the
 * same INSERTs side by side):
 * - plain INSERTs of one text (no RETURNING, no ON CONFLICT) between two other statements become
 *   one multi-row INSERT per text, in the order each text first appears, their rows in queue order;
 * - a platform lock already queued with the same key is not queued twice (taking it again in the
 *   same transaction changes nothing).
 * Rows no statement reads until the next one are the same rows, whatever INSERT carries them; a
 * constraint a merged row breaks fails the merged statement, as it would have failed its own.
 */
export function coalesce(statements: readonly Stmt[]): Stmt[] {
  const out: Stmt[] = [];
  let run = new Map<string, { head: string; tuples: string[]; values: unknown[] }>();
  const flushRun = () => {
    for (const [, r] of run) out.push({ sql: `${r.head}${r.tuples.join(', ')}`, values: r.values });
    run = new Map();
  };
  const locks = new Set<string>();
  for (const st of statements) {
    const insert = insertShape(st.sql);
    if (insert) {
      let r = run.get(insert.head);
      if (r && r.values.length + st.values.length > MAX_MERGED_PARAMETERS) {
        flushRun();
        r = undefined;
      }
      if (!r) {
        r = { head: insert.head, tuples: [], values: [] };
        run.set(insert.head, r);
      }
      r.tuples.push(renumbered(insert, r.values.length));
      for (const v of st.values) r.values.push(v);
      continue;
    }
    flushRun();
    if (st.sql.startsWith(LOCK_PREFIX)) {
      const key = `${st.sql}\u0000${st.values.join('\u0000')}`;
      if (locks.has(key)) continue;
      locks.add(key);
    }
    out.push(st);
  }
  flushRun();
  return out;
}

/**
 * A plain INSERT's text cut once into its head and its row tuples' pieces: the literal text between
 * placeholders (`texts`, one more than `numbers`) and the placeholder numbers. Deferred statements
 * are prepared statements, so a process sees a few dozen texts; matching and renumbering them with
 * regular expressions on every statement cost ~9 % of a payment's CPU (bench, --cpu-prof).
 */
interface InsertShape {
  head: string;
  tuples: string;
  texts: string[];
  numbers: number[];
}

const shapes = new Map<string, InsertShape | null>();
/** Texts remembered at most (a bound, should anything ever defer a text built per call). */
const MAX_SHAPES = 512;

function insertShape(sql: string): InsertShape | null {
  let shape = shapes.get(sql);
  if (shape !== undefined) return shape;
  const m = PLAIN_INSERT.exec(sql);
  if (m) {
    const pieces = m[2]!.split(/\$(\d+)/);
    shape = {
      head: m[1]!,
      tuples: m[2]!,
      texts: pieces.filter((_, i) => i % 2 === 0),
      numbers: pieces.filter((_, i) => i % 2 === 1).map(Number),
    };
  } else shape = null;
  if (shapes.size < MAX_SHAPES) shapes.set(sql, shape);
  return shape;
}

/** The shape's row tuples with every placeholder moved up by `offset`. */
function renumbered(shape: InsertShape, offset: number): string {
  if (offset === 0) return shape.tuples;
  let text = shape.texts[0]!;
  for (let i = 0; i < shape.numbers.length; i++) text += `$${shape.numbers[i]! + offset}${shape.texts[i + 1]!}`;
  return text;
}

/** `DEFERRED insert into "t" (cols) values `, then the row tuples (placeholders only: no literals, no RETURNING, no ON CONFLICT). */
const PLAIN_INSERT = /^(\/\* deferred \*\/ insert into "[a-z_]+" \([^()]*\) values )(\((?:\$\d+(?:, )?)+\)(?:, \((?:\$\d+(?:, )?)+\))*)$/;
const LOCK_PREFIX = `${DEFERRED}select pg_advisory_xact_lock_shared(`;
/** PostgreSQL takes at most 65,535 parameters per statement. */
const MAX_MERGED_PARAMETERS = 30_000;
