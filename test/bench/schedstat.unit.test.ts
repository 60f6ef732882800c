/**
 * The bench's reading of a thread's scheduler times (bench/servers.ts `parseSchedstat`): time on a
 * CPU and time runnable but waiting for one, from /proc/<pid>/schedstat (Linux, as the bench's other
 * /proc readings): a thread that burns CPU shows it as time on a CPU.
 */
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { parseSchedstat } from '../../bench/servers.ts';

it('reads nanoseconds on a CPU and waiting for one, and refuses anything else', () => {
  expect(parseSchedstat('6542000000 2658000000 11844\n')).toEqual({ running: 6.542, waiting: 2.658 });
  expect(parseSchedstat('0 0 0')).toEqual({ running: 0, waiting: 0 });
  expect(parseSchedstat('')).toBeUndefined();
  expect(parseSchedstat('12 34')).toBeUndefined();
  expect(parseSchedstat('se.exec_start : 1\n')).toBeUndefined();
});

it('sees this thread’s CPU time grow while it computes', () => {
  // This thread's own file (vitest may run the file on a worker thread); read on this thread, as
  // synchronous fs calls are. Computes until the thread has had 50 ms of CPU, however busy the
  // machine is, and at most 20 s: a reading that did not grow would run into that bound and fail.
  const read = () => parseSchedstat(fs.readFileSync('/proc/thread-self/schedstat', 'utf8'))!;
  const before = read();
  const until = Date.now() + 20_000;
  let x = 0;
  let now = before;
  while (now.running - before.running < 0.05 && Date.now() < until) {
    for (let i = 0; i < 1e5; i++) x += Math.sqrt(x + i);
    now = read();
  }
  expect(x).toBeGreaterThan(0);
  expect(now.running - before.running).toBeGreaterThanOrEqual(0.05);
  expect(now.waiting).toBeGreaterThanOrEqual(before.waiting);
});
