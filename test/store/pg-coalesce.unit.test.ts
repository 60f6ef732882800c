/**
 * How a pipeline's deferred statements are merged (src/store/pg-deferred.ts `coalesce`): plain
 * INSERTs of one text become one multi-row INSERT, in first-appearance order, parameters renumbered;
 * anything else keeps its place and splits the runs; a repeated platform lock is sent once.
 */
import { expect, it } from 'vitest';
import { coalesce, DEFERRED } from '../../src/store/pg-deferred.ts';

const ins = (table: string, values: unknown[]) => ({
  sql: `${DEFERRED}insert into "${table}" ("a", "b") values ($1, $2)`,
  values,
});
const lock = (key: number) => ({ sql: `${DEFERRED}select pg_advisory_xact_lock_shared($1::int4, $2::int4)`, values: [1, key] });

it('merges the INSERTs of one text into one statement per text, in first-appearance order', () => {
  const out = coalesce([ins('x', [1, 2]), ins('y', [3, 4]), ins('x', [5, 6]), ins('y', [7, 8]), ins('x', [9, 10])]);
  expect(out).toEqual([
    { sql: `${DEFERRED}insert into "x" ("a", "b") values ($1, $2), ($3, $4), ($5, $6)`, values: [1, 2, 5, 6, 9, 10] },
    { sql: `${DEFERRED}insert into "y" ("a", "b") values ($1, $2), ($3, $4)`, values: [3, 4, 7, 8] },
  ]);
});

it('renumbers multi-row INSERTs and keeps other statements in place, splitting the runs around them', () => {
  const multi = { sql: `${DEFERRED}insert into "x" ("a", "b") values ($1, $2), ($3, $4)`, values: [1, 2, 3, 4] };
  const update = { sql: `${DEFERRED}update "jobs" set "status" = $1 where "id" in ($2)`, values: ['DONE', 'j'] };
  const out = coalesce([multi, ins('x', [5, 6]), update, ins('x', [7, 8])]);
  expect(out).toEqual([
    { sql: `${DEFERRED}insert into "x" ("a", "b") values ($1, $2), ($3, $4), ($5, $6)`, values: [1, 2, 3, 4, 5, 6] },
    update,
    ins('x', [7, 8]),
  ]);
});

it('leaves an INSERT with RETURNING, ON CONFLICT or a literal alone', () => {
  const returning = { sql: `${DEFERRED}insert into "x" ("a") values ($1) returning "a"`, values: [1] };
  const conflict = { sql: `${DEFERRED}insert into "x" ("a") values ($1) on conflict do nothing`, values: [2] };
  const literal = { sql: `${DEFERRED}insert into "x" ("a", "b") values ($1, 'k')`, values: [3] };
  expect(coalesce([returning, returning, conflict, conflict, literal, literal])).toEqual([
    returning,
    returning,
    conflict,
    conflict,
    literal,
    literal,
  ]);
});

it('sends a platform lock once per key', () => {
  expect(coalesce([lock(7), lock(7), lock(8), lock(7)])).toEqual([lock(7), lock(8)]);
});

it('renumbers two-digit placeholders, and gives the same answer when it has seen the text before', () => {
  const cols = Array.from({ length: 11 }, (_, i) => `"c${i}"`).join(', ');
  const marks = (from: number) => Array.from({ length: 11 }, (_, i) => `$${from + i}`).join(', ');
  const wide = (n: number) => ({ sql: `${DEFERRED}insert into "w" (${cols}) values (${marks(1)})`, values: Array(11).fill(n) });
  const expected = [
    {
      sql: `${DEFERRED}insert into "w" (${cols}) values (${marks(1)}), (${marks(12)}), (${marks(23)})`,
      values: [...Array(11).fill(1), ...Array(11).fill(2), ...Array(11).fill(3)],
    },
  ];
  expect(coalesce([wide(1), wide(2), wide(3)])).toEqual(expected);
  expect(coalesce([wide(1), wide(2), wide(3)])).toEqual(expected);
});
