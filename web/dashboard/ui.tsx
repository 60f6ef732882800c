/** Small shared pieces: amounts, statuses, times, the pager and the error line. */
import type { ComponentChildren } from 'preact';
import type { Paged } from './hooks.ts';

/** `{ amount, currency: { code, decimals } }` as "12.34 USD". */
export function Money({ value }: { value: unknown }) {
  const v = value as { amount?: number; currency?: { code?: string; decimals?: number } } | undefined;
  if (!v || typeof v.amount !== 'number') return <span>—</span>;
  const decimals = v.currency?.decimals ?? 2;
  return (
    <span class="money">
      {(v.amount / 10 ** decimals).toFixed(decimals)} {v.currency?.code ?? ''}
    </span>
  );
}

export function Status({ value }: { value: unknown }) {
  const s = typeof value === 'string' ? value : '—';
  return <span class={`status status-${s.toLowerCase().replace(/[^a-z]+/g, '-')}`}>{s}</span>;
}

/** Timestamps as the API gives them (ISO-8601 on the platform's clock), shortened for reading. */
export function Time({ value }: { value: unknown }) {
  if (typeof value !== 'string') return <span>—</span>;
  return (
    <time dateTime={value} title={value}>
      {value.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')}
    </time>
  );
}

export function ErrorLine({ error }: { error: string | undefined }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

export function Pager({ list, label }: { list: Paged<unknown>; label: string }) {
  return (
    <div class="pager">
      <button type="button" disabled={!list.prev} onClick={list.prev}>
        Previous
      </button>
      <span>
        Page {list.page}
        {list.data ? ` · ${list.data.totalCount} ${label}` : ''}
      </span>
      <button type="button" disabled={!list.next} onClick={list.next}>
        Next
      </button>
    </div>
  );
}

export function Section({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <section>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

export const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '—' : JSON.stringify(v));

/** A table's header row: one cell per column name. */
export function Head({ cols }: { cols: readonly string[] }) {
  return (
    <thead>
      <tr>
        {cols.map((c) => (
          <th key={c}>{c}</th>
        ))}
      </tr>
    </thead>
  );
}
