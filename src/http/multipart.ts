/** Helpers for the routes that take multipart/form-data (documents, the bulk customer import). */
import type { IncomingMessage } from 'node:http';

/** Bytes discarded after a form error before the connection is dropped instead. */
const MAX_DISCARD = 64 * 1024 * 1024;

/**
 * After a form error the parser may stop reading (it unpipes on a files/fields limit), which would
 * leave the client's upload stalled and the connection hanging. Read and drop the rest instead, so
 * the error response arrives and the connection stays usable; past MAX_DISCARD, close it.
 */
export function discardRest(raw: IncomingMessage): void {
  if (raw.complete || raw.destroyed) return;
  raw.unpipe();
  let dropped = 0;
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > MAX_DISCARD) raw.destroy();
  });
  raw.resume();
}
