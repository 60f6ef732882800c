/** Builders shared by the agent tests: customers with funded accounts, agents, installation. */
import { expect } from 'vitest';
import { Client } from '../helpers/http.ts';
import type { PlatformHandle, TestServer } from '../helpers/server.ts';
import { usAccountInfo, type Wire } from '../helpers/payments.ts';
import { uniqueAccountNumber } from '../helpers/random.ts';

export type { Wire };

export const ALL_PERMISSIONS = ['VIEW_TRANSACTIONS', 'CREATE_TRANSFERS', 'CREATE_QUOTES', 'EXECUTE_QUOTES', 'MANAGE_EXTERNAL_ACCOUNTS'];

/** A permissive policy in USD: every permission, AUTO, generous limits; `over` replaces top-level fields. */
export function policy(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    permissions: ALL_PERMISSIONS,
    defaultExecutionMode: 'AUTO',
    spendingLimits: { currency: 'USD', perTransactionLimit: 1_000_000 },
    ...over,
  };
}

let seq = 0;

export interface CustomerSetup {
  customerId: string;
  platformCustomerId: string;
  /** The customer's USD internal account. */
  account: string;
  /** A USD external account of the customer (suffix 001: transfers succeed). */
  external: string;
}

/** A customer with a USD account funded with `funded` and a US bank account of its own. */
export async function customer(p: PlatformHandle, funded = 100_000, extra: Record<string, unknown> = {}): Promise<CustomerSetup> {
  seq += 1;
  const platformCustomerId = `agent-test-${Date.now()}-${seq}`;
  const c = await p.api.post('/customers', {
    customerType: 'INDIVIDUAL',
    platformCustomerId,
    fullName: 'Jane Smith',
    birthDate: '1990-01-15',
    nationality: 'US',
    address: { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
    ...extra,
  });
  expect(c.status, c.text).toBe(201);
  const accounts = await p.api.get('/customers/internal-accounts', { query: { customerId: c.body.id, currency: 'USD' } });
  const account = accounts.body.data[0].id as string;
  if (funded > 0) expect((await p.api.post(`/sandbox/internal-accounts/${account}/fund`, { amount: funded })).status).toBe(200);
  const external = await externalFor(p, c.body.id, '001');
  return { customerId: c.body.id, platformCustomerId, account, external };
}

/** A USD bank account of the customer ending in `suffix` (the sandbox outcome selector). */
export async function externalFor(
  p: PlatformHandle,
  customerId: string,
  suffix: string,
  currency = 'USD',
  accountInfo?: Record<string, unknown>,
): Promise<string> {
  const info = accountInfo ?? { ...usAccountInfo(suffix), accountNumber: uniqueAccountNumber(suffix) };
  const res = await p.api.post('/customers/external-accounts', { customerId, currency, accountInfo: info });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

export interface AgentHandle {
  id: string;
  body: Wire;
  /** A client authenticated with the agent's access token. */
  api: Client;
  token: string;
}

export async function createAgent(
  p: PlatformHandle,
  customerId: string,
  pol: Record<string, unknown> = policy(),
  name = 'Test agent',
): Promise<{ agent: Wire; deviceCode: Wire }> {
  const res = await p.api.post('/agents', { name, customerId, policy: pol });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Creates an agent and redeems its device code: a connected agent with its own client. */
export async function installAgent(
  srv: TestServer,
  p: PlatformHandle,
  customerId: string,
  pol: Record<string, unknown> = policy(),
): Promise<AgentHandle> {
  const created = await createAgent(p, customerId, pol);
  const redeemed = await srv.anon.post(`/agents/device-codes/${created.deviceCode.code}/redeem`);
  expect(redeemed.status, redeemed.text).toBe(200);
  const token = redeemed.body.accessToken as string;
  return { id: created.agent.id, body: created.agent, token, api: new Client(srv.baseUrl, { bearer: token }) };
}

export async function balanceOf(p: PlatformHandle, accountId: string): Promise<number> {
  const res = await p.api.get('/customers/internal-accounts', { query: { limit: 100 } });
  const acct = res.body.data.find((a: Wire) => a.id === accountId);
  return acct.balance.amount as number;
}

export async function setPolicy(p: PlatformHandle, agentId: string, update: Record<string, unknown>): Promise<Wire> {
  const res = await p.api.patch(`/agents/${agentId}/policy`, update);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** Moves the platform clock forward (everything due runs). */
export async function advance(p: PlatformHandle, seconds: number): Promise<void> {
  const res = await p.api.post('/sandbox/clock/advance', { seconds });
  expect(res.status, res.text).toBe(200);
}

/** The platform's current sandbox time in ms. */
export async function platformNow(p: PlatformHandle): Promise<number> {
  const res = await p.api.get('/sandbox/clock');
  expect(res.status).toBe(200);
  return Date.parse(res.body.now);
}

export const transferOut = (a: AgentHandle, c: CustomerSetup, amount: number, headers?: Record<string, string>) =>
  a.api.post(
    '/agents/me/transfer-out',
    { source: { accountId: c.account }, destination: { accountId: c.external }, amount },
    headers ? { headers } : undefined,
  );
