/**
 * The requests the live clients send for these operations, byte for byte in path and query
 * (lightsparkdev/grid-api `cli/src/commands/{receiver,uma-providers,crypto}.ts`, and the TypeScript
 * SDK's `resources/receiver.ts` and `resources/uma-providers.ts`), answered as they expect:
 * - the CLI percent-encodes the path segment (`encodeURIComponent`) and builds the query with
 *   URLSearchParams, leaving out unset options; `uma-providers` always sends `limit` (default 20)
 *   and `hasBlockedProviders=true` only with its flag;
 * - the SDK leaves `$`, `@` and `:` raw in a path segment (RFC 3986 pchar) and percent-encodes
 *   every query value but unreserved characters; its list pages by `cursor`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { externalAccount, SANDBOX, sender, type Sender } from './fixtures.ts';

let srv: TestServer;
let p: PlatformHandle;
let alice: Sender;
beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform({ name: 'Live clients' });
  alice = await sender(p);
});
afterAll(async () => srv.close());

/** A query value as both clients encode it (`$`, `@` and `:` percent-encoded). */
const q = (v: string) => v.replace(/\$/g, '%24').replace(/@/g, '%40').replace(/:/g, '%3A');

describe('the CLI (grid-api cli/)', () => {
  it('receiver lookup-uma $success.eur@… --customer-id …', async () => {
    const res = await p.api.get(`/receiver/uma/%24success.eur%40${SANDBOX}?customerId=${q(alice.customer.id)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.receiverUmaAddress).toBe(`$success.eur@${SANDBOX}`);
    expect(res.body.lookupId).toMatch(/^Lookup:/);
  });

  it('receiver lookup-uma … --sender-uma $…@…', async () => {
    const res = await p.api.get(`/receiver/uma/%24success.usd%40${SANDBOX}?senderUmaAddress=${q(alice.customer.umaAddress)}`);
    expect(res.status, res.text).toBe(200);
  });

  it('receiver lookup-account ExternalAccount:… --customer-id …', async () => {
    const account = await externalAccount(p, alice.customer.id);
    const res = await p.api.get(`/receiver/external-account/${q(account)}?customerId=${q(alice.customer.id)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.accountId).toBe(account);
  });

  it('uma-providers, with and without its options', async () => {
    const plain = await p.api.get('/uma-providers?limit=20');
    expect(plain.status, plain.text).toBe(200);
    expect(plain.body.data.length).toBeGreaterThan(1);
    const flagged = await p.api.get('/uma-providers?countryCode=US&currencyCode=USD&hasBlockedProviders=true&limit=1&sortOrder=asc');
    expect(flagged.status, flagged.text).toBe(200);
    expect(flagged.body).toMatchObject({ hasMore: true, totalCount: 2 });
    expect(flagged.body.data.map((x: { domain: string }) => x.domain)).toEqual(['remesas.example']);
    const next = await p.api.get(
      `/uma-providers?countryCode=US&currencyCode=USD&hasBlockedProviders=true&limit=1&cursor=${flagged.body.nextCursor}&sortOrder=asc`,
    );
    expect(next.status, next.text).toBe(200);
    expect(next.body.data.map((x: { domain: string }) => x.domain)).toEqual([SANDBOX]);
    expect(next.body.hasMore).toBe(false);
  });

  it('crypto estimate-fee --internal-account-id … --currency USDC --crypto-network SOLANA --amount 1000000 --destination-address …', async () => {
    const cfg = await p.api.patch('/config', {
      supportedCurrencies: ['USD', 'USDC'].map((currencyCode) => ({
        currencyCode,
        minAmount: 1,
        maxAmount: 100_000_000,
        requiredCounterpartyFields: [],
        enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
      })),
    });
    expect(cfg.status, cfg.text).toBe(200);
    const usdc = (await p.api.get('/platform/internal-accounts', { query: { currency: 'USDC' } })).body.data[0].id;
    // A JSON body with Content-Type application/json, the keys in the CLI's order.
    const res = await p.api.post('/crypto/estimate-withdrawal-fee', {
      internalAccountId: usdc,
      currency: 'USDC',
      cryptoNetwork: 'SOLANA',
      amount: 1000000,
      destinationAddress: '7xKXtg2CW87d97TXJSDpbD5jBkheTqA83TZRuJosgAsU',
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ networkFee: 5000, networkFeeAsset: 'SOL', applicationFee: 0, totalFee: 5000, netAmount: 995000 });
  });
});

describe('the TypeScript SDK', () => {
  it('receiver.lookupUma(address, { customerId }) — the address raw in the path', async () => {
    const res = await p.api.get(`/receiver/uma/$success.mxn@${SANDBOX}?customerId=${q(alice.customer.id)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.supportedCurrencies[0].currency.code).toBe('MXN');
  });

  it('receiver.lookupExternalAccount(id, { senderUmaAddress }) — the id raw in the path', async () => {
    const account = await externalAccount(p, alice.customer.id);
    const res = await p.api.get(`/receiver/external-account/${account}?senderUmaAddress=${q(alice.customer.umaAddress)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.accountId).toBe(account);
  });

  it('umaProviders.list({ hasBlockedProviders: false, limit, sortOrder }) and its next page by cursor', async () => {
    const first = await p.api.get('/uma-providers?hasBlockedProviders=false&limit=1&sortOrder=desc');
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ hasMore: false, totalCount: 1 });
    const all = await p.api.get('/uma-providers?limit=5');
    expect(all.body.hasMore).toBe(true);
    const second = await p.api.get(`/uma-providers?limit=5&cursor=${all.body.nextCursor}`);
    expect(second.status, second.text).toBe(200);
    expect(all.body.data.length + second.body.data.length).toBe(all.body.totalCount);
  });

  it('quotes.create({ lookupId, senderCustomerInfo, … }) after a lookup', async () => {
    const lookup = await p.api.get(`/receiver/uma/$success.usd@${SANDBOX}?customerId=${q(alice.customer.id)}`);
    expect(lookup.status, lookup.text).toBe(200);
    const res = await p.api.post('/quotes', {
      lookupId: lookup.body.lookupId,
      source: { sourceType: 'ACCOUNT', accountId: alice.account },
      destination: { destinationType: 'UMA_ADDRESS', umaAddress: `$success.usd@${SANDBOX}`, currency: 'USD' },
      lockedCurrencySide: 'SENDING',
      lockedCurrencyAmount: 1000,
      senderCustomerInfo: { FULL_NAME: 'Jane Smith', BIRTH_DATE: '1990-01-15' },
    });
    expect(res.status, res.text).toBe(201);
  });
});
