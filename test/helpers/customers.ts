/** Builders and assertions shared by the customer tests. */
import { expect } from 'vitest';
import type { Client, Res } from './http.ts';
import type { TestServer } from './server.ts';

/**
 * A resource body as the API returned it. `any` (like Res.body): tests read arbitrary response
 * fields, and the assertions are the type check.
 */
// biome-ignore lint/suspicious/noExplicitAny: see the comment on this declaration (arbitrary JSON read field by field)
export type Wire = any;

export function individual(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customerType: 'INDIVIDUAL',
    fullName: 'Jane Smith',
    birthDate: '1990-01-15',
    nationality: 'US',
    email: 'jane.smith@example.com',
    phoneNumber: '+14155551234',
    address: { line1: '123 Main Street', city: 'San Francisco', state: 'CA', postalCode: '94105', country: 'US' },
    ...overrides,
  };
}

export function business(overrides: Record<string, unknown> = {}, info: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customerType: 'BUSINESS',
    email: 'finance@acme.com',
    businessInfo: {
      legalName: 'Acme Corporation',
      doingBusinessAs: 'Acme',
      country: 'US',
      registrationNumber: '5523041',
      incorporatedOn: '2018-03-14',
      entityType: 'LLC',
      taxId: '47-1234567',
      countriesOfOperation: ['US'],
      businessType: 'INFORMATION',
      purposeOfAccount: 'CONTRACTOR_PAYOUTS',
      expectedMonthlyTransactionCount: 'COUNT_100_TO_500',
      expectedMonthlyTransactionVolume: 'VOLUME_100K_TO_1M',
      ...info,
    },
    address: { line1: '123 Market Street', line2: 'Suite 400', city: 'Seattle', state: 'WA', postalCode: '98101', country: 'US' },
    ...overrides,
  };
}

/** Creates a customer and returns its body; fails the test on anything but 201. */
export async function create(api: Client, body: Record<string, unknown>): Promise<Wire> {
  const res = await api.post('/customers', body);
  if (res.status !== 201) throw new Error(`create customer: ${res.status} ${res.text}`);
  return res.body;
}

/** The `details.errors[].field` values of an error. */
export function fieldsOf(res: Res): string[] {
  const errs = res.body?.details?.errors;
  if (!Array.isArray(errs)) throw new Error(`no details.errors in ${res.status} ${res.text}`);
  return errs.map((e: { field: string }) => e.field);
}

/** Asserts a 400 with `code` naming `field` among its field errors. */
export function expectFieldError(res: Res, field: string, code = 'INVALID_INPUT'): Res {
  if (res.status !== 400 || res.body?.code !== code || res.body?.status !== 400) {
    throw new Error(`expected 400 ${code} on ${field}, got ${res.status} ${res.text}`);
  }
  expect(fieldsOf(res)).toContain(field);
  return res;
}

/** Replaces the platform's supported currencies (each with permissive defaults). */
export async function setCurrencies(api: Client, codes: string[]): Promise<void> {
  const res = await api.patch('/config', {
    supportedCurrencies: codes.map((currencyCode) => ({
      currencyCode,
      minAmount: 1,
      maxAmount: 100_000_000,
      requiredCounterpartyFields: [],
      enabledTransactionTypes: ['INCOMING', 'OUTGOING'],
    })),
  });
  if (res.status !== 200) throw new Error(`PATCH /config: ${res.status} ${res.text}`);
}

/** The outbox events of one platform, oldest first, with parsed payloads. */
export async function eventsOf(srv: TestServer, platformId: string, typePrefix = 'CUSTOMER.') {
  const rows = await srv.app.ctx.db
    .selectFrom('outbox_events')
    .selectAll()
    .where('platform_id', '=', platformId)
    .where('type', 'like', `${typePrefix}%`)
    .orderBy('id', 'asc')
    .execute();
  return rows.map((r) => ({ type: r.type, resourceId: r.resource_id, data: JSON.parse(r.payload) as Wire }));
}

/** Walks a paginated list with limit=1 and returns every item's id, in order. */
export async function walk(
  api: Client,
  path: string,
  query: Record<string, string | number | boolean> = {},
): Promise<{ ids: string[]; totals: number[] }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const res = await api.get(path, { query: { ...query, limit: 1, ...(cursor ? { cursor } : {}) } });
    expect(res.status, res.text).toBe(200);
    ids.push(...res.body.data.map((d: { id: string }) => d.id));
    totals.push(res.body.totalCount);
    if (!res.body.hasMore) {
      expect(res.body.nextCursor).toBeUndefined();
      return { ids, totals };
    }
    expect(res.body.data).toHaveLength(1);
    cursor = res.body.nextCursor;
  }
  throw new Error('pagination did not end');
}

/** A controllable clock, so timestamps (and the date filters over them) are deterministic. */
export function manualClock(startIso = '2031-03-01T12:00:00.000Z') {
  let now = Date.parse(startIso);
  return {
    nowMs: () => now,
    advance(ms: number) {
      now += ms;
    },
    iso: () => new Date(now).toISOString(),
  };
}
