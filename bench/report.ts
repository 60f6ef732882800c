/** Formatting: the machine header and the results table. */
import os from 'node:os';
import type { LoadResult } from './load.ts';
import type { ScenarioReport, Targets } from './scenarios/types.ts';

export interface Row {
  scenario: string;
  /** 'corridor (<store>)', 'corridor (postgres ×3)' or 'bare fastify' */
  server: string;
  /** Server processes behind the row when more than one (--processes): peak RSS is the largest one's, CPU their sum. */
  processes?: number | undefined;
  load: LoadResult;
  /** req/s ÷ the bare route's req/s (Corridor rows only). */
  ratio?: number | undefined;
  peakRssKb?: number | undefined;
  /** Server CPU seconds during the measured window. */
  serverCpuSeconds?: number | undefined;
  /** The scenario's own figures beside the HTTP load (PreparedScenario.extraReport; Corridor rows only). */
  extra?: ScenarioReport | undefined;
}

export interface MachineInfo {
  cpus: number;
  model: string;
  node: string;
  platform: string;
  memoryGb: number;
  loadAvg: number[];
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    model: cpus[0]?.model.trim() ?? 'unknown',
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    memoryGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    loadAvg: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

const f1 = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? 'n/a' : v.toFixed(1));
const f2 = (v: number | undefined) => (v === undefined || Number.isNaN(v) ? 'n/a' : v.toFixed(2));
const pctOfCore = (cpuSeconds: number | undefined, wall: number) =>
  cpuSeconds === undefined ? 'n/a' : `${Math.round((cpuSeconds / wall) * 100)}%`;

export function table(rows: Row[]): string {
  const processes = Math.max(1, ...rows.map((r) => r.processes ?? 1));
  const head = [
    'scenario',
    'server',
    'req/s',
    'p50 ms',
    'p99 ms',
    'max ms',
    'non-2xx',
    'errors',
    'vs bare',
    processes > 1 ? `peak RSS MB (largest of ${processes})` : 'peak RSS MB',
    'server CPU',
    'CPU µs/req',
    'loader CPU',
  ];
  const body = rows.map((r) => [
    r.scenario,
    r.server,
    Math.round(r.load.reqPerSec).toString(),
    f2(r.load.p50Ms),
    f2(r.load.p99Ms),
    f1(r.load.maxMs),
    r.load.non2xx.toString(),
    r.load.errors.toString(),
    r.ratio === undefined ? '' : `${Math.round(r.ratio * 100)}%`,
    r.peakRssKb === undefined ? 'n/a' : f1(r.peakRssKb / 1024),
    pctOfCore(r.serverCpuSeconds, r.load.seconds),
    r.serverCpuSeconds === undefined || r.load.requests === 0 ? 'n/a' : Math.round((r.serverCpuSeconds * 1e6) / r.load.requests).toString(),
    pctOfCore(r.load.loaderCpuSeconds, r.load.seconds),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const numeric = (i: number) => i >= 2;
  const line = (cells: string[]) => `| ${cells.map((c, i) => (numeric(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (numeric(i) ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(head), rule, ...body.map(line)].join('\n');
}

/** A scenario's own figures (`extraReport`): one `label  value` line each, then its notes. */
export function extraLines(scenario: string, r: ScenarioReport): string[] {
  const entries = Object.entries(r.figures);
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return [
    ...entries.map(([k, v]) => `${scenario}  ${k.padEnd(width)}  ${typeof v === 'number' ? v.toLocaleString('en-US') : v}`),
    ...(r.notes ?? []).map((n) => `${scenario}  ${n}`),
  ];
}

/** One line per target: the figure, the bound and whether it is met. */
export function targetLines(scenario: string, targets: Targets, corridor: Row): { lines: string[]; met: boolean } {
  const lines: string[] = [];
  let met = true;
  if (targets.minRatio !== undefined) {
    if (corridor.ratio === undefined) {
      lines.push(`${scenario}: req/s ratio not measured (no baseline run)`);
    } else {
      const ok = corridor.ratio >= targets.minRatio;
      met &&= ok;
      lines.push(
        `${scenario}: req/s vs bare route ${Math.round(corridor.ratio * 100)}% (target ≥ ${Math.round(targets.minRatio * 100)}%) — ${ok ? 'met' : 'MISSED'}`,
      );
    }
  }
  if (targets.maxP99Ms !== undefined) {
    const ok = corridor.load.p99Ms < targets.maxP99Ms;
    met &&= ok;
    lines.push(`${scenario}: p99 ${f2(corridor.load.p99Ms)} ms (target < ${targets.maxP99Ms} ms) — ${ok ? 'met' : 'MISSED'}`);
  }
  return { lines, met };
}
