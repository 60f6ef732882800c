/**
 * GET /receiver/uma/{receiverUmaAddress} and GET /receiver/external-account/{accountId}: the sandbox
 * UMA receivers and the platform's external accounts, the sender by customerId or senderUmaAddress,
 * every documented refusal, another platform's ids, permissions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, expectError, type Res } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { externalAccount, lookupAccount, lookupUma, SANDBOX, sender, type Sender } from './fixtures.ts';

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let alice: Sender;
let otherSender: Sender;
beforeAll(async () => {
  // A frozen clock (moved only by the sandbox clock): the lookup and GET /exchange-rates read one rate window.
  const now = Date.now();
  srv = await startServer({ deps: { clock: { nowMs: () => now } } });
  p = await srv.newPlatform({ name: 'Lookups' });
  other = await srv.newPlatform({ name: 'Lookups, other platform' });
  alice = await sender(p, 0);
  otherSender = await sender(other, 0);
});
afterAll(async () => srv.close());

function fieldsOf(res: Res): string[] {
  return (res.body.details?.errors ?? []).map((e: { field: string }) => e.field);
}

/** The estimated rate GET /exchange-rates gives for the same corridor now. */
async function exchangeRate(api: Client, from: string, to: string): Promise<number> {
  const res = await api.get('/exchange-rates', { query: { sourceCurrency: from, destinationCurrency: to } });
  expect(res.status, res.text).toBe(200);
  return res.body.data[0].exchangeRate;
}

describe('GET /receiver/uma/{receiverUmaAddress}', () => {
  for (const [local, code] of [
    ['$success.usd', 'USD'],
    ['$success.eur', 'EUR'],
    ['$success.mxn', 'MXN'],
    ['$pending.long.usd', 'USD'],
    ['$fail.compliance.usd', 'USD'],
  ] as const) {
    it(`${local}: receives ${code}, needs the payer's name and birth date, and answers a lookupId`, async () => {
      const address = `${local}@${SANDBOX}`;
      const res = await lookupUma(p, address, { customerId: alice.customer.id });
      expect(res.status, res.text).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['lookupId', 'receiverUmaAddress', 'requiredPayerDataFields', 'supportedCurrencies']);
      expect(res.body.receiverUmaAddress).toBe(address);
      expect(res.body.lookupId).toMatch(/^Lookup:[0-9a-f-]{36}$/);
      expect(res.body.requiredPayerDataFields).toEqual([
        { name: 'FULL_NAME', mandatory: true },
        { name: 'BIRTH_DATE', mandatory: true },
      ]);
      expect(res.body.supportedCurrencies).toHaveLength(1);
      const [pref] = res.body.supportedCurrencies;
      expect(pref.currency.code).toBe(code);
      // The same rate a quote (and GET /exchange-rates) uses now, from the sender's USD.
      expect(pref.estimatedExchangeRate).toBe(await exchangeRate(p.api, 'USD', code));
      // The platform's USD bounds (0.01 to 1,000,000.00) in the receiving currency.
      expect(pref.min).toBe(Math.ceil(1 * pref.estimatedExchangeRate - 1e-9));
      expect(pref.max).toBe(Math.floor(100_000_000 * pref.estimatedExchangeRate + 1e-6));
      expect(pref.min).toBeGreaterThan(0);
    });
  }

  it('each lookup has an id of its own', async () => {
    const a = await lookupUma(p, `$success.usd@${SANDBOX}`, { customerId: alice.customer.id });
    const b = await lookupUma(p, `$success.usd@${SANDBOX}`, { customerId: alice.customer.id });
    expect(a.body.lookupId).not.toBe(b.body.lookupId);
  });

  it('takes the address raw or percent-encoded, in any case', async () => {
    const raw = await p.api.get(`/receiver/uma/$success.eur@${SANDBOX}`, { query: { customerId: alice.customer.id } });
    expect(raw.status, raw.text).toBe(200);
    expect(raw.body.receiverUmaAddress).toBe(`$success.eur@${SANDBOX}`);
    const upper = await lookupUma(p, `$Success.EUR@Sandbox.UMA.money`, { customerId: alice.customer.id });
    expect(upper.status, upper.text).toBe(200);
    expect(upper.body.supportedCurrencies[0].currency.code).toBe('EUR');
  });

  it("names the sender by senderUmaAddress (the customer's UMA address), or by both when they agree", async () => {
    const uma = alice.customer.umaAddress as string;
    const byUma = await lookupUma(p, `$success.usd@${SANDBOX}`, { senderUmaAddress: uma });
    expect(byUma.status, byUma.text).toBe(200);
    const upper = await lookupUma(p, `$success.usd@${SANDBOX}`, { senderUmaAddress: uma.toUpperCase() });
    expect(upper.status, upper.text).toBe(200);
    const both = await lookupUma(p, `$success.usd@${SANDBOX}`, { senderUmaAddress: uma, customerId: alice.customer.id });
    expect(both.status, both.text).toBe(200);
  });

  it('needs a sender: 400 INVALID_INPUT without customerId or senderUmaAddress', async () => {
    const res = expectError(await lookupUma(p, `$success.usd@${SANDBOX}`, {}), 400, 'INVALID_INPUT');
    expect(fieldsOf(res)).toEqual(['customerId']);
  });

  it('400 INVALID_UMA_ADDRESS for a malformed receiver, 404 UMA_NOT_FOUND for one with no sandbox party', async () => {
    const q = { customerId: alice.customer.id };
    for (const bad of ['not-an-address', 'success.usd@sandbox.uma.money', '$@sandbox.uma.money', '$a b@x.y']) {
      const res = expectError(await lookupUma(p, bad, q), 400, 'INVALID_UMA_ADDRESS');
      expect(fieldsOf(res)).toEqual(['receiverUmaAddress']);
    }
    expectError(await lookupUma(p, `$non.existent.usd@${SANDBOX}`, q), 404, 'UMA_NOT_FOUND');
    // A sandbox name at another domain (here a customer's own) is no sandbox party either.
    expectError(await lookupUma(p, alice.customer.umaAddress, q), 404, 'UMA_NOT_FOUND');
  });

  it('refuses a sender it cannot resolve', async () => {
    const receiver = `$success.usd@${SANDBOX}`;
    expectError(await lookupUma(p, receiver, { customerId: 'Customer:00000000-0000-7000-8000-000000000000' }), 404, 'USER_NOT_FOUND');
    const malformed = expectError(await lookupUma(p, receiver, { senderUmaAddress: 'jane@example.com' }), 400, 'INVALID_UMA_ADDRESS');
    expect(fieldsOf(malformed)).toEqual(['senderUmaAddress']);
    expectError(await lookupUma(p, receiver, { senderUmaAddress: '$nobody@example.com' }), 404, 'USER_NOT_FOUND');
    // The request's own shape is checked before anything is looked up: a malformed sender is a 400
    // whatever the receiver or the customer.
    const first = await lookupUma(p, `$non.existent@${SANDBOX}`, {
      customerId: 'Customer:00000000-0000-7000-8000-000000000000',
      senderUmaAddress: 'jane',
    });
    expect(fieldsOf(expectError(first, 400, 'INVALID_UMA_ADDRESS'))).toEqual(['senderUmaAddress']);
    const disagree = expectError(
      await lookupUma(p, receiver, { customerId: alice.customer.id, senderUmaAddress: otherSender.customer.umaAddress }),
      400,
      'INVALID_INPUT',
    );
    expect(fieldsOf(disagree)).toEqual(['senderUmaAddress']);
  });

  it("another platform's customer is 404, by id or by UMA address, exactly like an unknown one", async () => {
    const receiver = `$success.usd@${SANDBOX}`;
    const byId = expectError(await lookupUma(p, receiver, { customerId: otherSender.customer.id }), 404, 'USER_NOT_FOUND');
    const unknown = expectError(
      await lookupUma(p, receiver, { customerId: 'Customer:019542f5-b3e7-7d02-8000-000000000999' }),
      404,
      'USER_NOT_FOUND',
    );
    expect(byId.body.details).toEqual(unknown.body.details);
    expectError(await lookupUma(p, receiver, { senderUmaAddress: otherSender.customer.umaAddress }), 404, 'USER_NOT_FOUND');
  });

  it('a deleted sender is 410 CUSTOMER_DELETED', async () => {
    const gone = await sender(p, 0);
    expect((await p.api.delete(`/customers/${gone.customer.id}`)).status).toBeLessThan(300);
    expectError(await lookupUma(p, `$success.usd@${SANDBOX}`, { customerId: gone.customer.id }), 410, 'CUSTOMER_DELETED');
    // Its UMA address no longer names anyone.
    expectError(await lookupUma(p, `$success.usd@${SANDBOX}`, { senderUmaAddress: gone.customer.umaAddress }), 404, 'USER_NOT_FOUND');
  });

  it('rejects unknown and repeated query parameters', async () => {
    const res = expectError(
      await lookupUma(p, `$success.usd@${SANDBOX}`, { customerId: alice.customer.id, amount: '100' }),
      400,
      'INVALID_INPUT',
    );
    expect(fieldsOf(res)).toContain('amount');
    const twice = await p.api.get(
      `/receiver/uma/${encodeURIComponent(`$success.usd@${SANDBOX}`)}?customerId=${alice.customer.id}&customerId=${alice.customer.id}`,
    );
    expectError(twice, 400, 'INVALID_INPUT');
  });
});

describe('GET /receiver/external-account/{accountId}', () => {
  it("answers the account's currency, no payer fields, and a lookupId", async () => {
    const account = await externalAccount(p, alice.customer.id);
    const res = await lookupAccount(p, account, { customerId: alice.customer.id });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['accountId', 'lookupId', 'requiredPayerDataFields', 'supportedCurrencies']);
    expect(res.body.accountId).toBe(account);
    expect(res.body.requiredPayerDataFields).toEqual([]);
    expect(res.body.supportedCurrencies).toEqual([
      {
        currency: { code: 'USD', name: 'United States Dollar', symbol: '$', decimals: 2 },
        estimatedExchangeRate: 1,
        min: 1,
        max: 100_000_000,
      },
    ]);
  });

  it("estimates from the sender's currency to a foreign-currency account", async () => {
    const eur = await p.api.post('/platform/external-accounts', {
      currency: 'EUR',
      accountInfo: {
        accountType: 'EUR_ACCOUNT',
        iban: 'DE89370400440532013000',
        swiftCode: 'DEUTDEFF',
        beneficiary: { beneficiaryType: 'INDIVIDUAL', fullName: 'Hans Müller', countryOfResidence: 'DE' },
      },
    });
    expect(eur.status, eur.text).toBe(201);
    const res = await lookupAccount(p, eur.body.id, { senderUmaAddress: alice.customer.umaAddress });
    expect(res.status, res.text).toBe(200);
    expect(res.body.supportedCurrencies[0].currency.code).toBe('EUR');
    expect(res.body.supportedCurrencies[0].estimatedExchangeRate).toBe(await exchangeRate(p.api, 'USD', 'EUR'));
  });

  it('takes the id raw or percent-encoded', async () => {
    const account = await externalAccount(p, alice.customer.id);
    const raw = await p.api.get(`/receiver/external-account/${account}`, { query: { customerId: alice.customer.id } });
    expect(raw.status, raw.text).toBe(200);
    expect(raw.body.accountId).toBe(account);
  });

  it("404 for an unknown id, an internal account, a deleted account and another platform's account", async () => {
    const q = { customerId: alice.customer.id };
    const unknown = expectError(
      await lookupAccount(p, 'ExternalAccount:019542f5-b3e7-7d02-8000-000000000999', q),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(await lookupAccount(p, alice.account, q), 404, 'REFERENCE_NOT_FOUND');
    const deleted = await externalAccount(p, alice.customer.id);
    expect((await p.api.delete(`/customers/external-accounts/${deleted}`)).status).toBe(204);
    expectError(await lookupAccount(p, deleted, q), 404, 'REFERENCE_NOT_FOUND');
    const foreign = await externalAccount(other, otherSender.customer.id);
    const res = expectError(await lookupAccount(p, foreign, q), 404, 'REFERENCE_NOT_FOUND');
    expect(res.body.message.replace(foreign, 'X')).toBe(unknown.body.message.replace(/ExternalAccount:\S+/, 'X'));
  });

  it('needs a sender and refuses an unknown one', async () => {
    const account = await externalAccount(p, alice.customer.id);
    expectError(await lookupAccount(p, account, {}), 400, 'INVALID_INPUT');
    expectError(await lookupAccount(p, account, { customerId: otherSender.customer.id }), 404, 'USER_NOT_FOUND');
    expectError(await lookupAccount(p, account, { senderUmaAddress: 'nope' }), 400, 'INVALID_UMA_ADDRESS');
    expectError(await lookupAccount(p, account, { customerId: alice.customer.id, limit: '5' }), 400, 'INVALID_INPUT');
  });
});

describe('lookups: credentials and permissions', () => {
  it('401 without or with wrong credentials, 403 for a token without VIEW, 200 with VIEW alone', async () => {
    const account = await externalAccount(p, alice.customer.id);
    const paths = [
      `/receiver/uma/${encodeURIComponent(`$success.usd@${SANDBOX}`)}?customerId=${alice.customer.id}`,
      `/receiver/external-account/${account}?customerId=${alice.customer.id}`,
    ];
    const make = async (permissions: string[]) => {
      const t = await p.api.post('/tokens', { name: `lookups ${permissions.join('+')}`, permissions });
      expect(t.status, t.text).toBe(201);
      return p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
    };
    const view = await make(['VIEW']);
    const noView = await make(['TRANSACT', 'MANAGE']);
    for (const path of paths) {
      expectError(await srv.anon.get(path), 401, 'UNAUTHORIZED');
      expectError(await p.api.with({ basic: { id: p.creds.id, secret: 'wrong' } }).get(path), 401, 'UNAUTHORIZED');
      expectError(await noView.get(path), 403, 'FORBIDDEN');
      expect((await view.get(path)).status).toBe(200);
    }
  });

  it("another platform's credentials do not reach this platform's account", async () => {
    const account = await externalAccount(p, alice.customer.id);
    expectError(await lookupAccount(other, account, { customerId: otherSender.customer.id }), 404, 'REFERENCE_NOT_FOUND');
  });
});
