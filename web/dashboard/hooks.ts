/**
 * Live data: each view polls what it shows (every POLL_MS while the tab is visible), so payments
 * settling, webhooks being delivered and the clock moving show up without a reload. Lists page with
 * the API's own cursors: a stack of the cursors seen, so "Previous" goes back exactly.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, type PageOf, type Session } from './api.ts';

export const POLL_MS = 1_500;

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  reload: () => void;
}

/** Calls `load` now, whenever `key` changes, and every POLL_MS while the page is visible. */
export function usePolled<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const loadRef = useRef(load);
  loadRef.current = load;
  const seq = useRef(0);
  const run = useCallback(() => {
    const mine = ++seq.current;
    loadRef.current().then(
      (d) => {
        if (mine !== seq.current) return;
        setData(d);
        setError(undefined);
      },
      (e: unknown) => {
        if (mine !== seq.current) return;
        setError(e instanceof ApiError ? `${e.status} ${e.code}: ${e.message}` : String(e));
      },
    );
  }, []);
  useEffect(() => {
    setData(undefined);
    run();
    const t = setInterval(() => {
      if (document.visibilityState === 'visible') run();
    }, POLL_MS);
    return () => {
      clearInterval(t);
      seq.current++;
    };
  }, [key, run]);
  return { data, error, reload: run };
}

export interface Paged<T> extends Loaded<PageOf<T>> {
  page: number;
  next: (() => void) | undefined;
  prev: (() => void) | undefined;
}

/** A paged API list: the current page is polled; next/prev follow the API's cursors. */
export function usePaged<T>(s: Session, path: string, query: Record<string, string | number | undefined> = {}, limit = 20): Paged<T> {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  const qkey = JSON.stringify(query);
  // A new list (another path or filter) starts from its first page.
  useEffect(() => setCursors([undefined]), [path, qkey]);
  const cursor = cursors[cursors.length - 1];
  const loaded = usePolled(() => get<PageOf<T>>(s, path, { ...query, limit, cursor }), `${path}?${qkey}#${cursor ?? ''}`);
  const nextCursor = loaded.data?.hasMore ? loaded.data.nextCursor : undefined;
  return {
    ...loaded,
    page: cursors.length,
    next: nextCursor ? () => setCursors((c) => [...c, nextCursor]) : undefined,
    prev: cursors.length > 1 ? () => setCursors((c) => c.slice(0, -1)) : undefined,
  };
}
