/**
 * Progress of a long step a user waits for (issue #20): the bench data set generator's phases, a
 * slow migration run. One `Progress` per phase, fed with `update(done)` as work completes; it
 * decides what, if anything, to write:
 *
 * - on a terminal (the output is a TTY): one line redrawn in place (`\r`, cleared to its end, cut
 *   to the terminal's width) with the phase, done/total, percent, rate and ETA — or, when the total
 *   is unknown, the elapsed time — at most every TTY_REFRESH_MS;
 * - elsewhere (CI, a pipe, a file): a plain line only when PLAIN_INTERVAL_MS have passed *and* the
 *   phase has advanced PLAIN_STEP of its total since the last one (whichever is rarer), or every
 *   PLAIN_UNKNOWN_INTERVAL_MS when the total is unknown;
 * - in both, a final line with the phase's elapsed time (`finish()`).
 *
 * `ttyOnly` makes it silent off a terminal, and `showAfterMs` silent (final line included) for a
 * phase that ends sooner. It writes only to its output (stderr by default), never to stdout, and it
 * starts no timer unless asked (`refreshEvery`, for a phase that may wait long between updates).
 * Clock and output are injected for the tests.
 */

/** Where progress goes: `process.stderr` or a fake with the same shape. */
export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean | undefined;
  /** The terminal's width; an in-place line longer than this would wrap and break `\r`. */
  columns?: number | undefined;
}

export interface ProgressOptions {
  /** Default `process.stderr`. */
  output?: ProgressOutput;
  /** Draw in place (terminal) or print plain lines; default `output.isTTY`. */
  tty?: boolean;
  /** Milliseconds, monotonic; default `performance.now()`. */
  now?: () => number;
  /** Put before the in-place line and before each plain line written by default (e.g. `dataset: `). */
  prefix?: string;
  /** Writes a plain or final line (text without prefix or newline); default `output.write(prefix + text + '\n')`. */
  line?: (text: string) => void;
  /** Nothing at all off a terminal. */
  ttyOnly?: boolean;
  /** Nothing at all (final line included) unless the phase lasts at least this long. */
  showAfterMs?: number;
  /** Show the rate and ETA of a phase with a total (default true; false for a few uneven steps). */
  rate?: boolean;
}

/** Least time between two redraws of the in-place line (at most 5 a second). */
export const TTY_REFRESH_MS = 200;
/** Least time between two plain lines. */
export const PLAIN_INTERVAL_MS = 5_000;
/** Least share of the total between two plain lines. */
export const PLAIN_STEP = 0.1;
/** Least time between two plain lines of a phase without a total. */
export const PLAIN_UNKNOWN_INTERVAL_MS = 30_000;
/** No rate or ETA before a phase has run this long (its first moments say little about the rest). */
export const RATE_AFTER_MS = 2_000;

const CLEAR_LINE = '\r\x1b[K';

export function formatCount(n: number): string {
  return Math.floor(n).toLocaleString('en-US');
}

/** `4.2 s` under a minute, then `3 min 05 s`, then `1 h 02 min`. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 59.95) return `${s.toFixed(1)} s`;
  const whole = Math.round(s);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
  const min = Math.round(whole / 60);
  return `${Math.floor(min / 60)} h ${String(min % 60).padStart(2, '0')} min`;
}

export class Progress {
  private readonly out: ProgressOutput;
  private readonly tty: boolean;
  private readonly now: () => number;
  private readonly prefix: string;
  private readonly writeLine: (text: string) => void;
  private readonly silent: boolean;
  private readonly showAfterMs: number;
  private readonly withRate: boolean;
  private readonly startMs: number;
  private done = 0;
  private detail: string | undefined;
  /** When the in-place line was last drawn (or the last plain line printed), and what it said. */
  private lastMs: number;
  private lastDone = 0;
  private drawn = '';
  private ended = false;
  private timer: ReturnType<typeof setInterval> | undefined;

  /** Starts the phase `phase` of `total` items (undefined: unknown), drawing it at once on a terminal. */
  constructor(
    readonly phase: string,
    readonly total: number | undefined,
    o: ProgressOptions = {},
  ) {
    this.out = o.output ?? process.stderr;
    this.tty = o.tty ?? this.out.isTTY === true;
    this.now = o.now ?? (() => performance.now());
    this.prefix = o.prefix ?? '';
    this.writeLine = o.line ?? ((text) => this.out.write(`${this.prefix}${text}\n`));
    this.silent = o.ttyOnly === true && !this.tty;
    this.showAfterMs = o.showAfterMs ?? 0;
    this.withRate = o.rate ?? true;
    this.startMs = this.now();
    this.lastMs = this.startMs;
    if (this.tty && !this.silent && this.showAfterMs <= 0) this.draw(this.startMs);
  }

  /** `done` items finished so far (clamped to the total); `detail` (e.g. the current step's name) replaces the last one. */
  update(done: number, detail?: string): void {
    this.done = this.total === undefined ? done : Math.min(done, this.total);
    if (detail !== undefined) this.detail = detail;
    this.tick();
  }

  /** Redraws or prints if it is time to (the elapsed time moves even when `done` does not). */
  tick(): void {
    if (this.ended || this.silent) return;
    const now = this.now();
    if (now - this.startMs < this.showAfterMs) return;
    if (this.tty) {
      if (this.drawn === '' || now - this.lastMs >= TTY_REFRESH_MS) this.draw(now);
      return;
    }
    const since = now - this.lastMs;
    const due =
      this.total === undefined
        ? since >= PLAIN_UNKNOWN_INTERVAL_MS
        : since >= PLAIN_INTERVAL_MS && this.done - this.lastDone >= PLAIN_STEP * this.total && this.done < this.total;
    if (!due) return;
    this.lastMs = now;
    this.lastDone = this.done;
    this.writeLine(this.status(now, ': '));
  }

  /**
   * Calls `tick()` every `ms` until the phase ends, for a phase that may wait long between updates
   * (one slow statement); the timer does not keep the process alive. Only on a terminal.
   */
  refreshEvery(ms: number): this {
    if (this.tty && !this.silent && !this.ended && this.timer === undefined) {
      this.timer = setInterval(() => this.tick(), ms);
      this.timer.unref();
    }
    return this;
  }

  /** Ends the phase with its final line (elapsed time; count and rate when it has a total). */
  finish(): void {
    if (this.ended) return;
    const now = this.now();
    const shown = !this.silent && now - this.startMs >= this.showAfterMs;
    this.end();
    if (!shown) return;
    const elapsed = now - this.startMs;
    if (this.total === undefined) {
      this.writeLine(`${this.phase}: done in ${formatDuration(elapsed)}`);
      return;
    }
    const rate = this.withRate && elapsed > 0 ? ` (${formatCount((this.done * 1000) / elapsed)}/s)` : '';
    this.writeLine(`${this.phase}: ${formatCount(this.done)}/${formatCount(this.total)} in ${formatDuration(elapsed)}${rate}`);
  }

  /** Ends the phase without a final line (it failed): clears the in-place line so an error message starts clean. */
  abandon(): void {
    if (!this.ended) this.end();
  }

  private end(): void {
    this.ended = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    if (this.drawn !== '') this.out.write(CLEAR_LINE);
    this.drawn = '';
  }

  private draw(now: number): void {
    let text = `${this.prefix}${this.status(now, ' ')}`;
    const width = this.out.columns;
    if (width !== undefined && width > 1 && text.length > width - 1) text = text.slice(0, width - 1);
    this.lastMs = now;
    if (text === this.drawn) return;
    this.drawn = text;
    this.out.write(`\r${text}\x1b[K`);
  }

  /** `phase<sep>done/total (pct%), rate/s, ETA eta` or `phase<sep>elapsed`, then `, detail`. */
  private status(now: number, sep: string): string {
    const elapsed = now - this.startMs;
    const detail = this.detail ? `, ${this.detail}` : '';
    if (this.total === undefined) return `${this.phase}${sep}${formatDuration(elapsed)}${detail}`;
    const pct = this.total === 0 ? 100 : Math.floor((this.done / this.total) * 100);
    let s = `${this.phase}${sep}${formatCount(this.done)}/${formatCount(this.total)} (${pct}%)`;
    if (this.withRate) {
      const rate = elapsed > 0 ? (this.done * 1000) / elapsed : 0;
      s +=
        elapsed >= RATE_AFTER_MS && rate > 0
          ? `, ${formatCount(rate)}/s, ETA ${formatDuration(((this.total - this.done) / rate) * 1000)}`
          : ', ETA …';
    }
    return `${s}${detail}`;
  }
}
