/**
 * The store's raw transaction rate, measured in the same run as the payment bench so a ratio of the
 * two cancels the machine's mood (issue #26):
 *
 * - PostgreSQL: `pgbench` TPC-B (5 statements per transaction: 3 UPDATEs, a SELECT, an INSERT) at
 *   scale 1 with 8 clients and 2 threads, in a schema of its own (`corridor_pgbench`) of the bench's
 *   database, dropped afterwards;
 * - SQLite: the same five statements per transaction on one better-sqlite3 connection with
 *   Corridor's settings (WAL, synchronous NORMAL), in a fresh file, for the same duration.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';

export interface StoreBaseline {
  label: string;
  tps: number;
  detail: string;
}

const SCHEMA = 'corridor_pgbench';

export async function pgbenchBaseline(databaseUrl: string, seconds: number): Promise<StoreBaseline> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${SCHEMA} cascade; create schema ${SCHEMA}`);
  } finally {
    await client.end();
  }
  const url = new URL(databaseUrl);
  const env = {
    ...process.env,
    PGHOST: url.searchParams.get('host') ?? url.hostname,
    PGPORT: url.port || '5432',
    PGUSER: decodeURIComponent(url.username) || process.env.PGUSER || 'postgres',
    PGPASSWORD: decodeURIComponent(url.password),
    PGDATABASE: decodeURIComponent(url.pathname.slice(1)),
    PGOPTIONS: `-c search_path=${SCHEMA}`,
  };
  try {
    const init = spawnSync('pgbench', ['-i', '-q', '-s', '1'], { env, encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`pgbench -i failed: ${init.stderr || init.error?.message}`);
    const run = spawnSync('pgbench', ['-c', '8', '-j', '2', '-T', String(seconds), '-n'], { env, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`pgbench failed: ${run.stderr || run.error?.message}`);
    const tps = Number(/tps = ([\d.]+)/.exec(run.stdout)?.[1]);
    const latency = /latency average = ([\d.]+ ms)/.exec(run.stdout)?.[1] ?? '?';
    if (!Number.isFinite(tps)) throw new Error(`pgbench: no tps in its output:\n${run.stdout}`);
    return { label: 'pgbench TPC-B', tps, detail: `scale 1, 8 clients, 2 threads, ${seconds} s, latency average ${latency}` };
  } finally {
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    await c.query(`drop schema if exists ${SCHEMA} cascade`).finally(() => c.end());
  }
}

export function sqliteBaseline(seconds: number): StoreBaseline {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-sqlite-baseline-'));
  const db = new SQLite(path.join(dir, 'tpcb.sqlite'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`create table branches (bid integer primary key, bbalance integer);
      create table tellers (tid integer primary key, bid integer, tbalance integer);
      create table accounts (aid integer primary key, bid integer, abalance integer, filler text);
      create table history (tid integer, bid integer, aid integer, delta integer, mtime text, filler text);`);
    const fill = db.transaction(() => {
      db.prepare('insert into branches values (1, 0)').run();
      const t = db.prepare('insert into tellers values (?, 1, 0)');
      for (let i = 1; i <= 10; i++) t.run(i);
      const a = db.prepare("insert into accounts values (?, 1, 0, '')");
      for (let i = 1; i <= 100_000; i++) a.run(i);
    });
    fill();
    const upA = db.prepare('update accounts set abalance = abalance + ? where aid = ?');
    const selA = db.prepare('select abalance from accounts where aid = ?');
    const upT = db.prepare('update tellers set tbalance = tbalance + ? where tid = ?');
    const upB = db.prepare('update branches set bbalance = bbalance + ? where bid = 1');
    const ins = db.prepare("insert into history values (?, 1, ?, ?, ?, '')");
    const tx = db.transaction((aid: number, tid: number, delta: number) => {
      upA.run(delta, aid);
      selA.get(aid);
      upT.run(delta, tid);
      upB.run(delta);
      ins.run(tid, aid, delta, new Date().toISOString());
    });
    let n = 0;
    const end = Date.now() + seconds * 1000;
    while (Date.now() < end) {
      tx(1 + (n % 100_000), 1 + (n % 10), (n % 10_000) - 5_000);
      n += 1;
    }
    return {
      label: 'SQLite TPC-B-like',
      tps: n / seconds,
      detail: `5 statements per transaction, one connection, WAL, synchronous NORMAL, ${seconds} s`,
    };
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
