/**
 * Delegated keys over HTTP for the area's tests: the three-leg create, driven by a wallet session's
 * key through @turnkey/api-key-stamper (test/helpers/wallet-auth.ts), and the real cards (POST
 * /cards, funded by the wallet) they bind to.
 */
import { expect } from 'vitest';
import { insertCard } from '../../src/modules/cards/cards.repo.ts';
import type { Client, Res } from '../helpers/http.ts';
import { uniqueId } from '../helpers/random.ts';
import type { TestServer } from '../helpers/server.ts';
import { signed, stamp, type KeyPair } from '../helpers/wallet-auth.ts';

export const PATH = '/auth/delegated-keys';

/** A wallet: its EMBEDDED_WALLET account and the customer holding it. */
export interface WalletRef {
  accountId: string;
  customerId: string;
}

/**
 * A new card of the wallet's customer funded by the wallet (POST /cards on a sandbox platform; it
 * exists from the 201, whatever its state). The platformCardId ends in a letter: no sandbox suffix.
 */
export async function newCard(api: Client, wallet: WalletRef): Promise<string> {
  const res = await api.post('/cards', {
    cardholderId: wallet.customerId,
    platformCardId: `${uniqueId('dk-card')}-x`,
    form: 'VIRTUAL',
    fundingSources: [wallet.accountId],
  });
  expect(res.status, res.text).toBe(201);
  return res.body.id;
}

/**
 * A card of a PRODUCTION platform's wallet. Cards are 501 there (Corridor has no card issuer), so
 * the row is written through the cards repository, as an issuer-backed deployment would have it.
 */
export async function storedCard(srv: TestServer, platformId: string, wallet: WalletRef): Promise<string> {
  const id = srv.app.ctx.deps.ids.next('Card');
  const at = new Date().toISOString();
  await insertCard(srv.app.ctx.db, {
    id,
    platform_id: platformId,
    cardholder_id: wallet.customerId,
    platform_card_id: id.slice('Card:'.length),
    state: 'ACTIVE',
    state_reason: null,
    brand: 'VISA',
    form: 'VIRTUAL',
    last4: null,
    exp_month: null,
    exp_year: null,
    pan: null,
    cvv: null,
    funding_sources: JSON.stringify([wallet.accountId]),
    max_spend_per_transaction: null,
    currency: 'USDB',
    processor_ref: 'card_00000000',
    issuer_ref: 'corridor_card_00000000',
    created_at: at,
    updated_at: at,
  });
  return id;
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

/** A create body for a new card of the wallet (made through `api`), bound to the wallet. */
export async function createBody(api: Client, wallet: WalletRef, nickname = 'Card payments key'): Promise<CreateBody> {
  return { cardId: await newCard(api, wallet), internalAccountId: wallet.accountId, nickname };
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
