#!/usr/bin/env node
// The `corridor` command: plain Node on the compiled dist/ (scripts/build.mjs; `npm ci` builds it).
// Source maps lie beside the compiled files: NODE_OPTIONS=--enable-source-maps makes stack traces
// name src/ lines (off by default: reading the maps costs a start ~80 ms).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import v8 from 'node:v8';

// Memory: V8 lets the old generation grow to several times what is live before it collects, and a
// busy server's heap drifts far above its working set (peak RSS 270 MB under the payment bench).
// A smaller growing factor keeps it near what is live — peak RSS ~185 MB there, at the same
// throughput (docs/performance.md, "Memory under load"). Set
// before anything is allocated, unless the operator set them (node options or NODE_OPTIONS win).
const given = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
for (const [name, value] of [['heap-growing-percent', '30']]) {
  if (!new RegExp(`--${name}\\b|--${name.replaceAll('-', '_')}\\b`).test(given)) v8.setFlagsFromString(`--${name}=${value}`);
}

const entry = new URL('../dist/cli/entry.js', import.meta.url);
if (!existsSync(entry)) {
  console.error('corridor: dist/ is missing: compile the sources with `npm run build` (`npm ci` does it too)');
  process.exit(1);
}
const require = createRequire(import.meta.url);
// The request validators the build compiled, for a command that serves requests: each module is
// loaded when its route is first asked.
const validators = () => {
  const names = new Set(JSON.parse(readFileSync(new URL('../dist/validators/index.json', import.meta.url), 'utf8')));
  return {
    has: (kind, key) => names.has(`${kind}-${key}`),
    load: (kind, key) => require(`../dist/validators/${kind}-${key}.cjs`),
  };
};
// The OpenAPI document the build wrote, read on the first request for it.
const openapi = () => readFileSync(new URL('../dist/openapi.json', import.meta.url), 'utf8');
// Its compact form (repeated schemas stated once), which /docs shows.
const openapiDocs = () => readFileSync(new URL('../dist/openapi-docs.json', import.meta.url), 'utf8');
// Help and the wallet helpers are answered without loading the server (src/cli/entry.ts).
const { run } = await import(entry.href);
process.exitCode = await run(process.argv.slice(2), { validators, openapi, openapiDocs });
