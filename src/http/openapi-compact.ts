/**
 * The OpenAPI document with its repeated schemas stated once (issue #25, /docs): every titled
 * schema that occurs twice or more, identical, moves to `components.schemas` under its title and
 * each occurrence becomes a `$ref`. The route schemas inline everything (TypeBox values are copied
 * into each route), so the full document states an external account's ~100 kB of account-info
 * variants eleven times and an Address 1,363 times: 4.2 MB, which Swagger UI took 15–18 s to render.
 * Stated once, the same document is about a fifth of that.
 *
 * Swagger UI reads this form (`/docs/json`); `/openapi.json` stays fully inlined, the form tools and
 * the suite's fuzzers read. Resolving every `$ref` of the compact document gives back the full one
 * (test/docs/openapi-compact.test.ts).
 */

type Json = unknown;
type Obj = Record<string, Json>;

const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Keys whose values are data, not schemas: a `title` inside an example is a field of the example. */
const DATA_KEYS = new Set(['example', 'examples', 'default', 'const', 'enum']);

/** `doc` with each repeated titled schema in `components.schemas`; `doc` itself is not changed. */
export function compactOpenApi(doc: Obj): Obj {
  // Pass 1: how often each titled schema occurs, by its exact text.
  const seen = new Map<string, number>();
  const textOf = new Map<Obj, string>();
  const count = (v: Json): void => {
    if (Array.isArray(v)) {
      for (const x of v) count(x);
      return;
    }
    if (!isObj(v)) return;
    if (typeof v.title === 'string') {
      const text = JSON.stringify(v);
      textOf.set(v, text);
      seen.set(text, (seen.get(text) ?? 0) + 1);
    }
    for (const [k, x] of Object.entries(v)) if (!DATA_KEYS.has(k)) count(x);
  };
  count(doc.paths);
  count(doc.webhooks);

  // Pass 2: copy, putting each repeated one in components once (its own repeated parts inside it
  // too) and referring to it. One title with two different schemas gets `Title`, `Title_2` …
  const schemas: Obj = {};
  const nameOf = new Map<string, string>();
  const taken = new Set<string>(Object.keys((doc.components as Obj | undefined)?.schemas ?? {}));
  const copy = (v: Json): Json => {
    if (Array.isArray(v)) return v.map(copy);
    if (!isObj(v)) return v;
    const text = textOf.get(v);
    if (text !== undefined && (seen.get(text) ?? 0) > 1) {
      let name = nameOf.get(text);
      if (name === undefined) {
        name = componentName(v.title as string, taken);
        taken.add(name);
        nameOf.set(text, name);
        schemas[name] = copyFields(v);
      }
      return { $ref: `#/components/schemas/${name}` };
    }
    return copyFields(v);
  };
  const copyFields = (v: Obj): Obj => {
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) out[k] = DATA_KEYS.has(k) ? x : copy(x);
    return out;
  };

  const paths = copy(doc.paths);
  const webhooks = doc.webhooks === undefined ? undefined : copy(doc.webhooks);
  const components = { ...((doc.components as Obj | undefined) ?? {}) };
  components.schemas = { ...((components.schemas as Obj | undefined) ?? {}), ...sorted(schemas) };
  return { ...doc, paths, ...(webhooks === undefined ? {} : { webhooks }), components };
}

/** A component name from a title: the characters OpenAPI allows, unique among those taken. */
function componentName(title: string, taken: Set<string>): string {
  const base = title.replace(/[^A-Za-z0-9._-]/g, '_') || 'Schema';
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`;
}

function sorted(o: Obj): Obj {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
