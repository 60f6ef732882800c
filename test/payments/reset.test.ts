import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESETTABLE_TABLES } from '../../src/modules/sandbox/sandbox.repo.ts';
import { expectError } from '../helpers/http.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { advance, expectLedgerClean, fund, platformExternal, platformUsdAccount } from '../helpers/payments.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startServer();
});
afterAll(async () => srv.close());

describe('POST /sandbox/reset', () => {
  it("wipes one platform's customers, accounts and history but keeps its tokens and config", async () => {
    const p = await srv.newPlatform();
    const other = await srv.newPlatform();
    const otherAccount = await platformUsdAccount(other);
    await fund(other, otherAccount, 777);
    await p.api.patch('/config', {
      supportedCurrencies: [
        {
          currencyCode: 'USD',
          minAmount: 1,
          maxAmount: 100_000_000,
          requiredCounterpartyFields: [],
          enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
        },
        {
          currencyCode: 'EUR',
          minAmount: 1,
          maxAmount: 100_000_000,
          requiredCounterpartyFields: [],
          enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
        },
      ],
    });
    const token = (await p.api.post('/tokens', { name: 'kept', permissions: ['VIEW'] })).body;
    const account = await platformUsdAccount(p);
    await fund(p, account, 10_000);
    const ext = await platformExternal(p, '001');
    await p.api.post('/transfer-out', { source: { accountId: account }, destination: { accountId: ext }, amount: 1_000 });
    await p.api.post('/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: 'reset-1',
      fullName: 'Jane Smith',
      birthDate: '1990-01-15',
      nationality: 'US',
    });
    await advance(p, 1);

    const res = await p.api.post('/sandbox/reset');
    expect(res.status).toBe(204);
    expect((await p.api.get('/customers')).body.data).toHaveLength(0);
    expect((await p.api.get('/transactions')).body.totalCount).toBe(0);
    expect((await p.api.get('/platform/external-accounts')).body.data).toHaveLength(0);
    const accounts = (await p.api.get('/platform/internal-accounts')).body.data;
    expect(
      accounts
        .map((a: { currency?: unknown; balance: { currency: { code: string }; amount: number } }) => [
          a.balance.currency.code,
          a.balance.amount,
        ])
        .sort(),
    ).toEqual([
      ['EUR', 0],
      ['USD', 0],
    ]);
    // The platform's own accounts keep their ids (emptied, not replaced).
    expect(accounts.map((a: { id: string }) => a.id)).toContain(account);
    // Tokens and configuration survive.
    const viewer = p.api.with({ basic: { id: token.clientId, secret: token.clientSecret } });
    expect((await viewer.get('/config')).body.supportedCurrencies).toHaveLength(2);
    // The other platform is untouched.
    const otherAccounts = (await other.api.get('/platform/internal-accounts')).body.data;
    expect(otherAccounts[0]).toMatchObject({ id: otherAccount, balance: { amount: 777 } });
    await expectLedgerClean(srv, p.id);
    await expectLedgerClean(srv);
  });

  it('needs MANAGE and a sandbox platform', async () => {
    const p = await srv.newPlatform();
    const t = (await p.api.post('/tokens', { name: 'tx', permissions: ['TRANSACT', 'VIEW'] })).body;
    expectError(await p.api.with({ basic: { id: t.clientId, secret: t.clientSecret } }).post('/sandbox/reset'), 403, 'FORBIDDEN');
    const prod = await srv.newPlatform({ environment: 'PRODUCTION' });
    expectError(await prod.api.post('/sandbox/reset'), 403, 'FORBIDDEN');
    expectError(await srv.anon.post('/sandbox/reset'), 401, 'UNAUTHORIZED');
  });
});

describe('the tables the reset empties', () => {
  it("cover every table holding a platform's data, except the ones the reset keeps on purpose", async () => {
    // Kept: tokens, the webhook and wallet keys, which platform is the bootstrap one, and the
    // platform's own internal accounts (emptied, not deleted; customers' accounts are deleted by
    // their own statement). A new table of platform data must join the reset, or this list.
    const kept = new Set(['api_tokens', 'webhook_keys', 'wallet_keys', 'bootstrap_platform', 'internal_accounts']);
    // Emptied with their rows' owners: PostgreSQL's transaction status rows are deleted by a trigger
    // with each transaction (migration 0030; test/store/pg-status-off-row.test.ts).
    const followers = new Set(['transaction_statuses']);
    // On PostgreSQL only this file's schema is read (the other files' schemas, one per file, are
    // created and dropped meanwhile: listing every schema's tables could meet one half-dropped).
    const db = srv.app.ctx.db;
    const withPlatform = (
      srv.app.ctx.store.kind === 'postgres'
        ? (
            await sql<{ name: string }>`select distinct table_name as name from information_schema.columns
              where table_schema = current_schema() and column_name = 'platform_id'`.execute(db)
          ).rows.map((r) => r.name)
        : (await db.introspection.getTables()).filter((t) => t.columns.some((c) => c.name === 'platform_id')).map((t) => t.name)
    )
      .filter((name) => !kept.has(name) && !followers.has(name))
      .sort();
    expect(withPlatform).toEqual([...RESETTABLE_TABLES].sort());
  });
});
