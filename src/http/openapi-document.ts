/**
 * The served OpenAPI document, as the build wrote it (dist/openapi.json: the routes and their
 * schemas do not depend on the configuration). Building it from the routes takes ~100–150 ms of
 * one event-loop turn; a compiled `corridor start` reads the build's copy on the first request for it
 * instead, and a server built from src/ (tests) builds it before it listens (src/app.ts).
 */
import { compactOpenApi } from './openapi-compact.ts';

let prebuilt: (() => string) | undefined;
let prebuiltDocs: (() => string) | undefined;

/**
 * Serve the document `load` returns (read once, on the first request for it), and `/docs` the
 * compact form `loadDocs` returns (dist/openapi-docs.json: http/openapi-compact.ts).
 */
export function usePrebuiltOpenApi(load: () => string, loadDocs?: () => string): void {
  prebuilt = load;
  prebuiltDocs = loadDocs;
}

export function prebuiltOpenApi(): (() => string) | undefined {
  return prebuilt;
}

/**
 * The compact document /docs shows: the build's copy, else made from the full one on the first
 * request for it (a server run from src/, i.e. the tests: ~200 ms once, only there).
 */
export function docsOpenApi(full: () => string): () => string {
  const load = prebuiltDocs ?? (() => JSON.stringify(compactOpenApi(JSON.parse(full()) as Record<string, unknown>)));
  let text: string | undefined;
  return () => (text ??= load());
}
