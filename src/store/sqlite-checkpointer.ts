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
 * the WAL over. That pause lasts the checkpoint's two syncs (10–50 ms on a virtual disk), so it
 * is kept rare (see REWIND_PAGES). Once writes stop for a while the worker truncates the WAL file.
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
function checkpoint() {
  try {
    return db.pragma('wal_checkpoint(PASSIVE)')[0];
  } catch (err) {
    parentPort.postMessage({ type: 'error', message: String((err && err.message) || err) });
    return undefined;
  }
}
let idlePasses = 0;
function pass() {
  if (closed || waitingForMain) return;
  const r = checkpoint();
  // log: frames in the WAL; it changes whenever the writer appended (or rewound it).
  const busy = !r || r.log !== lastLog;
  const delay = busy ? workerData.busyMs : workerData.idleMs;
  lastLog = r ? r.log : -1;
  idlePasses = busy ? 0 : idlePasses + 1;
  // Quiet for a while: give the WAL file's space back (a writer arriving meanwhile waits briefly).
  if (r && r.log > 0 && idlePasses === workerData.idlePassesBeforeTruncate) {
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } catch (err) {
      parentPort.postMessage({ type: 'error', message: String((err && err.message) || err) });
    }
  }
  if (r && r.busy === 0 && r.log >= workerData.rewindPages && r.checkpointed === r.log) {
    waitingForMain = true;
    parentPort.postMessage({ type: 'rewind' });
    return;
  }
  timer = setTimeout(pass, delay);
}
parentPort.on('message', (m) => {
  if (m === 'go') {
    // The main thread holds its writes back: copy the last frames, and the next writer rewinds.
    const r = checkpoint();
    parentPort.postMessage({ type: 'rewound', result: r });
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
  let rewound: (() => void) | undefined;
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => {
      rewound?.();
      // Without the worker the main connection checkpoints as usual again.
      if (!closing && database.open) database.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT_PAGES}`);
      resolve();
    });
  });
  worker.on('message', (m: { type: string; message?: string }) => {
    if (m.type === 'error') onError(m.message ?? 'checkpoint failed');
    else if (m.type === 'rewound') rewound?.();
    else if (m.type === 'rewind' && !closing) {
      void exclusive(async () => {
        if (closing) return;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, REWIND_TIMEOUT_MS);
          rewound = () => {
            clearTimeout(timer);
            rewound = undefined;
            resolve();
          };
          worker.postMessage('go');
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
