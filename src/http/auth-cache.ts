/**
 * A cache of verified Basic credentials for the embedded (SQLite) store, which is single-process
 * by design: every write to a token or platform row goes through this process, and bumps the
 * epoch, which invalidates every cached entry at once. A lookup that started before a bump is not
 * stored. On PostgreSQL, where other processes write too, nothing is cached.
 */
import type { ApiTokenRow, PlatformRow } from '../store/schema.ts';

let epoch = 0;

/** Call after any change to api_tokens or platforms rows. */
export function bumpAuthEpoch(): void {
  epoch += 1;
}

export interface Verified {
  token: ApiTokenRow;
  platform: PlatformRow;
  /** The token's permissions, parsed once. */
  permissions: string[];
}

/** Entries kept; an Authorization header per active token is the expected working set. */
const MAX_ENTRIES = 1000;

export class AuthCache {
  private readonly entries = new Map<string, { epoch: number; value: Verified }>();

  /** The verified identity for this exact Authorization header, if cached and still current. */
  get(header: string): Verified | undefined {
    const e = this.entries.get(header);
    return e && e.epoch === epoch ? e.value : undefined;
  }

  /** Current epoch, to pass back to `set` after the lookup it guards. */
  epoch(): number {
    return epoch;
  }

  set(header: string, seenEpoch: number, value: Verified): void {
    if (seenEpoch !== epoch) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(header, { epoch: seenEpoch, value });
  }
}
