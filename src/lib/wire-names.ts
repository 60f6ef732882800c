/**
 * The account-type names on the wire. Corridor's canonical names are the spec's; the live API names
 * three of them differently. Both are accepted on input; responses and webhooks use the spec's unless
 * CORRIDOR_WIRE_NAMES=live (config.ts), for clients generated from the live schema.
 * (`LIGHTNING` is both: the live enum has it too.)
 */
export const LIVE_ACCOUNT_TYPES: Readonly<Record<string, string>> = {
  US_ACCOUNT: 'USD_ACCOUNT',
  LAYER2_WALLET: 'SPARK_WALLET',
  CHAIN2_WALLET: 'SOLANA_WALLET',
};

/**
 * `value` with the spec's account-type names replaced by the live ones wherever they are the value
 * of an `accountType` field, at any depth. Values without one come back as they are (the same
 * object); the others are copied along the path to each rename.
 */
export function toLiveNames<T>(value: T): T {
  return rename(value, 0) as T;
}

/** Deeper than any response Corridor builds; a payload nested further is left as it is. */
const MAX_DEPTH = 64;

function rename(value: unknown, depth: number): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const r = rename(value[i], depth + 1);
      if (r === value[i]) continue;
      out ??= value.slice();
      out[i] = r;
    }
    return out ?? value;
  }
  // Plain data only: a Date or a Buffer is serialised as it is.
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const r = k === 'accountType' && typeof v === 'string' ? (LIVE_ACCOUNT_TYPES[v] ?? v) : rename(v, depth + 1);
    if (r === v) continue;
    out ??= { ...(value as Record<string, unknown>) };
    out[k] = r;
  }
  return out ?? value;
}
