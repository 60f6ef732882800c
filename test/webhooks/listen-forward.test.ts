/**
 * `corridor webhooks listen --forward-to` (src/webhook-delivery/listen.ts), in process on real HTTP:
 * each correctly signed event goes on to the developer's app with the same bytes and signature
 * headers, and the app's answer is the answer Corridor gets; a failing app is a failing endpoint; an
 * unreachable one is 502; a forged request is refused and never forwarded.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forward, startListener, type Listener } from '../../src/webhook-delivery/listen.ts';
import { signatureHeader } from '../../src/webhook-delivery/keys.ts';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let app: Receiver;
const open: Listener[] = [];

beforeAll(async () => {
  srv = await startServer();
  app = await startReceiver('/app/hooks');
});
afterAll(async () => {
  for (const l of open) await l.close();
  await app.close();
  await srv.close();
});

async function listener(publicKeyPem: string, forwardTo: string) {
  const lines: string[] = [];
  const l = await startListener({ port: 0, host: '127.0.0.1', publicKeyPem, write: (x) => lines.push(x), forwardTo });
  open.push(l);
  return { l, lines };
}

it('forwards a real flow’s events to the app, signature intact, and answers Corridor with the app’s answer', async () => {
  const p = await srv.newPlatform();
  const publicKeyPem = (await p.api.get('/webhooks/signing-key')).body.publicKey as string;
  const { l, lines } = await listener(publicKeyPem, app.url);
  app.respond = () => ({ status: 202, body: 'approved by the app', headers: { 'content-type': 'text/plain' } });
  const before = app.received.length;

  // Setting the endpoint sends a TEST event through the listener to the app.
  expect((await p.api.patch('/config', { webhookEndpoint: l.url })).status).toBe(200);
  await waitFor(() => app.received.length > before);
  // The synchronous test webhook reports what the app answered.
  const sent = await p.api.post('/sandbox/webhooks/test');
  expect(sent.status, sent.text).toBe(200);
  expect(sent.body).toEqual({ url: l.url, response_status: 202, response_body: 'approved by the app' });

  const forwarded = app.received.slice(before);
  expect(forwarded.length).toBeGreaterThanOrEqual(2);
  for (const r of forwarded) {
    expect(r.url).toBe('/app/hooks');
    // The bytes and the signature Corridor made: the app verifies them with the platform's key.
    expect(verifyWebhook(r.raw, r.headers['x-grid-signature'] as string, publicKeyPem)).toBe(true);
    expect(r.headers['x-service-signature']).toBe(r.headers['x-grid-signature']);
    expect(r.body.type).toBe('TEST');
  }
  await waitFor(() => lines.length >= 2);
  for (const line of lines) expect(line).toMatch(/ TEST {2}Webhook:[0-9a-f-]{36} {2}- {2}signature ok {2}-> forwarded 202 in \d+ ms$/);
});

it('passes an app’s failure back (Corridor retries it), answers 502 when the app cannot be reached, and never forwards a forgery', async () => {
  const key = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const publicKeyPem = key.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const body = Buffer.from(JSON.stringify({ id: 'Webhook:1', type: 'TEST', timestamp: '2026-01-01T00:00:00Z', data: {} }));
  const signed = { 'content-type': 'application/json', 'x-grid-signature': signatureHeader(body, key.privateKey) };
  const post = async (url: string, headers: Record<string, string>) => {
    const res = await fetch(url, { method: 'POST', body: new Uint8Array(body), headers });
    return { status: res.status, text: await res.text() };
  };

  const { l, lines } = await listener(publicKeyPem, app.url);
  app.respond = () => ({ status: 500, body: 'app broke' });
  expect(await post(l.url, signed)).toEqual({ status: 500, text: 'app broke' });
  expect(lines.at(-1)).toMatch(/ TEST {2}Webhook:1 {2}- {2}signature ok {2}-> forwarded 500 in \d+ ms$/);

  // A forged signature: 401 from the listener, and the app sees nothing.
  const seen = app.received.length;
  const forged = { ...signed, 'x-grid-signature': signatureHeader(body, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey) };
  expect((await post(l.url, forged)).status).toBe(401);
  expect(app.received.length).toBe(seen);
  expect(lines.at(-1)).toMatch(/signature INVALID {2}-> 401$/);

  // Nothing listening at the target: 502, and the line says why.
  const closed = await startReceiver('/gone');
  const goneUrl = closed.url;
  await closed.close();
  const { l: l2, lines: lines2 } = await listener(publicKeyPem, goneUrl);
  const r = await post(l2.url, signed);
  expect(r.status).toBe(502);
  expect(r.text).toContain(`forward to ${goneUrl} failed`);
  expect(lines2.at(-1)).toMatch(/signature ok {2}-> forward FAILED \(ECONNREFUSED\): 502$/);
  expect(await forward(goneUrl, body, {})).toMatchObject({ error: 'ECONNREFUSED' });
});
