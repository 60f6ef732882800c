/** read: the authenticated list of the platform's internal accounts (Basic auth → SQL → JSON). */
import type { Scenario } from './types.ts';

export const readScenario: Scenario = {
  name: 'read',
  summary: 'GET /platform/internal-accounts, Basic auth (token lookup + one SELECT + response schema)',
  targets: { minRatio: 0.5, maxP99Ms: 10 },
  async setup(corridor) {
    const creds = await corridor.platform();
    const path = `${corridor.basePath}/platform/internal-accounts`;
    const headers = { authorization: creds.authorization };
    const probe = await corridor.request('GET', path, { headers });
    if (probe.status !== 200) throw new Error(`read: probe answered ${probe.status}: ${JSON.stringify(probe.body)}`);
    const data = (probe.body as { data?: unknown[] }).data;
    if (!Array.isArray(data) || data.length === 0) throw new Error('read: the platform has no internal accounts to list');
    return {
      request: { method: 'GET', path, headers },
      baseline: { method: 'GET', path, status: 200, body: probe.body },
    };
  },
};
