/** /documents: multipart upload and replace, content sniffing, size limit, listing, deletion, access. */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDocumentBytes } from '../../src/modules/kyc/documents.repo.ts';
import { type Client, expectError } from '../helpers/http.ts';
import { startServer, type PlatformHandle, type TestServer } from '../helpers/server.ts';
import {
  businessBody,
  createCustomer,
  createOwner,
  expectFieldError,
  fieldsOf,
  JPEG,
  ownerBody,
  PDF,
  PNG,
  sendForm,
  TEXT,
  upload,
} from '../helpers/kyc.ts';

const MiB = 1024 * 1024;

let srv: TestServer;
let p: PlatformHandle;
let other: PlatformHandle;
let businessId: string;
let ownerId: string;

beforeAll(async () => {
  srv = await startServer();
  p = await srv.newPlatform();
  other = await srv.newPlatform();
  businessId = (await createCustomer(p.api, businessBody())).id;
  ownerId = (await createOwner(p.api, ownerBody(businessId))).id;
});
afterAll(async () => srv.close());

const form = (over: Record<string, string> = {}) => ({
  documentHolder: businessId,
  documentType: 'CERTIFICATE_OF_INCORPORATION',
  country: 'US',
  ...over,
});

describe('POST /documents', () => {
  it('uploads a PDF for a customer with every field and stores the exact bytes', async () => {
    const res = await sendForm(
      srv.baseUrl,
      'POST',
      '/documents',
      form({ documentType: 'DRIVERS_LICENSE', side: 'FRONT', documentNumber: 'D1234567', issuingAuthority: 'WA DOL' }),
      { bytes: PDF, name: 'licence.pdf', type: 'application/pdf' },
      p.creds,
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.id).toMatch(/^Document:[0-9a-f-]{36}$/);
    expect(res.body).toMatchObject({
      documentHolder: businessId,
      documentType: 'DRIVERS_LICENSE',
      side: 'FRONT',
      country: 'US',
      documentNumber: 'D1234567',
      issuingAuthority: 'WA DOL',
      fileName: 'licence.pdf',
    });
    expect(res.body.createdAt).toBe(res.body.updatedAt);
    expect(await readDocumentBytes(srv.app.ctx.db, p.id, res.body.id)).toEqual(PDF);
    const meta = await srv.app.ctx.db.selectFrom('documents').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(meta).toMatchObject({
      content_type: 'application/pdf',
      size_bytes: PDF.length,
      sha256: createHash('sha256').update(PDF).digest('hex'),
    });
  });

  it('uploads for a beneficial owner, and accepts JPEG and PNG by content whatever type or name is declared', async () => {
    const jpg = await upload(srv.baseUrl, p.creds, ownerId, 'PASSPORT', { bytes: JPEG, name: 'passport.jpg', type: 'image/jpeg' });
    expect(jpg).toMatchObject({ documentHolder: ownerId, documentType: 'PASSPORT', fileName: 'passport.jpg' });
    const png = await upload(srv.baseUrl, p.creds, ownerId, 'NATIONAL_ID', {
      bytes: PNG,
      name: 'id.bin',
      type: 'application/octet-stream',
    });
    expect(png.fileName).toBe('id.bin');
    const row = await srv.app.ctx.db.selectFrom('documents').select('content_type').where('id', '=', png.id).executeTakeFirstOrThrow();
    expect(row.content_type).toBe('image/png');
  });

  it('keeps only the last segment of a client path as the file name', async () => {
    const doc = await upload(srv.baseUrl, p.creds, businessId, 'UTILITY_BILL', { bytes: PDF, name: 'C:\\fakepath\\bill.pdf' });
    expect(doc.fileName).toBe('bill.pdf');
  });

  it('rejects a text file renamed to .pdf and declared as application/pdf (magic bytes decide)', async () => {
    const res = await sendForm(
      srv.baseUrl,
      'POST',
      '/documents',
      form(),
      { bytes: TEXT, name: 'notes.pdf', type: 'application/pdf' },
      p.creds,
    );
    expectFieldError(res, 'file');
    expect(res.body.details.errors[0].message).toMatch(/PDF, JPEG or PNG/);
  });

  it('rejects other real formats (GIF) and an empty file', async () => {
    const gif = Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1');
    expectFieldError(
      await sendForm(srv.baseUrl, 'POST', '/documents', form(), { bytes: gif, name: 'x.png', type: 'image/png' }, p.creds),
      'file',
    );
    const empty = await sendForm(srv.baseUrl, 'POST', '/documents', form(), { bytes: Buffer.alloc(0), name: 'x.pdf' }, p.creds);
    expectFieldError(empty, 'file');
    expect(empty.body.details.errors[0].message).toBe('is empty');
  });

  it('accepts exactly 10 MiB and answers a JSON 400 (not a 500, not a dropped connection) above it', async () => {
    const exact = Buffer.concat([PDF, Buffer.alloc(10 * MiB - PDF.length, 0x20)]);
    const ok = await sendForm(srv.baseUrl, 'POST', '/documents', form(), { bytes: exact, name: 'big.pdf' }, p.creds);
    expect(ok.status, ok.text).toBe(201);
    expect((await readDocumentBytes(srv.app.ctx.db, p.id, ok.body.id))?.length).toBe(10 * MiB);

    const over = Buffer.concat([exact, Buffer.from(' ')]);
    const res = await sendForm(srv.baseUrl, 'POST', '/documents', form(), { bytes: over, name: 'big.pdf' }, p.creds);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expectFieldError(res, 'file');
    expect(res.body.message).toMatch(/10485760/);

    const huge = await sendForm(
      srv.baseUrl,
      'POST',
      '/documents',
      form(),
      { bytes: Buffer.concat([PDF, Buffer.alloc(40 * MiB)]) },
      p.creds,
    );
    expectFieldError(huge, 'file');
    // The server is fine afterwards.
    expect((await p.api.get('/documents', { query: { limit: 1 } })).status).toBe(200);
  });

  it('accepts one file only', async () => {
    const res = await sendForm(srv.baseUrl, 'POST', '/documents', form(), [{ bytes: PDF }, { bytes: PDF }], p.creds);
    expectFieldError(res, 'file');
  });

  it('answers form-limit errors while the client is still uploading, and drains the rest (no hung connection)', async () => {
    // The parser stops at the second file / eleventh field with megabytes still in flight; the
    // server must read and drop them, or the upload stalls and srv.close() in afterAll hangs.
    const big = Buffer.concat([PDF, Buffer.alloc(8 * MiB)]);
    const files = await sendForm(srv.baseUrl, 'POST', '/documents', form(), [{ bytes: big }, { bytes: big }, { bytes: big }], p.creds);
    expectFieldError(files, 'file');
    const many: Record<string, string> = form();
    for (let i = 0; i < 20; i++) many[`note${i}`] = 'x'.repeat(1000);
    const fields = await sendForm(srv.baseUrl, 'POST', '/documents', many, { bytes: big }, p.creds);
    expectError(fields, 400, 'INVALID_INPUT');
    expect(fields.body.message).toMatch(/too many fields/);
    expect((await sendForm(srv.baseUrl, 'POST', '/documents', form(), { bytes: PDF }, p.creds)).status).toBe(201);
  });

  it('needs the file as a file part', async () => {
    expectFieldError(await sendForm(srv.baseUrl, 'POST', '/documents', form(), undefined, p.creds), 'file');
    const asText = await sendForm(srv.baseUrl, 'POST', '/documents', { ...form(), file: 'not a file' }, undefined, p.creds);
    expectFieldError(asText, 'file');
  });

  it('validates the form fields with field paths, including unknown fields', async () => {
    const res = await sendForm(
      srv.baseUrl,
      'POST',
      '/documents',
      { documentHolder: businessId, documentType: 'SELFIE_STICK', country: 'usa', side: 'TOP', colour: 'blue' },
      { bytes: PDF },
      p.creds,
    );
    expect(res.status).toBe(400);
    expect(fieldsOf(res)).toEqual(expect.arrayContaining(['documentType', 'country', 'side', 'colour']));
    const missing = await sendForm(srv.baseUrl, 'POST', '/documents', { documentHolder: businessId }, { bytes: PDF }, p.creds);
    expect(fieldsOf(missing)).toEqual(expect.arrayContaining(['documentType', 'country']));
    expectFieldError(
      await sendForm(srv.baseUrl, 'POST', '/documents', form({ documentHolder: 'Account:123' }), { bytes: PDF }, p.creds),
      'documentHolder',
    );
  });

  it('rejects a field sent twice and an over-long field', async () => {
    const f = new FormData();
    f.append('documentHolder', businessId);
    f.append('documentType', 'PASSPORT');
    f.append('documentType', 'NATIONAL_ID');
    f.append('country', 'US');
    f.append('issuingAuthority', 'x'.repeat(2000));
    f.append('file', new Blob([new Uint8Array(PDF)]), 'a.pdf');
    const res = await fetch(`${srv.baseUrl}/documents`, { method: 'POST', headers: { authorization: basic(p) }, body: f });
    const body = await res.json();
    expect(res.status).toBe(400);
    expect(body.details.errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(['documentType', 'issuingAuthority']),
    );
  });

  it('answers 400 for a non-multipart body', async () => {
    const json = await p.api.post('/documents', { documentHolder: businessId, documentType: 'PASSPORT', country: 'US', file: 'JVBERi0=' });
    expectError(json, 400, 'INVALID_INPUT');
    expect(json.body.message).toMatch(/multipart\/form-data/);
    const empty = await p.api.post('/documents');
    expectError(empty, 400, 'INVALID_INPUT');
    const broken = await p.api.post('/documents', undefined, {
      raw: '--x\r\nnot really',
      headers: { 'content-type': 'multipart/form-data' },
    });
    expectError(broken, 400, 'INVALID_INPUT');
  });

  it('answers 404 for an unknown or foreign holder and 410 for a deleted customer', async () => {
    const foreign = await createCustomer(other.api, businessBody());
    expectError(
      await sendForm(srv.baseUrl, 'POST', '/documents', form({ documentHolder: foreign.id }), { bytes: PDF }, p.creds),
      404,
      'USER_NOT_FOUND',
    );
    expectError(
      await sendForm(
        srv.baseUrl,
        'POST',
        '/documents',
        form({ documentHolder: 'Customer:00000000-0000-7000-8000-000000000000' }),
        { bytes: PDF },
        p.creds,
      ),
      404,
      'USER_NOT_FOUND',
    );
    expectError(
      await sendForm(
        srv.baseUrl,
        'POST',
        '/documents',
        form({ documentHolder: 'BeneficialOwner:00000000-0000-7000-8000-000000000000' }),
        { bytes: PDF },
        p.creds,
      ),
      404,
      'REFERENCE_NOT_FOUND',
    );
    const gone = await createCustomer(p.api, businessBody());
    expect((await p.api.delete(`/customers/${gone.id}`)).status).toBe(200);
    expectError(
      await sendForm(srv.baseUrl, 'POST', '/documents', form({ documentHolder: gone.id }), { bytes: PDF }, p.creds),
      410,
      'CUSTOMER_DELETED',
    );
  });

  it('needs credentials (401) and MANAGE (403)', async () => {
    expectError(await sendForm(srv.baseUrl, 'POST', '/documents', form(), { bytes: PDF }, undefined), 401, 'UNAUTHORIZED');
    expectError(
      await sendForm(srv.baseUrl, 'POST', '/documents', form(), { bytes: PDF }, { id: p.creds.id, secret: 'wrong' }),
      401,
      'UNAUTHORIZED',
    );
    const viewer = await viewOnly(p);
    expectError(await sendForm(srv.baseUrl, 'POST', '/documents', form(), { bytes: PDF }, viewer.auth.basic), 403, 'FORBIDDEN');
    expect((await viewer.get('/documents')).status).toBe(200);
  });
});

describe('GET /documents and GET /documents/{id}', () => {
  it('lists newest first with the documentHolder filter and cursor pagination', async () => {
    const q = await srv.newPlatform();
    const c = await createCustomer(q.api, businessBody());
    const o = await createOwner(q.api, ownerBody(c.id));
    const a = await upload(srv.baseUrl, q.creds, c.id, 'UTILITY_BILL');
    const b = await upload(srv.baseUrl, q.creds, o.id, 'PASSPORT', { bytes: PNG });
    const d = await upload(srv.baseUrl, q.creds, c.id, 'SHAREHOLDER_REGISTER', { bytes: JPEG });

    const all = await q.api.get('/documents');
    expect(all.status).toBe(200);
    expect(all.body.data.map((x: { id: string }) => x.id)).toEqual([d.id, b.id, a.id]);
    expect(all.body).toMatchObject({ hasMore: false, totalCount: 3 });

    const ofCustomer = await q.api.get('/documents', { query: { documentHolder: c.id } });
    expect(ofCustomer.body.data.map((x: { id: string }) => x.id)).toEqual([d.id, a.id]);
    const ofOwner = await q.api.get('/documents', { query: { documentHolder: o.id } });
    expect(ofOwner.body.data.map((x: { id: string }) => x.id)).toEqual([b.id]);

    const first = await q.api.get('/documents', { query: { limit: 2 } });
    expect(first.body).toMatchObject({ hasMore: true, totalCount: 3 });
    const second = await q.api.get('/documents', { query: { limit: 2, cursor: first.body.nextCursor } });
    expect(second.body.data.map((x: { id: string }) => x.id)).toEqual([a.id]);
    expect(second.body.hasMore).toBe(false);
    expect(second.body.nextCursor).toBeUndefined();

    const one = await q.api.get(`/documents/${b.id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(b);
    // The id may also arrive percent-encoded.
    expect((await q.api.get(`/documents/${encodeURIComponent(b.id)}`)).body.id).toBe(b.id);
  });

  it('validates the query', async () => {
    expectFieldError(await p.api.get('/documents', { query: { limit: 0 } }), 'limit');
    expectFieldError(await p.api.get('/documents', { query: { cursor: 'nope' } }), 'cursor');
    expectFieldError(await p.api.get('/documents', { query: { holder: 'x' } }), 'holder');
  });

  it("does not show another platform's documents", async () => {
    const doc = await upload(srv.baseUrl, p.creds, businessId, 'BANK_STATEMENT');
    expectError(await other.api.get(`/documents/${doc.id}`), 404, 'REFERENCE_NOT_FOUND');
    expect((await other.api.get('/documents', { query: { documentHolder: businessId } })).body).toMatchObject({ data: [], totalCount: 0 });
    expectError(await p.api.get('/documents/Document:00000000-0000-7000-8000-000000000000'), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.get(`/documents/${doc.id}`), 401, 'UNAUTHORIZED');
    expectError(await srv.anon.get('/documents'), 401, 'UNAUTHORIZED');
  });
});

describe('PUT /documents/{id}', () => {
  it('replaces the file and every metadata field, keeping id, holder and createdAt', async () => {
    const doc = await upload(srv.baseUrl, p.creds, businessId, 'DRIVERS_LICENSE');
    const withSide = await sendForm(
      srv.baseUrl,
      'PUT',
      `/documents/${doc.id}`,
      { documentType: 'DRIVERS_LICENSE', country: 'US', side: 'BACK', documentNumber: 'N1' },
      { bytes: PNG, name: 'back.png' },
      p.creds,
    );
    expect(withSide.status, withSide.text).toBe(200);
    expect(withSide.body).toMatchObject({
      id: doc.id,
      documentHolder: businessId,
      side: 'BACK',
      documentNumber: 'N1',
      fileName: 'back.png',
      createdAt: doc.createdAt,
    });
    expect(await readDocumentBytes(srv.app.ctx.db, p.id, doc.id)).toEqual(PNG);

    const replaced = await sendForm(
      srv.baseUrl,
      'PUT',
      `/documents/${doc.id}`,
      { documentType: 'PASSPORT', country: 'CA' },
      { bytes: JPEG, name: 'passport.jpg' },
      p.creds,
    );
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({
      id: doc.id,
      documentHolder: businessId,
      documentType: 'PASSPORT',
      country: 'CA',
      fileName: 'passport.jpg',
      createdAt: doc.createdAt,
      updatedAt: replaced.body.updatedAt,
    });
    expect((await p.api.get(`/documents/${doc.id}`)).body).toEqual(replaced.body);
  });

  it('checks the file and the fields like an upload; the holder cannot change', async () => {
    const doc = await upload(srv.baseUrl, p.creds, businessId, 'PASSPORT');
    expectFieldError(
      await sendForm(
        srv.baseUrl,
        'PUT',
        `/documents/${doc.id}`,
        { documentType: 'PASSPORT', country: 'US' },
        { bytes: TEXT, name: 'x.pdf' },
        p.creds,
      ),
      'file',
    );
    expectFieldError(
      await sendForm(srv.baseUrl, 'PUT', `/documents/${doc.id}`, { documentType: 'PASSPORT', country: 'US' }, undefined, p.creds),
      'file',
    );
    expectFieldError(
      await sendForm(
        srv.baseUrl,
        'PUT',
        `/documents/${doc.id}`,
        { documentType: 'PASSPORT', country: 'US', documentHolder: ownerId },
        { bytes: PDF },
        p.creds,
      ),
      'documentHolder',
    );
    const big = await sendForm(
      srv.baseUrl,
      'PUT',
      `/documents/${doc.id}`,
      { documentType: 'PASSPORT', country: 'US' },
      { bytes: Buffer.concat([PDF, Buffer.alloc(11 * MiB)]) },
      p.creds,
    );
    expectFieldError(big, 'file');
    expect(await readDocumentBytes(srv.app.ctx.db, p.id, doc.id)).toEqual(PDF);
  });

  it("answers 404 for an unknown or another platform's document and 401 without credentials", async () => {
    const doc = await upload(srv.baseUrl, p.creds, businessId, 'PASSPORT');
    expectError(
      await sendForm(srv.baseUrl, 'PUT', `/documents/${doc.id}`, { documentType: 'PASSPORT', country: 'US' }, { bytes: PDF }, other.creds),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(
      await sendForm(
        srv.baseUrl,
        'PUT',
        '/documents/Document:00000000-0000-7000-8000-000000000000',
        { documentType: 'PASSPORT', country: 'US' },
        { bytes: PDF },
        p.creds,
      ),
      404,
      'REFERENCE_NOT_FOUND',
    );
    expectError(
      await sendForm(srv.baseUrl, 'PUT', `/documents/${doc.id}`, { documentType: 'PASSPORT', country: 'US' }, { bytes: PDF }, undefined),
      401,
      'UNAUTHORIZED',
    );
  });
});

describe('DELETE /documents/{id}', () => {
  it('deletes the document and its bytes', async () => {
    const doc = await upload(srv.baseUrl, p.creds, businessId, 'OTHER');
    expectError(await other.api.delete(`/documents/${doc.id}`), 404, 'REFERENCE_NOT_FOUND');
    expectError(await srv.anon.delete(`/documents/${doc.id}`), 401, 'UNAUTHORIZED');
    const res = await p.api.delete(`/documents/${doc.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await p.api.get(`/documents/${doc.id}`), 404, 'REFERENCE_NOT_FOUND');
    expect(await readDocumentBytes(srv.app.ctx.db, p.id, doc.id)).toBeUndefined();
    expectError(await p.api.delete(`/documents/${doc.id}`), 404, 'REFERENCE_NOT_FOUND');
  });
});

describe('multipart stays inside /documents', () => {
  it('other routes still refuse multipart bodies with a JSON 400', async () => {
    const f = new FormData();
    f.append('customerType', 'BUSINESS');
    const res = await fetch(`${srv.baseUrl}/customers`, { method: 'POST', headers: { authorization: basic(p) }, body: f });
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe('INVALID_INPUT');
  });

  it('the served OpenAPI document describes the multipart bodies', async () => {
    const doc = (await srv.anon.get('/openapi.json')).body;
    const paths = doc.paths as Record<
      string,
      Record<
        string,
        { requestBody?: { content: Record<string, { schema: { properties: Record<string, { format?: string }>; required: string[] } }> } }
      >
    >;
    const post = paths['/2025-10-13/documents']!.post!.requestBody!.content['multipart/form-data']!.schema;
    expect(post.properties.file!.format).toBe('binary');
    expect(post.required).toEqual(expect.arrayContaining(['file', 'documentType', 'country', 'documentHolder']));
    const put = paths['/2025-10-13/documents/{documentId}']!.put!.requestBody!.content['multipart/form-data']!.schema;
    expect(put.properties.file!.format).toBe('binary');
    expect(put.properties.documentHolder).toBeUndefined();
    expect(Object.keys(paths['/2025-10-13/documents']!.post!.requestBody!.content)).toEqual(['multipart/form-data']);
  });
});

function basic(h: PlatformHandle): string {
  return `Basic ${Buffer.from(`${h.creds.id}:${h.creds.secret}`).toString('base64')}`;
}

/** A client with a VIEW-only token of the platform. */
async function viewOnly(h: PlatformHandle): Promise<Client> {
  const res = await h.api.post('/tokens', { name: 'viewer', permissions: ['VIEW'] });
  if (res.status !== 201) throw new Error(`token: ${res.status} ${res.text}`);
  return h.api.with({ basic: { id: res.body.clientId, secret: res.body.clientSecret } });
}
