/**
 * Response serialisation. A response schema without unions is compiled by fast-json-stringify (as
 * Fastify does by default): a generated function that writes exactly the declared fields. A schema
 * with a union (`anyOf`/`oneOf`, e.g. the account-info variants of an external account, a quote's
 * source and destination) is written with JSON.stringify instead: fast-json-stringify picks a
 * union's branch by validating the value with Ajv, and compiles that validator on the route's first
 * response — measured at 300–500 ms of blocked event loop for the first external account, which
 * every other tenant waits through (and compiling them all at start-up took over 25 s). Union
 * responses are built by typed wire mappers (`Static<typeof Schema>`), and the tests check them
 * against the served OpenAPI document.
 */
import fastJsonStringify, { type Schema } from 'fast-json-stringify';
import type { FastifyInstance, FastifySchema } from 'fastify';

/** Keywords whose value fast-json-stringify checks with a validator at run time. */
const BRANCHING = new Set(['anyOf', 'oneOf', 'if']);

/** True when `schema` (at any depth) holds a keyword that needs a run-time validator. */
export function hasBranching(schema: unknown): boolean {
  const stack: unknown[] = [schema];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const s = stack.pop();
    if (s === null || typeof s !== 'object' || seen.has(s)) continue;
    seen.add(s);
    for (const [k, v] of Object.entries(s)) {
      if (BRANCHING.has(k)) return true;
      if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
  return false;
}

/**
 * A serializer compiled on the route's first response rather than at start-up: compiling every
 * route's response schemas up front was ~110 ms of each cold start, and one schema compiles in a few
 * milliseconds.
 */
function lazySerializer(schema: Schema): (data: unknown) => string {
  let compiled: ((data: unknown) => string) | undefined;
  return (data) => {
    compiled ??= fastJsonStringify(schema) as (data: unknown) => string;
    return compiled(data);
  };
}

export function installSerializers(app: FastifyInstance): void {
  app.setSerializerCompiler<FastifySchema>(({ schema }) => (hasBranching(schema) ? JSON.stringify : lazySerializer(schema as Schema)));
}
