/**
 * Delivery capacity and its fair shares (one `Slots` per deliverer, shared by all its drains), and
 * the attempt chains one drain has running (`InFlight`).
 *
 * Fairness: a platform holds at most `perPlatform` attempts in flight (20: a quarter of the total,
 * 80; one platform's claim round is as large as before), so it takes four platforms whose receivers
 * hang (each attempt held up to the 10 s timeout) to fill the process's capacity; and a platform
 * with nothing in flight always gets one slot, even when the total is taken, up to `ceiling`
 * attempts in all. So a healthy platform's event is claimed at the next claim round whatever other
 * platforms' receivers do.
 */

export interface SlotLimits {
  /** Attempts in flight at once over all platforms (above it only platforms with none get one). */
  total: number;
  /** Attempts of one platform in flight at once. */
  perPlatform: number;
  /** The hard limit over all platforms, the one-slot rule included. */
  ceiling: number;
}

export const DEFAULT_SLOTS: SlotLimits = { total: 80, perPlatform: 20, ceiling: 256 };

export class Slots {
  private inUse = 0;
  private readonly perPlatform = new Map<string, number>();

  constructor(private readonly limits: SlotLimits = DEFAULT_SLOTS) {}

  get size(): number {
    return this.inUse;
  }

  of(platformId: string): number {
    return this.perPlatform.get(platformId) ?? 0;
  }

  /** How many more attempts the platform may start now. */
  room(platformId: string): number {
    const mine = this.of(platformId);
    const room = Math.min(this.limits.perPlatform - mine, this.limits.total - this.inUse);
    if (room > 0) return room;
    return mine === 0 && this.inUse < this.limits.ceiling ? 1 : 0;
  }

  /** Takes `n` slots of the platform (a claim reserves its room first: drains claim concurrently). */
  take(platformId: string, n = 1): void {
    this.inUse += n;
    this.perPlatform.set(platformId, this.of(platformId) + n);
  }

  release(platformId: string, n = 1): void {
    this.inUse -= n;
    const left = this.of(platformId) - n;
    if (left > 0) this.perPlatform.set(platformId, left);
    else this.perPlatform.delete(platformId);
  }
}

/**
 * The attempt chains one drain has running; each holds a slot of its platform until it ends. The
 * first failure (recording an outcome failed) is thrown from the next wait, once the chains still
 * running have finished, as a drain that awaited its whole batch would have thrown it.
 */
export class InFlight {
  private readonly running = new Set<Promise<void>>();
  private failure: { err: unknown } | undefined;
  /** Attempts made by the chains that have finished. */
  attempts = 0;

  constructor(private readonly slots: Slots) {}

  get size(): number {
    return this.running.size;
  }

  /** Runs `chain` in a slot of the platform; returns a promise of its end (never rejected). */
  add(platformId: string, chain: () => Promise<number>): Promise<void> {
    this.slots.take(platformId);
    const p: Promise<void> = chain().then(
      (n) => {
        this.attempts += n;
      },
      (err: unknown) => {
        this.failure ??= { err };
      },
    );
    const done = p.finally(() => {
      this.running.delete(done);
      this.slots.release(platformId);
    });
    this.running.add(done);
    return done;
  }

  /**
   * Waits until every one of `chains` has ended (`any`: one of this drain's chains has), or `ms`
   * have passed, whichever is first; then throws a failure, if any.
   */
  async settledOrAfter(chains: Promise<void>[] | 'any', ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const ended = chains === 'any' ? Promise.race(this.running) : Promise.all(chains);
    try {
      await Promise.race([ended, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    } finally {
      clearTimeout(timer);
    }
    await this.throwIfFailed();
  }

  /** Waits for every chain; then throws the first failure, if any. */
  async all(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
    await this.throwIfFailed();
  }

  private async throwIfFailed(): Promise<void> {
    if (!this.failure) return;
    const { err } = this.failure;
    this.failure = undefined;
    while (this.running.size > 0) await Promise.all(this.running);
    throw err;
  }
}
