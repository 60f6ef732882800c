/**
 * Request validation. Bodies are validated strictly (no type coercion, no stripping of unknown
 * fields); query strings, path parameters and headers arrive as text and are coerced to the
 * schema's types. Ajv errors become the `details.errors[]` of a 400 `INVALID_INPUT`.
 *
 * Three rules hold for every documented operation, whatever its own schema says (found by the
 * hostile-input fuzzer, test/fuzz):
 * - an operation without a querystring schema takes no query parameters (unknown ones are a 400,
 *   as unknown body fields are), so a misspelt parameter is reported rather than ignored;
 * - an operation that validates any input documents 400 among its responses;
 * - no input text may contain NUL (U+0000): PostgreSQL text cannot hold it, so it would otherwise
 *   fail deep in a query as a 500 on one store and be stored on the other.
 */
import { createHash } from 'node:crypto';
import { _, Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { errors, type FieldError } from './errors.ts';
import { ErrorSchema } from './schemas.ts';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const standaloneCode = (standaloneModule as unknown as { default: (ajv: Ajv, validate: ValidateFunction) => string }).default;

/** Validators compiled ahead of time (by the build), by the key of their schema's JSON text. */
export interface PrecompiledValidators {
  /** Whether the build compiled a validator of this kind for the schema with this key. */
  has(kind: ValidatorKind, key: string): boolean;
  /** That validator (its module is loaded on the first request that needs it). */
  load(kind: ValidatorKind, key: string): ValidateFunction;
}

/** Strict validators for bodies, coercing ones for the text parts (query, params, headers). */
export type ValidatorKind = 'body' | 'text';

let precompiled: PrecompiledValidators | undefined;
let keepSource = false;
const counts = { precompiled: 0, compiled: 0 };

/** How many distinct request schemas this process took from the build and how many it compiled. */
export function validatorCounts(): { precompiled: number; compiled: number } {
  return { ...counts };
}

/**
 * Validators compiled by the build (scripts/build.mjs writes one module each to dist/validators/),
 * used instead of compiling a schema whose JSON text matches: compiling every route's schemas was
 * most of a cold start (1.4 s). Each module is loaded when its route is first asked (a few ms). A
 * schema without one (code changed since the build) is compiled as before.
 */
export function usePrecompiledValidators(p: PrecompiledValidators): void {
  precompiled = p;
}

/** For the build: validators compiled from now on keep their generated source, for `validatorModules`. */
export function keepValidatorSource(): void {
  if (caches) throw new Error('keepValidatorSource must be called before the first app is built');
  keepSource = true;
}

/** The key a schema's validator is stored under: a digest of its JSON text (a valid export name). */
function keyOf(text: string): string {
  return `v${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}

/** For the build: every validator compiled so far, each as the source of a CommonJS module. */
export function validatorModules(): { kind: ValidatorKind; key: string; code: string }[] {
  if (!caches || !keepSource) throw new Error('call keepValidatorSource, then build the app, first');
  return [caches.body, caches.text].flatMap((c) =>
    [...c.byText].map(([text, fn]) => ({ kind: c.kind, key: keyOf(text), code: standaloneCode(c.ajv, fn) })),
  );
}

/** A validator that loads `load`'s on its first call; Fastify reads `errors` from the function it called. */
function lazyValidator(load: () => ValidateFunction): ValidateFunction {
  let real: ValidateFunction | undefined;
  const v = ((data: unknown) => {
    real ??= load();
    const valid = real(data);
    v.errors = real.errors;
    return valid;
  }) as ValidateFunction;
  return v;
}

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    discriminator: true,
    strict: false,
    ...options,
    // ajv-formats' formats as the generated modules require them (standalone code cannot close over them).
    ...(keepSource ? { code: { source: true, formats: _`require("ajv-formats/dist/formats").fullFormats` } } : {}),
  });
  addFormats(ajv);
  return ajv;
}

/**
 * Compiled validators, kept for the life of the process: compiling the route schemas is most of
 * what building an app costs (about 1 s of its 1.7 s), and a process that builds several apps (the
 * tests, a restart in place) would otherwise compile the same schemas each time. Two Ajv instances,
 * strict for bodies and coercing for the text parts; a validator is a pure function of its schema and
 * the instance's options, so one compiled for one app serves every other.
 *
 * Looked up by the schema object first (route schemas are module-level constants), then by its
 * JSON text: Fastify hands some parts over as a fresh tree per app (a headers schema is rebuilt
 * with lower-cased names), equal in content to the last one. Entries are bounded by the number of
 * distinct schemas in the code.
 */
interface ValidatorCache {
  kind: ValidatorKind;
  ajv: Ajv;
  byObject: WeakMap<object, ValidateFunction>;
  byText: Map<string, ValidateFunction>;
  /** Validators assembled from parts (`splitValidator`): not Ajv's, so no module of their own. */
  split: Map<string, ValidateFunction>;
}

let caches: { body: ValidatorCache; text: ValidatorCache } | undefined;

function validatorCaches(): { body: ValidatorCache; text: ValidatorCache } {
  const cache = (kind: ValidatorCache['kind'], ajv: Ajv): ValidatorCache => ({
    kind,
    ajv,
    byObject: new WeakMap(),
    byText: new Map(),
    split: new Map(),
  });
  caches ??= { body: cache('body', makeAjv({ coerceTypes: false })), text: cache('text', makeAjv({ coerceTypes: 'array' })) };
  return caches;
}

/** The compiled validator of `schema` (compiled on first use). */
function compileCached(c: ValidatorCache, schema: object): ValidateFunction {
  const hit = c.byObject.get(schema);
  if (hit) return hit;
  const text = JSON.stringify(schema);
  let fn = c.byText.get(text) ?? c.split.get(text);
  if (!fn && c.kind === 'body') {
    fn = splitValidator(c, schema);
    if (fn) c.split.set(text, fn);
  }
  if (!fn) {
    const p = precompiled;
    const key = p ? keyOf(text) : '';
    const built = p?.has(c.kind, key) === true;
    fn = built ? lazyValidator(() => p!.load(c.kind, key)) : c.ajv.compile(schema);
    counts[built ? 'precompiled' : 'compiled']++;
    c.byText.set(text, fn);
  }
  c.byObject.set(schema, fn);
  return fn;
}

/** A discriminated union with more branches than this is validated branch by branch (`splitValidator`). */
const SPLIT_BRANCHES = 8;

interface WideUnion {
  /** Property names from the body down to the union. */
  path: string[];
  tag: string;
  /** Each accepted tag value's branch. */
  branches: Map<string, object>;
}

type SchemaObject = Record<string, unknown>;
const isObject = (v: unknown): v is SchemaObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A path segment standing for every element of an array (the schema's `items`). */
const EACH = '[]';

/**
 * The first discriminated `oneOf` wider than SPLIT_BRANCHES reachable through `properties` and
 * array `items` (`EACH` in the path: a fixture file's external accounts each hold one).
 */
function findWideUnion(schema: SchemaObject, path: string[] = []): WideUnion | undefined {
  const disc = schema.discriminator;
  if (Array.isArray(schema.oneOf) && schema.oneOf.length > SPLIT_BRANCHES && isObject(disc) && typeof disc.propertyName === 'string') {
    const tag = disc.propertyName;
    const branches = new Map<string, object>();
    for (const b of schema.oneOf as unknown[]) {
      const t = isObject(b) && isObject(b.properties) ? b.properties[tag] : undefined;
      const values = isObject(t) ? (t.const !== undefined ? [t.const] : Array.isArray(t.enum) ? t.enum : []) : [];
      if (values.length === 0) return undefined;
      for (const v of values) branches.set(String(v), b as object);
    }
    return { path, tag, branches };
  }
  if (schema.type === 'array' && isObject(schema.items)) return findWideUnion(schema.items, [...path, EACH]);
  if (!isObject(schema.properties)) return undefined;
  for (const [k, sub] of Object.entries(schema.properties)) {
    const found = isObject(sub) ? findWideUnion(sub, [...path, k]) : undefined;
    if (found) return found;
  }
  return undefined;
}

/** `schema` with the subschema at `path` (through `properties` and `items`) replaced by `replacement`. */
function replaceAt(schema: SchemaObject, path: string[], replacement: object): SchemaObject {
  if (path.length === 0) return replacement as SchemaObject;
  const [head, ...rest] = path as [string, ...string[]];
  if (head === EACH) return { ...schema, items: replaceAt(schema.items as SchemaObject, rest, replacement) };
  const props = schema.properties as SchemaObject;
  return { ...schema, properties: { ...props, [head]: replaceAt(props[head] as SchemaObject, rest, replacement) } };
}

/**
 * A body whose schema holds a wide discriminated union (an external account's `accountInfo`: one
 * branch per account type, 46 of them) is validated in parts: the body with the union reduced to
 * `type: object`, then the one branch its tag names, with the branch's error paths put under the
 * union's. Ajv compiles such a union as one function of 2.4 MB (every branch inlined, its beneficiary
 * union too), whose first call blocked the event loop for 60–140 ms while V8 compiled it; in parts
 * each branch is a small function (its own module in the build), compiled the first time its
 * account type arrives. Errors are Ajv's own, including the `discriminator` error for a missing or
 * unknown tag, so clients see the same 400 either way. The union may sit in an array's items (a
 * fixture file's external accounts: that body's validator was 3 MB, and its first call blocked the
 * loop for up to 250 ms on a busy machine); then each element's branch is checked.
 */
function splitValidator(c: ValidatorCache, schema: object): ValidateFunction | undefined {
  const union = findWideUnion(schema as SchemaObject);
  if (!union) return undefined;
  const shell = compileCached(c, replaceAt(schema as SchemaObject, union.path, { type: 'object' }));
  const branchFns = new Map<string, ValidateFunction>();
  for (const [value, branch] of union.branches) branchFns.set(value, compileCached(c, branch));
  const { path, tag } = union;
  const v = ((data: unknown) => {
    const errs: ErrorObject[] = shell(data) ? [] : [...(shell.errors ?? [])];
    for (const { target, at } of unionsIn(data, path)) {
      const tagValue = target[tag];
      const fn = typeof tagValue === 'string' ? branchFns.get(tagValue) : undefined;
      if (typeof tagValue !== 'string') {
        errs.push({
          keyword: 'discriminator',
          instancePath: at,
          schemaPath: '#/discriminator',
          params: { error: 'tag', tag, tagValue },
          message: `tag "${tag}" must be string`,
        });
      } else if (!fn) {
        errs.push({
          keyword: 'discriminator',
          instancePath: at,
          schemaPath: '#/discriminator',
          params: { error: 'mapping', tag, tagValue },
          message: `value of tag "${tag}" must be in oneOf`,
        });
      } else if (!fn(target)) {
        for (const e of fn.errors ?? []) errs.push({ ...e, instancePath: at + e.instancePath });
      }
    }
    v.errors = errs.length > 0 ? errs : null;
    return errs.length === 0;
  }) as ValidateFunction;
  return v;
}

/** The objects at `path` in `data` (every element where it says `EACH`), with their JSON pointers. */
function unionsIn(data: unknown, path: string[]): { target: SchemaObject; at: string }[] {
  let found: { value: unknown; at: string }[] = [{ value: data, at: '' }];
  for (const k of path) {
    const next: { value: unknown; at: string }[] = [];
    for (const f of found) {
      if (k === EACH) {
        if (Array.isArray(f.value)) {
          f.value.forEach((value: unknown, i) => {
            next.push({ value, at: `${f.at}/${i}` });
          });
        }
      } else if (isObject(f.value)) {
        next.push({ value: f.value[k], at: `${f.at}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}` });
      }
    }
    found = next;
  }
  return found.flatMap((f) => (isObject(f.value) ? [{ target: f.value, at: f.at }] : []));
}

/** The validator a route gets for this body schema (for tests of the validation itself). */
export function bodyValidator(schema: object): ValidateFunction {
  return compileCached(validatorCaches().body, schema);
}

/** Installs the two validators: strict for bodies, coercing for the text parts of a request. */
export function installValidators(app: FastifyInstance): void {
  const { body, text } = validatorCaches();
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) => compileCached(httpPart === 'body' ? body : text, schema as object));
  app.addHook('onRoute', closeOperationInputs);
  // preHandler: after multipart routes have turned their form fields into req.body.
  app.addHook('preHandler', rejectNul);
}

/** An empty closed querystring schema: any query parameter is unknown. */
const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false } as const;

/** Applies the first two rules of the module comment to each documented operation. */
function closeOperationInputs(route: RouteOptions): void {
  const schema = route.schema as (FastifySchema & { operationId?: string; response?: Record<string, unknown> }) | undefined;
  if (!schema?.operationId) return;
  schema.querystring ??= NO_QUERY;
  if (schema.response && !('400' in schema.response) && !(400 in schema.response)) schema.response[400] = ErrorSchema;
}

/**
 * The dot path of the first string (or key) holding NUL in `value`, or undefined. Iterative: a
 * body may nest deeper than the call stack inside fields that are open objects.
 */
export function findNul(value: unknown): string | undefined {
  // Paths are built only for a hit (a deep nest would make building them all quadratic).
  interface At {
    key: string;
    parent: At | undefined;
  }
  const pathOf = (at: At | undefined): string => {
    const keys: string[] = [];
    for (let a = at; a; a = a.parent) keys.push(a.key);
    return keys.reverse().join('.') || '(body)';
  };
  const stack: [unknown, At | undefined][] = [[value, undefined]];
  while (stack.length > 0) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return pathOf(at);
    } else if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) stack.push([v[i], { key: String(i), parent: at }]);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const next = { key: k, parent: at };
        if (k.includes('\u0000')) return pathOf(next);
        stack.push([x, next]);
      }
    }
  }
  return undefined;
}

function rejectNul(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const field = findNul(req.params) ?? findNul(req.query) ?? findNul(req.body);
  done(field === undefined ? undefined : errors.invalidField(field, 'must not contain the NUL character (U+0000)'));
}

/**
 * Turns Ajv errors into one FieldError per field problem, with dot paths. `root` names the whole
 * request part when the problem is with it rather than a field (e.g. `(querystring)`).
 */
export function fieldErrorsFrom(errs: ErrorObject[], root = '(body)'): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of errs) {
    // anyOf/oneOf summaries repeat what their branches already said.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const base = pointerToPath(e.instancePath);
    let field = base;
    let message = e.message ?? 'is invalid';
    let constraint: Record<string, unknown> | undefined;
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'required':
        field = join(base, String(p.missingProperty));
        message = 'is required';
        break;
      case 'additionalProperties':
        field = join(base, String(p.additionalProperty));
        message = 'is not a known field';
        break;
      case 'type':
        message = `must be ${String(p.type)}`;
        break;
      case 'enum':
        constraint = { enum: p.allowedValues };
        message = `must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
        break;
      case 'const': {
        // A union of literals fails once per branch: report one entry per field listing them all.
        const prior = out.find((x) => x.field === (base === '' ? root : base) && Array.isArray(x.constraint?.enum));
        if (prior) {
          const values = prior.constraint!.enum as unknown[];
          if (!values.includes(p.allowedValue)) values.push(p.allowedValue);
          prior.message = `must be one of ${values.join(', ')}`;
          continue;
        }
        constraint = { enum: [p.allowedValue] };
        message = `must be ${String(p.allowedValue)}`;
        break;
      }
      case 'format':
        constraint = { format: p.format };
        break;
      case 'pattern':
        constraint = { pattern: p.pattern };
        break;
      case 'minLength':
        constraint = { minLength: p.limit };
        break;
      case 'maxLength':
        constraint = { maxLength: p.limit };
        break;
      case 'discriminator':
        field = join(base, String(p.tag));
        message = p.error === 'mapping' ? 'is not a supported value' : 'is required and must be a string';
        break;
      default:
        break;
    }
    const key = `${field}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const fe: FieldError = { field: field === '' ? root : field, message };
    if (constraint) fe.constraint = constraint;
    out.push(fe);
  }
  return out;
}

function pointerToPath(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
}

function join(base: string, name: string): string {
  return base === '' ? name : `${base}.${name}`;
}
