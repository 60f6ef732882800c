/**
 * Values from JSON Schemas: a schema-valid instance for an operation without a hand-written
 * baseline (with field-name hints pointing at the world's real ids), the sub-schema that governs a
 * path inside a value, and hostile values of every JSON type.
 */
import type { Schema } from './operations.ts';
import type { Rng } from '../random.ts';
import type { World } from './world.ts';

const obj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function variants(s: Schema): Schema[] | undefined {
  const v = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
  return Array.isArray(v) ? v : undefined;
}

/** Picks the variant of a union that fits `value` best (discriminator and known keys). */
export function resolve(s: Schema, value: unknown): Schema {
  const vs = variants(s);
  if (!vs) return s;
  if (!obj(value)) {
    return (
      vs.find((v) =>
        v.const !== undefined
          ? v.const === value
          : Array.isArray(v.enum)
            ? (v.enum as unknown[]).includes(value)
            : typeOf(v).includes(jsonType(value)),
      ) ?? vs[0]!
    );
  }
  let best = vs[0]!;
  let bestScore = -Infinity;
  for (const v of vs) {
    const r = resolve(v, value);
    const props = (r.properties ?? {}) as Record<string, Schema>;
    let score = 0;
    for (const [k, x] of Object.entries(value)) {
      const p = props[k];
      if (!p) score -= 2;
      else if (p.const !== undefined) score += p.const === x ? 5 : -10;
      else if (Array.isArray(p.enum) && (p.enum as unknown[]).length === 1) score += (p.enum as unknown[])[0] === x ? 5 : -10;
      else score += 1;
    }
    for (const req of (r.required as string[] | undefined) ?? []) if (!(req in value)) score -= 3;
    if (score > bestScore) {
      bestScore = score;
      best = r;
    }
  }
  return best;
}

export function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** The JSON types a schema admits (approximate for unions). */
export function typeOf(s: Schema): string[] {
  const vs = variants(s);
  if (vs) return [...new Set(vs.flatMap(typeOf))];
  if (Array.isArray(s.type)) return s.type as string[];
  if (typeof s.type === 'string') return s.type === 'number' ? ['number', 'integer'] : [s.type];
  if (s.const !== undefined) return [jsonType(s.const)];
  if (Array.isArray(s.enum)) return [...new Set((s.enum as unknown[]).map(jsonType))];
  if (s.properties) return ['object'];
  return ['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'];
}

/** True when the schema is an object schema that rejects unknown properties. */
export function isClosedObject(s: Schema): boolean {
  return s.additionalProperties === false && (s.type === 'object' || s.properties !== undefined);
}

/** Known patterns of the document, and a value matching each. */
const PATTERN_VALUES: [RegExp, string][] = [
  [/^\^\[A-Z\]\{2\}\$$/, 'US'],
  [/A-Z0-9\]\{3,5\}/, 'USD'],
  [/InternalAccount:/, 'InternalAccount:00000000-0000-4000-8000-000000000000'],
  [/\[0-9a-fA-F\]/, '00'],
];

/** A value for a property, from its name and the world (real ids), when the name says what it is. */
function hint(name: string, w: World | undefined): unknown {
  if (!w) return undefined;
  const ids = w.ids;
  const table: Record<string, unknown> = {
    customerId: ids.customer,
    accountId: ids.usdAccount,
    quoteId: ids.quote,
    transactionId: ids.txOut,
    agentId: ids.agent,
    currency: 'USD',
    currencyCode: 'USD',
    country: 'US',
    nationality: 'US',
  };
  return table[name];
}

/** A schema-valid instance (best effort; callers check it with the validator). */
export function sample(s: Schema, w?: World, name = '', depth = 0): unknown {
  if (depth > 12) return null;
  const h = hint(name, w);
  if (h !== undefined && typeOf(s).includes(jsonType(h))) return h;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return (s.enum as unknown[])[0];
  if (s.default !== undefined) return s.default;
  const vs = variants(s);
  if (vs) return sample(vs[0]!, w, name, depth + 1);
  if (Array.isArray(s.examples) && s.examples.length > 0) return s.examples[0];
  const type = Array.isArray(s.type) ? (s.type as string[]).find((t) => t !== 'null') : (s.type as string | undefined);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const props = (s.properties ?? {}) as Record<string, Schema>;
      for (const r of (s.required as string[] | undefined) ?? []) if (props[r]) out[r] = sample(props[r], w, r, depth + 1);
      return out;
    }
    case 'array': {
      const n = Math.max(Number(s.minItems ?? 0), 1);
      return Array.from({ length: n }, () => sample((s.items ?? {}) as Schema, w, name, depth + 1));
    }
    case 'integer':
    case 'number':
      return Math.max(Number(s.minimum ?? 1), Math.min(Number(s.maximum ?? 100), 100));
    case 'boolean':
      return false;
    case 'string': {
      if (s.format === 'date-time') return '2030-01-01T00:00:00.000Z';
      if (s.format === 'date') return '1990-01-15';
      if (s.format === 'email') return 'fuzz@example.com';
      if (s.format === 'uri' || s.format === 'url') return 'https://example.com/hook';
      if (typeof s.pattern === 'string') {
        for (const [re, v] of PATTERN_VALUES) if (re.test(s.pattern)) return v;
      }
      const min = Number(s.minLength ?? 1);
      return 'fuzz'.padEnd(Math.max(min, 4), 'z').slice(0, Number(s.maxLength ?? 64));
    }
    default:
      return 'fuzz';
  }
}

/** A path into a JSON value: object keys and array indexes. */
export type JsonPath = (string | number)[];

export function getAt(v: unknown, path: JsonPath): unknown {
  let cur = v;
  for (const k of path) cur = (cur as Record<string | number, unknown> | undefined)?.[k];
  return cur;
}

/** A copy of `v` with the value at `path` replaced (or, with `remove`, deleted). */
export function setAt(v: unknown, path: JsonPath, value: unknown, remove = false): unknown {
  if (path.length === 0) return value;
  const [k, ...rest] = path;
  const copy: Record<string | number, unknown> = Array.isArray(v)
    ? ([...v] as unknown as Record<number, unknown>)
    : { ...(v as Record<string, unknown>) };
  if (rest.length === 0) {
    if (remove) delete copy[k!];
    else copy[k!] = value;
  } else copy[k!] = setAt(copy[k!], rest, value, remove);
  return copy;
}

export interface Field {
  path: JsonPath;
  schema: Schema;
  /** Present in the baseline value (otherwise a property the schema allows but the baseline omits). */
  present: boolean;
  required: boolean;
}

/** Every property position of `value` under `schema`: present ones, and absent optional ones. */
export function fields(schema: Schema, value: unknown, path: JsonPath = [], out: Field[] = []): Field[] {
  const s = resolve(schema, value);
  if (obj(value) && (s.properties || s.type === 'object')) {
    const props = (s.properties ?? {}) as Record<string, Schema>;
    const required = new Set((s.required as string[] | undefined) ?? []);
    for (const [k, ps] of Object.entries(props)) {
      const present = k in value;
      out.push({ path: [...path, k], schema: resolve(ps, value[k]), present, required: required.has(k) });
      if (present) fields(ps, value[k], [...path, k], out);
    }
  } else if (Array.isArray(value) && value.length > 0) {
    const items = (s.items ?? {}) as Schema;
    out.push({ path: [...path, 0], schema: resolve(items, value[0]), present: true, required: false });
    fields(items, value[0], [...path, 0], out);
  }
  return out;
}

/** Paths of the closed objects inside `value` (where an unknown property must be refused). */
export function closedObjects(schema: Schema, value: unknown, path: JsonPath = [], out: JsonPath[] = []): JsonPath[] {
  const s = resolve(schema, value);
  if (obj(value)) {
    if (isClosedObject(s)) out.push(path);
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const [k, x] of Object.entries(value)) if (props[k]) closedObjects(props[k], x, [...path, k], out);
  } else if (Array.isArray(value) && value.length > 0) {
    closedObjects((s.items ?? {}) as Schema, value[0], [...path, 0], out);
  }
  return out;
}

/** Every string leaf of a value, with its path. */
export function stringLeaves(
  v: unknown,
  path: JsonPath = [],
  out: { path: JsonPath; value: string }[] = [],
): { path: JsonPath; value: string }[] {
  if (typeof v === 'string') out.push({ path, value: v });
  else if (Array.isArray(v)) {
    v.forEach((x, i) => {
      stringLeaves(x, [...path, i], out);
    });
  } else if (obj(v)) for (const [k, x] of Object.entries(v)) stringLeaves(x, [...path, k], out);
  return out;
}

/** Values of each JSON type, for "wrong type" mutations. */
export const TYPE_SAMPLES: Record<string, unknown[]> = {
  string: ['fuzz', '', '0', 'true', 'null'],
  integer: [0, -1, 7, 2 ** 53, -(2 ** 31)],
  number: [1.5, -0.0001, 1e308, -1e308],
  boolean: [true, false],
  null: [null],
  array: [[], [1, 'a', null], [{}]],
  object: [{}, { a: 1 }, { '': '' }],
};

/** Strings meant to break parsers, encoders, stores and log lines. */
export function nastyStrings(rng: Rng): string[] {
  return [
    'a\u0000b',
    '\u0000',
    '\ud800',
    '\udfff\ud800',
    '\u202e\u0301\ufeff',
    '💥'.repeat(3),
    "' OR '1'='1",
    '"; DROP TABLE customers; --',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection probe, sent as written
    '${jndi:ldap://x}',
    '{{7*7}}',
    '<script>alert(1)</script>',
    '../../../../etc/passwd',
    '\r\nX-Injected: 1',
    '%00%ZZ%',
    ' '.repeat(10),
    '\t\n',
    rng.bytes(24).toString('latin1'),
    String.fromCodePoint(...Array.from({ length: 12 }, () => rng.int(0x80, 0x10ffff)).filter((c) => c < 0xd800 || c > 0xdfff)),
  ];
}

/** Numbers at the edges of what JSON, JavaScript and bigint columns hold. */
export const NASTY_NUMBERS = [
  '-1',
  '0',
  '-0',
  '1.5',
  '1e308',
  '-1e308',
  '1e400',
  '9007199254740992',
  '9223372036854775808',
  '-9223372036854775809',
  '0.1e1',
  '1E2',
  '123456789012345678901234567890',
];
