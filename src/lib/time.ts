/** Time helpers. Timestamps are stored and sent as ISO-8601 UTC strings with milliseconds. */
import type { Clock } from '../deps.ts';

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The platform's current time: the injected clock plus the platform's sandbox clock offset. */
export function platformNowMs(clock: Clock, platform: { clock_offset_ms: number }): number {
  return clock.nowMs() + Number(platform.clock_offset_ms);
}

/** Normalises an RFC 3339 timestamp from a query to the stored form, so text comparison is exact. */
export function normalizeDateTime(v: string | undefined): string | undefined {
  return v === undefined ? undefined : new Date(v).toISOString();
}
