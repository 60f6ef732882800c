/**
 * Helpers of the card tests: a server whose ids never end in a sandbox magic suffix by chance (and
 * can be made to, on purpose), cardholders with funded accounts, issuing cards and waiting for them
 * to be provisioned, the sandbox simulations, and the card webhooks a receiver got.
 */
import { expect } from 'vitest';
import { cryptoRng, type Ids, systemClock, uuidV7Ids } from '../../src/deps.ts';
import type { Client, Res } from '../helpers/http.ts';
import { uniqueId } from '../helpers/random.ts';
import { type Received, type Receiver, startReceiver, waitFor } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

// biome-ignore lint/suspicious/noExplicitAny: `any`: like Res.body, tests read arbitrary response fields; the assertions are the type check.
export type Wire = any;

/**
 * Which id suffixes the sandbox reads as magic: an internal account id ending in 002/003 cannot fund
 * a card, a cardholder id ending in 001/002/005 steers issuance (when no platformCardId is given).
 * Random uuids end so about once in 800 ids; these ids never do unless a test asks.
 */
const MAGIC: Record<string, readonly string[]> = { InternalAccount: ['002', '003'], Customer: ['001', '002', '005'] };

export interface ControlledIds extends Ids {
  /** The next id with this prefix ends in `suffix`. */
  force(prefix: string, suffix: string): void;
}

export function controlledIds(): ControlledIds {
  const base = uuidV7Ids(systemClock, cryptoRng);
  const forced = new Map<string, string[]>();
  return {
    uuid: () => base.uuid(),
    next(prefix: string): string {
      const suffix = forced.get(prefix)?.shift();
      if (suffix !== undefined) return base.next(prefix).slice(0, -3) + suffix;
      for (;;) {
        const id = base.next(prefix);
        if (!MAGIC[prefix]?.includes(id.slice(-3))) return id;
      }
    },
    force(prefix: string, suffix: string) {
      forced.set(prefix, [...(forced.get(prefix) ?? []), suffix]);
    },
  };
}

/** A server for card tests, with its controllable ids. */
export async function cardServer(env: Record<string, string> = {}): Promise<{ srv: TestServer; ids: ControlledIds }> {
  const ids = controlledIds();
  const srv = await startServer({ deps: { ids }, env: { CORRIDOR_WEBHOOK_ALLOW_PRIVATE: 'true', ...env } });
  return { srv, ids };
}

/** A receiver set as the platform's webhook endpoint, the TEST event from setting it already received. */
export async function receiverFor(p: PlatformHandle): Promise<Receiver> {
  const r = await startReceiver();
  const res = await p.api.patch('/config', { webhookEndpoint: r.url });
  expect(res.status, res.text).toBe(200);
  await waitFor(() => r.received.find((x) => x.body?.type === 'TEST'));
  return r;
}

export interface Holder {
  customerId: string;
  platformCustomerId: string;
  /** Its holding account (USD unless asked otherwise). */
  accountId: string;
}

/** A KYC-approved individual (a sandbox fullName without magic suffix) and its account in `currency`. */
export async function newHolder(api: Client, over: Record<string, unknown> = {}, currency = 'USD'): Promise<Holder> {
  const platformCustomerId = uniqueId('cardholder');
  const res = await api.post('/customers', {
    customerType: 'INDIVIDUAL',
    platformCustomerId,
    fullName: 'Card Holder',
    birthDate: '1990-01-15',
    nationality: 'US',
    address: { line1: '1 Main Street', city: 'San Francisco', postalCode: '94105', country: 'US' },
    ...over,
  });
  expect(res.status, res.text).toBe(201);
  return { customerId: res.body.id, platformCustomerId, accountId: await accountIn(api, res.body.id, currency) };
}

/** The customer's internal account in `currency`. */
export async function accountIn(api: Client, customerId: string, currency: string): Promise<string> {
  const res = await api.get('/customers/internal-accounts', { query: { customerId, currency } });
  expect(res.status, res.text).toBe(200);
  expect(res.body.data.length, res.text).toBeGreaterThan(0);
  return res.body.data[0].id;
}

export async function fund(api: Client, accountId: string, amount: number): Promise<void> {
  const res = await api.post(`/sandbox/internal-accounts/${accountId}/fund`, { amount });
  expect(res.status, res.text).toBe(200);
}

/** An internal account's balances: available (`balance`) and pending (total − available). */
export async function balances(api: Client, customerId: string, accountId: string): Promise<{ available: number; pending: number }> {
  const res = await api.get('/customers/internal-accounts', { query: { customerId, limit: 100 } });
  const a = res.body.data.find((x: Wire) => x.id === accountId);
  expect(a, `account ${accountId}`).toBeDefined();
  return { available: a.balance.amount, pending: a.totalBalance.amount - a.balance.amount };
}

/** POST /cards for the holder with its USD account (201 expected). */
export async function issue(api: Client, h: Holder, over: Record<string, unknown> = {}): Promise<Wire> {
  const res = await api.post('/cards', {
    cardholderId: h.customerId,
    platformCardId: `${uniqueId('card')}-v`,
    form: 'VIRTUAL',
    fundingSources: [h.accountId],
    ...over,
  });
  expect(res.status, res.text).toBe(201);
  expect(res.body.state).toBe('PROCESSING');
  return res.body;
}

/** Waits until GET /cards/{id} shows `state` (provisioning runs on the job runner). */
export async function cardIn(api: Client, id: string, state: string): Promise<Wire> {
  return waitFor(async () => {
    const res = await api.get(`/cards/${id}`);
    expect(res.status, res.text).toBe(200);
    return res.body.state === state ? res.body : undefined;
  });
}

/** A holder with `funds` in its USD account and an ACTIVE card on it. */
export async function activeCard(api: Client, funds = 0, over: Record<string, unknown> = {}): Promise<{ h: Holder; card: Wire }> {
  const h = await newHolder(api);
  if (funds > 0) await fund(api, h.accountId, funds);
  const created = await issue(api, h, over);
  return { h, card: await cardIn(api, created.id, 'ACTIVE') };
}

export const MERCHANT = { descriptor: 'BLUE BOTTLE COFFEE SF', mcc: '5814', country: 'US' };
export const USD = { code: 'USD' };

/** POST /sandbox/cards/{id}/simulate/{path}. */
export function simulate(api: Client, cardId: string, path: string, body: unknown): Promise<Res> {
  return api.post(`/sandbox/cards/${cardId}/simulate/${path}`, body);
}

/** An approved authorization-family simulation: its token and the transaction it made (found by the token). */
export async function approved(
  api: Client,
  cardId: string,
  path: string,
  amount: number,
  merchant: Record<string, string> = MERCHANT,
): Promise<{ token: string; tx: Wire }> {
  const res = await simulate(api, cardId, path, { amount, currency: USD, merchant });
  expect(res.status, res.text).toBe(202);
  expect(res.headers.get('corridor-card-decision'), res.text).toBe('APPROVED');
  const token = res.body.issuerTransactionToken as string;
  return { token, tx: await txByToken(api, token) };
}

/** Simulates and expects a 202 decline with `reason`; returns the token. */
export async function declined(api: Client, cardId: string, path: string, body: unknown, reason: string): Promise<string> {
  const res = await simulate(api, cardId, path, body);
  expect(res.status, res.text).toBe(202);
  expect(res.headers.get('corridor-card-decision')).toBe('DECLINED');
  expect(res.headers.get('corridor-decline-reason')).toBe(reason);
  return res.body.issuerTransactionToken;
}

/** The card transaction carrying this issuer token, from GET /transactions. */
export async function txByToken(api: Client, token: string): Promise<Wire> {
  const res = await api.get('/transactions', { query: { limit: 100 } });
  expect(res.status, res.text).toBe(200);
  const tx = res.body.data.find((t: Wire) => t.issuerTransactionToken === token);
  expect(tx, `a transaction with token ${token}`).toBeDefined();
  return tx;
}

/**
 * A card transaction as GET /transactions lists it (found by id among its cardholder's). GET
 * /transactions/{id} answers the same object once the payments route serves it (docs/cards.md).
 */
export async function getTx(api: Client, tx: { id: string; customerId: string }): Promise<Wire> {
  const res = await api.get('/transactions', { query: { customerId: tx.customerId, limit: 100 } });
  expect(res.status, res.text).toBe(200);
  const found = res.body.data.find((t: Wire) => t.id === tx.id);
  expect(found, `transaction ${tx.id}`).toBeDefined();
  return found;
}

/** The card webhooks of `resourceId` a receiver got, in arrival order. */
export function cardHooks(r: Receiver, resourceId: string): Received[] {
  return r.received.filter((x) => typeof x.body?.type === 'string' && x.body.type.startsWith('CARD') && x.body.data?.id === resourceId);
}

/** The ledger check of a platform must be clean. */
export async function ledgerOk(srv: TestServer, platformId: string): Promise<void> {
  const report = await srv.ledger(platformId);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
}

/** A token of the platform holding only `permissions`. */
export async function tokenWith(p: PlatformHandle, permissions: string[]): Promise<Client> {
  const t = await p.api.post('/tokens', { name: `cards ${permissions.join('+')}`, permissions });
  expect(t.status, t.text).toBe(201);
  return p.api.with({ basic: { id: t.body.clientId, secret: t.body.clientSecret } });
}
