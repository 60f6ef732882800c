/**
 * PostgreSQL's side of a measured window (`--store postgres`): the settings a figure depends on, and
 * what the server did in the window — WAL written and flushed, full-page images, checkpoints begun, and
 * buffers its backends had to write out themselves.
 *
 * On the 2-core reference machine the slow seconds of a payment run line up with checkpoints (the
 * full-page writes after one) and with the kernel's write-back, and WAL bytes per payment is the
 * one figure that does not move with the machine's mood; so every PostgreSQL figure carries them.
 */
import fs from 'node:fs';
import pg from 'pg';

/** Server settings that move the payment figures, as `SHOW` prints them. */
const SETTINGS = [
  'server_version',
  'synchronous_commit',
  'shared_buffers',
  'max_wal_size',
  'checkpoint_timeout',
  'wal_compression',
  // Off on some CI machines: no autoanalyze, so tables keep no statistics for the planner.
  'autovacuum',
] as const;

export interface PgCounters {
  /** pg_current_wal_lsn() as a byte position. */
  walBytes: bigint;
  /** pg_stat_wal (PostgreSQL 14+): WAL flushes to disk (a commit waits on one; group commit shares them) and full-page images. */
  walSyncs?: number | undefined;
  walFpi?: number | undefined;
  /** Checkpoints begun, timed + requested (pg_stat_bgwriter, or pg_stat_checkpointer from PostgreSQL 17). */
  checkpoints?: number | undefined;
  /** Buffers a backend had to write itself to free one (pg_stat_bgwriter, up to PostgreSQL 16). */
  backendWrites?: number | undefined;
}

async function withClient<T>(databaseUrl: string, f: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await f(client);
  } finally {
    await client.end();
  }
}

/** `X/Y` (two hex halves) as a byte position. */
export function lsnBytes(lsn: string): bigint {
  const m = /^([0-9A-F]+)\/([0-9A-F]+)$/i.exec(lsn);
  if (!m) throw new Error(`not an LSN: ${lsn}`);
  return (BigInt(`0x${m[1]}`) << 32n) + BigInt(`0x${m[2]}`);
}

/** The first query that answers, as numbers; undefined when none does (a view or column this server version lacks). */
async function firstRow(c: pg.Client, queries: string[]): Promise<Record<string, number> | undefined> {
  for (const q of queries) {
    try {
      const row = (await c.query<Record<string, string>>(q)).rows[0];
      if (row) return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)]));
    } catch {
      // not on this version: try the next
    }
  }
  return undefined;
}

/** PostgreSQL keeps these cluster-wide and flushes a backend's share about once a second: read them over many seconds. */
export async function pgCounters(databaseUrl: string): Promise<PgCounters> {
  return withClient(databaseUrl, async (c) => {
    const lsn = (await c.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn;
    const wal = await firstRow(c, ['select wal_sync as syncs, wal_fpi as fpi from pg_stat_wal']);
    // Chosen by version, not by trying: a query on a view the server lacks is an ERROR in its log,
    // written at the edges of the very window being measured.
    const version = Number((await c.query<{ v: string }>("select current_setting('server_version_num') as v")).rows[0]!.v);
    const checkpoints = await firstRow(c, [
      version >= 170000
        ? 'select num_timed + num_requested as n from pg_stat_checkpointer'
        : 'select checkpoints_timed + checkpoints_req as n from pg_stat_bgwriter',
    ]);
    const backend = version >= 170000 ? undefined : await firstRow(c, ['select buffers_backend as n from pg_stat_bgwriter']);
    return { walBytes: lsnBytes(lsn), walSyncs: wal?.syncs, walFpi: wal?.fpi, checkpoints: checkpoints?.n, backendWrites: backend?.n };
  });
}

/** The window's figures per response, for the report's extra lines; a counter this server lacks is left out. */
export function pgWindowFigures(before: PgCounters, after: PgCounters, responses: number): Record<string, number> {
  const delta = (k: 'walSyncs' | 'walFpi' | 'checkpoints' | 'backendWrites') => {
    const a = after[k];
    const b = before[k];
    return a === undefined || b === undefined ? undefined : a - b;
  };
  const per = (n: number | undefined) => (n === undefined ? undefined : Math.round((n / responses) * 100) / 100);
  const figures: Record<string, number | undefined> = {
    'PostgreSQL WAL bytes per response': Math.round(Number(after.walBytes - before.walBytes) / responses),
    'PostgreSQL WAL flushes per response': per(delta('walSyncs')),
    'PostgreSQL full-page images per response': per(delta('walFpi')),
    'PostgreSQL buffers written by backends per response': per(delta('backendWrites')),
    'PostgreSQL checkpoints begun in the window': delta('checkpoints'),
  };
  return Object.fromEntries(Object.entries(figures).filter((e): e is [string, number] => e[1] !== undefined));
}

/** Linux write-back threshold: `vm.dirty_background_bytes`, or the ratio when that is 0. */
function dirtyBackground(): string {
  try {
    const bytes = Number(fs.readFileSync('/proc/sys/vm/dirty_background_bytes', 'utf8'));
    if (bytes > 0) return `vm.dirty_background_bytes=${bytes}`;
    return `vm.dirty_background_ratio=${fs.readFileSync('/proc/sys/vm/dirty_background_ratio', 'utf8').trim()}`;
  } catch {
    return 'vm.dirty_background_* unreadable';
  }
}

/** One header line: the PostgreSQL settings and the host's write-back threshold behind the figures. */
export async function pgSettingsLine(databaseUrl: string): Promise<string> {
  const shown = await withClient(databaseUrl, async (c) => {
    const r = await c.query<{ name: string; v: string }>(
      'select name, current_setting(name) as v from unnest($1::text[]) with ordinality as s(name, i) order by i',
      [[...SETTINGS]],
    );
    return r.rows.map((row) => `${row.name}=${row.v.split(' ')[0]}`);
  });
  return `postgres: ${shown.join(' ')}, host ${dirtyBackground()}`;
}
