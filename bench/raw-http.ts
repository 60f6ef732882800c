/**
 * A lean HTTP/1.1 client for the open-loop load generator (paced.ts): keep-alive sockets to one
 * origin, at most one request on each, the request written with one `socket.write`, and of the
 * response only what the bench needs — its status and where it ends (Content-Length, chunked, or
 * the connection closing). It replaces `node:http`'s client there because on a 2-core machine the
 * load generator shares the cores with the server and the database it measures: `node:http` spent
 * ~160 µs of CPU per request (an IncomingMessage stream, header objects, an agent's bookkeeping),
 * this spends a fraction of that, so less of the measured latency is the instrument's own.
 *
 * Not a general client: no redirects, no `Expect: 100-continue`, no trailers kept, no request
 * streaming, and responses to HEAD requests are not supported (the bench sends none).
 */
import net from 'node:net';
import type { HttpRequest } from './scenarios/types.ts';

export interface RawResponse {
  status: number;
}

interface Pending {
  head: string;
  body: string | undefined;
  resolve: (r: RawResponse) => void;
  reject: (e: Error) => void;
  timer?: NodeJS.Timeout;
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');

/** Where a response stands in its parse. */
interface Parse {
  status: number;
  /** Body bytes still to come (Content-Length), or -1: chunked, or -2: until the connection closes. */
  remaining: number;
  /** Chunked only: inside a chunk's data (bytes of it still to come, plus its CRLF), or -1 at a size line. */
  chunkLeft: number;
  /** Chunked only: past the last (zero) chunk, reading trailers until an empty line. */
  trailers: boolean;
  close: boolean;
}

class Connection {
  private buf: Buffer = Buffer.alloc(0);
  private parse: Parse | undefined;
  current: Pending | undefined;
  dead = false;
  /** The server closed the connection (it may still end a response that runs until then). */
  private closed = false;

  constructor(
    readonly socket: net.Socket,
    private readonly onFree: (c: Connection) => void,
    private readonly onDead: (c: Connection, err: Error) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => {
      this.closed = true;
      // A response that runs until the connection closes ends here.
      if (this.parse?.remaining === -2) this.complete();
      this.fail(new Error('connection closed'));
    });
  }

  send(p: Pending): void {
    this.current = p;
    this.parse = undefined;
    this.socket.write(p.body === undefined ? p.head : p.head + p.body);
  }

  fail(err: Error): void {
    if (this.dead) return;
    this.dead = true;
    this.socket.destroy();
    const p = this.current;
    this.current = undefined;
    if (p) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.onDead(this, err);
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    while (this.buf.length > 0 && !this.dead) {
      if (!this.current) {
        this.fail(new Error('data from the server with no request outstanding'));
        return;
      }
      if (!this.parse) {
        const end = this.buf.indexOf(CRLF_CRLF);
        if (end < 0) return;
        this.parse = parseHead(this.buf.toString('latin1', 0, end));
        this.buf = this.buf.subarray(end + 4);
        if (!this.parse) {
          this.fail(new Error('malformed response head'));
          return;
        }
        if (this.parse.remaining === 0) {
          this.complete();
          continue;
        }
      }
      if (!this.body()) return;
    }
  }

  /** Consumes body bytes; true when the response completed and more buffered bytes may follow. */
  private body(): boolean {
    const p = this.parse!;
    if (p.remaining === -2) {
      this.buf = Buffer.alloc(0);
      return false;
    }
    if (p.remaining > 0) {
      const take = Math.min(p.remaining, this.buf.length);
      p.remaining -= take;
      this.buf = this.buf.subarray(take);
      if (p.remaining > 0) return false;
      this.complete();
      return true;
    }
    // Chunked.
    for (;;) {
      if (p.chunkLeft > 0) {
        const take = Math.min(p.chunkLeft, this.buf.length);
        p.chunkLeft -= take;
        this.buf = this.buf.subarray(take);
        if (p.chunkLeft > 0) return false;
        p.chunkLeft = -1;
      }
      const eol = this.buf.indexOf('\r\n');
      if (eol < 0) return false;
      const line = this.buf.toString('latin1', 0, eol);
      this.buf = this.buf.subarray(eol + 2);
      if (p.trailers) {
        if (line === '') {
          this.complete();
          return true;
        }
        continue;
      }
      const size = Number.parseInt(line.split(';')[0]!.trim(), 16);
      if (!Number.isFinite(size) || size < 0) {
        this.fail(new Error(`malformed chunk size "${line}"`));
        return false;
      }
      if (size === 0) p.trailers = true;
      else p.chunkLeft = size + 2;
    }
  }

  private complete(): void {
    const p = this.current;
    const parse = this.parse;
    this.current = undefined;
    this.parse = undefined;
    if (!p || !parse) return;
    clearTimeout(p.timer);
    p.resolve({ status: parse.status });
    // A connection the server closes (or has closed) takes no next request.
    if (parse.close || this.closed) this.fail(new Error('connection closed by the server'));
    else this.onFree(this);
  }
}

function parseHead(head: string): Parse | undefined {
  const lines = head.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
  if (!m) return undefined;
  const status = Number(m[1]);
  let remaining = -2;
  let close = lines[0]!.startsWith('HTTP/1.0');
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line
      .slice(colon + 1)
      .trim()
      .toLowerCase();
    if (name === 'content-length') remaining = Number(value);
    else if (name === 'transfer-encoding' && value.includes('chunked')) remaining = -1;
    else if (name === 'connection') close = value.includes('close') ? true : value.includes('keep-alive') ? false : close;
  }
  // 1xx, 204 and 304 have no body.
  if (status < 200 || status === 204 || status === 304) remaining = 0;
  if (!Number.isFinite(remaining) || remaining < -2) return undefined;
  return { status, remaining, chunkLeft: -1, trailers: false, close };
}

/** Requests to one origin over at most `maxSockets` keep-alive connections; the rest wait in order. */
export class RawHttpPool {
  private readonly idle: Connection[] = [];
  private readonly all = new Set<Connection>();
  private readonly queue: Pending[] = [];
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;
  private closed = false;

  constructor(
    origin: string,
    private readonly maxSockets: number,
    private readonly timeoutMs: number,
  ) {
    const url = new URL(origin);
    if (url.protocol !== 'http:') throw new Error(`raw-http: only http: origins (got ${origin})`);
    this.host = url.hostname;
    this.port = Number(url.port || 80);
    this.hostHeader = url.host;
  }

  request(r: HttpRequest): Promise<RawResponse> {
    if (this.closed) return Promise.reject(new Error('pool closed'));
    let head = `${r.method} ${r.path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\n`;
    for (const [k, v] of Object.entries(r.headers ?? {})) head += `${k}: ${v}\r\n`;
    if (r.body !== undefined) head += `content-length: ${Buffer.byteLength(r.body)}\r\n`;
    head += '\r\n';
    return new Promise<RawResponse>((resolve, reject) => {
      const p: Pending = { head, body: r.body, resolve, reject };
      p.timer = setTimeout(() => {
        const i = this.queue.indexOf(p);
        if (i >= 0) {
          this.queue.splice(i, 1);
          reject(new TimeoutError());
          return;
        }
        for (const c of this.all) if (c.current === p) c.fail(new TimeoutError());
      }, this.timeoutMs);
      this.queue.push(p);
      this.dispatch();
    });
  }

  /** Closes every connection; requests still waiting or outstanding fail. */
  close(): void {
    this.closed = true;
    for (const p of this.queue.splice(0)) {
      clearTimeout(p.timer);
      p.reject(new Error('pool closed'));
    }
    for (const c of [...this.all]) c.fail(new Error('pool closed'));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const c = this.idle.pop() ?? (this.all.size < this.maxSockets ? this.connect() : undefined);
      if (!c) return;
      c.send(this.queue.shift()!);
    }
  }

  private connect(): Connection {
    const socket = net.connect({ host: this.host, port: this.port });
    const c = new Connection(
      socket,
      (free) => {
        this.idle.push(free);
        this.dispatch();
      },
      (dead) => {
        this.all.delete(dead);
        const i = this.idle.indexOf(dead);
        if (i >= 0) this.idle.splice(i, 1);
        if (!this.closed) this.dispatch();
      },
    );
    this.all.add(c);
    return c;
  }
}

export class TimeoutError extends Error {
  constructor() {
    super('timeout');
  }
}
