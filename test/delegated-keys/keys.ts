/**
 * Delegated keys over HTTP for the area's tests: the three-leg create, driven by a wallet session's
 * key through @turnkey/api-key-stamper (test/helpers/wallet-auth.ts), and card ids for bindings.
 */
import { expect } from 'vitest';
import type { Client, Res } from '../helpers/http.ts';
import { unique } from '../helpers/random.ts';
import { signed, stamp, type KeyPair } from '../helpers/wallet-auth.ts';

export const PATH = '/auth/delegated-keys';

/** A `Card:<uuid>` no other call of this file was given. Corridor has no cards yet: any such id names one. */
export function newCardId(): string {
  return unique('card', (rng) => `Card:${rng.uuid()}`);
}

/** A DelegatedKey as the API returns it. */
export interface KeyWire {
  id: string;
  cardId: string;
  fundingSourceId: string;
  accountId: string;
  publicKey: string;
  nickname: string;
  status: 'PENDING' | 'ACTIVE' | 'REVOKED';
  createdAt: string;
  updatedAt: string;
}

export interface CreateBody {
  cardId: string;
  internalAccountId: string;
  nickname: string;
}

export function createBody(accountId: string, nickname = 'Card payments key'): CreateBody {
  return { cardId: newCardId(), internalAccountId: accountId, nickname };
}

/** The 202 of a leg: exactly the SignedRequestChallenge fields. */
export function expectChallenge(res: Res): { payloadToSign: string; requestId: string; expiresAt: string } {
  expect(res.status, res.text).toBe(202);
  expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'payloadToSign', 'requestId']);
  expect(res.body.requestId).toMatch(/^Request:[0-9a-f-]{36}$/);
  return res.body;
}

/** The next leg: the same body, stamped by `key` over the previous 202's payload, its requestId echoed. */
export async function nextLeg(api: Client, body: unknown, previous: Res, key: KeyPair): Promise<Res> {
  const challenge = expectChallenge(previous);
  return api.post(PATH, body, signed(await stamp(key, challenge.payloadToSign), challenge.requestId));
}

/** Legs 1 and 2: the key exists, PENDING; the second challenge is returned unanswered. */
export async function pendingKey(api: Client, body: CreateBody, key: KeyPair): Promise<{ leg1: Res; leg2: Res }> {
  const leg1 = await api.post(PATH, body);
  const leg2 = await nextLeg(api, body, leg1, key);
  expectChallenge(leg2);
  return { leg1, leg2 };
}

/** All three legs; the 201's ACTIVE key is returned. */
export async function activeKey(api: Client, body: CreateBody, key: KeyPair): Promise<KeyWire> {
  const { leg2 } = await pendingKey(api, body, key);
  const leg3 = await nextLeg(api, body, leg2, key);
  expect(leg3.status, leg3.text).toBe(201);
  expect(leg3.body.status).toBe('ACTIVE');
  return leg3.body;
}

/** The keys GET /auth/delegated-keys lists for `query`. */
export async function listKeys(api: Client, query: Record<string, string>): Promise<KeyWire[]> {
  const res = await api.get(PATH, { query });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

/** The parsed activity of a challenge's payloadToSign. */
export function activity(challenge: Res): { type: string; organizationId: string; requestId: string; parameters: Record<string, unknown> } {
  return JSON.parse(challenge.body.payloadToSign);
}
