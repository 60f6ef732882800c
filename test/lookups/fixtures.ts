/** Builders shared by the lookup tests: a sender customer with a funded USD account, and its external accounts. */
import { expect } from 'vitest';
import { create, individual, type Wire } from '../helpers/customers.ts';
import { fund, usAccountInfo } from '../helpers/payments.ts';
import { uniqueAccountNumber, uniqueId } from '../helpers/random.ts';
import type { PlatformHandle } from '../helpers/server.ts';

export const SANDBOX = 'sandbox.uma.money';

export interface Sender {
  customer: Wire;
  /** The customer's USD internal account. */
  account: string;
}

/** A customer (USD) of `p` with `funded` cents on its USD internal account. */
export async function sender(p: PlatformHandle, funded = 1_000_000): Promise<Sender> {
  const customer = await create(p.api, individual({ platformCustomerId: uniqueId('sender') }));
  const res = await p.api.get('/customers/internal-accounts', { query: { customerId: customer.id, currency: 'USD' } });
  expect(res.status, res.text).toBe(200);
  const account = res.body.data[0].id as string;
  if (funded > 0) await fund(p, account, funded);
  return { customer, account };
}

/** An external USD bank account of `customerId` ending in `suffix`. */
export async function externalAccount(p: PlatformHandle, customerId: string, suffix = '001'): Promise<string> {
  const accountInfo = { ...usAccountInfo(suffix), accountNumber: uniqueAccountNumber(suffix) };
  const res = await p.api.post('/customers/external-accounts', { customerId, currency: 'USD', accountInfo });
  expect(res.status, res.text).toBe(201);
  return res.body.id as string;
}

/** `GET /receiver/uma/{address}` as `p`, the address percent-encoded as the CLI sends it. */
export function lookupUma(p: PlatformHandle, address: string, query: Record<string, string | undefined>) {
  return p.api.get(`/receiver/uma/${encodeURIComponent(address)}`, { query });
}

export function lookupAccount(p: PlatformHandle, accountId: string, query: Record<string, string | undefined>) {
  return p.api.get(`/receiver/external-account/${encodeURIComponent(accountId)}`, { query });
}
