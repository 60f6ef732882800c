/**
 * Canonical JSON: object keys sorted, no whitespace, `undefined` members dropped. Two bodies that
 * differ only in key order have one canonical form, so hashes over it (signed retries, the
 * Idempotency-Key's request hash) do not depend on how a client serialised its object.
 */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
}
