/**
 * A pipeline's frontend messages (Parse, Bind, Describe, Execute — PostgreSQL's extended protocol)
 * encoded into one buffer, for store/pg-pipeline.ts.
 *
 * pg's serializer builds every message as a buffer of its own, growing a 256-byte buffer by copies
 * until a Bind's parameters fit, and encodes each parameter with two calls into Node's C++ (its
 * UTF-8 length, then the write); the socket then takes a pipeline of a commit group as hundreds of
 * chunks. A payment's parameters are mostly short ASCII ids, amounts and times: pg's Bind encoding
 * was 17 % of Corridor's profile on the payment bench (docs/performance.md). Here every message goes
 * into one scratch buffer, short ASCII strings are copied byte by byte in JavaScript, and the
 * socket gets one chunk. The bytes are the same as pg's serializer writes (test/store/pg-wire.unit.test.ts).
 */

/** A parameter as pg's `prepareValue` leaves it: text, bytes (sent in binary format) or NULL. */
export type WireValue = string | Buffer | null;

export interface WireStatement {
  /** The prepared statement's name ('' for the unnamed one). */
  name: string;
  /** The SQL text: sent only with `parse`. */
  sql: string;
  /** Whether to send its Parse (not yet prepared on this connection). */
  parse: boolean;
  /** Whether to send a Describe of the portal (its columns are not known yet). */
  describe: boolean;
  values: readonly WireValue[];
}

/** Strings shorter than this are copied in JavaScript when ASCII; longer ones by Node's encoder. */
const SHORT = 48;
/** The scratch buffer is kept between pipelines up to this size (a larger one is dropped after use). */
const KEEP_BYTES = 1 << 20;

let scratch = Buffer.allocUnsafe(64 * 1024);
let off = 0;

function ensure(n: number): void {
  if (off + n <= scratch.length) return;
  const grown = Buffer.allocUnsafe(Math.max(scratch.length * 2, off + n));
  scratch.copy(grown, 0, 0, off);
  scratch = grown;
}

function int32(v: number, at: number): void {
  scratch[at] = (v >>> 24) & 0xff;
  scratch[at + 1] = (v >>> 16) & 0xff;
  scratch[at + 2] = (v >>> 8) & 0xff;
  scratch[at + 3] = v & 0xff;
}

function int16(v: number): void {
  scratch[off++] = (v >>> 8) & 0xff;
  scratch[off++] = v & 0xff;
}

/** Writes `s` as UTF-8 at `off` (room for 3 bytes per UTF-16 unit must be ensured) and returns its byte length. */
function utf8(s: string): number {
  const n = s.length;
  if (n < SHORT) {
    let o = off;
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) break;
      scratch[o++] = c;
    }
    if (i < n) o += scratch.write(s.slice(i), o, 'utf8');
    return o - off;
  }
  return scratch.write(s, off, 'utf8');
}

function cstring(s: string): void {
  ensure(s.length * 3 + 1);
  off += utf8(s);
  scratch[off++] = 0;
}

/** Starts a message of type `code`; returns where its length goes (filled by `end`). */
function begin(code: number): number {
  ensure(5);
  scratch[off] = code;
  const at = off + 1;
  off += 5;
  return at;
}

function end(lengthAt: number): void {
  int32(off - lengthAt, lengthAt);
}

const PARSE = 0x50; // 'P'
const BIND = 0x42; // 'B'
const DESCRIBE = 0x44; // 'D'
const EXECUTE = 0x45; // 'E'

function bind(name: string, values: readonly WireValue[]): void {
  const at = begin(BIND);
  ensure(1);
  scratch[off++] = 0; // the unnamed portal
  cstring(name);
  const n = values.length;
  ensure(4 + n * 2);
  int16(n);
  const formatsAt = off;
  off += n * 2;
  int16(n);
  for (let i = 0; i < n; i++) {
    const v = values[i];
    const f = formatsAt + i * 2;
    scratch[f] = 0;
    if (v === null || v === undefined) {
      scratch[f + 1] = 0;
      ensure(4);
      int32(-1, off);
      off += 4;
    } else if (typeof v === 'string') {
      scratch[f + 1] = 0;
      ensure(4 + v.length * 3);
      const lengthAt = off;
      off += 4;
      const len = utf8(v);
      int32(len, lengthAt);
      off += len;
    } else {
      scratch[f + 1] = 1;
      ensure(4 + v.length);
      int32(v.length, off);
      off += 4;
      v.copy(scratch, off);
      off += v.length;
    }
  }
  // Every result column in text format.
  ensure(4);
  int16(1);
  int16(0);
  end(at);
}

/** The messages of `statements`, in order, as one buffer (no Sync: the caller sends it). */
export function encodePipeline(statements: readonly WireStatement[]): Buffer {
  off = 0;
  for (const st of statements) {
    if (st.parse) {
      const at = begin(PARSE);
      cstring(st.name);
      cstring(st.sql);
      ensure(2);
      int16(0); // no parameter types: the server infers them
      end(at);
    }
    bind(st.name, st.values);
    if (st.describe) {
      const at = begin(DESCRIBE);
      ensure(2);
      scratch[off++] = 0x50; // 'P': the portal
      scratch[off++] = 0;
      end(at);
    }
    const at = begin(EXECUTE);
    ensure(5);
    scratch[off++] = 0; // the unnamed portal
    int32(0, off); // every row
    off += 4;
    end(at);
  }
  // A copy the socket may keep while the scratch buffer is reused by the next pipeline.
  const out = Buffer.allocUnsafe(off);
  scratch.copy(out, 0, 0, off);
  if (scratch.length > KEEP_BYTES) scratch = Buffer.allocUnsafe(64 * 1024);
  return out;
}
