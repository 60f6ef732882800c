/**
 * Keyset paging as services see it: a page starts after a row id (ids are time-ordered) and holds at
 * most `limit` rows. How a page travels on the wire (the opaque cursor) is the HTTP layer's
 * (src/http/pagination.ts).
 */

/** Up to `limit` rows after the row `afterId` (from the start when undefined). */
export interface PageRequest {
  limit: number;
  afterId: string | undefined;
}

/** One page: `lastId` (the id of its last row) is where the next page starts when `hasMore`. */
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  totalCount: number;
  lastId?: string;
}

/** The page in `rows`, fetched as `limit + 1` rows (the extra one says there are more). */
export function pageOf<R extends { id: string }, T>(rows: R[], limit: number, totalCount: number, map: (r: R) => T): Page<T> {
  const hasMore = rows.length > limit;
  const pageRows = hasMore ? rows.slice(0, limit) : rows;
  const page: Page<T> = { data: pageRows.map(map), hasMore, totalCount };
  if (hasMore) page.lastId = pageRows[pageRows.length - 1]!.id;
  return page;
}
