/**
 * Bulk customer import over real HTTP (POST /customers/bulk/csv, GET /customers/bulk/jobs/{jobId}):
 * rows become customers exactly as POST /customers would make them, a bad row is a per-row error
 * with its line, a bad file is a 400 that leaves nothing behind, and the BULK_UPLOAD.* webhook is
 * signed. The request shapes are the SDK's (`customers.bulk.uploadCsv`: multipart with `file`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../src/webhook-delivery/verify.ts';
import { basicHeader, expectError, type Res } from '../helpers/http.ts';
import { startReceiver, waitFor, type Receiver } from '../helpers/receiver.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';

let srv: TestServer;
let rec: Receiver;
beforeAll(async () => {
  srv = await startServer({ env: { CORRIDOR_BULK_CSV_MAX_BYTES: String(256 * 1024) } });
  rec = await startReceiver();
});
afterAll(async () => {
  await srv.close();
  await rec.close();
});

const HEADER = 'umaAddress,platformCustomerId,customerType,fullName,birthDate,addressLine1,city,state,postalCode,country,businessLegalName';

/** The platform's UMA domain, for addresses it accepts. */
async function domain(p: PlatformHandle): Promise<string> {
  return (await p.api.get('/config')).body.umaDomain as string;
}

/** POST /customers/bulk/csv as the SDK sends it: multipart/form-data with the CSV in `file`. */
async function upload(p: PlatformHandle, csv: string | Buffer, opts: { field?: string; contentType?: string } = {}): Promise<Res> {
  const form = new FormData();
  form.append(
    opts.field ?? 'file',
    new Blob([typeof csv === 'string' ? csv : new Uint8Array(csv)], { type: opts.contentType ?? 'text/csv' }),
    'customers.csv',
  );
  const res = await fetch(`${srv.baseUrl}/customers/bulk/csv`, {
    method: 'POST',
    headers: { authorization: basicHeader(p.creds) },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers, text };
}

async function finished(p: PlatformHandle, jobId: string) {
  return waitFor(async () => {
    const res = await p.api.get(`/customers/bulk/jobs/${jobId}`);
    expect(res.status, res.text).toBe(200);
    return res.body.status === 'COMPLETED' || res.body.status === 'FAILED' ? res.body : undefined;
  }, 20_000);
}

describe('POST /customers/bulk/csv', () => {
  it('imports the rows as customers; a bad or duplicate row is a per-row error with its line; the webhook is signed', async () => {
    const p = await srv.newPlatform();
    expect((await p.api.patch('/config', { webhookEndpoint: rec.url })).status).toBe(200);
    const d = await domain(p);
    const csv = [
      HEADER,
      `alice@${d},bulk-alice,INDIVIDUAL,Alice Bulk,1990-01-02,1 Main St,San Francisco,CA,94105,US,`,
      `$bob@${d},bulk-bob,INDIVIDUAL,"Bob ""Bobby"" Bulk",1985-06-15,"2 Market St, Apt 4",San Francisco,CA,94105,US,`,
      `acme@${d},bulk-acme,BUSINESS,,,3 Mission St,San Francisco,CA,94105,US,Acme Corp`,
      `dup@${d},bulk-alice,INDIVIDUAL,Alice Again,1990-01-02,1 Main St,San Francisco,CA,94105,US,`,
      `carol@${d},bulk-carol,INDIVIDUAL,Carol Bulk,not-a-date,1 Main St,San Francisco,CA,94105,US,`,
      `,,ROBOT,,,,,,,,`,
      '',
    ].join('\r\n');
    const res = await upload(p, csv);
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ jobId: expect.stringMatching(/^Job:/), status: 'PENDING' });
    const job = await finished(p, res.body.jobId);
    expect(job).toMatchObject({ id: res.body.jobId, status: 'COMPLETED', progress: { total: 6, processed: 6, successful: 3, failed: 3 } });
    expect(job.completedAt).toEqual(expect.any(String));
    expect(
      job.errors.map((e: { correlationId: string; code: string; details: { row: number } }) => [e.correlationId, e.code, e.details.row]),
    ).toEqual([
      ['bulk-alice', 'CONFLICT', 5],
      ['bulk-carol', 'INVALID_INPUT', 6],
      ['row_7', 'INVALID_INPUT', 7],
    ]);
    expect(job.errors[1].details.errors).toEqual([expect.objectContaining({ field: 'birthDate' })]);
    // The customers are there, as POST /customers makes them.
    const list = await p.api.get('/customers', { query: { limit: 10 } });
    const byId = new Map(list.body.data.map((c: { platformCustomerId: string }) => [c.platformCustomerId, c]));
    expect([...byId.keys()].sort()).toEqual(['bulk-acme', 'bulk-alice', 'bulk-bob']);
    expect(byId.get('bulk-bob')).toMatchObject({
      fullName: 'Bob "Bobby" Bulk',
      umaAddress: `$bob@${d}`,
      address: { line1: '2 Market St, Apt 4' },
    });
    expect(byId.get('bulk-acme')).toMatchObject({ customerType: 'BUSINESS', businessInfo: { legalName: 'Acme Corp' } });
    // BULK_UPLOAD.COMPLETED, signed, carrying the job.
    const event = await waitFor(() => rec.received.find((r) => r.body?.type === 'BULK_UPLOAD.COMPLETED' && r.body.data.id === job.id));
    const key = (await p.api.get('/webhooks/signing-key')).body.publicKey;
    expect(verifyWebhook(event.raw, String(event.headers['x-grid-signature']), key)).toBe(true);
    expect(event.body.data).toEqual(job);
  });

  it('is FAILED with BULK_UPLOAD.FAILED when no row could be imported', async () => {
    const p = await srv.newPlatform();
    expect((await p.api.patch('/config', { webhookEndpoint: rec.url })).status).toBe(200);
    const res = await upload(p, `${HEADER}\nnobody@elsewhere.example,x1,INDIVIDUAL,No Body,1990-01-01,1 Main St,SF,CA,94105,US,\n`);
    expect(res.status, res.text).toBe(202);
    const job = await finished(p, res.body.jobId);
    expect(job).toMatchObject({ status: 'FAILED', progress: { total: 1, processed: 1, successful: 0, failed: 1 } });
    await waitFor(() => rec.received.find((r) => r.body?.type === 'BULK_UPLOAD.FAILED' && r.body.data.id === job.id));
  });

  it('refuses a bad file with a 400 that names the problem, and leaves nothing behind', async () => {
    const p = await srv.newPlatform();
    const d = await domain(p);
    const row = `ok@${d},ok-1,INDIVIDUAL,Ok Row,1990-01-02,1 Main St,San Francisco,CA,94105,US,`;
    const cases: [string | Buffer, RegExp][] = [
      ['', /empty/],
      [`${HEADER}\n`, /no rows/],
      [`${HEADER.replace('umaAddress,', '')}\n${row}`, /umaAddress is a required column/],
      [`${HEADER},nickname\n${row},x`, /nickname is not a known column/],
      [`${HEADER},city\n${row},x`, /city appears twice/],
      [`${HEADER}\n${row}\n"unclosed,quote\n`, /quoted field is not closed/],
      [Buffer.concat([Buffer.from(`${HEADER}\n`), Buffer.from([0xff, 0xfe, 0x41]), Buffer.from(',\n')]), /not UTF-8/],
      [`${HEADER}\n${`${row}\n`.repeat(5000)}`, /larger than 262144 bytes/],
    ];
    for (const [csv, message] of cases) {
      const got = await upload(p, csv);
      expect(got.status, `${String(message)}: ${got.text}`).toBe(400);
      const res = expectError(got, 400, 'INVALID_INPUT');
      expect(res.body.message, String(message)).toMatch(message);
    }
    expectError(await upload(p, `${HEADER}\n${row}`, { field: 'csv' }), 400, 'INVALID_INPUT');
    const notMultipart = await p.api.post('/customers/bulk/csv', { file: 'x' });
    expectError(notMultipart, 400, 'INVALID_INPUT');
    // Nothing was imported, and no job is visible.
    expect((await p.api.get('/customers')).body.data).toEqual([]);
    const rows = await srv.app.ctx.db.selectFrom('bulk_import_jobs').select('id').where('platform_id', '=', p.id).execute();
    expect(rows).toEqual([]);
    const chunks = await srv.app.ctx.db.selectFrom('bulk_import_chunks').select('job_id').where('platform_id', '=', p.id).execute();
    expect(chunks).toEqual([]);
  });

  it("answers 404 for an unknown job or another platform's, and needs MANAGE to upload and VIEW to read", async () => {
    const p = await srv.newPlatform();
    const other = await srv.newPlatform();
    const d = await domain(p);
    const res = await upload(p, `${HEADER}\nperm@${d},perm-1,INDIVIDUAL,Perm Row,1990-01-02,1 Main St,SF,CA,94105,US,\n`);
    expect(res.status, res.text).toBe(202);
    expectError(await other.api.get(`/customers/bulk/jobs/${res.body.jobId}`), 404, 'BULK_UPLOAD_JOB_NOT_FOUND');
    expectError(await p.api.get('/customers/bulk/jobs/Job:019542f5-b3e7-1d02-0000-000000000006'), 404, 'BULK_UPLOAD_JOB_NOT_FOUND');
    const view = await p.api.post('/tokens', { name: 'view', permissions: ['VIEW'] });
    const viewer = {
      ...p,
      creds: { id: view.body.clientId, secret: view.body.clientSecret },
      api: p.api.with({ basic: { id: view.body.clientId, secret: view.body.clientSecret } }),
    };
    expectError(await upload(viewer, `${HEADER}\n`), 403, 'FORBIDDEN');
    expect((await viewer.api.get(`/customers/bulk/jobs/${res.body.jobId}`)).status).toBe(200);
    await finished(p, res.body.jobId);
  });
});
