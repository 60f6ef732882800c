/** Builders and assertions shared by the ownership verification tests. */
import { expect } from 'vitest';
import { JOB_OWNERSHIP_LIVENESS, livenessResultJob } from '../../src/modules/ownership/ownership.service.ts';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import type { Client, Res } from '../helpers/http.ts';
import { waitFor, type Receiver } from '../helpers/receiver.ts';
import type { PlatformHandle, TestServer } from '../helpers/server.ts';
import type { TestWallet } from './wallets.ts';

/**
 * The job that reports a sandbox liveness outcome. src/background.ts lists the server's job kinds;
 * passing it to the test server as well keeps these tests independent of that list.
 */
export const OWNERSHIP_JOBS = new Map([[JOB_OWNERSHIP_LIVENESS, livenessResultJob]]);

export type Scope = 'customers' | 'platform';

export interface AccountOpts {
  /** Customer route with this customer, or the platform route. */
  customerId?: string;
  ownershipType?: 'FIRST_PARTY' | 'THIRD_PARTY' | null;
  vaspName?: string;
}

/** Registers the wallet as an external account (FIRST_PARTY unless told otherwise); returns the account. */
// biome-ignore lint/suspicious/noExplicitAny: `any`: a wire resource the assertions inspect field by field.
export async function walletAccount(api: Client, w: TestWallet, o: AccountOpts = {}): Promise<any> {
  const ownershipType = o.ownershipType === undefined ? 'FIRST_PARTY' : o.ownershipType;
  const body = {
    currency: w.currency,
    ...(ownershipType ? { ownershipType } : {}),
    accountInfo: { accountType: w.accountType, address: w.address, ...(o.vaspName ? { vaspName: o.vaspName } : {}) },
  };
  const res = o.customerId
    ? await api.post('/customers/external-accounts', { customerId: o.customerId, ...body })
    : await api.post('/platform/external-accounts', body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

export const scopeOf = (account: { customerId?: string }): Scope => (account.customerId ? 'customers' : 'platform');

export function challenge(api: Client, account: { id: string; customerId?: string }, method: string, scope = scopeOf(account)) {
  return api.post(`/${scope}/external-accounts/${encodeURIComponent(account.id)}/challenge`, { method });
}

export function verify(api: Client, account: { id: string; customerId?: string }, body: Record<string, unknown>, scope = scopeOf(account)) {
  return api.post(`/${scope}/external-accounts/${encodeURIComponent(account.id)}/verify`, body);
}

/** A 201 WALLET_SIGNATURE challenge's message. */
export async function messageFor(api: Client, account: { id: string; customerId?: string }): Promise<string> {
  const res = await challenge(api, account, 'WALLET_SIGNATURE');
  expect(res.status, res.text).toBe(201);
  return res.body.messageToSign as string;
}

/** The account as GET answers it. */
// biome-ignore lint/suspicious/noExplicitAny: `any`: a wire resource the assertions inspect field by field.
export async function getAccount(api: Client, account: { id: string; customerId?: string }): Promise<any> {
  const res = await api.get(`/${scopeOf(account)}/external-accounts/${encodeURIComponent(account.id)}`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

/** The statuses of the EXTERNAL_ACCOUNT.STATUS_UPDATED events written for the account, in order. */
export async function statusEvents(srv: TestServer, platformId: string, accountId: string): Promise<string[]> {
  const rows = await srv.app.ctx.db
    .selectFrom('outbox_events')
    .select(['type', 'payload'])
    .where('platform_id', '=', platformId)
    .where('resource_id', '=', accountId)
    .orderBy('id')
    .execute();
  for (const r of rows) expect(r.type).toBe('EXTERNAL_ACCOUNT.STATUS_UPDATED');
  return rows.map((r) => (JSON.parse(r.payload) as { status: string }).status);
}

/** Asserts a 400 of a verify that failed the challenge: the account is UNVERIFIED by then. */
export function expectRejected(res: Res, reason: 'SIGNATURE_INVALID' | 'CHALLENGE_EXPIRED'): void {
  expect(res.status, res.text).toBe(400);
  expect(res.body).toMatchObject({ status: 400, code: 'INVALID_INPUT', details: { reason, status: 'UNVERIFIED' } });
}

/** The signed EXTERNAL_ACCOUNT.STATUS_UPDATED webhook that moved the account to `status`, checked against the signing key. */
export async function signedStatusWebhook(p: PlatformHandle, rec: Receiver, accountId: string, status: string) {
  const hook = await waitFor(() =>
    rec.received.find(
      (r) => r.body?.type === 'EXTERNAL_ACCOUNT.STATUS_UPDATED' && r.body.data?.id === accountId && r.body.data?.status === status,
    ),
  );
  const key = (await p.api.get('/webhooks/signing-key')).body.publicKey as string;
  expect(verifyWebhook(hook.raw, hook.headers['x-grid-signature'] as string, key)).toBe(true);
  return hook.body;
}
