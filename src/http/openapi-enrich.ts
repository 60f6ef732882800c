/**
 * What the served OpenAPI document adds to what @fastify/swagger generates from the route schemas,
 * for people reading it in /docs (and for generated clients):
 *
 * - enums: a TypeBox union of literals arrives as `anyOf: [{type, enum: [x]}, …]`, which Swagger UI
 *   shows as a list of nameless alternatives; it becomes one `{type, enum: [x, y, …]}`. The same set
 *   of values, so the document still describes exactly what the validators accept (those are compiled
 *   from the route schemas, never from this document).
 * - responses: every "Default Response" gets a description from its status and what it carries — the
 *   schema's title for a success, the catalogue's codes for an error (src/http/errors.ts).
 * - examples: request and response bodies of the main operations (openapi-examples.ts).
 * - the page of the sandbox's magic values, linked from the document's description.
 *
 * A transform over the whole document, keyed by status, schema title and operationId, so routes
 * added later get the same treatment without an edit here. It runs where the document is built: at
 * build time (dist/openapi.json) or once before a server built from src/ listens — never on a request.
 */
import { ERROR_CATALOGUE } from './errors.ts';
import { OPERATION_EXAMPLES, type OperationExamples } from './openapi-examples.ts';

type Json = Record<string, unknown>;

/** Where Corridor serves the page of the sandbox's magic values (see src/modules/sandbox/magic-values.page.ts). */
export const MAGIC_VALUES_PATH = '/docs/sandbox-magic-values';

const FASTIFY_DEFAULT = 'Default Response';

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The values of an `anyOf` branch that is one literal (`{type, enum: [v]}` or `{type, const: v}`), with its type. */
function literalBranch(b: unknown): { type: unknown; values: unknown[] } | undefined {
  if (!isObject(b)) return undefined;
  const keys = Object.keys(b);
  if (keys.length !== 2 || !('type' in b)) return undefined;
  if ('const' in b) return { type: b.type, values: [b.const] };
  if (Array.isArray(b.enum)) return { type: b.type, values: b.enum };
  return undefined;
}

/** `anyOf` of literals of one type → `{type, enum}` (other keys of the node, such as its description, kept). */
function collapseLiteralUnion(node: Json): Json {
  const branches = node.anyOf;
  if (!Array.isArray(branches) || branches.length < 2) return node;
  const literals = branches.map(literalBranch);
  const first = literals[0];
  if (!first || literals.some((l) => l === undefined || l.type !== first.type)) return node;
  const { anyOf: _replaced, ...rest } = node;
  return { ...rest, type: first.type, enum: [...new Set(literals.flatMap((l) => l!.values))] };
}

/**
 * `v` with every literal union collapsed, bottom-up. Copy on write: a node is copied only when
 * something under it changes, and never edited in place, because the generated document may share
 * objects with the route schemas the validators were compiled from (and copying all ~70k nodes
 * would double the cost of building the document).
 */
export function withEnums(v: unknown): unknown {
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const child = withEnums(v[i]);
      if (child === v[i]) continue;
      out ??= [...v];
      out[i] = child;
    }
    return out ?? v;
  }
  if (!isObject(v)) return v;
  let out: Json | undefined;
  for (const k in v) {
    const child = withEnums(v[k]);
    if (child === v[k]) continue;
    out ??= { ...v };
    out[k] = child;
  }
  return collapseLiteralUnion(out ?? v);
}

const REASONS: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
  '400': 'Bad request',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'Not found',
  '405': 'Method not allowed',
  '409': 'Conflict',
  '410': 'Gone',
  '412': 'Precondition failed',
  '423': 'Locked',
  '424': 'Failed dependency',
  '429': 'Too many requests',
  '500': 'Internal error',
  '501': 'Not implemented',
  '503': 'Service unavailable',
};

/** What each error status means in Corridor, before the list of its codes. */
const ERROR_MEANING: Record<string, string> = {
  '400': 'The request is invalid (INVALID_INPUT names each bad field in `details.errors[]`) or breaks a rule of the operation',
  '401': 'Missing or wrong credentials; wallet-signature failures name the failed check in `reason`',
  '403': 'The credentials are valid but may not do this (the token lacks the permission, or a policy refuses it)',
  '404': "No such resource for this platform (another platform's ids are not found either)",
  '409': 'The resource is not in a state that allows this, or it already exists',
  '410': 'The resource is gone (a deleted customer)',
  '429': 'Too many attempts or over a limit; retry later',
  '500': 'Unexpected server error (the body never carries internals)',
};

/** The codes an error response's schema allows (its `code` enum), else the catalogue's for that status. */
function errorCodes(status: string, schema: unknown): readonly string[] {
  const code = isObject(schema) && isObject(schema.properties) ? schema.properties.code : undefined;
  if (isObject(code) && Array.isArray(code.enum)) return code.enum.map(String);
  return (ERROR_CATALOGUE as Record<string, readonly string[]>)[status] ?? [];
}

/** The description of one response: from its status and what its body is. */
export function responseDescription(status: string, response: Json): string {
  const schema = isObject(response.content) ? (response.content['application/json'] as Json | undefined)?.schema : undefined;
  const reason = REASONS[status] ?? `HTTP ${status}`;
  if (/^[45]/.test(status)) {
    const codes = errorCodes(status, schema);
    const meaning = ERROR_MEANING[status] ?? reason;
    return codes.length > 0 ? `${meaning}. \`code\` is one of: ${codes.join(', ')}.` : `${meaning}.`;
  }
  if (status === '204' || schema === undefined) return `${reason}: no body.`;
  const title = isObject(schema) && typeof schema.title === 'string' ? schema.title : undefined;
  if (status === '202' && title === undefined) return `${reason}: the operation continues asynchronously.`;
  return title ? `${reason}: the ${title}.` : `${reason}.`;
}

/** Sets `example` on the JSON media type of a request body or response, when there is one. */
function setExample(container: unknown, example: unknown): void {
  if (!isObject(container) || !isObject(container.content)) return;
  const media = container.content['application/json'];
  if (isObject(media)) media.example = example;
}

function enrichOperation(op: Json, examples: OperationExamples | undefined): void {
  const responses = isObject(op.responses) ? op.responses : {};
  for (const [status, response] of Object.entries(responses)) {
    if (!isObject(response)) continue;
    if (response.description === FASTIFY_DEFAULT || !response.description) response.description = responseDescription(status, response);
    const example = examples?.responses?.[status];
    if (example !== undefined) setExample(response, example);
  }
  if (examples?.request !== undefined) setExample(op.requestBody, examples.request);
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** Every operation of the document (paths and webhooks). */
function operations(doc: Json): Json[] {
  const out: Json[] = [];
  for (const section of [doc.paths, doc.webhooks]) {
    if (!isObject(section)) continue;
    for (const item of Object.values(section)) {
      if (!isObject(item)) continue;
      for (const m of METHODS) if (isObject(item[m])) out.push(item[m]);
    }
  }
  return out;
}

/** The document as /docs and /openapi.json serve it (see the file's comment). */
export function enrichOpenApi<T extends object>(
  generated: T,
  examples: Readonly<Record<string, OperationExamples>> = OPERATION_EXAMPLES,
): T {
  const doc = withEnums(generated) as Json;
  for (const op of operations(doc)) enrichOperation(op, typeof op.operationId === 'string' ? examples[op.operationId] : undefined);
  // A new info object: the generator may hand over the one from the plugin's options.
  const info = isObject(doc.info) ? doc.info : {};
  const description = typeof info.description === 'string' ? `${info.description}\n\n` : '';
  doc.info = {
    ...info,
    description: `${description}The sandbox's magic values (amounts, account numbers and names that steer outcomes): [${MAGIC_VALUES_PATH}](${MAGIC_VALUES_PATH}).`,
  };
  return doc as T;
}
