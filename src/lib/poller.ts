/**
 * Runs `tick` now and then again `intervalMs` after each run finishes (never two at once), until
 * stopped. The background loop of the job runner and the webhook deliverer.
 */
export class Poller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = true;

  constructor(
    private readonly tick: () => Promise<unknown>,
    private readonly intervalMs: number,
    private readonly onError: (err: unknown) => void,
  ) {}

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
        .catch(this.onError)
        .finally(() => this.schedule(this.intervalMs));
    }, ms);
    // Polling alone must not keep the process alive.
    this.timer.unref();
  }
}
