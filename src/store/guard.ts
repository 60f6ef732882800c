/**
 * Conditions that check a row without steering the plan.
 *
 * A statement that finds one row by its primary key and also checks columns that lead other
 * indexes (`id = $1 and platform_id = $2`) can be planned through one of those other indexes.
 * PostgreSQL plans a prepared statement's generic plan once per connection and keeps it until the
 * table's statistics change; on a young table (a fresh install's first minute, or every bench run)
 * every index costs the same to the planner, and it took `transactions_reference
 * (platform_id, reference, id)` for the settlement's UPDATE — a walk over every transaction of the
 * platform for each settlement, 0.5–2.5 ms and 150–600 buffers a call and growing as the table
 * grew, until the first autoanalyze replaced the plan (issue #26, docs/performance.md). Written as
 * `guard`, the check is a filter on the row the key found and never a way to find it.
 */
import { type Expression, type SqlBool, sql } from 'kysely';

/**
 * `column = value` (or `column IS NULL` for `null`) as a condition no index serves: `(…) IS TRUE`,
 * the same rows, as the columns it is used on are NOT NULL. For the checks beside a primary-key
 * lookup — the tenant, and a soft delete's `deleted_at IS NULL`, which would otherwise make a
 * partial index on live rows (`… WHERE deleted_at IS NULL`) look like a way to the row.
 */
export function guard(column: string, value: unknown): Expression<SqlBool> {
  if (value === null) return sql<SqlBool>`(${sql.ref(column)} is null) is true`;
  return sql<SqlBool>`(${sql.ref(column)} = ${value}) is true`;
}
