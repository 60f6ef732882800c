#!/usr/bin/env node
// `npm test`: type-checks, then runs the whole suite — every lane (vitest projects, see
// vitest.config.ts and docs/contributing.md "Test lanes"): the unit suites once, and the HTTP and
// slow suites on SQLite and, when TEST_DATABASE_URL is set, again on PostgreSQL.
// `--fast` (`npm run test:fast`): the inner loop — no type check, the unit suites and the SQLite
// HTTP suites only (no slow suites, no PostgreSQL).
// Other arguments go to vitest (e.g. a file filter, or `--project sqlite-slow`).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const run = (cmd, args) => spawnSync(cmd, args, { stdio: 'inherit', env: process.env }).status ?? 1;

const fast = process.argv.includes('--fast');
const extra = process.argv.slice(2).filter((a) => a !== '--fast');
const started = Date.now();

if (!fast && run('npx', ['tsc', '--noEmit', '-p', '.']) !== 0) {
  console.error('typecheck failed');
  process.exit(1);
}

const pg = Boolean(process.env.TEST_DATABASE_URL);
if (!fast && !pg) console.log('PostgreSQL lanes skipped: TEST_DATABASE_URL is not set (the unit and SQLite lanes run).');
const projects = fast ? ['unit', 'sqlite'] : undefined;
const lanes = fast
  ? 'unit + sqlite (fast: no slow suites)'
  : pg
    ? 'unit + sqlite + sqlite-slow + postgres + postgres-slow'
    : 'unit + sqlite + sqlite-slow';

const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-vitest-')), 'report.json');
const status = run('npx', [
  'vitest',
  'run',
  ...(projects ?? []).flatMap((p) => ['--project', p]),
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...extra,
]);
try {
  const r = JSON.parse(fs.readFileSync(report, 'utf8'));
  console.log(`\ncorridor tests (${lanes}):`);
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, in ${Math.round((Date.now() - started) / 1000)} s`);
} catch {
  // vitest did not get as far as writing a report; its own output says why.
}
process.exit(status);
