/**
 * Compiles src/ to dist/ before any test runs, when a source changed since the last build: the
 * tests that start `corridor` as a child process run bin/corridor.js, which runs dist/ (the HTTP
 * suites import src/ directly).
 */
import { buildDist } from '../../scripts/build.mjs';

export default async function setup(): Promise<void> {
  await buildDist({ ifStale: true });
}
