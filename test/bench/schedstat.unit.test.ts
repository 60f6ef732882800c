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
  const read = () => parseSchedstat(fs.readFileSync(`/proc/${process.pid}/schedstat`, 'utf8'))!;
  const before = read();
  const until = Date.now() + 60;
  let x = 0;
  while (Date.now() < until) x += Math.sqrt(x + 1);
  const after = read();
  expect(x).toBeGreaterThan(0);
  expect(after.running - before.running).toBeGreaterThan(0.03);
  expect(after.waiting).toBeGreaterThanOrEqual(before.waiting);
});
