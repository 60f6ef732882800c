/**
 * The fuzzer's view of the served OpenAPI document: one {@link Operation} per path and method,
 * with its auth scheme, parameters, request body schema and documented statuses, and local Ajv
 * validators configured like the server's (strict bodies; coercing query strings), so a generator
 * can tell whether a mutated request is still valid by the document.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/** A JSON Schema node as the document carries it (arbitrary JSON, read field by field). */
export type Schema = Record<string, unknown>;

export interface Param {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export type AuthScheme = 'basic' | 'agent' | 'admin' | 'none';

export interface Operation {
  /** `METHOD /path/{param}` */
  key: string;
  operationId: string;
  method: string;
  /** The OpenAPI path, with `{param}` placeholders. */
  path: string;
  auth: AuthScheme;
  pathParams: Param[];
  query: Param[];
  headers: Param[];
  body?: { contentType: string; schema: Schema; required: boolean };
  /** Every status the document lists for the operation. */
  documented: Set<number>;
  /** The token permission it publishes (`x-required-permission`), for platform operations. */
  permission?: string;
}

interface OpenApiDoc {
  paths: Record<string, Record<string, OpenApiOp>>;
}
interface OpenApiOp {
  operationId?: string;
  security?: Record<string, unknown>[];
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, unknown>;
  'x-required-permission'?: string;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function operationsOf(docJson: unknown): Operation[] {
  const doc = docJson as OpenApiDoc;
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(item)) {
      if (!METHODS.includes(m)) continue;
      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      const auth: AuthScheme = schemes.includes('BasicAuth')
        ? 'basic'
        : schemes.includes('AgentAuth')
          ? 'agent'
          : schemes.includes('AdminAuth')
            ? 'admin'
            : 'none';
      const params = (op.parameters ?? []).map((p) => ({
        name: p.name,
        in: p.in as Param['in'],
        required: p.required === true,
        schema: p.schema ?? {},
      }));
      const content = op.requestBody?.content ?? {};
      const contentType = Object.keys(content)[0];
      out.push({
        key: `${m.toUpperCase()} ${path}`,
        operationId: op.operationId ?? `${m} ${path}`,
        method: m.toUpperCase(),
        path,
        auth,
        pathParams: params.filter((p) => p.in === 'path'),
        query: params.filter((p) => p.in === 'query'),
        headers: params.filter((p) => p.in === 'header'),
        body: contentType
          ? { contentType, schema: content[contentType]!.schema ?? {}, required: op.requestBody?.required === true }
          : undefined,
        documented: new Set(
          Object.keys(op.responses ?? {})
            .filter((s) => /^\d{3}$/.test(s))
            .map(Number),
        ),
        ...(op['x-required-permission'] ? { permission: op['x-required-permission'] } : {}),
      });
    }
  }
  return out;
}

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    removeAdditional: false,
    useDefaults: false,
    discriminator: true,
    strict: false,
    coerceTypes: coerce ? 'array' : false,
  });
  addFormats(ajv);
  return ajv;
}

const bodyAjv = makeAjv(false);
const textAjv = makeAjv(true);
const bodyValidators = new Map<string, ValidateFunction>();
const queryValidators = new Map<string, ValidateFunction>();

/** True when `body` is valid for the operation's request body schema. */
export function bodyValid(op: Operation, body: unknown): boolean {
  if (!op.body) return true;
  let v = bodyValidators.get(op.key);
  if (!v) {
    v = bodyAjv.compile(structuredClone(op.body.schema));
    bodyValidators.set(op.key, v);
  }
  return v(structuredClone(body)) === true;
}

/**
 * True when the query (as the server's parser hands it over: strings, or arrays for repeated
 * keys) is valid for the operation's documented query parameters. The server's querystring
 * schemas are closed, so an undocumented parameter is invalid.
 */
export function queryValid(op: Operation, query: Record<string, string | string[]>): boolean {
  let v = queryValidators.get(op.key);
  if (!v) {
    const properties: Record<string, Schema> = {};
    for (const p of op.query) properties[p.name] = structuredClone(p.schema);
    v = textAjv.compile({
      type: 'object',
      properties,
      required: op.query.filter((p) => p.required).map((p) => p.name),
      additionalProperties: false,
    });
    queryValidators.set(op.key, v);
  }
  return v(structuredClone(query)) === true;
}

/** The operation's path with its parameters filled in (each value is inserted verbatim). */
export function fillPath(op: Operation, values: Record<string, string>): string {
  return op.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`${op.key}: no value for path parameter ${name}`);
    return v;
  });
}
