/**
 * Runs `tick` now and then again `intervalMs` after each run finishes (never two at once), until
 * stopped. The background loop of the job runner and the webhook deliverer.
 */
export class Poller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;

  /** The wait before the next tick: `intervalMs`, or longer after ticks that found nothing to do. */
  private waitMs: number;

  /**
   * `idleMaxMs`: when given, a tick that answers 0 (nothing done) doubles the wait before the next,
   * up to this; a tick that does something brings it back to `intervalMs`. An idle process then
   * costs a few looks a second, and one under load still looks every `intervalMs`.
   */
  constructor(
    private readonly tick: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
    private readonly idleMaxMs?: number,
  ) {
    this.waitMs = intervalMs;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops polling and waits for a run in progress to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.tick()
        .then((done) => {
          this.waitMs = this.idleMaxMs !== undefined && done === 0 ? Math.min(this.waitMs * 2, this.idleMaxMs) : this.intervalMs;
        })
        .catch(this.onError)
        .finally(() => this.schedule(this.waitMs));
    }, ms);
    // Polling alone must not keep the process alive.
    this.timer.unref();
  }
}
