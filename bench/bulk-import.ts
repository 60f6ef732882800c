/**
 * What a large bulk customer import does to everyone else (issue #22): Corridor (compiled, SQLite
 * unless DATABASE_URL is set) serves a paced stream of authenticated reads from a second platform
 * while the first imports a CSV of N rows; the reads' p50/p99 during the import are compared with
 * the same stream before it, and the import's duration, rows/s and the server's peak RSS are shown.
 *
 *   node --import tsx bench/bulk-import.ts [--rows 100000] [--rate 200]
 *
 * The CSV is generated into a temporary file and streamed to the server (it is never in memory
 * whole, here or there). Figures: docs/performance.md, "Bulk customer import".
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runPaced } from './paced.ts';
import { BASE_PATH, makeTempDir, removeTempDir, startCorridor } from './servers.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000' }, rate: { type: 'string', default: '200' } } });
const ROWS = Number(values.rows);
const RATE = Number(values.rate);
const WINDOW_S = 10;

const databaseUrl = process.env.DATABASE_URL;
const corridor = await startCorridor({ store: databaseUrl ? 'postgres' : 'sqlite', databaseUrl, logLevel: 'warn', echo: false });
const tmp = makeTempDir('corridor-bulk-bench-');
try {
  const importer = await corridor.handle.newPlatform('bulk importer');
  const reader = await corridor.handle.newPlatform('bulk bystander');
  const config = await corridor.handle.request('GET', `${BASE_PATH}/config`, { headers: { authorization: importer.authorization } });
  const domain = (config.body as { umaDomain: string }).umaDomain;

  // The CSV, written to disk row by row.
  const file = path.join(tmp, 'customers.csv');
  const out = fs.createWriteStream(file);
  out.write('umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country\n');
  for (let i = 0; i < ROWS; i++) {
    const line = `b${i}@${domain},bulk-${i},INDIVIDUAL,Bulk Customer ${i},1990-01-02,${i} Main St,San Francisco,CA,94105,US\n`;
    if (!out.write(line)) await new Promise<void>((r) => out.once('drain', () => r()));
  }
  await new Promise<void>((r) => out.end(() => r()));
  const bytes = fs.statSync(file).size;

  const read = {
    method: 'GET' as const,
    path: `${BASE_PATH}/platform/internal-accounts?currency=USD`,
    headers: { authorization: reader.authorization },
  };
  const pace = () => runPaced({ origin: corridor.server.origin, request: read, rate: RATE, duration: WINDOW_S, connections: 16 });
  const before = await pace();

  // The upload: multipart, the file streamed from disk.
  const started = performance.now();
  const form = new FormData();
  form.append('file', await fs.openAsBlob(file, { type: 'text/csv' }), 'customers.csv');
  const res = await fetch(`${corridor.server.origin}${BASE_PATH}/customers/bulk/csv`, {
    method: 'POST',
    headers: { authorization: importer.authorization },
    body: form,
  });
  if (res.status !== 202) throw new Error(`upload answered ${res.status}: ${await res.text()}`);
  const uploadedMs = performance.now() - started;
  const { jobId } = (await res.json()) as { jobId: string };

  // Reads while the import runs, window after window, until it is done.
  const during: Awaited<ReturnType<typeof pace>>[] = [];
  let job: { status: string; progress: { processed: number; successful: number; failed: number } };
  for (;;) {
    during.push(await pace());
    const r = await corridor.handle.request('GET', `${BASE_PATH}/customers/bulk/jobs/${jobId}`, {
      headers: { authorization: importer.authorization },
    });
    job = r.body as typeof job;
    if (job.status === 'COMPLETED' || job.status === 'FAILED') break;
  }
  const importSeconds = (performance.now() - started) / 1000;
  const worstP99 = Math.max(...during.map((d) => d.p99Ms));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`rows ${ROWS} (${(bytes / 1024 / 1024).toFixed(1)} MiB); upload answered 202 in ${(uploadedMs / 1000).toFixed(1)} s`);
  console.log(
    `import ${job.status}: ${job.progress.successful} created, ${job.progress.failed} failed, in ${importSeconds.toFixed(0)} s (${(ROWS / importSeconds).toFixed(0)} rows/s)`,
  );
  console.log(`bystander reads at ${RATE}/s — before: p50 ${before.p50Ms.toFixed(1)} ms, p99 ${before.p99Ms.toFixed(1)} ms`);
  console.log(
    `during (${during.length} windows of ${WINDOW_S} s): p50 median ${median(during.map((d) => d.p50Ms)).toFixed(1)} ms, p99 median ${median(during.map((d) => d.p99Ms)).toFixed(1)} ms, worst p99 ${worstP99.toFixed(1)} ms; non-2xx ${during.reduce((s, d) => s + d.non2xx, 0)}`,
  );
  console.log(
    `server peak RSS ${((corridor.server.peakRssKb() ?? 0) / 1024).toFixed(0)} MB, CPU ${corridor.server.cpuSeconds()?.toFixed(0)} s`,
  );
} finally {
  await corridor.close();
  removeTempDir(tmp);
}
