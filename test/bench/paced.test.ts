/**
 * The open-loop load generator (bench/paced.ts) against a real node:http server on loopback: its
 * warm-up is the same run's first requests — sent at the same rate over the same connections,
 * without a pause before the window, and left out of every figure.
 */
import http from 'node:http';
import type net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runPaced } from '../../bench/paced.ts';

let server: http.Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (s) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

/** Answers `/r?seq=N` with `status(N)`, noting when each request arrived and how many connections were opened. */
async function serve(status: (seq: number) => number) {
  const seen = { arrivals: new Map<number, number>(), connections: 0 };
  server = http.createServer((req, res) => {
    const seq = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('seq'));
    seen.arrivals.set(seq, performance.now());
    res.writeHead(status(seq), { 'content-type': 'application/json' }).end('{}');
  });
  server.on('connection', () => seen.connections++);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, seen };
}

describe('runPaced with a warm-up', () => {
  it('sends the warm-up and the window as one run, and counts only the window', async () => {
    // The warm-up's requests fail: none of that may show in the figures.
    const { origin, seen } = await serve((seq) => (seq < 50 ? 500 : 200));
    let startedAt: { sent: number; arrived: number } | undefined;
    let starts = 0;
    let sent = 0;
    const r = await runPaced({
      origin,
      request: (seq) => {
        sent = seq + 1;
        return { method: 'GET', path: `/r?seq=${seq}` };
      },
      rate: 200,
      warmup: 0.25,
      duration: 0.5,
      connections: 2,
      onWindowStart: () => {
        starts++;
        startedAt = { sent, arrived: seen.arrivals.size };
      },
    });
    expect(seen.arrivals.size).toBe(150);
    expect(r.requests).toBe(100);
    expect(r.non2xx).toBe(0);
    expect(r.statusCodes).toEqual({ '200': 100 });
    expect(r.errors).toBe(0);
    // The window began as its first request was about to be sent: every warm-up request had been.
    expect(starts).toBe(1);
    expect(startedAt?.sent).toBe(50);
    expect(startedAt?.arrived).toBeLessThanOrEqual(50);
    // No pause between the last warm-up request and the first measured one (5 ms apart when due),
    // and no new connections for the window.
    expect(seen.arrivals.get(50)! - seen.arrivals.get(49)!).toBeLessThan(40);
    expect(seen.connections).toBeLessThanOrEqual(2);
    // The series is by the window's own seconds.
    expect(r.series?.[0]?.second).toBe(0);
    expect(r.series?.reduce((n, s) => n + s.responses, 0)).toBe(100);
    expect(r.p50Ms).toBeGreaterThan(0);
  });

  it('without a warm-up, starts the window with the first request', async () => {
    const { origin, seen } = await serve(() => 200);
    let arrivedAtStart = -1;
    const r = await runPaced({
      origin,
      request: (seq) => ({ method: 'GET', path: `/r?seq=${seq}` }),
      rate: 100,
      duration: 0.3,
      connections: 1,
      onWindowStart: () => {
        arrivedAtStart = seen.arrivals.size;
      },
    });
    expect(arrivedAtStart).toBe(0);
    expect(r.requests).toBe(30);
    expect(seen.arrivals.size).toBe(30);
  });
});
