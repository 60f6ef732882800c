/**
 * The served OpenAPI document, as the build wrote it (dist/openapi.json: the routes and their
 * schemas do not depend on the configuration). Building it from the routes takes ~100–150 ms of
 * one event-loop turn; a compiled `corridor start` reads the build's copy on the first request for it
 * instead, and a server built from src/ (tests) builds it before it listens (src/app.ts).
 */
let prebuilt: (() => string) | undefined;

/** Serve the document `load` returns (read once, on the first request for it). */
export function usePrebuiltOpenApi(load: () => string): void {
  prebuilt = load;
}

export function prebuiltOpenApi(): (() => string) | undefined {
  return prebuilt;
}
