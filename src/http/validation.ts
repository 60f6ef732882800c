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
import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, HookHandlerDoneFunction, RouteOptions } from 'fastify';
import { errors, type FieldError } from './errors.ts';
import { ErrorSchema } from './schemas.ts';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: true,
    discriminator: true,
    strict: false,
    ...options,
  });
  addFormats(ajv);
  return ajv;
}

/** Installs the two validators: strict for bodies, coercing for the text parts of a request. */
export function installValidators(app: FastifyInstance): void {
  const bodyAjv = makeAjv({ coerceTypes: false });
  const textAjv = makeAjv({ coerceTypes: 'array' });
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) =>
    (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object),
  );
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
  interface At { key: string; parent: At | undefined }
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
  if (field === undefined) return done();
  done(errors.invalidField(field, 'must not contain the NUL character (U+0000)'));
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
