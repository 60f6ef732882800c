/**
 * The hosted verification page in a real browser: headless Chromium driven by playwright-core opens
 * a link, picks an outcome, submits, and the test checks the customer and the signed webhook over
 * the API; with a redirectUri, the browser lands there (the page's CSP lets its form be redirected
 * to that origin) without a Referer. The page must load with no console error (a CSP violation
 * would show as one).
 *
 * Needs a Chromium: the Debian package `chromium` (.ci/run installs it), or CHROMIUM_PATH. Without
 * one the file fails, saying so: a browser test that quietly does not run proves nothing.
 */
import fs from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { createCustomer, individualBody } from '../helpers/kyc.ts';
import { closeServer, listenLoopback } from '../helpers/loopback.ts';
import type { Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import { endpointFor, eventTypes, newLink, signingKey, statusOf, webhook } from './helpers.ts';

const chromiumPath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(
  (p): p is string => p !== undefined && p !== '' && fs.existsSync(p),
);
if (!chromiumPath)
  throw new Error('No Chromium found: install the Debian package `chromium` (apt-get install chromium) or set CHROMIUM_PATH');

describe('the hosted page in headless Chromium', () => {
  let srv: TestServer;
  let p: PlatformHandle;
  let hooks: Receiver;
  let browser: Browser;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    srv = await startServer();
    p = await srv.newPlatform({ name: 'Browser Bank' });
    hooks = await endpointFor(p, receivers);
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.close();
    for (const r of receivers) await r.close();
  });

  /** A new page that records console errors. */
  async function pageWithConsole(): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    return { page, errors };
  }

  it('open the link, pick Reject, submit: the customer is REJECTED and the signed webhook says so', async () => {
    const c = await createCustomer(p.api, individualBody({ fullName: 'Robin Browser 003' }));
    const link = await newLink(p.api, c.id);
    const { page, errors } = await pageWithConsole();
    try {
      const res = await page.goto(link.kycUrl);
      expect(res?.status()).toBe(200);
      expect(await page.getByRole('heading', { name: 'Verify your identity' }).textContent()).toBe('Verify your identity');
      expect(await page.locator('#customer-name').textContent()).toBe('Robin Browser 003');
      expect(await page.locator('#customer-status').textContent()).toBe('UNVERIFIED');

      await page.getByLabel(/Reject/).check();
      await page.getByRole('button', { name: 'Complete verification' }).click();
      await page.getByRole('heading', { name: 'Verification submitted' }).waitFor();
      expect(await page.locator('#customer-status').textContent()).toBe('REJECTED');
      expect(await page.locator('#verification-status').textContent()).toBe('REJECTED');
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }

    expect(await statusOf(p.api, c.id)).toBe('REJECTED');
    expect(await eventTypes(srv, p.id, c.id)).toEqual(['VERIFICATION.REJECTED', 'CUSTOMER.KYC_REJECTED']);
    const hook = await webhook(hooks, 'CUSTOMER.KYC_REJECTED', c.id);
    expect(verifyWebhook(hook.raw, hook.headers['x-grid-signature'] as string, await signingKey(p))).toBe(true);
    expect(hook.body.data).toMatchObject({ id: c.id, kycStatus: 'REJECTED' });

    // Used: opening it again shows the used-link page.
    const again = await browser.newPage();
    try {
      expect((await again.goto(link.kycUrl))?.status()).toBe(410);
      expect(await again.getByRole('heading', { name: 'Link already used' }).textContent()).toBe('Link already used');
    } finally {
      await again.close();
    }
  });

  it('with a redirectUri: submitting lands the browser there, without a Referer', async () => {
    const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
    const app = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Back in the app</title><h1>Back in the app</h1>');
    });
    const doneUrl = `${await listenLoopback(app, '/onboarding/done')}?step=kyc`;
    try {
      const c = await createCustomer(p.api, individualBody({ fullName: 'Ada Redirect 003' }));
      const link = await newLink(p.api, c.id, { redirectUri: doneUrl });
      const { page, errors } = await pageWithConsole();
      try {
        await page.goto(link.kycUrl);
        await page.getByLabel(/Approve/).check();
        await page.getByRole('button', { name: 'Complete verification' }).click();
        await page.waitForURL(doneUrl);
        expect(await page.getByRole('heading', { name: 'Back in the app' }).textContent()).toBe('Back in the app');
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
      // (The browser may also ask the app for its /favicon.ico.)
      const landed = seen.filter((s) => s.url.startsWith('/onboarding/'));
      expect(landed.map((s) => s.url)).toEqual(['/onboarding/done?step=kyc']);
      expect(landed[0]!.headers.referer).toBeUndefined();
      expect(await statusOf(p.api, c.id)).toBe('APPROVED');
      const hook = await webhook(hooks, 'CUSTOMER.KYC_APPROVED', c.id);
      expect(verifyWebhook(hook.raw, hook.headers['x-grid-signature'] as string, await signingKey(p))).toBe(true);
    } finally {
      await closeServer(app);
    }
  });
});
