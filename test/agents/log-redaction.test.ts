/**
 * Hostile review, defect 11: an agent device code is a credential (redeeming it yields the agent's
 * access token). Matched routes that carry one in their path already logged the route pattern; a
 * URL no route matched (a typo, a wrong method) was logged in full, code included. The real
 * `corridor start` process at LOG_LEVEL=info is asked for both, and its log must not hold the code.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, killChildren, startCli } from '../helpers/child.ts';
import { Client } from '../helpers/http.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-logs-'));
afterAll(() => {
  killChildren();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('the request log', () => {
  it('never shows a device code, whether or not a route matched the URL', async () => {
    const cli = await startCli(cliEnv(dir, { LOG_LEVEL: 'info' }));
    const api = new Client(cli.baseUrl, { basic: cli.creds });
    const customer = await api.post('/customers', {
      customerType: 'INDIVIDUAL',
      platformCustomerId: `logs-${Date.now()}`,
      fullName: 'Jane Smith',
      birthDate: '1990-01-15',
      nationality: 'US',
    });
    expect(customer.status, customer.text).toBe(201);
    const created = await api.post('/agents', {
      name: 'logged',
      customerId: customer.body.id,
      policy: {
        permissions: ['VIEW_TRANSACTIONS'],
        defaultExecutionMode: 'AUTO',
        spendingLimits: { currency: 'USD', perTransactionLimit: 100 },
      },
    });
    expect(created.status, created.text).toBe(201);
    const code = created.body.deviceCode.code as string;
    const anon = new Client(cli.baseUrl);
    // Unmatched: a wrong method, a misspelt path, the code in a query string; then the real routes.
    expect((await anon.get(`/agents/device-codes/${code}/redeem`)).status).toBe(405);
    expect((await anon.post(`/agents/device-code/${code}/redeem`)).status).toBe(404);
    expect((await anon.get(`/agents/lookup?code=${code.toLowerCase()}`)).status).toBeGreaterThanOrEqual(400);
    expect((await api.get(`/agents/device-codes/${code}/status`)).status).toBe(200);
    const redeemed = await anon.post(`/agents/device-codes/${code}/redeem`);
    expect(redeemed.status).toBe(200);
    const token = redeemed.body.accessToken as string;
    expect((await anon.get(`/agents/me/${token}`)).status).toBeGreaterThanOrEqual(400);
    await cli.stop();
    const { stdout, stderr } = cli.output();
    const requestLines = stdout.split('\n').filter((l) => l.includes('"msg":"request"'));
    expect(requestLines.length).toBeGreaterThanOrEqual(6);
    for (const secret of [code, code.toLowerCase(), code.slice('AGENT-'.length), token]) {
      expect(stdout).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    }
    expect(requestLines.some((l) => l.includes('/device-codes/[redacted]'))).toBe(true);
  }, 60_000);
});
