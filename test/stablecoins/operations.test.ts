/**
 * Stablecoin mint and burn operations over HTTP: POST /stablecoins/{id}/mints and /burns, GET
 * /stablecoins/{id}/operations and GET /stablecoin-operations/{id} (facts-stablecoins §4–7;
 * docs/stablecoins.md): every source and destination type through to COMPLETED on the sandbox
 * clock, the money in the ledger and the supply, the sandbox amounts (02 FAILED, 03 EXPIRED, 05
 * 503), the amount rule, reserved types, account and link checks, and the list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { create, individual, manualClock } from '../helpers/customers.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  advance,
  bank,
  burnPath,
  expectLedgerOk,
  link,
  mintPath,
  ok,
  operation,
  pibBurn,
  provisioned,
  register,
  send,
  stored,
  systemTotals,
  wallet,
  wireMint,
  type Wire,
} from './helpers.ts';

const clock = manualClock();
let srv: TestServer;
let p: PlatformHandle;
let coin: Wire;
let platformWallet: string;
let platformBank: string;
let customerId: string;
let customerWallet: string;
let customerBank: string;

beforeAll(async () => {
  srv = await startServer({ deps: { clock } });
  p = await srv.newPlatform({ name: 'Stablecoin operations' });
  ({ coin } = await provisioned(p));
  platformWallet = await wallet(p.api);
  platformBank = await bank(p.api);
  customerId = (await create(p.api, individual({ platformCustomerId: 'issuer-customer' }))).id;
  customerWallet = await wallet(p.api, customerId);
  customerBank = await bank(p.api, customerId);
});
afterAll(async () => srv?.close());

/** Statuses of an operation read after each of these clock advances. */
async function walk(id: string, steps: number[]): Promise<string[]> {
  const seen: string[] = [];
  for (const s of steps) {
    await advance(p, s);
    seen.push((await operation(p.api, id)).status);
  }
  return seen;
}

describe('mints', () => {
  it('WIRE: PENDING_FUNDING with wire instructions and expiresAt 7 days on, then PENDING_PROVIDER, PROCESSING, COMPLETED; the money moves at COMPLETED', async () => {
    const before = await stored(srv, coin.id);
    const op = ok(
      await send(p.api, mintPath(coin.id), { ...wireMint('25000000', platformWallet), description: 'Initial program funding mint' }),
    );
    expect(op.id).toMatch(/^StablecoinOperation:[0-9a-f-]{36}$/);
    expect(op).toMatchObject({
      stablecoinId: coin.id,
      operationType: 'MINT',
      status: 'PENDING_FUNDING',
      amount: '25000000',
      provider: 'BRALE',
      providerEnvironment: 'SANDBOX',
      stablecoinProviderAccountId: coin.stablecoinProviderAccountId,
      source: { type: 'WIRE' },
      destination: { accountId: platformWallet },
      providerStatus: 'awaiting_funds',
      description: 'Initial program funding mint',
    });
    expect(op.fundingInstructions).toMatchObject({ rail: 'WIRE', amount: '2500', currency: 'USD', beneficiaryName: 'Brale Inc.' });
    expect(op.fundingInstructions.reference).toMatch(/^BRL[0-9]{10}$/);
    expect(Date.parse(op.expiresAt) - Date.parse(op.createdAt)).toBe(7 * 24 * 3600_000);
    expect(op).not.toHaveProperty('estimatedDelivery');
    expect((await stored(srv, coin.id)).mints).toBe(before.mints + 25_000_000);

    expect(await walk(op.id, [9, 1, 5])).toEqual(['PENDING_FUNDING', 'PENDING_PROVIDER', 'PROCESSING']);
    expect((await stored(srv, coin.id)).supply).toBe(before.supply);
    expect(await walk(op.id, [5])).toEqual(['COMPLETED']);
    const done = await operation(p.api, op.id);
    expect(done.providerStatus).toBe('complete');
    expect(done).not.toHaveProperty('failureReason');
    expect(await stored(srv, coin.id)).toEqual({ supply: before.supply + 25_000_000, mints: before.mints, burns: before.burns });
    await expectLedgerOk(srv, p.id);
  });

  it('ACH_DEBIT and SAME_DAY_ACH_DEBIT from bank accounts of the platform and of a customer: CREATED, PENDING_PROVIDER, PROCESSING, COMPLETED', async () => {
    for (const [type, from, to] of [
      ['ACH_DEBIT', platformBank, platformWallet],
      ['SAME_DAY_ACH_DEBIT', customerBank, customerWallet],
    ] as const) {
      const before = await stored(srv, coin.id);
      const op = ok(
        await send(p.api, mintPath(coin.id), {
          amount: '1000000',
          fundingSource: { type, externalAccountId: from },
          destination: { accountId: to },
        }),
      );
      expect(op).toMatchObject({ status: 'CREATED', source: { type, externalAccountId: from }, destination: { accountId: to } });
      expect(op).not.toHaveProperty('fundingInstructions');
      expect(op).not.toHaveProperty('expiresAt');
      expect(await walk(op.id, [5, 5, 5])).toEqual(['PENDING_PROVIDER', 'PROCESSING', 'COMPLETED']);
      expect((await stored(srv, coin.id)).supply).toBe(before.supply + 1_000_000);
    }
    await expectLedgerOk(srv, p.id);
  });

  it('one clock advance past the end completes it at once', async () => {
    const op = ok(await send(p.api, mintPath(coin.id), wireMint('10000', platformWallet)));
    await advance(p, 3600);
    expect((await operation(p.api, op.id)).status).toBe('COMPLETED');
    await expectLedgerOk(srv, p.id);
  });

  it('writes one entry: fiat from RAIL_CLEARING to STABLECOIN_RESERVE, tokens from STABLECOIN_SUPPLY to the wallet (RAIL_CLEARING)', async () => {
    const q = await srv.newPlatform({ name: 'Ledger view' });
    const { coin: c } = await provisioned(q);
    const w = await wallet(q.api);
    const op = ok(await send(q.api, mintPath(c.id), wireMint('12340000', w)));
    await advance(q, 20);
    expect((await operation(q.api, op.id)).status).toBe('COMPLETED');
    expect(await systemTotals(srv, q.id)).toEqual({
      'RAIL_CLEARING/USD': -1234,
      'STABLECOIN_RESERVE/USD': 1234,
      [`STABLECOIN_SUPPLY/${c.symbol}`]: -12_340_000,
      [`RAIL_CLEARING/${c.symbol}`]: 12_340_000,
    });
    const entries = await srv.app.ctx.db.selectFrom('ledger_entries').selectAll().where('reference_id', '=', op.id).execute();
    expect(entries.map((e) => e.kind)).toEqual(['STABLECOIN_MINT']);
    await expectLedgerOk(srv, q.id);
  });
});

describe('burns', () => {
  it('EXTERNAL_ACCOUNT: PENDING_FUNDING with a Spark deposit address, then on to COMPLETED; the fiat goes out on the rail', async () => {
    const before = await stored(srv, coin.id);
    const op = ok(
      await send(p.api, burnPath(coin.id), {
        amount: '2000000',
        source: { type: 'EXTERNAL_ACCOUNT' },
        destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: platformBank, rail: 'WIRE' },
        description: 'Redeem',
      }),
    );
    expect(op).toMatchObject({
      operationType: 'BURN',
      status: 'PENDING_FUNDING',
      source: { type: 'EXTERNAL_ACCOUNT' },
      destination: { accountId: platformBank, rail: 'WIRE' },
      estimatedDelivery: { rail: 'WIRE', amount: '200', currency: 'USD', timing: 'Same business day' },
      fundingInstructions: { rail: 'SPARK', network: 'SPARK', valueType: coin.symbol },
    });
    expect(op.fundingInstructions.address).toMatch(/^sparkrt1[0-9a-f]{58}$/);
    expect(Date.parse(op.expiresAt) - Date.parse(op.createdAt)).toBe(7 * 24 * 3600_000);
    expect((await stored(srv, coin.id)).burns).toBe(before.burns + 2_000_000);
    expect(await walk(op.id, [10, 5, 5])).toEqual(['PENDING_PROVIDER', 'PROCESSING', 'COMPLETED']);
    expect(await stored(srv, coin.id)).toEqual({ supply: before.supply - 2_000_000, mints: before.mints, burns: before.burns });
    await expectLedgerOk(srv, p.id);
  });

  it('PROVIDER_INTERNAL_BALANCE on every rail, to the platform’s and a customer’s bank accounts: PENDING_PROVIDER, PROCESSING, COMPLETED', async () => {
    const timing: Record<string, string> = {
      ACH_CREDIT: '1-3 business days',
      SAME_DAY_ACH_CREDIT: 'Same business day',
      RTP_CREDIT: 'Within minutes',
      WIRE: 'Same business day',
    };
    for (const [rail, to] of [
      ['ACH_CREDIT', platformBank],
      ['SAME_DAY_ACH_CREDIT', customerBank],
      ['RTP_CREDIT', customerBank],
      ['WIRE', customerBank],
    ] as const) {
      const before = await stored(srv, coin.id);
      const op = ok(await send(p.api, burnPath(coin.id), pibBurn('100000', to, rail)));
      expect(op).toMatchObject({
        status: 'PENDING_PROVIDER',
        source: { type: 'PROVIDER_INTERNAL_BALANCE' },
        destination: { accountId: to, rail },
      });
      expect(op.estimatedDelivery).toEqual({ rail, amount: '10', currency: 'USD', timing: timing[rail] });
      expect(op).not.toHaveProperty('fundingInstructions');
      expect(await walk(op.id, [5, 5])).toEqual(['PROCESSING', 'COMPLETED']);
      expect((await stored(srv, coin.id)).supply).toBe(before.supply - 100_000);
    }
    await expectLedgerOk(srv, p.id);
  });

  it('a burn beyond the outstanding supply less the burns in flight is a 409, nothing reserved', async () => {
    const q = await srv.newPlatform({ name: 'Small supply' });
    const { coin: c } = await provisioned(q);
    const b = await bank(q.api);
    ok(await send(q.api, mintPath(c.id), wireMint('1000000', await wallet(q.api))));
    // Nothing is burnable until the mint completes.
    const early = expectError(await send(q.api, burnPath(c.id), pibBurn('10000', b)), 409, 'CONFLICT');
    expect(early.body.details).toMatchObject({ reason: 'BURN_EXCEEDS_SUPPLY', outstandingSupply: '0', burnable: '0' });
    await advance(q, 20);
    ok(await send(q.api, burnPath(c.id), pibBurn('600000', b)));
    const over = expectError(await send(q.api, burnPath(c.id), pibBurn('500000', b)), 409, 'CONFLICT');
    expect(over.body.details).toMatchObject({ outstandingSupply: '1000000', burnable: '400000' });
    expect(await stored(srv, c.id)).toEqual({ supply: 1_000_000, mints: 0, burns: 600_000 });
    ok(await send(q.api, burnPath(c.id), pibBurn('400000', b)));
    await advance(q, 10);
    expect(await stored(srv, c.id)).toEqual({ supply: 0, mints: 0, burns: 0 });
    await expectLedgerOk(srv, q.id);
  });
});

describe('sandbox amounts (by the cents’ last two digits)', () => {
  it('02: FAILED with PROVIDER_TRANSFER_FAILED instead of COMPLETED, nothing in the ledger, the reservation released', async () => {
    const before = await stored(srv, coin.id);
    const entries = (await srv.ledger(p.id)).entries;
    const mint = ok(await send(p.api, mintPath(coin.id), wireMint('1020000', platformWallet)));
    const burn = ok(await send(p.api, burnPath(coin.id), pibBurn('20000', platformBank)));
    expect((await stored(srv, coin.id)).burns).toBe(before.burns + 20_000);
    await advance(p, 20);
    for (const id of [mint.id, burn.id]) {
      const op = await operation(p.api, id);
      expect(op).toMatchObject({ status: 'FAILED', failureReason: 'PROVIDER_TRANSFER_FAILED', providerStatus: 'failed' });
    }
    expect(await stored(srv, coin.id)).toEqual(before);
    expect((await srv.ledger(p.id)).entries).toBe(entries);
    await expectLedgerOk(srv, p.id);
  });

  it('03: an operation awaiting funds is never funded and turns EXPIRED at expiresAt; elsewhere it completes', async () => {
    const before = await stored(srv, coin.id);
    const mint = ok(await send(p.api, mintPath(coin.id), wireMint('1030000', platformWallet)));
    const burn = ok(
      await send(p.api, burnPath(coin.id), {
        amount: '30000',
        source: { type: 'EXTERNAL_ACCOUNT' },
        destination: { type: 'EXTERNAL_ACCOUNT', externalAccountId: platformBank, rail: 'ACH_CREDIT' },
      }),
    );
    const ach = ok(
      await send(p.api, mintPath(coin.id), {
        amount: '30000',
        fundingSource: { type: 'ACH_DEBIT', externalAccountId: platformBank },
        destination: { accountId: platformWallet },
      }),
    );
    await advance(p, 3600);
    expect((await operation(p.api, mint.id)).status).toBe('PENDING_FUNDING');
    expect((await operation(p.api, burn.id)).status).toBe('PENDING_FUNDING');
    expect((await operation(p.api, ach.id)).status).toBe('COMPLETED');
    await advance(p, 7 * 24 * 3600 - 3600 - 1);
    expect((await operation(p.api, mint.id)).status).toBe('PENDING_FUNDING');
    await advance(p, 1);
    for (const id of [mint.id, burn.id]) {
      const op = await operation(p.api, id);
      expect(op).toMatchObject({ status: 'EXPIRED', providerStatus: 'expired' });
      expect(op).not.toHaveProperty('failureReason');
    }
    expect(await stored(srv, coin.id)).toEqual({ ...before, supply: before.supply + 30_000 });
    await expectLedgerOk(srv, p.id);
  });

  it('05: 503 SERVICE_UNAVAILABLE at creation, nothing written (not even the Idempotency-Key)', async () => {
    const before = await stored(srv, coin.id);
    const count = async () =>
      (await srv.app.ctx.db.selectFrom('stablecoin_operations').select('id').where('platform_id', '=', p.id).execute()).length;
    const ops = await count();
    const k = 'stablecoin-503-key';
    expectError(await send(p.api, mintPath(coin.id), wireMint('1050000', platformWallet), k), 503, 'SERVICE_UNAVAILABLE');
    expectError(await send(p.api, burnPath(coin.id), pibBurn('50000', platformBank)), 503, 'SERVICE_UNAVAILABLE');
    expect(await count()).toBe(ops);
    expect(await stored(srv, coin.id)).toEqual(before);
    const keys = await srv.app.ctx.db
      .selectFrom('idempotency_keys')
      .select('key')
      .where('platform_id', '=', p.id)
      .where('key', '=', k)
      .execute();
    expect(keys).toEqual([]);
  });

  it('a PRODUCTION platform’s amounts carry no magic', async () => {
    const prod = await srv.newPlatform({ name: 'Production issuer', environment: 'PRODUCTION' });
    const { coin: c } = await provisionedProd(prod);
    const op = ok(await send(prod.api, mintPath(c.id), wireMint('1050000', await wallet(prod.api))));
    expect(op).toMatchObject({ status: 'PENDING_FUNDING', providerEnvironment: 'PRODUCTION' });
    expect(op.fundingInstructions.rail).toBe('WIRE');
  });
});

/** A PRODUCTION platform has no sandbox clock: its stablecoin provisions on the (manual) system clock. */
async function provisionedProd(q: PlatformHandle): Promise<{ coin: Wire }> {
  await link(q.api);
  const c = await register(q.api);
  clock.advance(5_000);
  await srv.app.ctx.jobs.drain(q.id);
  const now = ok(await q.api.get(`/stablecoins/${c.id}`), 200);
  expect(now.issuanceStatus).toBe('PROVISIONED');
  return { coin: now };
}

describe('GET /stablecoins/{id}/operations and /stablecoin-operations/{id}', () => {
  it('lists most recent first, filtered by operationType, in cursor pages; another platform’s ids are 404', async () => {
    const q = await srv.newPlatform({ name: 'Operation lister' });
    const { coin: c } = await provisioned(q);
    const w = await wallet(q.api);
    const b = await bank(q.api);
    const m1 = ok(await send(q.api, mintPath(c.id), wireMint('1000000', w)));
    await advance(q, 20);
    const b1 = ok(await send(q.api, burnPath(c.id), pibBurn('10000', b)));
    const m2 = ok(await send(q.api, mintPath(c.id), wireMint('10000', w)));
    const all = ok(await q.api.get(`/stablecoins/${c.id}/operations`), 200);
    expect(all.totalCount).toBe(3);
    expect(all.data.map((o: Wire) => o.id)).toEqual([m2.id, b1.id, m1.id]);
    expect(all.data[2].status).toBe('COMPLETED');
    const mints = ok(await q.api.get(`/stablecoins/${c.id}/operations`, { query: { operationType: 'MINT' } }), 200);
    expect(mints.data.map((o: Wire) => o.id)).toEqual([m2.id, m1.id]);
    const burns = ok(await q.api.get(`/stablecoins/${c.id}/operations`, { query: { operationType: 'BURN' } }), 200);
    expect(burns.data.map((o: Wire) => o.id)).toEqual([b1.id]);
    const page1 = ok(await q.api.get(`/stablecoins/${c.id}/operations`, { query: { limit: 2 } }), 200);
    const page2 = ok(await q.api.get(`/stablecoins/${c.id}/operations`, { query: { limit: 2, cursor: page1.nextCursor } }), 200);
    expect([...page1.data, ...page2.data].map((o: Wire) => o.id)).toEqual([m2.id, b1.id, m1.id]);
    expect([page1.hasMore, page2.hasMore]).toEqual([true, false]);
    expectError(await q.api.get(`/stablecoins/${c.id}/operations`, { query: { operationType: 'SWAP' } }), 400, 'INVALID_INPUT');

    expectError(await p.api.get(`/stablecoins/${c.id}/operations`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await p.api.get(`/stablecoin-operations/${m1.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await q.api.get('/stablecoin-operations/StablecoinOperation:nope'), 404, 'REFERENCE_NOT_FOUND');
    expect((await operation(q.api, m1.id)).id).toBe(m1.id);
    expectError(await srv.anon.get(`/stablecoin-operations/${m1.id}`), 401, 'UNAUTHORIZED');
    await advance(q, 20);
    await expectLedgerOk(srv, q.id);
  });
});
