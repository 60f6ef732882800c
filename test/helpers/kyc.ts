/** Builders and helpers shared by the KYC tests (beneficial owners, documents, verifications). */
import { expect } from 'vitest';
import { basicHeader, type Client, type Creds, type Res } from './http.ts';
import type { TestServer } from './server.ts';

/** Smallest files with the right magic bytes. */
export const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n', 'latin1');
export const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from('IHDR-not-really-an-image')]);
export const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('JFIF-not-really-an-image')]);
export const TEXT = Buffer.from('just some notes, not a document\n', 'utf8');

/**
 * A complete business's own data (no owners or documents). The default registrationNumber does not end in
 * 3 digits, so it is no sandbox magic value: its verification runs the completeness checks.
 */
export function businessBody(info: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customerType: 'BUSINESS',
    businessInfo: {
      legalName: 'Acme Corporation',
      country: 'US',
      registrationNumber: '5523040-WA',
      incorporatedOn: '2018-03-14',
      taxId: '47-1234567',
      countriesOfOperation: ['US'],
      ...info,
    },
    address: { line1: '123 Market Street', city: 'Seattle', state: 'WA', postalCode: '98101', country: 'US' },
    ...overrides,
  };
}

export function individualBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customerType: 'INDIVIDUAL',
    fullName: 'Jane Smith',
    birthDate: '1990-01-15',
    nationality: 'US',
    address: { line1: '1 Main Street', city: 'San Francisco', postalCode: '94105', country: 'US' },
    idType: 'SSN',
    identifier: '123-45-6789',
    ...overrides,
  };
}

export function personalInfo(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    firstName: 'Jane',
    lastName: 'Smith',
    birthDate: '1978-06-15',
    nationality: 'US',
    address: { line1: '9 Elm Street', city: 'Seattle', postalCode: '98101', country: 'US' },
    idType: 'SSN',
    identifier: '123-45-6789',
    ...overrides,
  };
}

export function ownerBody(
  customerId: string,
  info: Record<string, unknown> = {},
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return { customerId, roles: ['UBO', 'CONTROL_PERSON'], ownershipPercentage: 60, personalInfo: personalInfo(info), ...overrides };
}

// biome-ignore lint/suspicious/noExplicitAny: `any`: like Res.body, tests read arbitrary response fields; the assertions are the type check.
export async function createCustomer(api: Client, body: Record<string, unknown>): Promise<any> {
  const res = await api.post('/customers', body);
  if (res.status !== 201) throw new Error(`create customer: ${res.status} ${res.text}`);
  return res.body;
}

// biome-ignore lint/suspicious/noExplicitAny: `any`: see createCustomer.
export async function createOwner(api: Client, body: Record<string, unknown>): Promise<any> {
  const res = await api.post('/beneficial-owners', body);
  if (res.status !== 201) throw new Error(`create beneficial owner: ${res.status} ${res.text}`);
  return res.body;
}

export interface FilePart {
  bytes: Buffer;
  name?: string;
  type?: string;
}

/** Sends a multipart form with fetch (FormData + Blob), as a browser or SDK would. */
export async function sendForm(
  base: string,
  method: 'POST' | 'PUT',
  path: string,
  fields: Record<string, string>,
  file: FilePart | FilePart[] | undefined,
  creds: Creds | undefined,
): Promise<Res> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of file === undefined ? [] : Array.isArray(file) ? file : [file]) {
    form.append('file', new Blob([new Uint8Array(f.bytes)], { type: f.type ?? 'application/octet-stream' }), f.name ?? 'scan.pdf');
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (creds) headers.authorization = basicHeader(creds);
  const res = await fetch(base + path, { method, headers, body: form });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = text;
  }
  return { status: res.status, body, headers: res.headers, text };
}

/** Uploads a document and returns it; fails on anything but 201. */
// `any`: see createCustomer.
export async function upload(
  base: string,
  creds: Creds,
  holder: string,
  documentType: string,
  file: FilePart = { bytes: PDF },
  // biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
): Promise<any> {
  const res = await sendForm(base, 'POST', '/documents', { documentHolder: holder, documentType, country: 'US' }, file, creds);
  if (res.status !== 201) throw new Error(`upload ${documentType}: ${res.status} ${res.text}`);
  return res.body;
}

/** The `details.errors[].field` values of an error. */
export function fieldsOf(res: Res): string[] {
  const errs = res.body?.details?.errors;
  if (!Array.isArray(errs)) throw new Error(`no details.errors in ${res.status} ${res.text}`);
  return errs.map((e: { field: string }) => e.field);
}

/** Asserts a 400 INVALID_INPUT naming `field`. */
export function expectFieldError(res: Res, field: string): void {
  if (res.status !== 400 || res.body?.code !== 'INVALID_INPUT' || res.body?.status !== 400) {
    throw new Error(`expected 400 INVALID_INPUT on ${field}, got ${res.status} ${res.text}`);
  }
  expect(fieldsOf(res)).toContain(field);
}

/** The outbox events of one platform whose type starts with `prefix`, oldest first. */
export async function eventsOf(srv: TestServer, platformId: string, prefix: string) {
  const rows = await srv.app.ctx.db
    .selectFrom('outbox_events')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('type', 'like', `${prefix}%`)
    .orderBy('id', 'asc')
    .execute();
  // biome-ignore lint/suspicious/noExplicitAny: `any`: the payload is a wire resource the assertions inspect field by field.
  return rows.map((r) => ({ type: r.type, resourceId: r.resource_id, data: JSON.parse(r.payload) as any }));
}
