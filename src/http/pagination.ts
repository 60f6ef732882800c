/**
 * Cursor pagination: a cursor is base64url JSON `{"id": <last id of the page>}`; pages are keyset
 * scans on the (time-ordered) id, so they stay stable while rows are added.
 */
import { pageOf, type Page, type PageRequest } from '../lib/paging.ts';
import { errors } from './errors.ts';

export function encodeCursor(id: string): string {
  return Buffer.from(JSON.stringify({ id }), 'utf8').toString('base64url');
}

/** The id a cursor points after; a cursor Corridor did not issue is a 400 on `cursor`. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    const id = v && typeof v === 'object' ? (v as { id?: unknown }).id : undefined;
    // No issued id holds a NUL, and PostgreSQL refuses one in text (a 500): such a cursor is not ours.
    if (typeof id === 'string' && !id.includes('\u0000')) return id;
  } catch {
    // fall through to the 400 below
  }
  throw errors.invalidField('cursor', 'is not a cursor returned by this API');
}

export interface PageOut<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
  totalCount: number;
}

/** The page a list query asks for: its `limit` (20 by default) and where its `cursor` points. */
export function pageRequest(q: { limit?: number | undefined; cursor?: string | undefined }): PageRequest {
  return { limit: q.limit ?? 20, afterId: decodeCursor(q.cursor) };
}

/** A service's page as the wire envelope (`nextCursor` when there are more). */
export function toWirePage<T>(page: Page<T>): PageOut<T> {
  const out: PageOut<T> = { data: page.data, hasMore: page.hasMore, totalCount: page.totalCount };
  if (page.lastId !== undefined) out.nextCursor = encodeCursor(page.lastId);
  return out;
}

/** Builds the envelope from `limit + 1` fetched rows. */
export function toPage<R extends { id: string }, T>(rows: R[], limit: number, totalCount: number, map: (r: R) => T): PageOut<T> {
  return toWirePage(pageOf(rows, limit, totalCount, map));
}
