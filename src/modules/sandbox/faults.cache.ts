/**
 * The fault rules of every sandbox platform, held in memory per store handle so the API's hot path
 * pays no query: a request of a platform without rules costs a Map lookup. The snapshot is the
 * whole (small) table, reloaded when it is older than RELOAD_MS — so rules written by another
 * process on the same PostgreSQL database apply within about a second — and dropped at once when
 * this process changes rules (POST/DELETE /sandbox/faults, a sandbox reset).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../store/schema.ts';
import { loadSandboxFaults } from './faults.repo.ts';
import { compileRules, type CompiledFaults, type FaultRule } from './faults.rules.ts';

/** How old a snapshot may get before the next request reloads it (one small query per second at most). */
export const RELOAD_MS = 1_000;

export type FaultSnapshot = ReadonlyMap<string, CompiledFaults>;

export class FaultCache {
  private snapshot: FaultSnapshot = new Map();
  /** performance.now() of the load the snapshot came from; -Infinity when it must be reloaded. */
  private loadedAt = Number.NEGATIVE_INFINITY;
  /** Bumped by `invalidate`: a load that started before a bump does not count as fresh. */
  private generation = 0;
  private loading: Promise<void> | undefined;

  constructor(private readonly db: Kysely<Database>) {}

  /** The snapshot if it is fresh (the synchronous fast path), else undefined. */
  fresh(): FaultSnapshot | undefined {
    return performance.now() - this.loadedAt < RELOAD_MS ? this.snapshot : undefined;
  }

  /** A fresh snapshot, loading one if needed (concurrent callers share the load). */
  async current(): Promise<FaultSnapshot> {
    // A load already in flight may have started before an invalidation: then it is not fresh and
    // the next round starts a new one. Bounded, in case rules change on every round.
    for (let i = 0; i < 3; i++) {
      const snap = this.fresh();
      if (snap) return snap;
      this.loading ??= this.load().finally(() => {
        this.loading = undefined;
      });
      await this.loading;
    }
    return this.snapshot;
  }

  /** Forget the snapshot: the next request reloads it (call after this process changed rules). */
  invalidate(): void {
    this.generation += 1;
    this.loadedAt = Number.NEGATIVE_INFINITY;
  }

  private async load(): Promise<void> {
    const generation = this.generation;
    const started = performance.now();
    const next = new Map<string, CompiledFaults>();
    for (const row of await loadSandboxFaults(this.db)) {
      next.set(row.platform_id, compileRules(JSON.parse(row.rules) as FaultRule[]));
    }
    this.snapshot = next;
    if (generation === this.generation) this.loadedAt = started;
  }
}

/** One cache per store handle: every app built on one store (tests build several) shares it. */
const caches = new WeakMap<Kysely<Database>, FaultCache>();

export function faultCache(db: Kysely<Database>): FaultCache {
  let c = caches.get(db);
  if (!c) {
    c = new FaultCache(db);
    caches.set(db, c);
  }
  return c;
}
