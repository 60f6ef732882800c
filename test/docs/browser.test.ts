/**
 * /docs in headless Chromium (playwright-core, /usr/bin/chromium): the page is Corridor's (title,
 * logo, no "Explore" box), renders the served document with its enums and examples, links the
 * sandbox's magic values — and every request the browser makes goes to the server itself (no CDN,
 * fonts or validator). Screenshots go to test-results/ (CI keeps them as artifacts).
 *
 * Needs a Chromium: the Debian package `chromium` (.ci/run installs it), or CHROMIUM_PATH. Without
 * one the file fails, saying so: a browser test that quietly does not run proves nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAGIC_VALUES_PATH } from '../../src/http/openapi-enrich.ts';
import { laneStore, startServer, type TestServer } from '../helpers/server.ts';

const chromiumPath = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'].find(
  (p): p is string => p !== undefined && p !== '' && fs.existsSync(p),
);
if (!chromiumPath)
  throw new Error('No Chromium found: install the Debian package `chromium` (apt-get install chromium) or set CHROMIUM_PATH');

const SHOTS = path.resolve(import.meta.dirname, '../../test-results/docs');

describe('/docs in headless Chromium', () => {
  let srv: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    srv = await startServer();
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true });
    fs.mkdirSync(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await srv?.close();
  });

  /** A page that records every URL it requests and every console error. */
  async function recordingPage(): Promise<{ page: Page; urls: string[]; errors: string[] }> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const urls: string[] = [];
    const errors: string[] = [];
    page.on('request', (r) => urls.push(r.url()));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    return { page, urls, errors };
  }

  const elsewhere = (urls: string[]) => urls.filter((u) => !u.startsWith(`${srv.origin}/`) && !u.startsWith('data:'));

  // Swagger UI takes a while over a 3.5 MB document on a busy 2-core machine: generous waits.
  const SLOW_MS = 90_000;

  it(
    'renders Corridor’s reference from the served document, asking nothing of anyone else; its link opens the magic values',
    async () => {
      const { page, urls, errors } = await recordingPage();
      page.setDefaultTimeout(SLOW_MS);
      try {
        expect((await page.goto(`${srv.origin}/docs`))?.status()).toBe(200);
        await page.locator('.swagger-ui .info h2.title').waitFor();
        expect(await page.title()).toBe('Corridor API reference');
        expect(await page.locator('.swagger-ui .info h2.title').textContent()).toContain('Corridor');
        // Corridor's logo, its links, and no box to load another document.
        expect(await page.locator('.topbar-wrapper img').getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
        expect(await page.locator('.download-url-wrapper').isVisible()).toBe(false);
        await page.locator('#corridor-magic-values').waitFor();
        await page.screenshot({ path: path.join(SHOTS, `docs-${laneStore()}.png`) });

        // An operation opened: its response descriptions and the example request body.
        const quote = page.locator('.opblock[id$="-createQuote"]');
        await quote.locator('.opblock-summary').click();
        await quote.locator('.responses-wrapper').waitFor();
        const text = (await quote.textContent()) ?? '';
        expect(text).not.toContain('Default Response');
        expect(text).toContain('Created: the Quote.');
        expect(text).toContain('QUOTE_NOT_FOUND');
        expect(text).toContain('Invoice 1042');
        await quote.screenshot({ path: path.join(SHOTS, `create-quote-${laneStore()}.png`) });

        // Enum values: a query parameter lists its values (an anyOf of literals showed none).
        const list = page.locator('.opblock[id$="-listTransactions"]');
        await list.locator('.opblock-summary').click();
        await list.locator('.parameters').waitFor();
        const params = (await list.locator('.parameters').textContent()) ?? '';
        expect(params).toContain('Available values');
        expect(params).toContain('PENDING_AUTHORIZATION');

        await page.locator('#corridor-magic-values').click();
        await page.waitForURL(`${srv.origin}${MAGIC_VALUES_PATH}`);
        await page.getByRole('heading', { name: 'Sandbox magic values' }).waitFor();
        expect(await page.locator('#quote-execution').textContent()).toContain('completes after 6 min');
        await page.screenshot({ path: path.join(SHOTS, `magic-values-${laneStore()}.png`) });

        expect(urls).toContain(`${srv.origin}/docs/json`);
        expect(elsewhere(urls)).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await page.close();
      }
    },
    4 * SLOW_MS,
  );
});
