/** Helpers of the KYC link tests: making links, opening and submitting the hosted page over plain HTTP, webhooks. */
import { expect } from 'vitest';
import type { Client, Res } from '../helpers/http.ts';
import { startReceiver, waitFor, type Received, type Receiver } from '../helpers/receiver.ts';
import type { PlatformHandle, TestServer } from '../helpers/server.ts';

/** A hosted page answer: status, headers and the HTML. */
export interface Page {
  status: number;
  headers: Headers;
  html: string;
}

/** POST /customers/{id}/kyc-link; `body` undefined sends no body at all. */
export function requestLink(api: Client, customerId: string, body?: unknown, headers?: Record<string, string>): Promise<Res> {
  return api.post(`/customers/${encodeURIComponent(customerId)}/kyc-link`, body, headers ? { headers } : undefined);
}

/** A new link's response body; fails on anything but 201. */
export async function newLink(
  api: Client,
  customerId: string,
  body: unknown = {},
): Promise<{ kycUrl: string; expiresAt: string; provider: string }> {
  const res = await requestLink(api, customerId, body);
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** The token: the last path segment of a kycUrl. */
export const tokenOf = (kycUrl: string) => new URL(kycUrl).pathname.split('/').pop()!;

/** GET the hosted page. */
export async function openPage(url: string, init: RequestInit = {}): Promise<Page> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

/** POST the hosted form as a browser does (application/x-www-form-urlencoded), without following a redirect. */
export async function submitPage(
  url: string,
  fields: Record<string, string> | string = {},
  contentType = 'application/x-www-form-urlencoded',
): Promise<Page> {
  const body = typeof fields === 'string' ? fields : new URLSearchParams(fields).toString();
  return openPage(url, { method: 'POST', headers: { 'content-type': contentType }, body });
}

/** The text of the element with this id on a page (tags stripped, entities left as sent). */
export function textById(html: string, id: string): string | undefined {
  const m = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</`).exec(html);
  return m?.[1];
}

/** The customer's kycStatus or kybStatus over the API. */
export async function statusOf(api: Client, customerId: string): Promise<string> {
  const res = await api.get(`/customers/${customerId}`);
  expect(res.status, res.text).toBe(200);
  return res.body.customerType === 'BUSINESS' ? res.body.kybStatus : res.body.kycStatus;
}

/** A receiver set as the platform's webhook endpoint, the TEST event from setting it already received. */
export async function endpointFor(p: PlatformHandle, receivers: Receiver[]): Promise<Receiver> {
  const r = await startReceiver();
  receivers.push(r);
  const res = await p.api.patch('/config', { webhookEndpoint: r.url });
  expect(res.status, res.text).toBe(200);
  await waitFor(() => r.received.find((x) => x.body?.type === 'TEST'));
  return r;
}

/** Waits for the webhook of `type` about `resourceId` (the customer's id is `data.id`, a verification's `data.customerId`). */
export function webhook(r: Receiver, type: string, customerId: string): Promise<Received> {
  return waitFor(() =>
    r.received.find((x) => x.body?.type === type && (x.body?.data?.id === customerId || x.body?.data?.customerId === customerId)),
  );
}

/** The platform's webhook public key (PEM). */
export async function signingKey(p: PlatformHandle): Promise<string> {
  const res = await p.api.get('/webhooks/signing-key');
  expect(res.status, res.text).toBe(200);
  return res.body.publicKey as string;
}

/** The CUSTOMER.* and VERIFICATION.* event types the outbox holds about one customer, oldest first. */
export async function eventTypes(srv: TestServer, platformId: string, customerId: string): Promise<string[]> {
  const rows = await srv.app.ctx.db
    .selectFrom('outbox_events')
    .select(['type', 'payload'])
    .where('platform_id', '=', platformId)
    .where((eb) => eb.or([eb('type', 'like', 'CUSTOMER.%'), eb('type', 'like', 'VERIFICATION.%')]))
    .orderBy('id', 'asc')
    .execute();
  return rows
    .filter((r) => {
      const data = JSON.parse(r.payload) as { id?: string; customerId?: string };
      return data.id === customerId || data.customerId === customerId;
    })
    .map((r) => r.type);
}
