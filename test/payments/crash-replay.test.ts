/**
 * An idempotent retry after a crash: the server committed a keyed money request and answered, the
 * process then died (SIGKILL: no shutdown code runs), and the client, which never saw the answer
 * (as when the kill lands between the commit and the response), sends the request again with the
 * same Idempotency-Key to the restarted process. It must get the stored answer, flagged as a
 * replay, and the money must have moved once; the same key with another body stays a 409.
 *
 * The seeded crash workload (test/workload/crash.test.ts) resends every request its kills cut off,
 * but its kills have so far always landed before the commit (the request runs again), never
 * between the commit and the answer; this test pins the other branch on the real process.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../src/ledger/ledger.ts';
import { openStore } from '../../src/store/db.ts';
import { cliEnv, killChildren, startCli } from '../helpers/child.ts';
import { Client, expectError } from '../helpers/http.ts';
import { ADMIN_TOKEN, laneStore, type PlatformHandle } from '../helpers/server.ts';
import { waitFor } from '../helpers/receiver.ts';
import { balances, fund, platformExternal, platformUsdAccount, tx } from '../helpers/payments.ts';

const cleanup: (() => unknown)[] = [];
afterAll(async () => {
  killChildren();
  for (const c of cleanup.reverse()) await c();
});

describe('a keyed request retried after a crash', () => {
  it('answers the committed outcome again from the restarted process, with Idempotency-Hit, and moves the money once', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-crash-replay-'));
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = cliEnv(dataDir, { CORRIDOR_ADMIN_TOKEN: ADMIN_TOKEN });

    const first = await startCli(env);
    const created = await new Client(first.origin, { bearer: ADMIN_TOKEN }).post('/_admin/platforms', { name: 'Crash replay platform' });
    expect(created.status, created.text).toBe(201);
    const creds = { id: created.body.token.clientId as string, secret: created.body.token.clientSecret as string };
    const platformId = created.body.platform.id as string;
    const p1: PlatformHandle = { id: platformId, creds, api: new Client(first.baseUrl, { basic: creds }) };
    const account = await platformUsdAccount(p1);
    await fund(p1, account, 10_000);
    // Suffix 111: no sandbox scenario, so both payments settle.
    const dest = await platformExternal(p1, '111');

    const key = { headers: { 'idempotency-key': 'crash-replay-transfer-1' } };
    const body = { source: { accountId: account }, destination: { accountId: dest }, amount: 1_234 };
    const original = await p1.api.post('/transfer-out', body, key);
    expect(original.status, original.text).toBe(201);
    expect(original.headers.get('idempotency-hit')).toBeNull();
    const quoteKey = { headers: { 'idempotency-key': 'crash-replay-quote-1' } };
    const quoteBody = {
      source: { sourceType: 'ACCOUNT', accountId: account },
      destination: { destinationType: 'ACCOUNT', accountId: dest },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 2_000,
      immediatelyExecute: true,
    };
    const quote = await p1.api.post('/quotes', quoteBody, quoteKey);
    expect(quote.status, quote.text).toBe(201);

    const exit = await first.kill();
    expect(exit.signal).toBe('SIGKILL');

    const second = await startCli(env);
    const p2: PlatformHandle = { ...p1, api: new Client(second.baseUrl, { basic: creds }) };
    const again = await p2.api.post('/transfer-out', body, key);
    expect(again.status).toBe(original.status);
    expect(again.headers.get('idempotency-hit')).toBe('true');
    expect(again.body).toEqual(original.body);
    const quoteAgain = await p2.api.post('/quotes', quoteBody, quoteKey);
    expect(quoteAgain.status).toBe(201);
    expect(quoteAgain.headers.get('idempotency-hit')).toBe('true');
    expect(quoteAgain.body).toEqual(quote.body);
    expectError(await p2.api.post('/transfer-out', { ...body, amount: 1_235 }, key), 409, 'CONFLICT');

    // Once: both settle (the restarted job runner finishes what the kill left), the balance moved
    // by each amount once, and there is one transaction each.
    for (const id of [original.body.id as string, quote.body.transactionId as string]) {
      await waitFor(async () => (await tx(p2.api, id)).status === 'COMPLETED', 20_000);
    }
    expect(quote.body.totalSendingAmount).toBe(2_000);
    expect(await balances(p2, account)).toEqual({ balance: 10_000 - 1_234 - 2_000, total: 10_000 - 1_234 - 2_000 });
    const list = await p2.api.get('/transactions', { query: { limit: 100 } });
    expect(list.status).toBe(200);
    const outgoing = (list.body.data as { id: string; type: string }[]).filter((t) => t.type === 'OUTGOING');
    expect(outgoing.map((t) => t.id).sort()).toEqual([original.body.id, quote.body.transactionId].sort());

    const store = openStore({ databaseUrl: laneStore() === 'postgres' ? process.env.TEST_DATABASE_URL : undefined, dataDir, poolSize: 1 });
    cleanup.push(() => store.close());
    expect((await checkLedger(store.db, platformId)).problems).toEqual([]);
    expect((await second.stop()).code).toBe(0);
  }, 120_000);
});
