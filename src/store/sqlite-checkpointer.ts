/**
 * Checkpoints the SQLite WAL from a worker thread.
 *
 * In WAL mode every commit appends pages to the WAL, and a checkpoint copies them back into the
 * database file (and syncs both). By default the committing connection does that itself, on the
 * main thread, every `wal_autocheckpoint` pages: under sustained writes that was most of the
 * commit cost, and it stalled every request for ~0.1 s each time. Here a second connection in a
 * worker thread runs PASSIVE checkpoints (which never block the writer) several times a second, so
 * the main thread only appends.
 *
 * The WAL file is rewound (written again from its start) only by a writer that begins while every
 * frame has been copied back, which under constant writes never happens by itself. So once the WAL
 * holds REWIND_PAGES pages and the worker has caught up, it asks the main thread for a moment:
 * the main thread takes the connection (requests queue for it; the event loop keeps running),
 * commits what is open, and lets the worker copy the last frames; the next transaction then starts
 * the WAL over. Once writes stop for a while the worker truncates the WAL file, in such a moment
 * too: a checkpoint that truncates holds the writer's lock, and a request arriving meanwhile would
 * otherwise wait for it inside SQLite's busy handler, blocking the main thread's event loop for as
 * long as the truncation takes. Before asking, the worker syncs the
 * WAL and the database file itself, holding no lock, so the moment lasts milliseconds rather than
 * the sync of everything written since the last one.
 *
 * The main connection keeps a large `wal_autocheckpoint` as a safety net, and goes back to the usual
 * threshold if the worker stops. Checkpointing is SQLite's own crash-safe mechanism whichever
 * connection runs it: durability and what readers see are unchanged.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** WAL pages (~800 MiB) after which the main connection checkpoints itself (the worker keeps well below). */
const SAFETY_AUTOCHECKPOINT_PAGES = 200_000;
/** The main connection's own threshold when there is no worker (SQLite's default is 1,000). */
export const FALLBACK_AUTOCHECKPOINT_PAGES = 10_000;
/** Pause between passes while the WAL keeps growing, and while it is idle. */
const BUSY_INTERVAL_MS = 50;
const IDLE_INTERVAL_MS = 250;
/**
 * WAL size (pages of 4 KiB: 256 MiB) at which the worker asks to rewind it. Each rewind holds
 * writes back for the two syncs of a checkpoint (10–50 ms on a virtual disk) and so delays every
 * request in flight: it must stay rare for the latency tail. Under full load the WAL grows
 * ~20 MiB/s, so this is one pause every ~13 s; the file then stays that size (it is reused) until
 * writes stop and the worker truncates it.
 */
const REWIND_PAGES = 65_536;
/** Idle passes (nothing written meanwhile) after which the worker truncates the WAL file. */
const IDLE_PASSES_BEFORE_TRUNCATE = 8;
/** How long the main thread holds writes back for a rewind at most. */
const REWIND_TIMEOUT_MS = 250;

// Plain CommonJS evaluated in the worker: no TypeScript loader is needed there.
const WORKER_SOURCE = `
const fs = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqliteModule);
const db = new Database(workerData.file);
// No busy timeout: a checkpoint that cannot get its locks at once gives up and tries again later,
// rather than hold off the main thread's next write while it waits.
db.pragma('busy_timeout = 0');
// As the main connection: the WAL is synced before a checkpoint and the database file after it.
db.pragma('synchronous = NORMAL');
let timer;
let closed = false;
let waitingForMain = false;
let lastLog = -1;
function report(err) {
  parentPort.postMessage({ type: 'error', message: String((err && err.message) || err) });
}
function checkpoint(mode) {
  try {
    return db.pragma('wal_checkpoint(' + mode + ')')[0];
  } catch (err) {
    report(err);
    return undefined;
  }
}
// Flushes what the writer appended to the WAL and what passive checkpoints copied into the database
// file, holding no lock: the checkpoint the main thread then waits for finds little left to sync.
function presync() {
  for (const f of [workerData.file + '-wal', workerData.file]) {
    let fd;
    try {
      fd = fs.openSync(f, 'r');
      fs.fdatasyncSync(fd);
    } catch (err) {
      if (!err || err.code !== 'ENOENT') report(err);
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }
}
// Asks the main thread to hold its writes back (it answers 'go'), for a checkpoint that needs the
// writer's lock: done on the worker while the main thread waits, instead of the main thread
// blocking its event loop in SQLite's busy handler.
function askMain(mode) {
  presync();
  waitingForMain = true;
  parentPort.postMessage({ type: 'hold', mode });
}
let idlePasses = 0;
function pass() {
  if (closed || waitingForMain) return;
  const r = checkpoint('PASSIVE');
  // log: frames in the WAL; it changes whenever the writer appended (or rewound it).
  const busy = !r || r.log !== lastLog;
  const delay = busy ? workerData.busyMs : workerData.idleMs;
  lastLog = r ? r.log : -1;
  idlePasses = busy ? 0 : idlePasses + 1;
  // Quiet for a while: give the WAL file's space back.
  if (r && r.log > 0 && idlePasses === workerData.idlePassesBeforeTruncate) return askMain('TRUNCATE');
  if (r && r.busy === 0 && r.log >= workerData.rewindPages && r.checkpointed === r.log) return askMain('PASSIVE');
  timer = setTimeout(pass, delay);
}
parentPort.on('message', (m) => {
  if (m && m.type === 'go') {
    // The main thread holds its writes back: copy the last frames (and, when idle, truncate the
    // file); the next writer starts the WAL over.
    const r = checkpoint(m.mode);
    parentPort.postMessage({ type: 'done', result: r });
    waitingForMain = false;
    lastLog = -1;
    timer = setTimeout(pass, workerData.busyMs);
  } else if (m === 'close') {
    closed = true;
    clearTimeout(timer);
    try { db.close(); } catch {}
    parentPort.close();
  }
});
pass();
`;

export interface Checkpointer {
  /** Stops the worker and closes its connection. */
  close(): Promise<void>;
}

/**
 * Starts the worker for the database in `file`. `exclusive` runs a function while no transaction
 * can start or is open on the main connection (the group-commit driver's connection lock).
 */
export function startCheckpointer(
  database: SQLite.Database,
  file: string,
  exclusive: (fn: () => Promise<void>) => Promise<void>,
  onError: (message: string) => void = () => {},
): Checkpointer {
  const sqliteModule = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      file,
      sqliteModule,
      busyMs: BUSY_INTERVAL_MS,
      idleMs: IDLE_INTERVAL_MS,
      rewindPages: REWIND_PAGES,
      idlePassesBeforeTruncate: IDLE_PASSES_BEFORE_TRUNCATE,
    },
    // It only runs pragmas.
    resourceLimits: { maxOldGenerationSizeMb: 32 },
  });
  worker.unref();
  database.pragma(`wal_autocheckpoint = ${SAFETY_AUTOCHECKPOINT_PAGES}`);
  let closing = false;
  let done: (() => void) | undefined;
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      done?.();
      // Without the worker the main connection checkpoints as usual again.
      if (!closing && database.open) database.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
      resolve();
    });
  });
  worker.on('message', (m: { type: string; message?: string; mode?: string }) => {
    if (m.type === 'error') onError(m.message ?? 'checkpoint failed');
    else if (m.type === 'done') done?.();
    else if (m.type === 'hold' && !closing) {
      void exclusive(async () => {
        if (closing) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, REWIND_TIMEOUT_MS);
          done = () => {
            clearTimeout(timer);
            done = undefined;
            resolve();
          };
          worker.postMessage({ type: 'go', mode: m.mode });
        });
      }).catch((err: unknown) => onError(err instanceof Error ? err.message : String(err)));
    }
  });
  worker.on('error', (err) => onError(err.message));
  return {
    async close() {
      closing = true;
      // Waiting for its exit must keep the process alive (the worker is unref'd while it runs).
      worker.ref();
      worker.postMessage('close');
      await exited;
    },
  };
}
