/**
 * Build step (scripts/build.mjs runs it from dist/ after bundling): builds the app once on a
 * throw-away store so that every route's request schemas are compiled, and writes each validator as a
 * CommonJS module, dist/validators/<kind>-<key>.cjs, listed in dist/validators/index.json;
 * bin/corridor.js hands them to the server (src/http/validation.ts, `usePrecompiledValidators`).
 * Writes the served OpenAPI document as dist/openapi.json as well (src/http/openapi-document.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../app.ts';
import { readConfig } from '../config.ts';
import { defaultDeps } from '../deps.ts';
import { compactOpenApi } from '../http/openapi-compact.ts';
import { keepValidatorSource, validatorModules } from '../http/validation.ts';

export async function compileValidators(outDir: string): Promise<number> {
  keepValidatorSource();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-build-'));
  try {
    // Defaults only: the routes and their schemas do not depend on the configuration, and the
    // developer's environment (a DATABASE_URL, a key) must not reach the build.
    const app = await buildApp(readConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), defaultDeps());
    await app.ready();
    const modules = validatorModules();
    // The served OpenAPI document too: `corridor start` reads it instead of building it (http/openapi-document.ts).
    const document = app.swagger() as unknown as Record<string, unknown>;
    fs.writeFileSync(path.join(outDir, 'openapi.json'), JSON.stringify(document));
    // And its compact form, which /docs shows (http/openapi-compact.ts).
    fs.writeFileSync(path.join(outDir, 'openapi-docs.json'), JSON.stringify(compactOpenApi(document)));
    await app.close();
    const dir = path.join(outDir, 'validators');
    fs.mkdirSync(dir, { recursive: true });
    for (const m of modules) fs.writeFileSync(path.join(dir, `${m.kind}-${m.key}.cjs`), m.code);
    fs.writeFileSync(path.join(dir, 'index.json'), `${JSON.stringify(modules.map((m) => `${m.kind}-${m.key}`))}\n`);
    return modules.length;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

const [outDir] = process.argv.slice(2);
if (!outDir) {
  process.stderr.write('usage: node dist/compile-validators.js <dist-dir>\n');
  process.exitCode = 2;
} else {
  await compileValidators(outDir);
}
