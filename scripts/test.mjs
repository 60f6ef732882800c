#!/usr/bin/env node
// `npm test`: type-checks, then runs the whole suite on SQLite and, when TEST_DATABASE_URL is set,
// again on PostgreSQL (vitest projects, see vitest.config.ts). Extra arguments go to vitest.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const run = (cmd, args) => spawnSync(cmd, args, { stdio: 'inherit', env: process.env }).status ?? 1;

if (run('npx', ['tsc', '--noEmit', '-p', '.']) !== 0) {
  console.error('typecheck failed');
  process.exit(1);
}

if (!process.env.TEST_DATABASE_URL) {
  console.log('PostgreSQL lane skipped: TEST_DATABASE_URL is not set (the SQLite lane runs).');
}

const report = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-vitest-')), 'report.json');
const status = run('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)]);
try {
  const r = JSON.parse(fs.readFileSync(report, 'utf8'));
  const lanes = process.env.TEST_DATABASE_URL ? 'sqlite + postgres' : 'sqlite';
  console.log(`\ncorridor tests (${lanes}):`);
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed`);
} catch {
  // vitest did not get as far as writing a report; its own output says why.
}
process.exit(status);
