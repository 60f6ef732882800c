/**
 * The open-loop load generator's HTTP client (bench/raw-http.ts) against real servers on loopback:
 * node:http for the ordinary shapes (Content-Length, chunked, 204, Connection: close), and a raw
 * TCP server for what node:http never sends on its own (responses cut into one-byte writes, two
 * responses in one write, trailers, a connection closed mid-response).
 */
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RawHttpPool, TimeoutError } from '../../bench/raw-http.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  // Last opened, first closed: pools before the servers they hold connections to.
  for (const c of closers.splice(0).reverse()) await c();
});

async function listen(server: http.Server | net.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        if (server instanceof http.Server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as net.AddressInfo;
  return `http://127.0.0.1:${port}`;
}

/** A node:http server that counts the connections it accepted and echoes what it received. */
async function httpServer(handler: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void) {
  const seen = { connections: 0, open: 0, mostOpen: 0 };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => handler(req, body, res));
  });
  server.on('connection', (s: net.Socket) => {
    seen.connections++;
    seen.open++;
    seen.mostOpen = Math.max(seen.mostOpen, seen.open);
    s.on('close', () => seen.open--);
  });
  return { origin: await listen(server), seen };
}

function pool(origin: string, maxSockets = 4, timeoutMs = 5_000): RawHttpPool {
  const p = new RawHttpPool(origin, maxSockets, timeoutMs);
  closers.push(async () => p.close());
  return p;
}

describe('RawHttpPool against node:http', () => {
  it('sends method, path, headers and a UTF-8 body, and keeps one connection alive for sequential requests', async () => {
    const received: { method?: string; url?: string; auth?: string; type?: string; body: string }[] = [];
    const { origin, seen } = await httpServer((req, body, res) => {
      received.push({ method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers['content-type'], body });
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ echoed: body.length }));
    });
    const p = pool(origin, 1);
    const body = JSON.stringify({ amount: 100, memo: 'café — ☕' });
    for (let i = 0; i < 20; i++) {
      const r = await p.request({
        method: 'POST',
        path: `/quotes?i=${i}`,
        headers: { authorization: 'Basic abc', 'content-type': 'application/json' },
        body,
      });
      expect(r.status).toBe(201);
    }
    expect(seen.connections).toBe(1);
    expect(received).toHaveLength(20);
    expect(received[7]).toEqual({ method: 'POST', url: '/quotes?i=7', auth: 'Basic abc', type: 'application/json', body });
  });

  it('reads chunked responses and 204s to their end, so the next response on the connection parses', async () => {
    let n = 0;
    const { origin, seen } = await httpServer((_req, _body, res) => {
      n++;
      if (n % 3 === 0) return res.writeHead(204).end();
      if (n % 3 === 1) {
        res.writeHead(200, { 'content-type': 'text/plain' }); // no length: chunked
        res.write('x'.repeat(5000));
        setImmediate(() => res.end('tail'));
        return;
      }
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"code":"NOT_FOUND"}');
    });
    const p = pool(origin, 1);
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) statuses.push((await p.request({ method: 'GET', path: '/x' })).status);
    expect(statuses).toEqual([200, 404, 204, 200, 404, 204, 200, 404, 204]);
    expect(seen.connections).toBe(1);
  });

  it('opens a new connection after a response that closes its own', async () => {
    const { origin, seen } = await httpServer((_req, _body, res) => {
      res.writeHead(200, { connection: 'close', 'content-length': '2' }).end('ok');
    });
    const p = pool(origin, 1);
    for (let i = 0; i < 3; i++) expect((await p.request({ method: 'GET', path: '/' })).status).toBe(200);
    expect(seen.connections).toBe(3);
  });

  it('never opens more than maxSockets connections; the requests beyond wait and all complete', async () => {
    const { origin, seen } = await httpServer((_req, _body, res) => {
      setTimeout(() => res.writeHead(200, { 'content-length': '0' }).end(), 5);
    });
    const p = pool(origin, 3);
    const all = await Promise.all(Array.from({ length: 30 }, () => p.request({ method: 'GET', path: '/' })));
    expect(all.every((r) => r.status === 200)).toBe(true);
    expect(seen.mostOpen).toBeLessThanOrEqual(3);
    expect(seen.connections).toBe(3);
  });

  it('fails a request the server never answers with a TimeoutError, and goes on with a new connection', async () => {
    let n = 0;
    const { origin } = await httpServer((_req, _body, res) => {
      if (n++ === 0) return; // the first request hangs
      res.writeHead(200, { 'content-length': '0' }).end();
    });
    const p = pool(origin, 1, 200);
    await expect(p.request({ method: 'GET', path: '/hang' })).rejects.toBeInstanceOf(TimeoutError);
    expect((await p.request({ method: 'GET', path: '/' })).status).toBe(200);
  });

  it('fails what is still waiting or outstanding when closed', async () => {
    const { origin } = await httpServer(() => undefined);
    const p = pool(origin, 1);
    const outstanding = p.request({ method: 'GET', path: '/a' });
    const waiting = p.request({ method: 'GET', path: '/b' });
    await new Promise((r) => setTimeout(r, 20));
    p.close();
    await expect(outstanding).rejects.toThrow(/closed/);
    await expect(waiting).rejects.toThrow(/closed/);
    await expect(p.request({ method: 'GET', path: '/c' })).rejects.toThrow(/closed/);
  });
});

/** A TCP server that answers each request (whatever it is, once its head has arrived) with `answer(n)`. */
async function rawServer(answer: (n: number, socket: net.Socket) => void): Promise<string> {
  let n = 0;
  const server = net.createServer((socket) => {
    let pending = '';
    socket.on('data', (d) => {
      pending += d.toString('latin1');
      while (pending.includes('\r\n\r\n')) {
        pending = pending.slice(pending.indexOf('\r\n\r\n') + 4);
        answer(n++, socket);
      }
    });
    socket.on('error', () => undefined);
  });
  return listen(server);
}

/** Writes `text` one byte per write, a turn of the event loop apart. */
async function dribble(socket: net.Socket, text: string): Promise<void> {
  for (const ch of text) {
    socket.write(ch, 'latin1');
    await new Promise((r) => setImmediate(r));
  }
}

describe('RawHttpPool against a raw TCP server', () => {
  it('reassembles heads, bodies, chunk sizes, extensions and trailers cut into one-byte writes', async () => {
    const responses = [
      'HTTP/1.1 201 Created\r\nContent-Length: 11\r\n\r\nhello world',
      'HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: yes\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n',
    ];
    const origin = await rawServer((n, socket) => void dribble(socket, responses[n % 3]!));
    const p = pool(origin, 1);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await p.request({ method: 'GET', path: '/' })).status);
    expect(statuses).toEqual([201, 409, 200, 201, 409, 200]);
  });

  it('drops a connection that sends a response nobody asked for, and serves the next request on a new one', async () => {
    // The answer and an unsolicited 418 arrive in one write: kept, the 418 would answer the next request.
    const origin = await rawServer((_n, socket) => {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 418 Teapot\r\nContent-Length: 0\r\n\r\n');
    });
    const p = pool(origin, 1);
    expect((await p.request({ method: 'GET', path: '/' })).status).toBe(200);
    expect((await p.request({ method: 'GET', path: '/' })).status).toBe(200);
  });

  it('reads a response without a length until the connection closes', async () => {
    const origin = await rawServer((_n, socket) => {
      socket.end('HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end');
    });
    const p = pool(origin, 1);
    expect((await p.request({ method: 'GET', path: '/' })).status).toBe(200);
    expect((await p.request({ method: 'GET', path: '/' })).status).toBe(200);
    // A request waiting for the only connection goes on a new one, not on the one that ended.
    const both = await Promise.all([p.request({ method: 'GET', path: '/' }), p.request({ method: 'GET', path: '/' })]);
    expect(both.map((r) => r.status)).toEqual([200, 200]);
  });

  it('fails a request whose connection closes mid-response, and one whose response is not HTTP', async () => {
    const origin = await rawServer((n, socket) => {
      if (n === 0) socket.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort');
      else socket.end('SSH-2.0-OpenSSH\r\n\r\n');
    });
    const p = pool(origin, 1);
    await expect(p.request({ method: 'GET', path: '/' })).rejects.toThrow(/closed/);
    await expect(p.request({ method: 'GET', path: '/' })).rejects.toThrow(/malformed response head/);
  });

  it('fails a request to a port nobody listens on', async () => {
    const server = net.createServer();
    const origin = await listen(server);
    await new Promise<void>((r) => server.close(() => r()));
    const p = pool(origin, 1);
    await expect(p.request({ method: 'GET', path: '/' })).rejects.toThrow(/ECONNREFUSED/);
  });
});
