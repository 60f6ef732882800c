/**
 * Request validation. Bodies are validated strictly (no type coercion, no stripping of unknown
 * fields); query strings, path parameters and headers arrive as text and are coerced to the
 * schema's types. Ajv errors become the `details.errors[]` of a 400 `INVALID_INPUT`.
 */
import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { FieldError } from './errors.ts';

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
}

/** Turns Ajv errors into one FieldError per field problem, with dot paths. */
export function fieldErrorsFrom(errs: ErrorObject[]): FieldError[] {
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
        const prior = out.find((x) => x.field === (base === '' ? '(body)' : base) && Array.isArray(x.constraint?.enum));
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
    const fe: FieldError = { field: field === '' ? '(body)' : field, message };
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
