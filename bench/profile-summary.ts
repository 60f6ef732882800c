/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof`): self time by function and by
 * package/area, and inclusive time of the heaviest frames.
 *
 *   node --import tsx bench/profile-summary.ts <file.cpuprofile> [--top 25] [--skip 3] [--responses N]
 *
 * `--responses N` (the responses the window served: req/s × seconds from the bench's table) adds
 * "where the time goes": every sample put in one bucket (SQLite, socket writes, serialisation,
 * validation, authentication, logging, garbage collection, the rest) in µs per response.
 *
 * By default only the measured window is summarised, when the bench recorded it in windows.json
 * beside the profile (matched by the pid in the file name); otherwise --skip drops the first
 * seconds of the profile (module loading, migrations, warm-up).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' }, skip: { type: 'string' }, responses: { type: 'string' } },
});
const file = positionals[0];
if (!file) {
  process.stderr.write('usage: profile-summary <file.cpuprofile> [--top N] [--skip SECONDS]\n');
  process.exit(2);
}
const top = Number(values.top);
// Piped into `head`: stop quietly when the reader goes away.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;

const byId = new Map<number, ProfileNode>();
const parent = new Map<number, number>();
for (const n of prof.nodes) {
  byId.set(n.id, n);
  for (const c of n.children ?? []) parent.set(c, n.id);
}

// Self time per node, in µs.
const self = new Map<number, number>();
// The window to summarise, in the profile's own clock (µs, CLOCK_MONOTONIC).
let from = prof.startTime + Number(values.skip ?? 0) * 1e6;
let to = Infinity;
let windowNote = `first ${values.skip ?? 0} s skipped`;
if (values.skip === undefined) {
  const pid = Number(/^CPU\.\d+\.\d+\.(\d+)\./.exec(path.basename(file))?.[1]);
  try {
    const windows = JSON.parse(fs.readFileSync(path.join(path.dirname(file), 'windows.json'), 'utf8')) as Array<{
      pid: number;
      scenario: string;
      startUs: number;
      endUs: number;
    }>;
    const w = windows.find((x) => x.pid === pid);
    if (w) {
      from = w.startUs;
      to = w.endUs;
      windowNote = `measured window of scenario "${w.scenario}" only`;
    }
  } catch {
    // no windows.json: whole profile
  }
}
let t = prof.startTime;
for (let i = 0; i < prof.samples.length; i++) {
  t += prof.timeDeltas[i] ?? 0;
  if (t < from || t > to) continue;
  const id = prof.samples[i]!;
  const dt = prof.timeDeltas[i + 1] ?? 0;
  self.set(id, (self.get(id) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self.entries()]
  .filter(([id]) => ['(idle)', '(program)'].includes(byId.get(id)!.callFrame.functionName))
  .reduce((a, [, v]) => a + v, 0);
const busy = total - idle;

function area(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith('node:')) return url;
  const src = /\/(src\/[^?]*)/.exec(url);
  if (src) return src[1]!;
  const bench = /\/(bench\/[^?]*)/.exec(url);
  if (bench) return bench[1]!;
  return url.replace(/^file:\/\//, '');
}

const label = (n: ProfileNode) => {
  const f = n.callFrame;
  return `${f.functionName || '(anonymous)'} ${area(f.url, f.functionName)}:${f.lineNumber + 1}`;
};

function topOf(m: Map<string, number>, base: number, n: number): string[] {
  return [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${((v / base) * 100).toFixed(1).padStart(5)}%  ${(v / 1000).toFixed(0).padStart(7)} ms  ${k}`);
}

const selfByFn = new Map<string, number>();
const selfByArea = new Map<string, number>();
for (const [id, v] of self) {
  const n = byId.get(id)!;
  selfByFn.set(label(n), (selfByFn.get(label(n)) ?? 0) + v);
  const a = area(n.callFrame.url, n.callFrame.functionName);
  selfByArea.set(a, (selfByArea.get(a) ?? 0) + v);
}

// Inclusive time per function (counted once per sample even under recursion).
const inclusive = new Map<string, number>();
for (const [id, v] of self) {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const l = label(byId.get(cur)!);
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + v);
  }
}

process.stdout.write(
  `${file}\n${((prof.endTime - prof.startTime) / 1e6).toFixed(1)} s profiled (${windowNote}), ${(busy / 1e6).toFixed(1)} s busy (percentages are of busy time)\n`,
);
process.stdout.write(`\nSelf time by package / source file:\n${topOf(selfByArea, busy, top).join('\n')}\n`);
process.stdout.write(`\nSelf time by function:\n${topOf(selfByFn, busy, top).join('\n')}\n`);
process.stdout.write(`\nInclusive time by function:\n${topOf(inclusive, busy, top).join('\n')}\n`);

/**
 * The bucket of one sample: the first rule, in this order, that a frame of its stack matches (so
 * SQLite's native time under a route handler counts as SQLite, not as the handler).
 */
const BUCKETS: [string, (fn: string, url: string) => boolean][] = [
  ['garbage collection', (fn) => fn === '(garbage collector)'],
  ['idle', (fn) => fn === '(idle)' || fn === '(program)'],
  ['SQLite: statements and COMMITs (native, with the driver)', (fn) => /^(runStatement|flushNow|beginTransaction|undoMember)$/.test(fn)],
  ["socket writes (the kernel's loopback TCP included)", (fn) => /^(writev|writeBuffer|writeUtf8String|writeLatin1String)$/.test(fn)],
  ['request validation (Ajv)', (fn, url) => /\/validators\/|ajv/.test(url) || fn === 'validate'],
  [
    'response serialisation (fast-json-stringify, JSON)',
    (fn, url) => fn === 'serialize' || /fast-json-stringify/.test(url) || fn === 'stringify',
  ],
  [
    'authentication (token lookup and check)',
    (fn) => /^(authenticatePlatform|cachedPlatformAuth|safeEqual|hashSecret|parseBasic)$/.test(fn),
  ],
  ['logging (pino)', (_fn, url) => /pino/.test(url)],
];
/** Matched on the sample's own frame only (node:http's frames are the root of every request's stack). */
const LEAF_BUCKETS: [string, (fn: string, url: string) => boolean][] = [
  [
    'node:http, streams and sockets (JS)',
    (_fn, url) => /^node:(_http|internal\/streams|net|internal\/stream_base|events|buffer)/.test(url),
  ],
];
if (values.responses) {
  const responses = Number(values.responses);
  const buckets = new Map<string, number>();
  for (const [id, v] of self) {
    let bucket = 'the rest: routing, hooks, handlers, the unit of work, Kysely';
    const leaf = byId.get(id)!.callFrame;
    const leafBucket = LEAF_BUCKETS.find(([, match]) => match(leaf.functionName, leaf.url))?.[0];
    outer: for (const [name, match] of BUCKETS) {
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const f = byId.get(cur)!.callFrame;
        if (match(f.functionName, f.url)) {
          bucket = name;
          break outer;
        }
      }
    }
    if (bucket.startsWith('the rest') && leafBucket) bucket = leafBucket;
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + v);
  }
  process.stdout.write(`\nWhere the time goes, µs per response (${responses} responses):\n`);
  for (const [k, v] of [...buckets.entries()].sort((a, b) => b[1] - a[1]))
    process.stdout.write(`${(v / responses).toFixed(1).padStart(8)} µs  ${k}\n`);
}
