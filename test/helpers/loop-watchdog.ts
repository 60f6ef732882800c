/**
 * An event-loop watchdog for suites that run the server in-process (fuzz, workload): no request may
 * block the loop for more than 200 ms, since while it does every tenant's requests, jobs and
 * webhooks wait.
 *
 * It has to watch from another thread — a blocked loop runs no timer of its own. The main thread
 * stamps a heartbeat into shared memory every 10 ms; a worker thread checks it every 20 ms. A gap
 * counts as a block only when the main thread was busy on the CPU for most of it (read from
 * /proc/self/task/<pid>/stat), so a loop that is merely descheduled on a loaded CI machine is not
 * blamed. A block longer than `hangMs` (an endless loop) ends the process from the worker, after
 * writing what the main thread was doing to stderr: the test file fails instead of hanging CI.
 *
 * Label what runs (`note('POST /quotes …')`) so a block names the request it happened in.
 */
import { Worker } from 'node:worker_threads';

export interface LoopBlock {
  /** How long the heartbeat stopped, and how much of that the main thread spent on the CPU. */
  ms: number;
  cpuMs: number;
  /** The label noted last before the block (the request in flight). */
  during: string;
}

export interface LoopWatchdog {
  /** What is running now, for the report of a block. */
  note(label: string): void;
  /**
   * Blocks reported since the last call. The worker reports a block on its first check after the
   * loop resumed, so a caller that must see the last moment's blocks waits `waitMs` (default 50).
   */
  take(waitMs?: number): Promise<LoopBlock[]>;
  stop(): Promise<void>;
}

const LABEL_BYTES = 1024;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { heartbeat, label, thresholdMs, hangMs, pid, startMs } = workerData;
const beat = new Int32Array(heartbeat);
const labelBytes = new Uint8Array(label);
const labelLen = new Int32Array(heartbeat, 4, 1);
let ticksPerSec = 100;
function cpuMs() {
  try {
    const stat = fs.readFileSync('/proc/self/task/' + pid + '/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / ticksPerSec;
  } catch { return NaN; }
}
function currentLabel() {
  const n = Atomics.load(labelLen, 0);
  return Buffer.from(labelBytes.subarray(0, n)).toString('utf8');
}
let lastBeat = Atomics.load(beat, 0), lastFreshCpu = cpuMs(), stalled = false, reported = false, stalledLabel = '';
setInterval(() => {
  const now = Date.now() - startMs;
  const b = Atomics.load(beat, 0);
  if (b !== lastBeat) {
    if (stalled) {
      const ms = now - lastBeat;
      const used = cpuMs() - lastFreshCpu;
      // Busy on the CPU for most of the gap (or no way to tell): the loop was blocked, not idle.
      if (ms > thresholdMs && (Number.isNaN(used) || used >= ms * 0.5)) parentPort.postMessage({ ms, cpuMs: used, during: stalledLabel });
    }
    stalled = false; reported = false; lastBeat = b; lastFreshCpu = cpuMs();
    return;
  }
  const age = now - b;
  if (age > thresholdMs && !stalled) { stalled = true; stalledLabel = currentLabel(); }
  if (age > hangMs && !reported) {
    reported = true;
    const used = cpuMs() - lastFreshCpu;
    fs.writeSync(2, '\\n[loop-watchdog] the event loop has been blocked for ' + age + ' ms (' + Math.round(used) + ' ms on the CPU) during: ' + stalledLabel + '\\n[loop-watchdog] ending the process so the test fails instead of hanging\\n');
    process.kill(pid, 'SIGKILL');
  }
}, 20);
`;

/** How a suite reports the blocks it saw: one line each. */
export function describeBlocks(blocks: LoopBlock[]): string[] {
  return blocks.map((b) => `event loop blocked for ${b.ms} ms (${Math.round(b.cpuMs)} ms on the CPU) during: ${b.during}`);
}

export function startLoopWatchdog(opts: { thresholdMs?: number; hangMs?: number } = {}): LoopWatchdog {
  const heartbeat = new SharedArrayBuffer(8);
  const label = new SharedArrayBuffer(LABEL_BYTES);
  const beat = new Int32Array(heartbeat, 0, 1);
  const labelLen = new Int32Array(heartbeat, 4, 1);
  const labelBytes = new Uint8Array(label);
  const startMs = Date.now();
  const stamp = () => Atomics.store(beat, 0, Date.now() - startMs);
  stamp();
  const initial = Buffer.from('harness: start');
  labelBytes.set(initial);
  Atomics.store(labelLen, 0, initial.length);
  const timer = setInterval(stamp, 10);
  timer.unref();
  const blocks: LoopBlock[] = [];
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { heartbeat, label, thresholdMs: opts.thresholdMs ?? 200, hangMs: opts.hangMs ?? 15_000, pid: process.pid, startMs },
  });
  worker.unref();
  worker.on('message', (b: LoopBlock) => blocks.push(b));
  return {
    note(text: string) {
      const bytes = Buffer.from(text, 'utf8').subarray(0, LABEL_BYTES);
      labelBytes.set(bytes);
      Atomics.store(labelLen, 0, bytes.length);
    },
    async take(waitMs = 50) {
      if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
      return blocks.splice(0);
    },
    async stop() {
      clearInterval(timer);
      await worker.terminate();
    },
  };
}
