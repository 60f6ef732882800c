/**
 * The card number and the reveal token stay out of the log: a real `corridor start` process at
 * LOG_LEVEL=info issues a card, reveals it and serves the page (twice: shown, then spent), and its
 * whole output must hold neither the number nor the token; the page's request line shows the route
 * pattern. (A child process: vitest.config.ts's SLOW list is where such files belong.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, killChildren, startCli } from '../helpers/child.ts';
import { Client } from '../helpers/http.ts';
import { waitFor } from '../helpers/receiver.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-card-logs-'));
afterAll(() => {
  killChildren();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the log of a process that reveals a card', () => {
  it('never shows the card number or the reveal token', async () => {
    const cli = await startCli(cliEnv(dir, { LOG_LEVEL: 'info' }));
    const api = new Client(cli.baseUrl, { basic: cli.creds });
    // Account ids are random here: one ending in a sandbox funding-source suffix (002, 003) is skipped.
    let card: { id: string } | undefined;
    for (let i = 0; i < 5 && !card; i++) {
      const customer = await api.post('/customers', {
        customerType: 'INDIVIDUAL',
        platformCustomerId: `card-logs-${Date.now()}-${i}`,
        fullName: 'Log Holder',
        birthDate: '1990-01-15',
        nationality: 'US',
      });
      expect(customer.status, customer.text).toBe(201);
      const accounts = await api.get('/customers/internal-accounts', { query: { customerId: customer.body.id, currency: 'USD' } });
      const accountId = accounts.body.data[0].id as string;
      if (/00[23]$/.test(accountId)) continue;
      const created = await api.post('/cards', {
        cardholderId: customer.body.id,
        platformCardId: `card-logs-${i}-x`,
        form: 'VIRTUAL',
        fundingSources: [accountId],
      });
      expect(created.status, created.text).toBe(201);
      card = created.body;
    }
    const id = card!.id;
    await waitFor(async () => (await api.get(`/cards/${id}`)).body.state === 'ACTIVE');
    const revealed = await api.post(`/cards/${id}/reveal`);
    expect(revealed.status, revealed.text).toBe(200);
    const url = revealed.body.panEmbedUrl as string;
    const token = url.split('/').pop()!;
    const page = await fetch(url);
    expect(page.status).toBe(200);
    const pan = /id="pan"[^>]*>([^<]*)</.exec(await page.text())![1]!.replace(/ /g, '');
    expect(pan).toMatch(/^\d{16}$/);
    expect((await fetch(url)).status).toBe(410);
    await cli.stop();
    const { stdout, stderr } = cli.output();
    const requestLines = stdout.split('\n').filter((l) => l.includes('"msg":"request"'));
    expect(requestLines.some((l) => l.includes('/hosted/card-reveal/:token'))).toBe(true);
    for (const secret of [pan, pan.slice(-10), token]) {
      expect(stdout).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    }
  }, 60_000);
});
