/**
 * POST /cards/{id}/reveal and the page it links to, over HTTP: the page shows a Luhn-valid test-range
 * number, the CVV and expiry once; it is self-contained and not cached; the token works once and
 * for 5 minutes of the platform's clock; the brand name follows cardTokenization2faConfig; the number
 * is sealed at rest and appears in no API answer, webhook or event; the reveal is recorded against
 * the API token that asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.ts';
import { advance } from '../helpers/payments.ts';
import { uniqueId } from '../helpers/random.ts';
import type { PlatformHandle, TestServer } from '../helpers/server.ts';
import { activeCard, cardServer, issue, tokenWith, type Wire } from './helpers.ts';

const SECRET_KEY = 'cards-test-secret-key-0123456789abcdef';

let srv: TestServer;
let p: PlatformHandle;

beforeAll(async () => {
  // With a key: card numbers are sealed at rest.
  ({ srv } = await cardServer({ CORRIDOR_SECRET_KEY: SECRET_KEY }));
  p = await srv.newPlatform({ name: 'Card reveal' });
});
afterAll(async () => srv.close());

interface Page {
  status: number;
  headers: Headers;
  html: string;
}

async function open(url: string, method = 'GET'): Promise<Page> {
  const res = await fetch(url, { method, redirect: 'manual' });
  return { status: res.status, headers: res.headers, html: await res.text() };
}

const textById = (html: string, id: string) => new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];

/** An independent Luhn check. */
function luhn(pan: string): boolean {
  let sum = 0;
  [...pan].reverse().forEach((c, i) => {
    let d = Number(c);
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  });
  return sum % 10 === 0;
}

async function reveal(cardId: string): Promise<{ panEmbedUrl: string; expiresAt: string }> {
  const res = await p.api.post(`/cards/${cardId}/reveal`);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

describe('the reveal page', () => {
  it('shows the number (Luhn-valid, in the brand’s test range, ending in last4), the CVV and the expiry — once', async () => {
    const { card } = await activeCard(p.api);
    const before = Date.now();
    const r = await reveal(card.id);
    expect(r.panEmbedUrl).toMatch(new RegExp(`^${srv.origin}/2025-10-13/hosted/card-reveal/[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(r.expiresAt) - before).toBeGreaterThan(299_000);
    expect(Date.parse(r.expiresAt) - Date.now()).toBeLessThanOrEqual(300_000);
    // A HEAD (a link preview) is refused and spends nothing.
    expect((await open(r.panEmbedUrl, 'HEAD')).status).toBe(405);
    const page = await open(r.panEmbedUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
    // Self-contained: no scripts, no external resources.
    expect(page.html).not.toMatch(/<script|<img|<link|src=|href=|url\(|@import/i);
    const pan = textById(page.html, 'pan')!.replace(/ /g, '');
    expect(pan).toMatch(/^\d{16}$/);
    expect(luhn(pan)).toBe(true);
    expect(pan.startsWith(card.brand === 'VISA' ? '400000' : '555555')).toBe(true);
    expect(pan.slice(-4)).toBe(card.last4);
    expect(textById(page.html, 'cvv')).toMatch(/^\d{3}$/);
    expect(textById(page.html, 'expiry')).toBe(`${String(card.expMonth).padStart(2, '0')}/${card.expYear}`);
    expect(textById(page.html, 'brand-name')).toBe('Card reveal');
    // Spent: a second opening shows nothing.
    const again = await open(r.panEmbedUrl);
    expect(again.status).toBe(410);
    expect(again.html).not.toContain(pan);
    // The number is nowhere else: not in the card, its list, its webhooks' events, or the store in clear.
    const cardJson = JSON.stringify([(await p.api.get(`/cards/${card.id}`)).body, (await p.api.get('/cards')).body]);
    expect(cardJson).not.toContain(pan);
    const events = await srv.app.ctx.db.selectFrom('outbox_events').select('payload').where('platform_id', '=', p.id).execute();
    expect(events.some((e) => e.payload.includes(pan) || e.payload.includes(pan.slice(-10)))).toBe(false);
    const row = await srv.app.ctx.db.selectFrom('cards').select(['pan', 'cvv']).where('id', '=', card.id).executeTakeFirstOrThrow();
    expect(row.pan).toMatch(/^enc:v1:/);
    expect(row.cvv).toMatch(/^enc:v1:/);
    expect(row.pan).not.toContain(pan);
  });

  it('expires 5 minutes after the reveal on the platform’s clock; unknown and malformed tokens are 404', async () => {
    const q = await srv.newPlatform({ name: 'Card reveal expiry' });
    const { card } = await activeCard(q.api);
    const early = (await q.api.post(`/cards/${card.id}/reveal`)).body;
    const late = (await q.api.post(`/cards/${card.id}/reveal`)).body;
    await advance(q, 299);
    expect((await open(early.panEmbedUrl)).status).toBe(200);
    await advance(q, 1);
    const expired = await open(late.panEmbedUrl);
    expect(expired.status).toBe(410);
    expect(expired.html).toContain('expired');
    expect((await open(`${srv.baseUrl}/hosted/card-reveal/${'A'.repeat(43)}`)).status).toBe(404);
    expect((await open(`${srv.baseUrl}/hosted/card-reveal/short`)).status).toBe(404);
    expect((await open(late.panEmbedUrl, 'POST')).status).toBe(405);
  });

  it('names the brand after cardTokenization2faConfig.displayName when the platform set one', async () => {
    const q = await srv.newPlatform({ name: 'Card reveal brand' });
    const cfg = await q.api.patch('/config', { cardTokenization2faConfig: { displayName: 'Acme <Cards>' } });
    expect(cfg.status, cfg.text).toBe(200);
    const { card } = await activeCard(q.api);
    const page = await open((await q.api.post(`/cards/${card.id}/reveal`)).body.panEmbedUrl);
    expect(textById(page.html, 'brand-name')).toBe('Acme &lt;Cards&gt;');
  });
});

describe('POST /cards/{id}/reveal', () => {
  it('works for ACTIVE and FROZEN cards; PROCESSING and CLOSED ones have nothing to reveal (409)', async () => {
    const { h, card } = await activeCard(p.api);
    expect((await p.api.patch(`/cards/${card.id}`, { state: 'FROZEN' })).status).toBe(200);
    const frozen = await reveal(card.id);
    const processing = await issue(p.api, h, { platformCardId: `${uniqueId('pc')}-001` });
    expectError(await p.api.post(`/cards/${processing.id}/reveal`), 409, 'CONFLICT');
    expect((await p.api.patch(`/cards/${card.id}`, { state: 'CLOSED' })).status).toBe(200);
    expectError(await p.api.post(`/cards/${card.id}/reveal`), 409, 'CONFLICT');
    // A link minted before the close no longer shows the details.
    expect((await open(frozen.panEmbedUrl)).status).toBe(410);
  });

  it('is recorded against the API token that asked; VIEW cannot reveal; an unknown body field is 400', async () => {
    const { card } = await activeCard(p.api);
    const manage = await tokenWith(p, ['MANAGE']);
    const res = await manage.post(`/cards/${card.id}/reveal`);
    expect(res.status, res.text).toBe(200);
    const token = await srv.app.ctx.db
      .selectFrom('api_tokens')
      .select('id')
      .where('client_id', '=', manage.auth.basic!.id)
      .executeTakeFirstOrThrow();
    const reveals = await srv.app.ctx.db.selectFrom('card_reveals').selectAll().where('card_id', '=', card.id).execute();
    expect(reveals.map((r: Wire) => r.actor)).toEqual([token.id]);
    // Only the token's digest is stored.
    expect(reveals[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body.panEmbedUrl).not.toContain(reveals[0]!.token_hash);
    expectError(await (await tokenWith(p, ['VIEW'])).post(`/cards/${card.id}/reveal`), 403, 'FORBIDDEN');
    expect(expectError(await p.api.post(`/cards/${card.id}/reveal`, { why: 'x' }), 400, 'INVALID_INPUT').body.details.errors[0].field).toBe(
      'why',
    );
  });
});
