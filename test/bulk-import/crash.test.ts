/**
 * A bulk import whose process is SIGKILLed mid-way resumes after a restart on the same store and
 * creates each row's customer exactly once: a chunk of rows, its deletion and the job's counters
 * commit together (src/modules/bulk-import/bulk-import.service.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, killChildren, startCli } from '../helpers/child.ts';
import { basicHeader, Client } from '../helpers/http.ts';
import { waitFor } from '../helpers/receiver.ts';
import { ADMIN_TOKEN } from '../helpers/server.ts';

const cleanup: (() => unknown)[] = [];
afterAll(async () => {
  killChildren();
  for (const c of cleanup.reverse()) await c();
});

const ROWS = 1500;

describe('a bulk import interrupted by SIGKILL', () => {
  it('resumes after the restart and creates every row exactly once', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corridor-bulk-crash-'));
    cleanup.push(() => fs.rmSync(dataDir, { recursive: true, force: true }));
    const env = cliEnv(dataDir, { CORRIDOR_ADMIN_TOKEN: ADMIN_TOKEN });
    const first = await startCli(env);
    const created = await new Client(first.origin, { bearer: ADMIN_TOKEN }).post('/_admin/platforms', { name: 'Bulk crash platform' });
    expect(created.status, created.text).toBe(201);
    const creds = { id: created.body.token.clientId as string, secret: created.body.token.clientSecret as string };
    const api1 = new Client(first.baseUrl, { basic: creds });
    const domain = (await api1.get('/config')).body.umaDomain as string;
    const lines = ['umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country'];
    for (let i = 0; i < ROWS; i++)
      lines.push(`c${i}@${domain},crash-${i},INDIVIDUAL,Crash Row ${i},1990-01-02,1 Main St,San Francisco,CA,94105,US`);
    const form = new FormData();
    form.append('file', new Blob([lines.join('\n')], { type: 'text/csv' }), 'customers.csv');
    const res = await fetch(`${first.baseUrl}/customers/bulk/csv`, {
      method: 'POST',
      headers: { authorization: basicHeader(creds) },
      body: form,
    });
    expect(res.status).toBe(202);
    const { jobId } = (await res.json()) as { jobId: string };

    // Killed once some rows are in and most are not.
    await waitFor(async () => {
      const job = (await api1.get(`/customers/bulk/jobs/${jobId}`)).body;
      return job.progress.processed > 0 ? true : undefined;
    }, 60_000);
    await first.kill();
    const second = await startCli(env);
    const api2 = new Client(second.baseUrl, { basic: creds });
    const before = (await api2.get(`/customers/bulk/jobs/${jobId}`)).body;
    expect(before.progress.processed).toBeLessThan(ROWS);

    const job = await waitFor(async () => {
      const j = (await api2.get(`/customers/bulk/jobs/${jobId}`)).body;
      return j.status === 'COMPLETED' || j.status === 'FAILED' ? j : undefined;
    }, 120_000);
    expect(job).toMatchObject({ status: 'COMPLETED', progress: { total: ROWS, processed: ROWS, successful: ROWS, failed: 0 }, errors: [] });
    const customers = await api2.get('/customers', { query: { limit: 1 } });
    expect(customers.body.totalCount).toBe(ROWS);
    await second.stop();
  });
});
