#!/usr/bin/env node
// CI: Corridor works as a package. Packs this checkout (`npm pack`, which compiles dist/ first),
// installs the tarball into an empty temporary folder from the registry (or npm's cache), and runs
// `npx corridor --help` and `npx corridor start` there: the server must answer /healthz within 30 s,
// serve the dashboard and the API reference from the package's own files, and stop cleanly on
// SIGTERM. Exits 1 saying which step failed.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-pack-'));
const sh = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });

function fail(why) {
  console.error(`pack-check: ${why} (folder ${dir})`);
  process.exit(1);
}

async function freePort() {
  const srv = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const { port } = srv.address();
  await new Promise((r) => srv.close(r));
  return port;
}

const started = Date.now();
const packed = JSON.parse(sh('npm', ['pack', '--json', '--pack-destination', dir], ROOT))[0];
const files = packed.files.map((f) => f.path);
for (const need of ['bin/corridor.js', 'dist/cli/entry.js', 'README.md'])
  if (!files.includes(need)) fail(`the tarball lacks ${need} (has: ${files.join(', ')})`);
if (files.some((f) => f.startsWith('src/') || f.startsWith('test/'))) fail('the tarball carries src/ or test/');
console.log(`pack-check: ${packed.filename}, ${files.length} files, ${Math.round(packed.size / 1024)} kB`);

fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"pack-check","private":true}\n');
sh('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', `./${packed.filename}`], dir);
console.log(`pack-check: installed in ${Math.round((Date.now() - started) / 1000)} s`);
if (fs.existsSync(path.join(dir, 'node_modules', 'tsx'))) fail('tsx was installed: it must not be a run-time dependency');

const help = sh('npx', ['--no-install', 'corridor', '--help'], dir);
if (!help.includes('Usage: corridor')) fail(`npx corridor --help printed: ${help.slice(0, 200)}`);

const port = await freePort();
const child = spawn('npx', ['--no-install', 'corridor', 'start'], {
  cwd: dir,
  env: { ...process.env, PORT: String(port), DATA_DIR: path.join(dir, 'data') },
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true,
});
let output = '';
child.stdout.on('data', (d) => (output += d));
child.stderr.on('data', (d) => (output += d));
const deadline = Date.now() + 30_000;
let health;
while (Date.now() < deadline && child.exitCode === null) {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    if (res.ok) {
      health = await res.json();
      break;
    }
  } catch {
    // not listening yet
  }
  await new Promise((r) => setTimeout(r, 100));
}
// The pages the package ships beside the server (dist/dashboard/, the prebuilt OpenAPI document and its compact form).
const pages = [];
if (health) {
  for (const [page, type] of [
    ['/dashboard/', 'text/html'],
    ['/dashboard/app.js', 'javascript'],
    ['/docs/sandbox-magic-values', 'text/html'],
    ['/2025-10-13/openapi.json', 'application/json'],
    ['/docs/json', 'application/json'],
  ]) {
    const res = await fetch(`http://127.0.0.1:${port}${page}`).catch((err) => ({ ok: false, status: String(err), headers: new Headers() }));
    const got = res.headers.get('content-type') ?? '';
    if (!res.ok || !got.includes(type)) pages.push(`${page} answered ${res.status} ${got}`);
  }
}
// npx does not pass signals on: stop the whole group it started.
process.kill(-child.pid, 'SIGTERM');
await new Promise((r) => child.once('exit', r));
if (!health) fail(`npx corridor start did not answer /healthz within 30 s:\n${output}`);
if (pages.length > 0) fail(`the packaged server did not serve its pages: ${pages.join('; ')}`);
console.log(
  `pack-check: npx corridor start answered /healthz ${JSON.stringify(health)}; done in ${Math.round((Date.now() - started) / 1000)} s`,
);
fs.rmSync(dir, { recursive: true, force: true });
