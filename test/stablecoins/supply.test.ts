/**
 * The stablecoin supply as the ledger sees it (docs/stablecoins.md, "Money"): the ledger check's
 * SUPPLY_MISMATCH finds a stored supply that differs from its postings and a reserve that differs
 * from the supply it backs; concurrent burns can never promise more than the supply, so it never
 * goes below zero.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postEntry, systemAccount } from '../../src/ledger/ledger.ts';
import { manualClock } from '../helpers/customers.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advance,
  bank,
  burnPath,
  expectLedgerOk,
  mintPath,
  ok,
  operation,
  pibBurn,
  provisioned,
  send,
  stored,
  wallet,
  wireMint,
  type Wire,
} from './helpers.ts';

const clock = manualClock();
let srv: TestServer;

beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
});
afterAll(async () => srv?.close());

async function issuer(name: string, minted: string): Promise<{ p: PlatformHandle; coin: Wire; w: string; b: string }> {
  const p = await srv.newPlatform({ name });
  const { coin } = await provisioned(p);
  const w = await wallet(p.api);
  const b = await bank(p.api);
  ok(await send(p.api, mintPath(coin.id), wireMint(minted, w)));
  await advance(p, 20);
  expect((await stored(srv, coin.id)).supply).toBe(Number(minted));
  return { p, coin, w, b };
}

describe('the ledger check', () => {
  it('is clean for a platform without stablecoins', async () => {
    const p = await srv.newPlatform({ name: 'No stablecoins' });
    await expectLedgerOk(srv, p.id);
  });

  it('finds a tampered supply (SUPPLY_MISMATCH on the stablecoin, and on the reserve it no longer matches)', async () => {
    const { p, coin } = await issuer('Tampered supply', '5000000');
    await expectLedgerOk(srv, p.id);
    await srv.app.ctx.db.updateTable('stablecoins').set({ supply: sql<number>`supply + 10000` }).where('id', '=', coin.id).execute();
    const report = await srv.ledger(p.id);
    expect(report.ok).toBe(false);
    expect(report.problems).toContainEqual({
      kind: 'SUPPLY_MISMATCH',
      id: coin.id,
      detail: `supply is 5010000 ${coin.symbol}, postings say 5000000`,
    });
    expect(report.problems).toContainEqual({
      kind: 'SUPPLY_MISMATCH',
      id: systemAccount(p.id, 'STABLECOIN_RESERVE'),
      detail: 'reserve is 500 USD, the supply backs 501',
    });
    // The whole-store check finds it too; putting it back makes the platform clean again.
    expect((await srv.ledger()).problems.some((x) => x.id === coin.id)).toBe(true);
    await srv.app.ctx.db.updateTable('stablecoins').set({ supply: sql<number>`supply - 10000` }).where('id', '=', coin.id).execute();
    await expectLedgerOk(srv, p.id);
  });

  it('finds a reserve moved without the supply (a balanced entry that takes fiat out of STABLECOIN_RESERVE)', async () => {
    const { p } = await issuer('Leaky reserve', '3000000');
    await srv.app.ctx.db.transaction().execute((trx) =>
      postEntry(trx, {
        id: `LedgerEntry:${p.id.split(':')[1]}`,
        platformId: p.id,
        kind: 'TAMPER',
        referenceId: 'test',
        at: clock.iso(),
        postings: [
          { accountId: systemAccount(p.id, 'STABLECOIN_RESERVE'), currency: 'USD', bucket: 'AVAILABLE', amount: -100 },
          { accountId: systemAccount(p.id, 'RAIL_CLEARING'), currency: 'USD', bucket: 'AVAILABLE', amount: 100 },
        ],
      }),
    );
    const report = await srv.ledger(p.id);
    expect(report.problems).toEqual([
      { kind: 'SUPPLY_MISMATCH', id: systemAccount(p.id, 'STABLECOIN_RESERVE'), detail: 'reserve is 200 USD, the supply backs 300' },
    ]);
  });
});

describe('concurrent burns', () => {
  it('never promise more than the supply: of 10 burns of 30 % each, 3 are accepted, and the supply ends at 10 %', async () => {
    const { p, coin, b } = await issuer('Concurrent burns', '1000000');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        send(
          p.api,
          burnPath(coin.id),
          i % 2 === 0
            ? pibBurn('300000', b)
            : {
                amount: '300000',
                source: { type: 'EXTERNAL_ACCOUNT' },
                destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: b, rail: 'RTP_CREDIT' },
              },
        ),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses, results.map((r) => r.text).join('\n')).toEqual([201, 201, 201, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.details.reason).toBe('BURN_EXCEEDS_SUPPLY');
    expect(await stored(srv, coin.id)).toEqual({ supply: 1_000_000, mints: 0, burns: 900_000 });
    await advance(p, 20);
    for (const r of results.filter((x) => x.status === 201)) expect((await operation(p.api, r.body.id)).status).toBe('COMPLETED');
    expect(await stored(srv, coin.id)).toEqual({ supply: 100_000, mints: 0, burns: 0 });
    await expectLedgerOk(srv, p.id);
  });

  it('and concurrent replays of one burn burn once', async () => {
    const { p, coin, b } = await issuer('Concurrent replays', '1000000');
    const k = 'one-burn-many-sends';
    const results = await Promise.all(Array.from({ length: 6 }, () => send(p.api, burnPath(coin.id), pibBurn('400000', b), k)));
    const created = results.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    // A replay racing the first request's commit is told to retry (409); every 201 is the same operation.
    for (const r of results) expect([201, 409]).toContain(r.status);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(1);
    await advance(p, 20);
    expect(await stored(srv, coin.id)).toEqual({ supply: 600_000, mints: 0, burns: 0 });
    await expectLedgerOk(srv, p.id);
  });
});
