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
  if (v === undefined) return undefined;
  const ms = Date.parse(v);
  if (!Number.isNaN(ms)) return new Date(ms).toISOString();
  // RFC 3339 (and so the `date-time` format) allows a leap second, :60, which Date cannot hold:
  // it is the instant one second after :59, as POSIX time counts it.
  const leap = /^(.*T\d\d:\d\d):60(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.exec(v);
  const then = leap ? Date.parse(`${leap[1]}:59${leap[2] ?? ''}${leap[3]}`) : Number.NaN;
  if (Number.isNaN(then)) throw new RangeError(`not a date-time: ${v}`);
  return new Date(then + 1000).toISOString();
}
